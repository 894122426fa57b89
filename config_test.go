package translate

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fanyi-go/translate/internal/jsonfile"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// cfgEngine is the engine of the "cfgtest" type registered for these tests.
type cfgEngine struct {
	name     string
	settings map[string]string
}

func (e *cfgEngine) Name() string { return e.name }
func (e *cfgEngine) Translate(_ context.Context, req *EngineRequest) (*EngineResult, error) {
	return &EngineResult{Texts: append([]string(nil), req.Texts...)}, nil
}

// Profile is the base the file's profile is put over.
func (e *cfgEngine) Profile() Profile {
	return Profile{Quality: 70, Class: ClassFree, CostPerMillion: 5, Timeout: 3 * time.Second, MaxTexts: 10}
}

var registerTestTypes = sync.OnceFunc(func() {
	RegisterEngineType("cfgtest", func(ec EngineConfig) (Engine, error) {
		for k := range ec.Settings {
			switch k {
			case "key", "base_url":
			case "fail":
				return nil, errors.New("cannot build")
			case "panic":
				panic("boom " + ec.Settings["key"])
			case "nil":
				return nil, nil
			case "rename":
				return &cfgEngine{name: ec.Settings[k]}, nil
			default:
				return nil, &Error{Kind: KindInvalidInput, Message: "settings." + k + ": unknown setting"}
			}
		}
		name := ec.Name
		if name == "" {
			name = "cfgtest"
		}
		return &cfgEngine{name: name, settings: ec.Settings}, nil
	})
	RegisterEngineType("cfgtest-closing", func(EngineConfig) (Engine, error) {
		return &closingEngine{cfgEngine{name: "c"}}, nil
	})
})

