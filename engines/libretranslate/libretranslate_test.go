package libretranslate

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"
	"golang.org/x/text/language"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newEngine returns an engine pointed at a fresh contract-following server playing sc. The
// server wants testKey unless a setup clears it.
func newEngine(t *testing.T, sc enginetest.Scenario, setup ...func(*server)) (*Engine, *server) {
	t.Helper()
	s, hs := newServer(t, sc, append([]func(*server){func(s *server) { s.key = testKey }}, setup...)...)
	e, err := New(hs.URL+"/", s.key)
	if err != nil {
		t.Fatal(err)
	}
	return e, s
}

func noKey(s *server) { s.key = "" }

func TestConformance(t *testing.T) {
	enginetest.Run(t, enginetest.Harness{
		NewEngine: func(t *testing.T, sc enginetest.Scenario) translate.Engine {
			e, _ := newEngine(t, sc)
			return e
		},
		ErrorKinds: []translate.Kind{
			translate.KindUnauthorized, translate.KindRateLimited, translate.KindUnavailable,
			translate.KindInvalidInput, translate.KindUnsupported, translate.KindTextTooLong,
		},
		Secrets:  []string{testKey},
		MaxTexts: DefaultBatchLimit,
		Native:   nativeOf(New("http://127.0.0.1:5000", "")),
	})
}

func TestConformanceSelfHosted(t *testing.T) {
	enginetest.Run(t, enginetest.Harness{
		NewEngine: func(t *testing.T, sc enginetest.Scenario) translate.Engine {
			e, _ := newEngine(t, sc, noKey)
			return e
		},
		Source:   language.German,
		Target:   language.MustParse("zh-TW"),
		MaxTexts: 3,
		Native:   nativeOf(New("http://127.0.0.1:5000", "")),
	})
}

func req(src, tgt string, texts ...string) *translate.EngineRequest {
	r := &translate.EngineRequest{Texts: texts, Target: language.Make(tgt)}
	if src != "" {
		r.Source = language.Make(src)
	}
	return r
}

func TestNewInvalid(t *testing.T) {
	tests := []struct {
		name string
		url  string
		opts []Option
		want string
	}{
		{"empty URL", "", nil, "base URL is empty"},
		{"bad URL", "://x", nil, "base URL"},
		{"not http", "ftp://example.com", nil, "base URL"},
		{"no host", "http://", nil, "base URL"},
		{"empty name", "http://127.0.0.1:5000", []Option{WithName("")}, "engine name is empty"},
		{"batch limit", "http://127.0.0.1:5000", []Option{WithBatchLimit(0)}, "batch limit 0"},
		{"char limit", "http://127.0.0.1:5000", []Option{WithCharLimit(-1)}, "char limit -1"},
		{"empty base URL option", "http://127.0.0.1:5000", []Option{WithBaseURL("")}, "base URL is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(tt.url, testKey, tt.opts...)
			if e != nil || translate.KindOf(err) != translate.KindInvalidInput {
				t.Fatalf("New = %v, %v; want KindInvalidInput", e, err)
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), testKey) {
				t.Errorf("error %q: want it to contain %q and not the key", err, tt.want)
			}
		})
	}
}

