package all_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
	"github.com/fanyi-go/translate/engines/apertium"
	"github.com/fanyi-go/translate/engines/baidu"
	"github.com/fanyi-go/translate/engines/deepl"
	"github.com/fanyi-go/translate/engines/google"
	"github.com/fanyi-go/translate/engines/libretranslate"
	"github.com/fanyi-go/translate/engines/microsoft"
	"github.com/fanyi-go/translate/engines/openai"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const secret = "dummy-secret-0123456789"

// engineConfig parses a one-engine file and returns its engine's config.
func engineConfig(t *testing.T, engine string) (*translate.Config, error) {
	t.Helper()
	all.Register()
	return translate.ParseConfig([]byte(`{"engines":[` + engine + `]}`))
}

func TestRegisterIdempotent(t *testing.T) {
	all.Register()
	all.Register()
	for _, typ := range all.Types() {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("type %q is not registered: registering it again did not panic", typ)
				}
			}()
			translate.RegisterEngineType(typ, func(translate.EngineConfig) (translate.Engine, error) { return nil, nil })
		}()
	}
}

// TestEveryType builds an engine of each type by name, with its settings.
func TestEveryType(t *testing.T) {
	t.Setenv("ALL_TEST_SECRET", secret)
	for _, tc := range []struct {
		engine   string
		wantType any
		wantName string
	}{
		{`{"type":"deepl","settings":{"auth_key":"env:ALL_TEST_SECRET","base_url":"http://127.0.0.1:1"}}`, &deepl.Engine{}, "deepl"},
		{`{"name":"g","type":"google","settings":{"api_key":"env:ALL_TEST_SECRET"}}`, &google.Engine{}, "g"},
		{`{"type":"google-v3","settings":{"project":"p","access_token":"env:ALL_TEST_SECRET","location":"europe-west1"}}`, &google.Engine{}, "google-v3"},
		{`{"type":"microsoft","settings":{"key":"env:ALL_TEST_SECRET","region":"westeurope","geography":"eu"}}`, &microsoft.Engine{}, "microsoft"},
		{`{"type":"baidu","settings":{"appid":"a","secret":"env:ALL_TEST_SECRET","max_chars":"1000"}}`, &baidu.Engine{}, "baidu"},
		{`{"name":"llm","type":"openai","settings":{"model":"m","base_url":"http://127.0.0.1:8000/v1","price":"3","quality":"90","max_texts":"5","json_mode":"false","instructions":"be brief"}}`, &openai.Engine{}, "llm"},
		{`{"name":"libre","type":"libretranslate","settings":{"base_url":"http://127.0.0.1:5000","batch_limit":"10","char_limit":"500"}}`, &libretranslate.Engine{}, "libre"},
		{`{"type":"apertium","settings":{"base_url":"http://127.0.0.1:2737","concurrency":"2"}}`, &apertium.Engine{}, "apertium"},
		{`{"type":"fake","settings":{"latency":"1ms"}}`, all.SimulatedForTest(), "fake"},
	} {
		cfg, err := engineConfig(t, tc.engine)
		if err != nil {
			t.Errorf("ParseConfig(%s): %v", tc.engine, err)
			continue
		}
		e, _, err := cfg.Engines[0].Build()
		if err != nil {
			t.Errorf("Build(%s): %v", tc.engine, err)
			continue
		}
		if reflect.TypeOf(e) != reflect.TypeOf(tc.wantType) || e.Name() != tc.wantName {
			t.Errorf("Build(%s) = %T named %q, want %T named %q", tc.engine, e, e.Name(), tc.wantType, tc.wantName)
		}
		// Every type names its engine as the file says.
		ec := cfg.Engines[0]
		ec.Name = "custom-" + ec.Type
		if e, _, err := ec.Build(); err != nil || e.Name() != ec.Name {
			t.Errorf("Build(%s with name %q): %v", tc.engine, ec.Name, err)
		}
	}
}