// sample is the design's sample file, on the test engine type.
const sample = `{
  "_comment": "the design's sample",
  "deadline": "8s",
  "engines": [
    {"name": "deepl", "type": "cfgtest", "settings": {"key": "env:CFGTEST_KEY"},
     "profile": {"quality": 92, "class": "standard", "cost_per_million": 20, "timeout": "6s",
                 "rate_limit": 50, "quota": 500000, "region": "eu"}},
    {"name": "libre", "type": "cfgtest", "settings": {"base_url": "http://127.0.0.1:5000"},
     "profile": {"class": "free", "fallback_only": true, "scene_quality": {"legal": 95, "chat": 60}}}
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

// bit returns the given-mask bits of the named Profile fields.
func bit(t *testing.T, fields ...string) uint64 {
	t.Helper()
	var m uint64
	for _, f := range fields {
		sf, ok := profileType.FieldByName(f)
		if !ok {
			t.Fatalf("no Profile field %s", f)
		}
		m |= 1 << sf.Index[0]
	}
	return m
}

func TestParseConfigSample(t *testing.T) {
	registerTestTypes()
	t.Setenv("CFGTEST_KEY", "s3cret-value")
	cfg, err := ParseConfig([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Deadline: 8 * time.Second,
		Engines: []EngineConfig{
			{Name: "deepl", Type: "cfgtest", Settings: map[string]string{"key": "env:CFGTEST_KEY"},
				Profile: Profile{Quality: 92, Class: ClassStandard, CostPerMillion: 20, Timeout: 6 * time.Second,
					RateLimit: 50, Quota: 500000, Region: "eu"},
				given: bit(t, "Quality", "Class", "CostPerMillion", "Timeout", "RateLimit", "Quota", "Region")},
			{Name: "libre", Type: "cfgtest", Settings: map[string]string{"base_url": "http://127.0.0.1:5000"},
				Profile: Profile{Class: ClassFree, FallbackOnly: true, SceneQuality: map[Scene]float64{SceneLegal: 95, SceneChat: 60}},
				given:   bit(t, "Class", "FallbackOnly", "SceneQuality")},
		},
		Retry:   RetryPolicy{PerEngine: 2, Backoff: 200 * time.Millisecond, MaxAttempts: 3, MaxSwitches: 2},
		Breaker: BreakerPolicy{Window: 40, MinCalls: 20, FailureRatio: 0.5, Cooldown: 10 * time.Second, HalfOpenCalls: 5},
		Routing: RoutingPolicy{Weights: Weights{Quality: 0.4, Availability: 0.25, Speed: 0.2, Cost: 0.15},
			MinHealth: 0.8, HealthEvery: 10 * time.Second, LegalMinQuality: 90, ChatMaxLatency: 3 * time.Second},
		Budget: Budget{Daily: 50, EconomyAt: 0.8},
		Cache:  CacheConfig{Entries: 10000, TTL: 24 * time.Hour},
		Probes: &ProbePolicy{Interval: 30 * time.Second, Text: "hello", Source: "en", Target: "es",
			Expect: map[string][]string{"deepl": {"hola"}}, Failures: 3},
	}
	if diff := cmp.Diff(want, cfg, cmp.AllowUnexported(EngineConfig{})); diff != "" {
		t.Errorf("ParseConfig(sample) mismatch (-want +got):\n%s", diff)
	}
	out, err := cfg.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "s3cret-value") || !strings.Contains(string(out), `"env:CFGTEST_KEY"`) {
		t.Errorf("MarshalJSON = %s; want the env reference, not the secret", out)
	}
}

// TestParseConfigErrors has one case per validation rule: each error names the JSON path.
func TestParseConfigErrors(t *testing.T) {
	registerTestTypes()
	t.Setenv("CFGTEST_KEY", "k")
	t.Setenv("CFGTEST_EMPTY", "")
	for _, group := range parseConfigErrors {
		t.Run(group.name, func(t *testing.T) {
			for _, tc := range group.cases {
				checkParseConfigError(t, tc.in, tc.want)
			}
		})
	}
}

// checkParseConfigError checks that ParseConfig(in) fails with a KindInvalidInput *Error
// whose Message starts with want, that the error says its kind and each part once, and
// that it quotes no setting's value and no panic.
func checkParseConfigError(t *testing.T, in, want string) {
	t.Helper()
	cfg, err := ParseConfig([]byte(in))
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindInvalidInput || !strings.HasPrefix(e.Message, want) {
		t.Errorf("ParseConfig(%s)\n = %v, %v\nwant a KindInvalidInput *Error whose Message starts with %q", in, cfg, err, want)
		return
	}
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("ParseConfig(%s): errors.Is(err, ErrInvalidInput) = false", in)
	}
	if e.Err == nil && err.Error() != "translate: invalid_input: "+e.Message || strings.Count(err.Error(), "invalid_input") != 1 {
		t.Errorf("ParseConfig(%s) = %q: says more than its Message %q, once", in, err, e.Message)
	}
	if parts := strings.Split(err.Error(), ": "); slices.ContainsFunc(parts[1:], func(p string) bool { return strings.Count(err.Error(), ": "+p) > 1 }) {
		t.Errorf("ParseConfig(%s) = %q: says a part twice", in, err)
	}
	if strings.Contains(e.Message, "CFGTEST_KEY") || strings.Contains(err.Error(), "boom") {
		t.Errorf("ParseConfig(%s) = %v: quotes a setting's value or a panic", in, err)
	}
}

// parseErrorCase is a file ParseConfig rejects and the start of the error's Message.
type parseErrorCase struct{ in, want string }

// parseConfigErrors holds the cases of TestParseConfigErrors, grouped by the code whose
// rules they break.
var parseConfigErrors = []struct {
	name  string
	cases []parseErrorCase
}{
	{"syntax", parseShapeErrors},
	{"new", parseNewErrors},
	{"retry", parseRetryErrors},
	{"breaker", parseBreakerErrors},
	{"routing", parseRoutingErrors},
	{"probes", parseProbeErrors},
	{"engines", parseEngineErrors},
	{"profile", parseProfileErrors},
}

// cfgEng is a valid engine for the files the error cases build.
const cfgEng = `{"name":"a","type":"cfgtest"}`

// cfgDoc is a file with the one engine cfgEng and the top-level fields in body.
func cfgDoc(body string) string { return `{"engines":[` + cfgEng + `]` + body + `}` }

// cfgProf is a file with cfgEng and an engine "b" whose profile has the fields in p.
func cfgProf(p string) string {
	return `{"engines":[` + cfgEng + `,{"name":"b","type":"cfgtest","profile":{` + p + `}}]}`
}

// parseShapeErrors: syntax, shape and types of the JSON.
var parseShapeErrors = []parseErrorCase{
	{``, "config: empty"},
	{`{"engines": [}`, "config: line 1, column 14: invalid JSON"},
	{"{\n  \"deadline\": \"8s\",,\n}", "config: line 2, column 20: invalid JSON"},
	{`{} {}`, "config: line 1, column 4: invalid JSON"},
	{`[]`, "config: must be an object"},
	{`{"engins": []}`, "engins: unknown field (known: deadline, engines, retry, breaker, routing, budget, cache, probes, glossaries, memory)"},
	{cfgDoc(`,"deadline":"8s","deadline":"9s"`), "deadline: given twice"},
	{cfgDoc(`,"retry":null`), "retry: must not be null"},
	{cfgDoc(`,"deadline":8`), `deadline: must be a duration string such as "8s"`},
	{cfgDoc(`,"deadline":"8 seconds"`), `deadline: must be a duration such as "8s" or "250ms"`},
	{cfgDoc(`,"breaker":{"window":40.5}`), "breaker.window: must be an integer"},
	{cfgDoc(`,"breaker":{"window":"40"}`), "breaker.window: must be an integer"},
	{cfgDoc(`,"breaker":{"window":1e30}`), "breaker.window: must be an integer"},
	{cfgDoc(`,"breaker":{"failure_ratio":"0.5"}`), "breaker.failure_ratio: must be a number"},
	{cfgDoc(`,"routing":{"sticky":"yes"}`), "routing.sticky: must be true or false"},
	{cfgDoc(`,"routing":{"weights":[]}`), "routing.weights: must be an object"},
	{cfgDoc(`,"probes":{"text":1}`), "probes.text: must be a string"},
	{cfgDoc(`,"probes":{"expect":{"a":"hola"}}`), "probes.expect.a: must be an array"},
	{cfgDoc(`,"cache":{"_comment":1}`), "cache._comment: must be a string or an array of strings"},
	{`{"engines":[{"name":"a","type":"cfgtest","settings":{"key":1}}]}`, "engines[0].settings.key: must be a string"},
	{`{"engines":[{"name":"a","type":"cfgtest","profile":{"qualty":1}}]}`, "engines[0].profile.qualty: unknown field"},
	{`{"engines":[{"name":"a","type":"cfgtest","extra":1}]}`, "engines[0].extra: unknown field"},
	{`{"engines":{}}`, "engines: must be an array"},
}

// parseNewErrors: New's top-level rules.
var parseNewErrors = []parseErrorCase{
	{`{}`, "engines: at least one engine is required"},
	{`{"engines":[]}`, "engines: at least one engine is required"},
	{cfgDoc(`,"deadline":"-1s"`), "deadline: must be positive"},
	{cfgDoc(`,"cache":{"entries":-1}`), "cache.entries: must not be negative"},
	{cfgDoc(`,"cache":{"ttl":"-1h"}`), "cache.ttl: must not be negative"},
	{cfgDoc(`,"budget":{"daily":-1}`), "budget.daily: must not be negative"},
	{cfgDoc(`,"budget":{"economy_at":1.5}`), "budget.economy_at: must be within 0..1"},
}

// parseRetryErrors: RetryPolicy.validate.
var parseRetryErrors = []parseErrorCase{
	{cfgDoc(`,"retry":{"per_engine":-1}`), "retry.per_engine: must not be negative"},
	{cfgDoc(`,"retry":{"backoff":"-1ms"}`), "retry.backoff: must not be negative"},
	{cfgDoc(`,"retry":{"max_attempts":-1}`), "retry.max_attempts: must not be negative"},
	{cfgDoc(`,"retry":{"max_switches":-1}`), "retry.max_switches: must not be negative"},
}

// parseBreakerErrors: BreakerPolicy.validate, the seed's incident first.
var parseBreakerErrors = []parseErrorCase{
	{cfgDoc(`,"breaker":{"failure_ratio":0.1}`), "breaker.failure_ratio: must be within 0.2..0.9"},
	{cfgDoc(`,"breaker":{"failure_ratio":0.95}`), "breaker.failure_ratio: must be within 0.2..0.9"},
	{cfgDoc(`,"breaker":{"window":-1}`), "breaker.window: must not be negative"},
	{cfgDoc(`,"breaker":{"min_calls":-1}`), "breaker.min_calls: must not be negative"},
	{cfgDoc(`,"breaker":{"cooldown":"-1s"}`), "breaker.cooldown: must not be negative"},
	{cfgDoc(`,"breaker":{"half_open_calls":-1}`), "breaker.half_open_calls: must not be negative"},
	{cfgDoc(`,"breaker":{"window":10,"min_calls":20}`), "breaker.min_calls: must not exceed Window"},
}

// parseRoutingErrors: RoutingPolicy.validate and Weights.validate.
var parseRoutingErrors = []parseErrorCase{
	{cfgDoc(`,"routing":{"weights":{"quality":0.6,"availability":0.2,"speed":0.1,"cost":0.1}}`), "routing.weights.quality: must be within 0..0.5"},
	{cfgDoc(`,"routing":{"weights":{"quality":0.3,"availability":0.2,"speed":0.1,"cost":0.4}}`), "routing.weights.cost: must be at most 0.3"},
	{cfgDoc(`,"routing":{"weights":{"quality":0.4,"availability":0.2,"speed":0.1,"cost":0.1}}`), "routing.weights: must sum to 1"},
	{cfgDoc(`,"routing":{"weights":{"speed":-0.1}}`), "routing.weights.speed: must be within 0..0.5"},
	{cfgDoc(`,"routing":{"temperature":-1}`), "routing.temperature: must not be negative"},
	{cfgDoc(`,"routing":{"min_health":1.5}`), "routing.min_health: must be within 0..1"},
	{cfgDoc(`,"routing":{"health_every":"-1s"}`), "routing.health_every: must not be negative"},
	{cfgDoc(`,"routing":{"legal_min_quality":101}`), "routing.legal_min_quality: must be within 0..100"},
	{cfgDoc(`,"routing":{"chat_max_latency":"-1s"}`), "routing.chat_max_latency: must not be negative"},
}

// parseProbeErrors: ProbePolicy.validate, and expectations for engines the file does not have.
var parseProbeErrors = []parseErrorCase{
	{cfgDoc(`,"probes":{"interval":"-1s"}`), "probes.interval: must not be negative"},
	{cfgDoc(`,"probes":{"failures":-1}`), "probes.failures: must not be negative"},
	{cfgDoc(`,"probes":{"text":"   "}`), "probes.text: must not be blank"},
	{cfgDoc(`,"probes":{"source":"not a tag!"}`), "probes.source: is not a valid BCP 47 tag"},
	{cfgDoc(`,"probes":{"target":"!!"}`), "probes.target: is not a valid BCP 47 tag"},
	{cfgDoc(`,"probes":{"source":"es","target":"es"}`), "probes.target: is the same language as Source"},
	{cfgDoc(`,"probes":{"expect":{"nobody":["x"]}}`), "probes.expect.nobody: no engine has this name"},
}

// parseEngineErrors: an engine's type, settings, build and name.
var parseEngineErrors = []parseErrorCase{
	{`{"engines":[{"name":"a"}]}`, "engines[0].type: is required"},
	{`{"engines":[{"name":"a","type":"nosuch"}]}`, `engines[0].type: unknown engine type "nosuch" (registered: `},
	{`{"engines":[{"name":"a","type":"deepl"}]}`, `engines[0].type: unknown engine type "deepl"`},
	{`{"engines":[{"name":"a","type":"cfgtest","settings":{"key":"env:CFGTEST_UNSET"}}]}`, "engines[0].settings.key: environment variable CFGTEST_UNSET is not set"},
	{`{"engines":[{"name":"a","type":"cfgtest","settings":{"key":"env:CFGTEST_EMPTY"}}]}`, "engines[0].settings.key: environment variable CFGTEST_EMPTY is empty"},
	{`{"engines":[{"name":"a","type":"cfgtest","settings":{"key":"env:"}}]}`, `engines[0].settings.key: "env:" needs a variable name`},
	{`{"engines":[` + cfgEng + `,{"name":"b","type":"cfgtest","settings":{"nope":"1"}}]}`, "engines[1].settings.nope: unknown setting"},
	{`{"engines":[{"name":"a","type":"cfgtest","settings":{"fail":"1"}}]}`, "engines[0].type cfgtest: cannot build"},
	{`{"engines":[{"name":"a","type":"cfgtest","settings":{"panic":"1","key":"env:CFGTEST_KEY"}}]}`, `engines[0].type: engine type "cfgtest" panicked while building the engine`},
	{`{"engines":[{"name":"a","type":"cfgtest","settings":{"nil":"1"}}]}`, `engines[0].type: engine type "cfgtest" built a nil engine`},
	{`{"engines":[{"name":"a","type":"cfgtest","settings":{"rename":"b"}}]}`, `engines[0].name: engine type "cfgtest" named its engine "b"`},
	{`{"engines":[{"type":"cfgtest","settings":{"rename":""}}]}`, `engines[0].name: engine type "cfgtest" built *translate.cfgEngine with an empty name`},
	{`{"engines":[` + cfgEng + `,` + cfgEng + `]}`, `engines[1].name: duplicate engine name "a" (also engines[0])`},
	{`{"engines":[{"type":"cfgtest"},{"type":"cfgtest"}]}`, `engines[1].name: duplicate engine name "cfgtest" (also engines[0])`},
}

// parseProfileErrors: the profile, by newEngine's rules.
var parseProfileErrors = []parseErrorCase{
	{cfgProf(`"quality":101`), "engines[1].profile.quality: must be within 0..100"},
	{cfgProf(`"quality":-1`), "engines[1].profile.quality: must not be negative"},
	{cfgProf(`"cost_per_million":-1`), "engines[1].profile.cost_per_million: must not be negative"},
	{cfgProf(`"class":"gold"`), `engines[1].profile.class: must be "free", "standard" or "premium"`},
	{cfgProf(`"class":2`), `engines[1].profile.class: must be "free", "standard" or "premium"`},
	{cfgProf(`"timeout":"-1s"`), "engines[1].profile.timeout: must not be negative"},
	{cfgProf(`"rate_limit":-1`), "engines[1].profile.rate_limit: must not be negative"},
	{cfgProf(`"burst":-1`), "engines[1].profile.burst: must not be negative"},
	{cfgProf(`"max_concurrency":-1`), "engines[1].profile.max_concurrency: must not be negative"},
	{cfgProf(`"quota":-1`), "engines[1].profile.quota: must not be negative"},
	{cfgProf(`"quota_period":"-1h"`), "engines[1].profile.quota_period: must not be negative"},
	{cfgProf(`"max_chars":-1`), "engines[1].profile.max_chars: must not be negative"},
	{cfgProf(`"max_texts":-1`), "engines[1].profile.max_texts: must not be negative"},
	{cfgProf(`"canary":101`), "engines[1].profile.canary: must be within 0..100"},
	{cfgProf(`"safe_rate":-1`), "engines[1].profile.safe_rate: must not be negative"},
	{cfgProf(`"scene_quality":{"legal":120}`), "engines[1].profile.scene_quality.legal: must be within 0..100"},
	{cfgProf(`"scene_quality":{"poetry":90}`), "engines[1].profile.scene_quality.poetry: unknown scene (known: general, tech, legal, ecommerce, chat)"},
	{cfgProf(`"languages":["en","not a tag!"]`), `engines[1].profile.languages: bad language tag "not a tag!"`},
	{cfgProf(`"region":1`), "engines[1].profile.region: must be a string"},
}

// TestValidationMatchesNew: every policy value the config rejects, New rejects too, and
// the other way round.
func TestValidationMatchesNew(t *testing.T) {
	registerTestTypes()
	for _, section := range []string{
		`"breaker":{"failure_ratio":0.1}`, `"breaker":{"window":10,"min_calls":20}`,
		`"routing":{"weights":{"quality":0.5,"availability":0.4}}`, `"retry":{"max_attempts":-2}`,
		`"budget":{"economy_at":2}`, `"probes":{"target":"en","source":"en"}`,
	} {
		in := `{"engines":[{"name":"a","type":"cfgtest"}],` + section + `}`
		if _, err := ParseConfig([]byte(in)); err == nil {
			t.Errorf("ParseConfig(%s) succeeded", in)
		}
		var cfg Config
		if err := fileFormat.Decode("", []byte(in), reflect.ValueOf(&cfg).Elem()); err != nil {
			t.Fatal(err)
		}
		opts := []Option{WithEngine(&cfgEngine{name: "a"}, Profile{}), WithRetry(cfg.Retry),
			WithBreaker(cfg.Breaker), WithRouting(cfg.Routing), WithBudget(cfg.Budget)}
		if cfg.Probes != nil {
			opts = append(opts, WithProbes(*cfg.Probes))
		}
		if c, err := New(opts...); err == nil {
			c.Close()
			t.Errorf("New accepts what ParseConfig(%s) rejects", in)
		}
	}
}

func TestProfileOverlay(t *testing.T) {
	registerTestTypes()
	cfg, err := ParseConfig([]byte(`{"engines":[
		{"name":"a","type":"cfgtest","profile":{"class":"standard","cost_per_million":0,"quality":90}},
		{"name":"b","type":"cfgtest"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := cfg.Engines[0].Build()
	if err != nil {
		t.Fatal(err)
	}
	// class and cost_per_million are zero values, but given: they replace the base's.
	want := Profile{Quality: 90, Class: ClassStandard, CostPerMillion: 0, Timeout: 3 * time.Second, MaxTexts: 10}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("profile of engines[0] (-want +got):\n%s", diff)
	}
	_, got, err = cfg.Engines[1].Build()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff((&cfgEngine{}).Profile(), got); diff != "" {
		t.Errorf("profile without a file profile is not the engine's own (-want +got):\n%s", diff)
	}
	// In code, without a file: non-zero fields replace the base's.
	ec := EngineConfig{Type: "cfgtest", Profile: Profile{Region: "eu", Quality: 95}}
	_, got, err = ec.Build()
	if err != nil {
		t.Fatal(err)
	}
	want = (&cfgEngine{}).Profile()
	want.Region, want.Quality = "eu", 95
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("profile of an EngineConfig made in code (-want +got):\n%s", diff)
	}
}

// randomConfig returns a valid Config drawn from r.
func randomConfig(r *rand.Rand) *Config {
	g := cfgRand{r}
	cfg := &Config{Deadline: g.dur(), Breaker: g.breaker()}
	cfg.Retry = RetryPolicy{PerEngine: g.n(5), Backoff: g.durIn(time.Minute), MaxAttempts: g.n(5), MaxSwitches: g.n(5),
		HedgeAfter: g.dur(), HedgeBudget: g.f(1)}
	cfg.Routing = g.routing()
	cfg.Budget = Budget{Daily: g.f(1000), EconomyAt: g.f(1)}
	cfg.Cache = CacheConfig{Entries: g.n(100000), TTL: g.dur(), Disabled: g.oneIn(4)}
	for i := range 1 + r.IntN(4) {
		cfg.Engines = append(cfg.Engines, g.engine(i))
	}
	if g.oneIn(2) {
		cfg.Probes = g.probes(cfg.Engines[0].Name)
	}
	return cfg
}

// cfgRand draws the parts of a random valid Config from r. The draws happen in a
// fixed order, so one seed always gives the same Configs.
type cfgRand struct{ r *rand.Rand }

// oneIn reports true one time in k.
func (g cfgRand) oneIn(k int) bool { return g.r.IntN(k) == 0 }

// dur is a duration under an hour, zero a third of the time.
func (g cfgRand) dur() time.Duration {
	if g.oneIn(3) {
		return 0
	}
	return time.Duration(g.r.Int64N(int64(time.Hour)))
}

// durIn is a duration under hi, zero a third of the time.
func (g cfgRand) durIn(hi time.Duration) time.Duration {
	if g.oneIn(3) {
		return 0
	}
	return time.Duration(g.r.Int64N(int64(hi)))
}

// durFrom is a duration in [lo, 1h), zero a third of the time.
func (g cfgRand) durFrom(lo time.Duration) time.Duration {
	if g.oneIn(3) {
		return 0
	}
	return lo + time.Duration(g.r.Int64N(int64(time.Hour-lo)))
}

// f is a number in [0, max), zero a third of the time.
func (g cfgRand) f(max float64) float64 {
	if g.oneIn(3) {
		return 0
	}
	return g.r.Float64() * max
}

// n is an integer in [0, max), zero a third of the time.
func (g cfgRand) n(max int) int {
	if g.oneIn(3) {
		return 0
	}
	return g.r.IntN(max)
}

// str is up to 7 runes with JSON's hard characters among them.
func (g cfgRand) str() string {
	const chars = "abcxyzé€\"\\/<>&\n ☃"
	rs := []rune(chars)
	b := make([]rune, g.r.IntN(8))
	for i := range b {
		b[i] = rs[g.r.IntN(len(rs))]
	}
	return string(b)
}

func (g cfgRand) breaker() BreakerPolicy {
	b := BreakerPolicy{Window: 40 + g.n(40), MinCalls: g.n(40), Cooldown: g.durIn(maxCooldown), HalfOpenCalls: g.n(10), PerScene: g.oneIn(2)}
	if g.oneIn(2) {
		b.FailureRatio = 0.2 + g.r.Float64()*0.7
	}
	return b
}

func (g cfgRand) routing() RoutingPolicy {
	rp := RoutingPolicy{Temperature: max(g.f(50), 0.2), MinHealth: g.f(1), Sticky: g.oneIn(2), HealthEvery: g.durFrom(100 * time.Millisecond),
		LegalMinQuality: g.f(100), ChatMaxLatency: g.dur()}
	if g.oneIn(2) {
		rp.Weights = Weights{Quality: 0.4, Availability: 0.25, Speed: 0.2, Cost: 0.15}
	}
	return rp
}

// engine is the i-th engine, with a random given mask as ParseConfig would leave it.
func (g cfgRand) engine(i int) EngineConfig {
	ec := EngineConfig{Name: "e" + string(rune('a'+i)) + g.str(), Type: "cfgtest"}
	if g.oneIn(2) {
		ec.Settings = map[string]string{"key": g.str(), "base_url": g.str()}
	}
	ec.Profile = g.profile()
	ec.given = g.r.Uint64() & (1<<profileType.NumField() - 1)
	if ec.given&(1<<canaryField) != 0 && ec.Profile.Canary == 0 { // as ParseConfig reads "canary": 0
		ec.Profile.Staged, ec.given = true, ec.given|1<<stagedField
	}
	if ec.Profile.Ramp == nil { // a file cannot give "ramp": null
		ec.given &^= 1 << jsonfile.FieldIndex(profileType, "Ramp")
	}
	return ec
}

func (g cfgRand) profile() Profile {
	var p Profile
	p.Quality, p.CostPerMillion, p.RateLimit, p.Canary, p.SafeRate = g.f(100), g.f(100), g.f(100), g.f(100), g.f(100)
	p.Class = CostClass(g.r.IntN(3))
	p.Timeout, p.QuotaPeriod = g.dur(), g.durFrom(time.Second)
	p.Burst, p.MaxConcurrency, p.MaxChars, p.MaxTexts = g.n(10), g.n(10), g.n(10000), g.n(100)
	p.Quota = int64(g.n(1 << 30))
	p.FallbackOnly = g.oneIn(4)
	if g.oneIn(2) {
		p.Region = []string{"", "eu", "us", "cn"}[g.r.IntN(4)]
	}
	if g.oneIn(2) {
		p.Languages = []string{"en", "zh-Hant", "pt-BR"}[:g.r.IntN(4)]
	}
	if g.oneIn(2) {
		p.SceneQuality = map[Scene]float64{}
		for range g.r.IntN(4) {
			p.SceneQuality[Scene(g.r.IntN(len(sceneNames)))] = g.f(100)
		}
	}
	p.Staged = g.oneIn(4)
	if g.oneIn(3) {
		p.Ramp = &Ramp{MinRequests: g.n(1000), StepEvery: g.durFrom(time.Nanosecond), MaxErrorRateDelta: g.f(1),
			MinQualityRatio: g.f(1), MaxLatencyRatio: max(g.f(100), 1)}
		if g.oneIn(2) {
			p.Ramp.Steps = []float64{0.5, 2, 50, 100}[g.r.IntN(4):]
		}
	}
	return p
}

// probes is a probe policy; half the time with a text and an expectation for engine.
func (g cfgRand) probes(engine string) *ProbePolicy {
	p := &ProbePolicy{Interval: g.durFrom(time.Second), Failures: g.n(5)}
	if g.oneIn(2) {
		p.Text, p.Source, p.Target = "hello "+g.str(), "en", "de"
		p.Expect = map[string][]string{engine: {g.str(), g.str()}}
	}
	return p
}

// TestConfigRoundTrip: ParseConfig(MarshalJSON(cfg)) gives cfg back, for random valid
// Configs, and the profile each engine ends up with is the same.
func TestConfigRoundTrip(t *testing.T) {
	registerTestTypes()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		cfg := randomConfig(r)
		data, err := cfg.MarshalJSON()
		if err != nil {
			t.Fatalf("#%d: MarshalJSON: %v", i, err)
		}
		got, err := ParseConfig(data)
		if err != nil {
			t.Fatalf("#%d: ParseConfig(%s): %v", i, data, err)
		}
		if diff := cmp.Diff(cfg, got, cmpopts.IgnoreUnexported(EngineConfig{}), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("#%d: round trip of %s (-want +got):\n%s", i, data, diff)
		}
		for j := range cfg.Engines {
			_, want, err1 := cfg.Engines[j].Build()
			_, p, err2 := got.Engines[j].Build()
			if err1 != nil || err2 != nil {
				t.Fatalf("#%d: Build: %v, %v", i, err1, err2)
			}
			if diff := cmp.Diff(want, p, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("#%d: engine %d's profile after the round trip (-want +got):\n%s", i, j, diff)
			}
		}
		again, err := got.MarshalJSON()
		if err != nil || string(again) != string(data) {
			t.Fatalf("#%d: MarshalJSON is not stable:\n%s\n%s (%v)", i, data, again, err)
		}
	}
}

func TestMarshalRejectsWhatCannotBeWritten(t *testing.T) {
	for _, cfg := range []Config{
		{Budget: Budget{Daily: nan()}},
		{Engines: []EngineConfig{{Type: "x", Profile: Profile{Class: 7}}}},
		{Engines: []EngineConfig{{Type: "x", Profile: Profile{SceneQuality: map[Scene]float64{9: 1}}}}},
	} {
		if out, err := cfg.MarshalJSON(); err == nil {
			t.Errorf("MarshalJSON(%+v) = %s, want an error", cfg, out)
		}
	}
}

func nan() float64 { var z float64; return z / z }

func TestUnmarshalJSONIsParseConfig(t *testing.T) {
	registerTestTypes()
	var cfg Config
	if err := cfg.UnmarshalJSON([]byte(`{"engines":[{"type":"cfgtest"}],"breaker":{"failure_ratio":0.1}}`)); err == nil ||
		!strings.Contains(err.Error(), "breaker.failure_ratio") {
		t.Errorf("UnmarshalJSON = %v, want the breaker.failure_ratio error", err)
	}
	if err := cfg.UnmarshalJSON([]byte(`{"engines":[{"type":"cfgtest"}],"deadline":"3s"}`)); err != nil || cfg.Deadline != 3*time.Second {
		t.Errorf("UnmarshalJSON = %v, Deadline %v", err, cfg.Deadline)
	}
}

func TestLoadConfig(t *testing.T) {
	registerTestTypes()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"engines":[{"type":"cfgtest"}],"deadline":"2s"}`), 0o600)
	cfg, err := LoadConfig(good)
	if err != nil || cfg.Deadline != 2*time.Second {
		t.Fatalf("LoadConfig = %+v, %v", cfg, err)
	}
	big := filepath.Join(dir, "big.json")
	os.WriteFile(big, []byte(`{"_comment":"`+strings.Repeat("x", maxConfigBytes)+`"}`), 0o600)
	for _, p := range []string{filepath.Join(dir, "missing.json"), big, dir} {
		if _, err := LoadConfig(p); KindOf(err) != KindInvalidInput {
			t.Errorf("LoadConfig(%s) = %v, want KindInvalidInput", p, err)
		}
	}
}

func TestRegisterEngineTypePanics(t *testing.T) {
	registerTestTypes()
	build := func(EngineConfig) (Engine, error) { return nil, nil }
	for name, f := range map[string]func(){
		"duplicate":  func() { RegisterEngineType("cfgtest", build) },
		"empty type": func() { RegisterEngineType("", build) },
		"nil build":  func() { RegisterEngineType("cfgtest-nil", nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: RegisterEngineType did not panic", name)
				}
			}()
			f()
		}()
	}
}

// TestWithConfig: the file's config replaces the options before WithConfig, the options
// after it win, and a section the file leaves out means its default.
func TestWithConfig(t *testing.T) {
	registerTestTypes()
	t.Setenv("CFGTEST_KEY", "k")
	t.Run("options before and after", testWithConfigOrder)
	t.Run("sections left out", testWithConfigDefaults)
}

func testWithConfigOrder(t *testing.T) {
	cfg, err := ParseConfig([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Cache.Disabled = true
	opts := []Option{WithEngine(&cfgEngine{name: "code"}, Profile{}), WithDeadline(time.Second), WithConfig(cfg),
		WithRetry(RetryPolicy{MaxAttempts: 5}), WithClock(ManualProbesForTest(systemClock{}))}
	c, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if diff := cmp.Diff([]string{"code", "deepl", "libre"}, clientEngineNames(c)); diff != "" {
		t.Errorf("engines (-want +got):\n%s", diff)
	}
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if o.deadline != 8*time.Second { // the file's, over the option before it
		t.Errorf("deadline = %v, want the file's 8s", o.deadline)
	}
	if o.retry.MaxAttempts != 5 { // the option after it wins
		t.Errorf("MaxAttempts = %d, want 5 from the option after WithConfig", o.retry.MaxAttempts)
	}
	if !o.noCache || o.probes == nil || o.budget.Daily != 50 {
		t.Errorf("noCache %v, probes %v, budget %v: not the file's", o.noCache, o.probes, o.budget.Daily)
	}
	deepl := o.engines[1].p
	if deepl.Quality != 92 || deepl.MaxTexts != 10 || deepl.Region != "eu" {
		t.Errorf("deepl profile %+v: want the file's quality and region over the engine's MaxTexts", deepl)
	}
}

// testWithConfigDefaults: a section the file leaves out means its default, over options
// before it.
func testWithConfigDefaults(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"engines":[{"type":"cfgtest"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	o := defaultOptions()
	WithDeadline(time.Second)(&o)
	WithoutCache()(&o)
	WithProbes(ProbePolicy{})(&o)
	WithConfig(cfg)(&o)
	if o.deadline != 8*time.Second || o.noCache || o.cacheEntries != 10000 || o.cacheTTL != 24*time.Hour || o.probes != nil {
		t.Errorf("options after WithConfig(defaults) = %+v", o)
	}
}

// clientEngineNames lists c's engines by name, in the order Engines gives them.
func clientEngineNames(c *Client) []string {
	var names []string
	for _, e := range c.Engines() {
		names = append(names, e.Name)
	}
	return names
}

// TestWithConfigErrors: New returns WithConfig's own error, the one ParseConfig would give,
// whatever else the options say; the first of two wins.
func TestWithConfigErrors(t *testing.T) {
	registerTestTypes()
	t.Setenv("CFGTEST_KEY", "k")
	cfg, err := ParseConfig([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	os.Unsetenv("CFGTEST_KEY") // gone between parsing and building
	const gone = "engines[0].settings.key: environment variable CFGTEST_KEY is not set"
	o := defaultOptions()
	if err := cfg.apply(&o); err == nil || err.(*Error).Message != gone {
		t.Errorf("apply = %v, want %q", err, gone)
	}
	if len(o.engines) != 0 || o.deadline != defaultOptions().deadline || o.err != nil {
		t.Errorf("a failed apply changed the options: %+v", o)
	}
	code := WithEngine(&cfgEngine{name: "code"}, Profile{})
	for _, tc := range []struct {
		name string
		opts []Option
		want string
	}{
		{"env gone", []Option{WithConfig(cfg)}, gone},
		{"env gone, other engines valid", []Option{code, WithConfig(cfg), WithDeadline(time.Second)}, gone},
		{"nil", []Option{code, WithConfig(nil)}, "config: WithConfig(nil)"},
		{"no engines", []Option{WithConfig(&Config{})}, "engines: at least one engine is required"},
		{"first error wins", []Option{WithConfig(nil), WithConfig(cfg)}, "config: WithConfig(nil)"},
		{"before other validation", []Option{WithConfig(nil), WithDeadline(-1)}, "config: WithConfig(nil)"},
	} {
		cl, err := New(tc.opts...)
		if cl != nil {
			cl.Close()
		}
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindInvalidInput || e.Message != tc.want {
			t.Errorf("%s: New = %v, want KindInvalidInput %q", tc.name, err, tc.want)
		}
	}
}

// closingEngine counts Close calls in closes.
type closingEngine struct{ cfgEngine }

var closes atomic.Int32

func (e *closingEngine) Close() error { closes.Add(1); return nil }

// TestParseConfigClosesValidationEngines: the engines ParseConfig builds to validate the
// settings are closed when they are io.Closers.
func TestParseConfigClosesValidationEngines(t *testing.T) {
	registerTestTypes()
	before := closes.Load()
	if _, err := ParseConfig([]byte(`{"engines":[{"type":"cfgtest-closing"}]}`)); err != nil {
		t.Fatal(err)
	}
	if n := closes.Load() - before; n != 1 {
		t.Errorf("closed %d times, want 1", n)
	}
}