func TestRequests(t *testing.T) {
	key := testKey
	tests := []struct {
		name     string
		src, tgt string
		texts    []string
		selfHost bool
		want     []request
	}{
		{"one text", "en", "es", []string{"Hello!"}, false,
			[]request{{Q: []string{"Hello!"}, Source: "en", Target: "es", APIKey: &key}}},
		{"batch", "en", "de", []string{"a", "b"}, false,
			[]request{{Q: []string{"a", "b"}, Batch: true, Source: "en", Target: "de", APIKey: &key}}},
		{"auto", "", "fr", []string{"Hallo"}, false,
			[]request{{Q: []string{"Hallo"}, Source: "auto", Target: "fr", APIKey: &key}}},
		{"self-hosted: no api_key", "en", "es", []string{"Hello!"}, true,
			[]request{{Q: []string{"Hello!"}, Source: "en", Target: "es"}}},
		{"zh simplified", "en", "zh-CN", []string{"x"}, true, []request{{Q: []string{"x"}, Source: "en", Target: "zh"}}},
		{"zh-Hans", "en", "zh-Hans", []string{"x"}, true, []request{{Q: []string{"x"}, Source: "en", Target: "zh"}}},
		{"zh traditional", "en", "zh-TW", []string{"x"}, true, []request{{Q: []string{"x"}, Source: "en", Target: "zt"}}},
		{"zh-Hant source", "zh-Hant", "en", []string{"x"}, true, []request{{Q: []string{"x"}, Source: "zt", Target: "en"}}},
		{"pt-BR", "en", "pt-BR", []string{"x"}, true, []request{{Q: []string{"x"}, Source: "en", Target: "pb"}}},
		{"pt", "en", "pt", []string{"x"}, true, []request{{Q: []string{"x"}, Source: "en", Target: "pt"}}},
		{"pt-PT", "en", "pt-PT", []string{"x"}, true, []request{{Q: []string{"x"}, Source: "en", Target: "pt"}}},
		{"en-GB", "en-GB", "de-AT", []string{"x"}, true, []request{{Q: []string{"x"}, Source: "en", Target: "de"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var setup []func(*server)
			if tt.selfHost {
				setup = append(setup, noKey)
			}
			e, s := newEngine(t, enginetest.Scenario{}, setup...)
			res, err := e.Translate(context.Background(), req(tt.src, tt.tgt, tt.texts...))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, s.got()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			for i, txt := range tt.texts {
				if res.Texts[i] != enginetest.Expected(txt) {
					t.Errorf("text %d = %q", i, res.Texts[i])
				}
			}
			if tt.src == "" && res.Source != language.English {
				t.Errorf("Source = %v, want the detected en", res.Source)
			}
		})
	}
}

func TestUnsupportedBeforeSending(t *testing.T) {
	tests := []struct {
		src, tgt string
		kind     translate.Kind
	}{
		{"en", "haw", translate.KindUnsupported}, // no ISO 639-1 code
		{"yue", "en", translate.KindUnsupported},
		{"en", "und", translate.KindInvalidInput},
	}
	for _, tt := range tests {
		e, s := newEngine(t, enginetest.Scenario{})
		_, err := e.Translate(context.Background(), req(tt.src, tt.tgt, "Hello"))
		var te *translate.Error
		if !errors.As(err, &te) || te.Kind != tt.kind || te.Engine != Name {
			t.Errorf("%s -> %s: err = %v; want a *translate.Error of %v from %q", tt.src, tt.tgt, err, tt.kind, Name)
		}
		if p := s.seen(); len(p) != 0 {
			t.Errorf("%s -> %s: requests were sent: %q", tt.src, tt.tgt, p)
		}
	}
}

func TestRecordedResponses(t *testing.T) {
	tag := cmp.Comparer(func(a, b language.Tag) bool { return a == b })
	tests := []struct {
		file  string
		texts []string
		want  *translate.EngineResult
	}{
		{"translate_response.json", []string{"Hello!"},
			&translate.EngineResult{Texts: []string{"¡Hola!"}}},
		{"translate_auto.json", []string{"Bonjour!"},
			&translate.EngineResult{Texts: []string{"Hello!"}, Source: language.French}},
		{"translate_batch_auto.json", []string{"Bonjour!", "Bonjour"},
			&translate.EngineResult{Texts: []string{"Hello!", "Good morning"}, Source: language.French}},
	}
	for _, tt := range tests {
		e, _ := newEngine(t, enginetest.Scenario{}, func(s *server) { s.translateFile = tt.file })
		res, err := e.Translate(context.Background(), req("", "en", tt.texts...))
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if diff := cmp.Diff(tt.want, res, tag); diff != "" {
			t.Errorf("%s: result (-want +got):\n%s", tt.file, diff)
		}
	}
}

func TestBatchingAndEmpty(t *testing.T) {
	s, hs := newServer(t, enginetest.Scenario{})
	e, err := New(hs.URL, "", WithBatchLimit(2))
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"a", "", "b", "c", "", "d", "e"}
	res, err := e.Translate(context.Background(), req("en", "de", texts...))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"T:a", "", "T:b", "T:c", "", "T:d", "T:e"}, res.Texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	var qs [][]string
	for _, r := range s.got() {
		qs = append(qs, r.Q)
	}
	if diff := cmp.Diff([][]string{{"a", "b"}, {"c", "d"}, {"e"}}, qs); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	res, err = e.Translate(context.Background(), req("en", "de", ""))
	if err != nil || len(res.Texts) != 1 || res.Texts[0] != "" {
		t.Errorf("only empty texts: %v, %v", res, err)
	}
	if len(s.got()) != 3 {
		t.Errorf("empty texts reached the server")
	}
}