// TestSettingsErrors: each bad setting is an error at its JSON path that never quotes a
// setting's value.
func TestSettingsErrors(t *testing.T) {
	t.Setenv("ALL_TEST_SECRET", secret)
	for _, tc := range []struct{ engine, want string }{
		{`{"type":"deepl","settings":{"authkey":"env:ALL_TEST_SECRET"}}`, "engines[0].settings.authkey: unknown setting for type deepl (known: auth_key, base_url)"},
		{`{"type":"deepl"}`, "engines[0].settings.auth_key: is required for type deepl"},
		{`{"type":"deepl","settings":{"auth_key":"env:ALL_TEST_SECRET","base_url":"ftp://` + secret + `@x"}}`, "engines[0].settings.base_url: base URL is not an absolute http(s) URL"},
		{`{"type":"google","settings":{}}`, "engines[0].settings.api_key: is required for type google"},
		{`{"type":"google-v3","settings":{"project":"p"}}`, "engines[0].settings.access_token: is required for type google-v3"},
		{`{"type":"microsoft","settings":{"key":"k","geography":"mars"}}`, `engines[0].settings.geography: must be "eu", "us", "apac" or empty`},
		{`{"type":"baidu","settings":{"appid":"a"}}`, "engines[0].settings.secret: is required for type baidu"},
		{`{"type":"baidu","settings":{"appid":"a","secret":"s","max_chars":"0"}}`, "engines[0].settings.max_chars: must be a positive integer"},
		{`{"type":"openai","settings":{}}`, "engines[0].settings.model: is required for type openai"},
		{`{"type":"openai","settings":{"model":"m","quality":"101"}}`, "engines[0].settings.quality: must be a number within 0..100"},
		{`{"type":"openai","settings":{"model":"m","json_mode":"maybe"}}`, `engines[0].settings.json_mode: must be "true" or "false"`},
		{`{"type":"libretranslate","settings":{"base_url":"http://x","batch_limit":"many"}}`, "engines[0].settings.batch_limit: must be a positive integer"},
		{`{"type":"libretranslate"}`, "engines[0].settings.base_url: is required for type libretranslate"},
		{`{"type":"apertium","settings":{"base_url":"not a url"}}`, "engines[0].settings.base_url: base URL is not an absolute http(s) URL"},
		{`{"type":"fake","settings":{"latency":"soon"}}`, `engines[0].settings.latency: must be a duration such as "20ms"`},
		{`{"type":"fake","settings":{"fail_rate":"2"}}`, "engines[0].settings.fail_rate: must be a number within 0..1"},
		{`{"type":"fake","settings":{"fail_rate":"0.5","fail_kind":"meltdown"}}`, `engines[0].settings.fail_kind: must be a failure kind`},
		{`{"type":"fake","settings":{"down":"closed"}}`, `engines[0].settings.down: must be a failure kind`},
		{`{"type":"fake","settings":{"seed":"-1"}}`, "engines[0].settings.seed: must be a non-negative integer"},
		{`{"type":"fake","settings":{"detected":"!!"}}`, "engines[0].settings.detected: is not a valid BCP 47 tag"},
		{`{"type":"fake","settings":{"quota":"x"}}`, "engines[0].settings.quota: must be a positive integer"},
	} {
		_, err := engineConfig(t, tc.engine)
		var e *translate.Error
		if !errors.As(err, &e) || e.Kind != translate.KindInvalidInput || !strings.HasPrefix(e.Message, tc.want) {
			t.Errorf("ParseConfig(%s) = %v\nwant a message starting with %q", tc.engine, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("ParseConfig(%s) = %v: quotes a secret", tc.engine, err)
		}
	}
}

// TestProfileOverAdapter: the adapter's own profile is the base; only the file's fields
// replace it, zero values included.
func TestProfileOverAdapter(t *testing.T) {
	t.Setenv("ALL_TEST_SECRET", secret)
	cfg, err := engineConfig(t, `{"type":"deepl","settings":{"auth_key":"env:ALL_TEST_SECRET"},"profile":{"quality":92,"rate_limit":50}},
		{"type":"libretranslate","settings":{"base_url":"http://127.0.0.1:5000"},"profile":{"class":"standard","fallback_only":true}}`)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := deepl.New("k")
	want := d.Profile()
	want.Quality, want.RateLimit = 92, 50
	if _, got, err := cfg.Engines[0].Build(); err != nil || !cmp.Equal(want, got) {
		t.Errorf("deepl profile: %v\n%s", err, cmp.Diff(want, got))
	}
	l, _ := libretranslate.New("http://127.0.0.1:5000", "")
	want = l.Profile()
	if want.Class != translate.ClassFree {
		t.Fatalf("libretranslate's own class is %v; the test needs a non-zero base", want.Class)
	}
	want.Class, want.FallbackOnly = translate.ClassStandard, true
	if _, got, err := cfg.Engines[1].Build(); err != nil || !cmp.Equal(want, got) {
		t.Errorf("libretranslate profile: %v\n%s", err, cmp.Diff(want, got))
	}
}

// TestDesignSample parses the file of the design document with the real adapters.
func TestDesignSample(t *testing.T) {
	t.Setenv("DEEPL_AUTH_KEY", secret)
	all.Register()
	cfg, err := translate.ParseConfig([]byte(designSample))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Breaker.FailureRatio != 0.5 || len(cfg.Engines) != 2 || cfg.Engines[0].Settings["auth_key"] != "env:DEEPL_AUTH_KEY" {
		t.Errorf("ParseConfig(design sample) = %+v", cfg)
	}
	bad := strings.Replace(designSample, `"failure_ratio": 0.5`, `"failure_ratio": 0.1`, 1)
	if _, err := translate.ParseConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "breaker.failure_ratio: must be within 0.2..0.9") {
		t.Errorf("the seed's incident: ParseConfig = %v", err)
	}
}

