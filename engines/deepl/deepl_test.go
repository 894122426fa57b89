package deepl

import (
	"context"
	"errors"
	"io"
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

// newEngine returns an engine pointed at a fresh spec-following server playing sc.
func newEngine(t *testing.T, sc enginetest.Scenario, setup ...func(*server)) (*Engine, *server) {
	t.Helper()
	s, hs := newServer(t, sc, setup...)
	e, err := New(testKey, WithBaseURL(hs.URL+"/"))
	if err != nil {
		t.Fatal(err)
	}
	return e, s
}

func TestConformance(t *testing.T) {
	enginetest.Run(t, enginetest.Harness{
		NewEngine: func(t *testing.T, sc enginetest.Scenario) translate.Engine {
			e, _ := newEngine(t, sc)
			return e
		},
		ErrorKinds: []translate.Kind{
			translate.KindUnauthorized, translate.KindQuotaExhausted, translate.KindRateLimited,
			translate.KindUnavailable, translate.KindTextTooLong, translate.KindInvalidInput,
			translate.KindUnsupported,
		},
		Secrets:  []string{testKey},
		Source:   language.English,
		Target:   language.German,
		MaxTexts: MaxTexts,
		Native:   nativeOf(New(testKey)),
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
		key  string
		opts []Option
		want string
	}{
		{"empty key", "", nil, "auth key is empty"},
		{"blank key", "  ", nil, "auth key is empty"},
		{"bad URL", testKey, []Option{WithBaseURL("://nope")}, "base URL"},
		{"not http", testKey, []Option{WithBaseURL("ftp://example.com")}, "base URL"},
		{"no host", testKey, []Option{WithBaseURL("http://")}, "base URL"},
		{"empty name", testKey, []Option{WithName("")}, "engine name is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(tt.key, tt.opts...)
			if e != nil || translate.KindOf(err) != translate.KindInvalidInput {
				t.Fatalf("New = %v, %v; want KindInvalidInput", e, err)
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), testKey) {
				t.Errorf("error %q: want it to contain %q and not the key", err, tt.want)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestServerURL(t *testing.T) {
	tests := []struct {
		key  string
		opts []Option
		want string
	}{
		{"abc:fx", nil, "https://api-free.deepl.com/v2/translate"},
		{"abc", nil, "https://api.deepl.com/v2/translate"},
		{"abc:fx", []Option{WithBaseURL("https://api.deepl.com")}, "https://api.deepl.com/v2/translate"},
		{"abc", []Option{WithBaseURL("http://127.0.0.1:9/deepl/")}, "http://127.0.0.1:9/deepl/v2/translate"},
	}
	for _, tt := range tests {
		var got string
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			got = r.URL.String()
			return &http.Response{
				StatusCode: 200, Header: http.Header{},
				Body: io.NopCloser(strings.NewReader(`{"translations":[{"detected_source_language":"EN","text":"Hallo"}]}`)),
			}, nil
		})}
		e, err := New(tt.key, append(tt.opts, WithHTTPClient(hc))...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Translate(context.Background(), req("en", "de", "Hello")); err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("key %q %d opts: URL %q, want %q", tt.key, len(tt.opts), got, tt.want)
		}
	}
}

func TestRequestBody(t *testing.T) {
	tests := []struct {
		src, tgt string
		style    translate.Style
		want     translateBody // Text and ShowBilledCharacters are filled in
	}{
		{"en", "de", translate.StyleDefault, translateBody{SourceLang: "EN", TargetLang: "DE"}},
		{"", "de", translate.StyleDefault, translateBody{TargetLang: "DE"}},
		{"de", "en", 0, translateBody{SourceLang: "DE", TargetLang: "EN-US"}},
		{"de", "en-US", 0, translateBody{SourceLang: "DE", TargetLang: "EN-US"}},
		{"de", "en-GB", 0, translateBody{SourceLang: "DE", TargetLang: "EN-GB"}},
		{"de", "en-AU", 0, translateBody{SourceLang: "DE", TargetLang: "EN-GB"}},
		{"en-GB", "pt", 0, translateBody{SourceLang: "EN", TargetLang: "PT-BR"}},
		{"en", "pt-BR", 0, translateBody{SourceLang: "EN", TargetLang: "PT-BR"}},
		{"en", "pt-PT", 0, translateBody{SourceLang: "EN", TargetLang: "PT-PT"}},
		{"en", "pt-AO", 0, translateBody{SourceLang: "EN", TargetLang: "PT-PT"}},
		{"pt-PT", "zh", 0, translateBody{SourceLang: "PT", TargetLang: "ZH-HANS"}},
		{"en", "zh-CN", 0, translateBody{SourceLang: "EN", TargetLang: "ZH-HANS"}},
		{"en", "zh-Hans", 0, translateBody{SourceLang: "EN", TargetLang: "ZH-HANS"}},
		{"en", "zh-TW", 0, translateBody{SourceLang: "EN", TargetLang: "ZH-HANT"}},
		{"en", "zh-HK", 0, translateBody{SourceLang: "EN", TargetLang: "ZH-HANT"}},
		{"en", "zh-Hant", 0, translateBody{SourceLang: "EN", TargetLang: "ZH-HANT"}},
		{"zh-TW", "en", 0, translateBody{SourceLang: "ZH", TargetLang: "EN-US"}},
		{"en", "es", 0, translateBody{SourceLang: "EN", TargetLang: "ES"}},
		{"en", "es-MX", 0, translateBody{SourceLang: "EN", TargetLang: "ES-419"}},
		{"es-419", "no", 0, translateBody{SourceLang: "ES", TargetLang: "NB"}},
		{"tl", "he", 0, translateBody{SourceLang: "TL", TargetLang: "HE"}},
		{"en", "de", translate.StyleFormal, translateBody{SourceLang: "EN", TargetLang: "DE", Formality: "prefer_more"}},
		{"en", "ja", translate.StyleCasual, translateBody{SourceLang: "EN", TargetLang: "JA", Formality: "prefer_less"}},
		{"en", "pt", translate.StyleFormal, translateBody{SourceLang: "EN", TargetLang: "PT-BR", Formality: "prefer_more"}},
		{"de", "en", translate.StyleFormal, translateBody{SourceLang: "DE", TargetLang: "EN-US"}},
		{"en", "zh", translate.StyleCasual, translateBody{SourceLang: "EN", TargetLang: "ZH-HANS"}},
	}
	for _, tt := range tests {
		t.Run(tt.src+"_"+tt.tgt+"_"+tt.style.String(), func(t *testing.T) {
			e, s := newEngine(t, enginetest.Scenario{})
			r := req(tt.src, tt.tgt, "Hello, <b>world</b> & co!")
			r.Style = tt.style
			res, err := e.Translate(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.Text = []string{"Hello, <b>world</b> & co!"}
			want.ShowBilledCharacters = true
			if diff := cmp.Diff([]translateBody{want}, s.bodies()); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"T:Hello, <b>world</b> & co!"}, res.Texts); diff != "" {
				t.Errorf("texts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnsupportedBeforeSending(t *testing.T) {
	tests := []struct {
		src, tgt string
		kind     translate.Kind
	}{
		{"en", "ace", translate.KindUnsupported}, // v3 only (HideFromV2Endpoint)
		{"en", "yue", translate.KindUnsupported},
		{"en", "haw", translate.KindUnsupported},
		{"yue", "en", translate.KindUnsupported},
		{"ceb", "en", translate.KindUnsupported},
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

func TestRecordedResponse(t *testing.T) {
	e, _ := newEngine(t, enginetest.Scenario{}, func(s *server) { s.translateFile = "translate_response.json" })
	res, err := e.Translate(context.Background(), req("", "de", "Hello, world!", "proton beam"))
	if err != nil {
		t.Fatal(err)
	}
	want := &translate.EngineResult{Texts: []string{"Hallo, Welt!", "Protonenstrahl"}, Source: language.English,
		Sources: []language.Tag{language.English, language.English}, BilledChars: 24}
	if diff := cmp.Diff(want, res, cmp.Comparer(func(a, b language.Tag) bool { return a == b })); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

func TestBatching(t *testing.T) {
	t.Run("texts", func(t *testing.T) {
		e, s := newEngine(t, enginetest.Scenario{})
		texts := make([]string, 120)
		for i := range texts {
			texts[i] = "text " + strings.Repeat("x", i%7) + string(rune('a'+i%26))
		}
		res, err := e.Translate(context.Background(), req("en", "de", texts...))
		if err != nil {
			t.Fatal(err)
		}
		var sizes []int
		for _, b := range s.bodies() {
			sizes = append(sizes, len(b.Text))
		}
		if diff := cmp.Diff([]int{50, 50, 20}, sizes); diff != "" {
			t.Errorf("texts per request (-want +got):\n%s", diff)
		}
		for i, txt := range texts {
			if res.Texts[i] != enginetest.Expected(txt) {
				t.Fatalf("text %d = %q, want %q", i, res.Texts[i], enginetest.Expected(txt))
			}
		}
		if res.BilledChars == 0 {
			t.Error("BilledChars = 0")
		}
	})
	t.Run("bytes", func(t *testing.T) {
		e, s := newEngine(t, enginetest.Scenario{})
		big := strings.Repeat("a", 50_000)
		quotes := strings.Repeat(`"`, 40_000) // 80 000 bytes as JSON: fits beside one big, not two
		texts := []string{big, big, big, quotes, "tail", quotes}
		res, err := e.Translate(context.Background(), req("en", "de", texts...))
		if err != nil {
			t.Fatal(err)
		}
		var sizes []int
		for _, b := range s.bodies() {
			sizes = append(sizes, len(b.Text))
		}
		if diff := cmp.Diff([]int{2, 3, 1}, sizes); diff != "" {
			t.Errorf("texts per request (-want +got):\n%s", diff)
		}
		if len(res.Texts) != len(texts) || res.Texts[4] != "T:tail" {
			t.Errorf("texts out of order")
		}
	})
	t.Run("boundary", func(t *testing.T) {
		e, s := newEngine(t, enginetest.Scenario{})
		proto := translateBody{Text: []string{""}, TargetLang: "DE", SourceLang: "EN", ShowBilledCharacters: true}
		fits := strings.Repeat("b", MaxRequestBytes-len(encode(&proto)))
		if _, err := e.Translate(context.Background(), req("en", "de", fits)); err != nil {
			t.Fatalf("a body of exactly 128 KiB: %v", err)
		}
		_, err := e.Translate(context.Background(), req("en", "de", fits+"b"))
		if translate.KindOf(err) != translate.KindTextTooLong {
			t.Fatalf("a body of 128 KiB + 1: err = %v, want KindTextTooLong", err)
		}
		if n := len(s.bodies()); n != 1 {
			t.Errorf("%d requests reached the server, want 1", n)
		}
	})
}

func TestEmptyTexts(t *testing.T) {
	e, s := newEngine(t, enginetest.Scenario{})
	res, err := e.Translate(context.Background(), req("en", "de", "", "a", ""))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"", "T:a", ""}, res.Texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	res, err = e.Translate(context.Background(), req("en", "de", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"", ""}, res.Texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	if n := len(s.bodies()); n != 1 {
		t.Errorf("%d requests, want 1 (empty texts are not sent)", n)
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
		{"456 quota", 456, nil, "error_456.json",
			translate.Error{Kind: translate.KindQuotaExhausted, StatusCode: 456, Message: "Quota Exceeded"}},
		{"429 retry-after", 429, http.Header{"Retry-After": {"7"}}, "error_429.json",
			translate.Error{Kind: translate.KindRateLimited, StatusCode: 429, RetryAfter: 7 * time.Second,
				Message: "Too many requests, please wait and resend your request."}},
		{"529 overload", 529, nil, "error_529.json",
			translate.Error{Kind: translate.KindRateLimited, StatusCode: 529,
				Message: "Too many requests, DeepL servers are currently experiencing high load"}},
		{"403", 403, nil, "error_403.json",
			translate.Error{Kind: translate.KindUnauthorized, StatusCode: 403, Message: "Authorization failure, check auth_key"}},
		{"403 echoing the key", 403, nil, `{"message":"Wrong endpoint for key ` + testKey + `. Use https://api-free.deepl.com"}`,
			translate.Error{Kind: translate.KindUnauthorized, StatusCode: 403,
				Message: "Wrong endpoint for key [REDACTED]. Use https://api-free.deepl.com"}},
		{"401", 401, nil, `{"message":"Unauthorized"}`,
			translate.Error{Kind: translate.KindUnauthorized, StatusCode: 401, Message: "Unauthorized"}},
		{"413", 413, nil, "error_413.json",
			translate.Error{Kind: translate.KindTextTooLong, StatusCode: 413, Message: "Request Entity Too Large"}},
		{"414 no body", 414, nil, "",
			translate.Error{Kind: translate.KindTextTooLong, StatusCode: 414, Message: "Request URI Too Long"}},
		{"400", 400, nil, "error_400.json",
			translate.Error{Kind: translate.KindInvalidInput, StatusCode: 400,
				Message: "Bad request. Reason: Parameter 'text' not specified."}},
		{"400 target_lang", 400, nil, "error_400_target_lang.json",
			translate.Error{Kind: translate.KindUnsupported, StatusCode: 400, Message: "Value for 'target_lang' not supported."}},
		{"400 source_lang with detail", 400, nil, `{"message":"Bad request","detail":"Value for 'source_lang' not supported."}`,
			translate.Error{Kind: translate.KindUnsupported, StatusCode: 400,
				Message: "Bad request: Value for 'source_lang' not supported."}},
		{"404", 404, nil, "error_404.json",
			translate.Error{Kind: translate.KindInvalidInput, StatusCode: 404, Message: "Not found"}},
		{"500 no body", 500, nil, "",
			translate.Error{Kind: translate.KindUnavailable, StatusCode: 500, Message: "Internal Server Error"}},
		{"503 plain text", 503, nil, "upstream connect error",
			translate.Error{Kind: translate.KindUnavailable, StatusCode: 503, Message: "upstream connect error"}},
		{"504 is unavailable, not timeout", 504, nil, "",
			translate.Error{Kind: translate.KindUnavailable, StatusCode: 504, Message: "Gateway Timeout"}},
		{"200 not JSON", 200, nil, "<html>maintenance</html>",
			translate.Error{Kind: translate.KindBadOutput, StatusCode: 200,
				Message: "decoding response: invalid character '<' looking for beginning of value"}},
		{"200 wrong count", 200, nil, "translate_response.json", // two translations for one text
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
			_, err := e.Translate(context.Background(), req("en", "de", "Hello"))
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

func TestSupportedPairs(t *testing.T) {
	e, s := newEngine(t, enginetest.Scenario{})
	pairs, err := e.SupportedPairs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"GET /v2/languages", "GET /v2/languages"}, s.seen()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	has := map[[2]string]bool{}
	for _, p := range pairs {
		has[[2]string{p.Source.String(), p.Target.String()}] = true
		// Every listed pair is one Translate accepts.
		if _, err := e.targetCode(p.Target); err != nil {
			t.Errorf("pair %v: target: %v", p, err)
		}
		if _, err := e.sourceCode(p.Source); err != nil {
			t.Errorf("pair %v: source: %v", p, err)
		}
	}
	for _, p := range [][2]string{
		{"und", "en"}, {"und", "en-US"}, {"und", "en-GB"}, {"und", "es-419"}, {"en", "de"},
		{"de", "en-GB"}, {"de", "pt"}, {"en", "pt-PT"}, {"zh", "en"}, {"en", "zh-Hant"},
		{"en", "zh-Hans"}, {"en", "zh"}, {"ja", "uk"},
	} {
		if !has[p] {
			t.Errorf("pair %v missing", p)
		}
	}
	for _, p := range [][2]string{{"en", "en-GB"}, {"en", "en"}, {"pt", "pt-PT"}, {"und", "ace"}, {"ace", "en"}} {
		if has[p] {
			t.Errorf("pair %v listed", p)
		}
	}
	// 106 listed targets plus en and pt; und and 101 sources to every target of another base
	// language (en, pt and zh have three targets each, es two, the other 97 one).
	if want := 108 + 101*108 - (3*3 + 2 + 97); len(pairs) != want {
		t.Errorf("%d pairs, want %d", len(pairs), want)
	}
}

func TestSupportedPairsError(t *testing.T) {
	e, _ := newEngine(t, enginetest.Scenario{Mode: enginetest.ModeError, Kind: translate.KindQuotaExhausted})
	_, err := e.SupportedPairs(context.Background())
	if translate.KindOf(err) != translate.KindQuotaExhausted {
		t.Errorf("err = %v, want KindQuotaExhausted", err)
	}
}

func TestProfileAndName(t *testing.T) {
	e, err := New(testKey, WithName("deepl-team"))
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "deepl-team" {
		t.Errorf("Name = %q", e.Name())
	}
	want := translate.Profile{Quality: 88, Class: translate.ClassStandard, CostPerMillion: 25,
		Timeout: 6 * time.Second, MaxChars: 30000, MaxTexts: 50, Region: "eu",
		Native: fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML, fidelity.FormatXML}, Glossary: true}}
	if diff := cmp.Diff(want, e.Profile()); diff != "" {
		t.Errorf("Profile (-want +got):\n%s", diff)
	}
	// DeepL applies the glossaries of languages it has glossaries for; others are the Client's.
	if !e.AppliesGlossary(newGlossary(t, "g", "en-GB", "de", "a", "b")) || e.AppliesGlossary(newGlossary(t, "g", "en", "hi", "a", "b")) {
		t.Error("AppliesGlossary: want en-GB->de applied, en->hi not")
	}
	_, err = e.Translate(context.Background(), req("en", "xx", "a"))
	var te *translate.Error
	if !errors.As(err, &te) || te.Engine != "deepl-team" {
		t.Errorf("err = %v, want Engine deepl-team", err)
	}
}

// nativeOf is the Native of a bundled Profile, for the conformance suite.
func nativeOf(e *Engine, err error) fidelity.Native {
	if err != nil {
		panic(err)
	}
	return e.Profile().Native
}