func TestCharLimit(t *testing.T) {
	s, hs := newServer(t, enginetest.Scenario{})
	e, err := New(hs.URL, "", WithCharLimit(5))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Translate(context.Background(), req("en", "de", "Grüße")); err != nil {
		t.Fatalf("5 characters: %v", err)
	}
	_, err = e.Translate(context.Background(), req("en", "de", "ok", "Grüße!"))
	if translate.KindOf(err) != translate.KindTextTooLong {
		t.Errorf("6 characters: err = %v, want KindTextTooLong", err)
	}
	if len(s.got()) != 1 {
		t.Errorf("%d requests, want 1", len(s.got()))
	}
	if p := e.Profile(); p.MaxChars != 5 {
		t.Errorf("Profile().MaxChars = %d", p.MaxChars)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header http.Header
		body   string // testdata file name when it ends in .json, else the body itself
		want   translate.Error
	}{
		{"400 missing q", 400, nil, "error_400_missing_q.json",
			translate.Error{Kind: translate.KindInvalidInput, StatusCode: 400, Message: "Invalid request: missing q parameter"}},
		{"400 unsupported language", 400, nil, "error_400_unsupported.json",
			translate.Error{Kind: translate.KindUnsupported, StatusCode: 400, Message: "zz is not supported"}},
		{"400 pair not available", 400, nil, "error_400_not_available.json",
			translate.Error{Kind: translate.KindUnsupported, StatusCode: 400,
				Message: "Japanese (ja) is not available as a target language from German (de)"}},
		{"400 char limit", 400, nil, "error_400_char_limit.json",
			translate.Error{Kind: translate.KindTextTooLong, StatusCode: 400,
				Message: "Invalid request: request (5001) exceeds text limit (5000)"}},
		{"400 format", 400, nil, `{"error":"xml format is not supported"}`,
			translate.Error{Kind: translate.KindInvalidInput, StatusCode: 400, Message: "xml format is not supported"}},
		{"400 key required", 400, nil, "error_400_api_key.json",
			translate.Error{Kind: translate.KindUnauthorized, StatusCode: 400,
				Message: "Visit https://portal.libretranslate.com to get an API key"}},
		{"403 invalid key", 403, nil, "error_403.json",
			translate.Error{Kind: translate.KindUnauthorized, StatusCode: 403, Message: "Invalid API key"}},
		{"403 echoing the key", 403, nil, `{"error":"Invalid API key: ` + testKey + `"}`,
			translate.Error{Kind: translate.KindUnauthorized, StatusCode: 403, Message: "Invalid API key: [REDACTED]"}},
		{"403 banned", 403, nil, `{"error":"Too many request limits violations"}`,
			translate.Error{Kind: translate.KindUnauthorized, StatusCode: 403, Message: "Too many request limits violations"}},
		{"429", 429, nil, "error_429.json",
			translate.Error{Kind: translate.KindRateLimited, StatusCode: 429, Message: "Slowdown: 10 per 1 minute"}},
		{"429 retry-after from a proxy", 429, http.Header{"Retry-After": {"30"}}, "error_429.json",
			translate.Error{Kind: translate.KindRateLimited, StatusCode: 429, RetryAfter: 30 * time.Second,
				Message: "Slowdown: 10 per 1 minute"}},
		{"500", 500, nil, "error_500.json",
			translate.Error{Kind: translate.KindUnavailable, StatusCode: 500, Message: "Cannot translate text: CUDA out of memory"}},
		{"502 proxy html", 502, nil, "<html><body>Bad Gateway</body></html>",
			translate.Error{Kind: translate.KindUnavailable, StatusCode: 502, Message: "<html><body>Bad Gateway</body></html>"}},
		{"504 no body", 504, nil, "",
			translate.Error{Kind: translate.KindUnavailable, StatusCode: 504, Message: "Gateway Timeout"}},
		{"404 wrong base URL", 404, nil, "",
			translate.Error{Kind: translate.KindInvalidInput, StatusCode: 404, Message: "Not Found"}},
		{"200 not JSON", 200, nil, "<html>",
			translate.Error{Kind: translate.KindBadOutput, StatusCode: 200,
				Message: "decoding response: invalid character '<' looking for beginning of value"}},
		{"200 no translatedText", 200, nil, `{"detectedLanguage":{"language":"en"}}`,
			translate.Error{Kind: translate.KindBadOutput, StatusCode: 200, Message: "response has no translatedText"}},
		{"200 wrong count", 200, nil, "translate_batch_auto.json",
			translate.Error{Kind: translate.KindBadOutput, Message: "vendor returned 2 texts for 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newEngine(t, enginetest.Scenario{}, func(s *server) {
				body := []byte(tt.body)
				if strings.HasSuffix(tt.body, ".json") {
					body = testdata(t, tt.body)
				}
				s.reply = func(w http.ResponseWriter) {
					for k, v := range tt.header {
						w.Header()[k] = v
					}
					w.WriteHeader(tt.status)
					_, _ = w.Write(body)
				}
			})
			_, err := e.Translate(context.Background(), req("en", "es", "Hello"))
			var got *translate.Error
			if !errors.As(err, &got) {
				t.Fatalf("err = %v (%T), want a *translate.Error", err, err)
			}
			want := tt.want
			want.Engine = Name
			if diff := cmp.Diff(&want, got, cmpopts.IgnoreFields(translate.Error{}, "Err")); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error text contains the key: %v", err)
			}
		})
	}
}