const designSample = `{
  "deadline": "8s",
  "engines": [
    {"name": "deepl", "type": "deepl", "settings": {"auth_key": "env:DEEPL_AUTH_KEY"},
     "profile": {"quality": 92, "class": "standard", "cost_per_million": 20, "timeout": "6s",
                 "rate_limit": 50, "quota": 500000, "region": "eu"}},
    {"name": "libre", "type": "libretranslate", "settings": {"base_url": "http://127.0.0.1:5000"},
     "profile": {"class": "free", "fallback_only": true}}
  ],
  "retry":   {"per_engine": 2, "backoff": "200ms", "max_attempts": 3, "max_switches": 2},
  "breaker": {"window": 40, "min_calls": 20, "failure_ratio": 0.5, "cooldown": "10s",
              "half_open_calls": 5, "per_scene": false},
  "routing": {"weights": {"quality": 0.4, "availability": 0.25, "speed": 0.2, "cost": 0.15},
              "temperature": 0, "min_health": 0.8, "sticky": false, "health_every": "10s",
              "legal_min_quality": 90, "chat_max_latency": "3s"},
  "budget":  {"daily": 50, "economy_at": 0.8},
  "cache":   {"entries": 10000, "ttl": "24h"},
  "probes":  {"interval": "30s", "text": "hello", "source": "en", "target": "es",
              "expect": {"deepl": ["hola"]}, "failures": 3}
}`

// TestFakeFromConfig runs a Client on configured fakes.
func TestFakeFromConfig(t *testing.T) {
	all.Register()
	cfg, err := translate.ParseConfig([]byte(`{"engines":[
		{"name":"up","type":"fake","settings":{"prefix":"> ","latency":"1ms","fail_rate":"0"}},
		{"name":"down","type":"fake","settings":{"down":"unavailable"},"profile":{"quality":99}},
		{"name":"flaky","type":"fake","settings":{"fail_rate":"1","fail_kind":"rate_limited","seed":"7"},"profile":{"quality":99}}],
		"retry":{"per_engine":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := translate.New(translate.WithConfig(cfg), translate.WithoutCache())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 20 {
		res, err := c.Translate(context.Background(), translate.Request{Text: fmt.Sprint("hello ", i), Source: "en", Target: "es"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != fmt.Sprint("> hello ", i) || res.Engine != "up" {
			t.Fatalf("Translate = %q from %q, want the prefixed text from up", res.Text, res.Engine)
		}
		for _, a := range res.Attempts {
			switch k := translate.KindOf(a.Err); {
			case a.Engine == "down" && k != translate.KindUnavailable,
				a.Engine == "flaky" && k != translate.KindRateLimited:
				t.Errorf("attempt %+v: wrong kind %v", a, k)
			}
		}
	}
}

// TestFakeLogBounded: a configured fake does not keep every request forever.
func TestFakeLogBounded(t *testing.T) {
	cfg, err := engineConfig(t, `{"type":"fake"}`)
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := cfg.Engines[0].Build()
	if err != nil {
		t.Fatal(err)
	}
	for range 1100 {
		if _, err := e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"x"}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.(interface{ Calls() int }).Calls(); n >= 1024 {
		t.Errorf("the fake logged %d calls, want fewer than 1024", n)
	}
}