func TestRealKeyErrors(t *testing.T) {
	// Against the server's own key checks, not canned replies.
	s, hs := newServer(t, enginetest.Scenario{}, func(s *server) { s.key = testKey })
	e, err := New(hs.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Translate(context.Background(), req("en", "es", "x")); translate.KindOf(err) != translate.KindUnauthorized {
		t.Errorf("no key: err = %v, want KindUnauthorized", err)
	}
	e, err = New(hs.URL, "wrong-key")
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Translate(context.Background(), req("en", "es", "x"))
	if translate.KindOf(err) != translate.KindUnauthorized || strings.Contains(err.Error(), "wrong-key") {
		t.Errorf("wrong key: err = %v, want KindUnauthorized without the key", err)
	}
	if n := len(s.got()); n != 0 {
		t.Errorf("%d requests recorded as valid", n)
	}
}

func TestSupportedPairs(t *testing.T) {
	e, s := newEngine(t, enginetest.Scenario{})
	pairs, err := e.SupportedPairs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"GET /languages"}, s.seen()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	has := map[[2]string]bool{}
	for _, p := range pairs {
		k := [2]string{p.Source.String(), p.Target.String()}
		if has[k] {
			t.Errorf("pair %v listed twice", k)
		}
		has[k] = true
	}
	for _, p := range [][2]string{
		{"und", "es"}, {"und", "zh-Hans"}, {"und", "zh"}, {"und", "zh-Hant"}, {"und", "pt-BR"},
		{"en", "de"}, {"de", "en"}, {"zh-Hans", "en"}, {"zh", "en"}, {"ja", "en"}, {"ja", "zh"},
		{"pt-BR", "zh-Hant"}, {"en", "pt"},
	} {
		if !has[p] {
			t.Errorf("pair %v missing", p)
		}
	}
	for _, p := range [][2]string{{"en", "en"}, {"ja", "de"}, {"zh", "zh-Hans"}, {"zh-Hans", "zh"}} {
		if has[p] {
			t.Errorf("pair %v listed", p)
		}
	}
	// 12 languages; ja lists en and zh-Hans, the others all 12 (themselves skipped); zh
	// doubles zh-Hans as a source and a target. Sources: zh-Hans and zh to 11 targets (22),
	// 10 others to 12 target tags (120), ja to 3; und to 13 target tags.
	if want := 22 + 120 + 3 + 13; len(pairs) != want {
		t.Errorf("%d pairs, want %d", len(pairs), want)
	}
}

func TestSupportedPairsError(t *testing.T) {
	e, _ := newEngine(t, enginetest.Scenario{Mode: enginetest.ModeError, Kind: translate.KindRateLimited})
	if _, err := e.SupportedPairs(context.Background()); translate.KindOf(err) != translate.KindRateLimited {
		t.Errorf("err = %v, want KindRateLimited", err)
	}
}

func TestProfileAndName(t *testing.T) {
	e, err := New("http://127.0.0.1:5000", "", WithName("lt-eu"), WithBatchLimit(8))
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "lt-eu" {
		t.Errorf("Name = %q", e.Name())
	}
	want := translate.Profile{Quality: 70, Class: translate.ClassFree, Timeout: 6 * time.Second, MaxTexts: 8,
		Native: fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML}}}
	if diff := cmp.Diff(want, e.Profile()); diff != "" {
		t.Errorf("Profile (-want +got):\n%s", diff)
	}
	d, err := New("http://127.0.0.1:5000", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Profile().MaxTexts; got != DefaultBatchLimit {
		t.Errorf("default MaxTexts = %d", got)
	}
}

// nativeOf is the Native of a bundled Profile, for the conformance suite.
func nativeOf(e *Engine, err error) fidelity.Native {
	if err != nil {
		panic(err)
	}
	return e.Profile().Native
}
