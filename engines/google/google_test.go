package google

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"golang.org/x/text/language"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformanceV2(t *testing.T) {
	enginetest.Run(t, enginetest.Harness{
		NewEngine: func(t *testing.T, sc enginetest.Scenario) translate.Engine {
			return newServer(t, sc).v2(t)
		},
		ErrorKinds: kindsOf(v2Errors),
		Secrets:    []string{testKey},
		MaxTexts:   v2MaxTexts,
		Native:     nativeOf(New(testKey)),
	})
}

func TestConformanceV3(t *testing.T) {
	enginetest.Run(t, enginetest.Harness{
		NewEngine: func(t *testing.T, sc enginetest.Scenario) translate.Engine {
			return newServer(t, sc).v3(t)
		},
		ErrorKinds: kindsOf(v3Errors),
		Secrets:    []string{testToken},
		MaxTexts:   v2MaxTexts,
		Native:     nativeOf(NewV3(testProject, staticToken(testToken))),
	})
}

func TestV2Request(t *testing.T) {
	tests := []struct {
		name     string
		src, tgt language.Tag
		want     map[string]any
	}{
		{"detect", language.Und, language.Spanish,
			map[string]any{"q": []any{"hello", "world"}, "target": "es", "format": "text"}},
		{"source", language.MustParse("en-US"), language.MustParse("zh-Hant-HK"),
			map[string]any{"q": []any{"hello", "world"}, "source": "en", "target": "zh-TW", "format": "text"}},
		{"simplified", language.MustParse("zh-TW"), language.MustParse("zh"),
			map[string]any{"q": []any{"hello", "world"}, "source": "zh-TW", "target": "zh-CN", "format": "text"}},
		{"hebrew", language.MustParse("iw"), language.MustParse("pt-PT"),
			map[string]any{"q": []any{"hello", "world"}, "source": "he", "target": "pt-PT", "format": "text"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, enginetest.Scenario{})
			res, err := s.v2(t).Translate(context.Background(), &translate.EngineRequest{
				Texts: []string{"hello", "world"}, Source: tt.src, Target: tt.tgt})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"T:hello", "T:world"}, res.Texts); diff != "" {
				t.Errorf("texts (-want +got):\n%s", diff)
			}
			reqs := s.requests()
			if len(reqs) != 1 {
				t.Fatalf("got %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != http.MethodPost || r.Path != "/language/translate/v2" || r.RawQuery != "" {
				t.Errorf("request line %s %s?%s", r.Method, r.Path, r.RawQuery)
			}
			if got := r.Header.Get("X-Goog-Api-Key"); got != testKey {
				t.Errorf("X-Goog-Api-Key = %q", got)
			}
			if diff := cmp.Diff(tt.want, r.Body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			wantSrc := tt.src
			if tt.src == language.Und {
				wantSrc = language.English // the server detected "en"
			}
			if res.Source != wantSrc {
				t.Errorf("Source = %v, want %v", res.Source, wantSrc)
			}
		})
	}
}

func TestV3Request(t *testing.T) {
	s := newServer(t, enginetest.Scenario{})
	e := s.v3(t)
	if e.Name() != NameV3 {
		t.Errorf("Name = %q", e.Name())
	}
	res, err := e.Translate(context.Background(), &translate.EngineRequest{
		Texts: []string{"hello", "world"}, Target: language.MustParse("zh-HK")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"T:hello", "T:world"}, res.Texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	if res.Source != language.English {
		t.Errorf("Source = %v", res.Source)
	}
	r := s.requests()[0]
	if r.Method != http.MethodPost || r.Path != "/v3/projects/my-project/locations/global:translateText" {
		t.Errorf("request line %s %s", r.Method, r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testToken {
		t.Errorf("Authorization = %q", got)
	}
	want := map[string]any{"contents": []any{"hello", "world"}, "mimeType": "text/plain", "targetLanguageCode": "zh-TW"}
	if diff := cmp.Diff(want, r.Body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}

	// A regional location and a given source.
	e = s.v3(t, WithLocation("us-central1"))
	if _, err := e.Translate(context.Background(), &translate.EngineRequest{
		Texts: []string{"hi"}, Source: language.English, Target: language.German}); err != nil {
		t.Fatal(err)
	}
	r = s.requests()[1]
	if r.Path != "/v3/projects/my-project/locations/us-central1:translateText" {
		t.Errorf("path %s", r.Path)
	}
	if got := r.Body["sourceLanguageCode"]; got != "en" {
		t.Errorf("sourceLanguageCode = %v", got)
	}
}

// TestRecorded decodes recorded vendor answers, with HTML-looking text kept verbatim.
func TestRecorded(t *testing.T) {
	for _, tt := range []struct {
		name string
		file string
		mk   func(*server, *testing.T) *Engine
	}{
		{"v2", "v2_translate_ok.json", func(s *server, t *testing.T) *Engine { return s.v2(t) }},
		{"v3", "v3_translate_ok.json", func(s *server, t *testing.T) *Engine { return s.v3(t) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, enginetest.Scenario{})
			s.override = func(w http.ResponseWriter, r *http.Request, texts []string) {
				writeJSON(w, 200, readTestdata(t, tt.file))
			}
			res, err := tt.mk(s, t).Translate(context.Background(), &translate.EngineRequest{
				Texts: []string{"Hello world", `Good morning, "friends" & <neighbours>`}, Target: language.Spanish})
			if err != nil {
				t.Fatal(err)
			}
			want := &translate.EngineResult{
				Texts:  []string{"Hola Mundo", `Buenos días, "amigos" & <vecinos>`},
				Source: language.English,
			}
			if diff := cmp.Diff(want, res, cmp.Comparer(func(a, b language.Tag) bool { return a == b })); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	for _, tt := range []struct {
		name string
		mk   func(*server, *testing.T) *Engine
		max  int
	}{
		{"v2", func(s *server, t *testing.T) *Engine { return s.v2(t) }, v2MaxTexts},
		{"v3", func(s *server, t *testing.T) *Engine { return s.v3(t) }, v3MaxTexts},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, enginetest.Scenario{})
			n := 2*tt.max + 7
			texts := make([]string, n)
			want := make([]string, n)
			for i := range texts {
				if i%50 == 3 {
					continue // empty texts are not sent and stay empty
				}
				texts[i] = fmt.Sprintf("text %d", i)
				want[i] = enginetest.Expected(texts[i])
			}
			res, err := tt.mk(s, t).Translate(context.Background(), &translate.EngineRequest{Texts: texts, Target: language.Spanish})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, res.Texts); diff != "" {
				t.Errorf("texts (-want +got):\n%s", diff)
			}
			var sizes []int
			sent := 0
			for _, r := range s.requests() {
				key := "q"
				if tt.name == "v3" {
					key = "contents"
				}
				n := len(r.Body[key].([]any))
				sizes = append(sizes, n)
				sent += n
				if n > tt.max {
					t.Errorf("request of %d texts", n)
				}
			}
			if nonEmpty := n - (n+46)/50; sent != nonEmpty || sizes[0] != tt.max {
				t.Errorf("request sizes %v, want %d texts in all", sizes, nonEmpty)
			}
		})
	}

	// Code points: 30 000 per request at most; one longer text goes alone.
	long := strings.Repeat("ü", 12000)
	got := split([]string{long, long, long, "", strings.Repeat("x", 40000), "a"}, 128, maxCodepoints)
	var slots [][]int
	for _, b := range got {
		slots = append(slots, b.slots)
	}
	if diff := cmp.Diff([][]int{{0, 1}, {2}, {4}, {5}}, slots); diff != "" {
		t.Errorf("split slots (-want +got):\n%s", diff)
	}
}

func TestEmptyTextsOnly(t *testing.T) {
	s := newServer(t, enginetest.Scenario{})
	res, err := s.v2(t).Translate(context.Background(), &translate.EngineRequest{Texts: []string{"", ""}, Target: language.Spanish})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"", ""}, res.Texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	if n := len(s.requests()); n != 0 {
		t.Errorf("%d requests for empty texts", n)
	}
}

func TestUnmappableTagNotSent(t *testing.T) {
	s := newServer(t, enginetest.Scenario{})
	e := s.v2(t)
	for _, req := range []*translate.EngineRequest{
		{Texts: []string{"a"}, Target: language.MustParse("x-klingon")},
		{Texts: []string{"a"}, Target: language.Und},
		{Texts: []string{"a"}, Source: language.MustParse("und-Latn"), Target: language.Spanish},
		{Texts: []string{"a"}, Source: language.MustParse("qaa"), Target: language.Spanish},
	} {
		_, err := e.Translate(context.Background(), req)
		if translate.KindOf(err) != translate.KindUnsupported {
			t.Errorf("%v -> %v: err %v, want unsupported", req.Source, req.Target, err)
		}
	}
	if n := len(s.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestGoogleCode(t *testing.T) {
	for in, want := range map[string]string{
		"zh": "zh-CN", "zh-CN": "zh-CN", "zh-Hans": "zh-CN", "zh-SG": "zh-CN",
		"zh-Hant": "zh-TW", "zh-TW": "zh-TW", "zh-HK": "zh-TW", "zh-MO": "zh-TW",
		"en-GB": "en", "es-419": "es", "pt": "pt", "pt-BR": "pt", "pt-PT": "pt-PT",
		"fr-CA": "fr-CA", "fr-FR": "fr", "iw": "he", "he": "he", "nb": "no", "no": "no",
		"fil": "tl", "tl": "tl", "mni": "mni-Mtei", "pa-Arab": "pa-Arab", "pa": "pa",
		"sr-Latn": "sr", "ckb": "ckb", "haw": "haw",
	} {
		got, ok := googleCode(language.MustParse(in))
		if !ok || got != want {
			t.Errorf("googleCode(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestErrorsV2(t *testing.T) {
	tests := []struct {
		status int
		file   string
		want   translate.Kind
	}{
		// The trap: both 403, one is a daily quota, the other a rate limit.
		{403, "v2_error_daily_limit.json", translate.KindQuotaExhausted},
		{403, "v2_error_quota_exceeded.json", translate.KindQuotaExhausted},
		{403, "v2_error_user_rate_limit.json", translate.KindRateLimited},
		{403, "v2_error_rate_limit.json", translate.KindRateLimited},
		{403, "v2_error_forbidden.json", translate.KindUnauthorized},
		{403, "v2_error_missing_key.json", translate.KindUnauthorized},
		{401, "v2_error_unauthenticated.json", translate.KindUnauthorized},
		{400, "v2_error_key_invalid.json", translate.KindUnauthorized},
		{400, "v2_error_key_invalid_legacy.json", translate.KindUnauthorized},
		{400, "v2_error_bad_language.json", translate.KindUnsupported},
		{400, "v2_error_bad_language_pair.json", translate.KindUnsupported},
		{400, "v2_error_required.json", translate.KindInvalidInput},
		{400, "v2_error_too_many_segments.json", translate.KindInvalidInput},
		{400, "v2_error_payload_too_large.json", translate.KindTextTooLong},
		{429, "v2_error_429_per_minute.json", translate.KindRateLimited},
		{429, "v2_error_429_per_day.json", translate.KindQuotaExhausted},
		{500, "v2_error_500.json", translate.KindUnavailable},
		{503, "v2_error_503.json", translate.KindUnavailable},
		{502, "", translate.KindUnavailable}, // a proxy's HTML page
		{404, "v3_error_not_found.json", translate.KindUnauthorized},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d_%s", tt.status, tt.file), func(t *testing.T) {
			checkError(t, false, tt.status, tt.file, tt.want)
		})
	}
}

func TestErrorsV3(t *testing.T) {
	tests := []struct {
		status int
		file   string
		want   translate.Kind
	}{
		{429, "v3_error_resource_exhausted.json", translate.KindRateLimited},
		{429, "v3_error_resource_exhausted_daily.json", translate.KindQuotaExhausted},
		{403, "v3_error_permission_denied.json", translate.KindUnauthorized},
		{401, "v3_error_unauthenticated.json", translate.KindUnauthorized},
		{400, "v3_error_invalid_argument.json", translate.KindInvalidInput},
		{400, "v3_error_too_many_contents.json", translate.KindInvalidInput},
		{400, "v3_error_target_language.json", translate.KindUnsupported},
		{400, "v3_error_text_too_long.json", translate.KindTextTooLong},
		{503, "v3_error_unavailable.json", translate.KindUnavailable},
		{500, "v3_error_internal.json", translate.KindUnavailable},
		{504, "v3_error_deadline_exceeded.json", translate.KindTimeout},
		{404, "v3_error_not_found.json", translate.KindUnauthorized},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d_%s", tt.status, tt.file), func(t *testing.T) {
			checkError(t, true, tt.status, tt.file, tt.want)
		})
	}
}

// checkError serves one error response and checks the Kind, status, message and that no
// credential leaks.
func checkError(t *testing.T, v3 bool, status int, file string, want translate.Kind) {
	t.Helper()
	s := newServer(t, enginetest.Scenario{})
	s.override = func(w http.ResponseWriter, r *http.Request, _ []string) {
		if file == "" {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(status)
			w.Write([]byte("<html><body>Bad Gateway</body></html>"))
			return
		}
		w.Header().Set("Retry-After", "7")
		writeJSON(w, status, readTestdata(t, file))
	}
	e := s.v2(t)
	if v3 {
		e = s.v3(t)
	}
	_, err := e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"hello"}, Target: language.Spanish})
	var te *translate.Error
	if !errors.As(err, &te) {
		t.Fatalf("err = %v (%T), want *translate.Error", err, err)
	}
	if te.Kind != want || te.Engine != e.Name() || te.StatusCode != status || te.Message == "" {
		t.Errorf("err = %+v, want kind %v, status %d", te, want, status)
	}
	if file != "" && te.RetryAfter != 7*time.Second {
		t.Errorf("RetryAfter = %v", te.RetryAfter)
	}
	if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), testToken) {
		t.Errorf("credential in error: %v", err)
	}
}

// TestNoCredentialInErrors: a vendor message that echoes the key, and a transport error.
func TestNoCredentialInErrors(t *testing.T) {
	s := newServer(t, enginetest.Scenario{})
	s.override = func(w http.ResponseWriter, r *http.Request, _ []string) {
		googleError(w, 400, "INVALID_ARGUMENT", "API key not valid: "+testKey+" / "+testToken)
	}
	for secret, e := range map[string]*Engine{testKey: s.v2(t), testToken: s.v3(t)} {
		_, err := e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"a"}, Target: language.Spanish})
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("err = %v", err)
		}
	}

	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	e, err := New(testKey, WithBaseURL(deadURL+"/"))
	if err != nil {
		t.Fatal(err)
	}
	e.hc.Transport.(*http.Transport).DisableKeepAlives = true
	_, err = e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"a"}, Target: language.Spanish})
	if translate.KindOf(err) != translate.KindUnavailable || strings.Contains(err.Error(), testKey) {
		t.Errorf("err = %v", err)
	}
}

func TestBadOutput(t *testing.T) {
	for name, reply := range map[string]string{
		"count":   `{"data":{"translations":[{"translatedText":"only one"}]}}`,
		"garbled": `{"data":`,
	} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t, enginetest.Scenario{})
			s.override = func(w http.ResponseWriter, r *http.Request, _ []string) { writeJSON(w, 200, []byte(reply)) }
			_, err := s.v2(t).Translate(context.Background(), &translate.EngineRequest{Texts: []string{"a", "b"}, Target: language.Spanish})
			if translate.KindOf(err) != translate.KindBadOutput {
				t.Errorf("err = %v, want bad output", err)
			}
		})
	}
}

func TestTokenErrors(t *testing.T) {
	s := newServer(t, enginetest.Scenario{})
	secret := "client-secret-123"
	failing := func(context.Context) (string, error) {
		return "", &url.Error{Op: "Post", URL: "https://oauth2.googleapis.com/token?client_secret=" + secret,
			Err: errors.New("connection refused")}
	}
	e, err := NewV3(testProject, failing, WithBaseURL(s.srv.URL), WithHTTPClient(s.srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"a"}, Target: language.Spanish})
	if translate.KindOf(err) != translate.KindUnauthorized || strings.Contains(err.Error(), secret) {
		t.Errorf("err = %v", err)
	}

	empty, _ := NewV3(testProject, staticToken(""), WithBaseURL(s.srv.URL), WithHTTPClient(s.srv.Client()))
	_, err = empty.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"a"}, Target: language.Spanish})
	if translate.KindOf(err) != translate.KindUnauthorized {
		t.Errorf("empty token: err = %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	honouring := func(ctx context.Context) (string, error) { return "", ctx.Err() }
	e, _ = NewV3(testProject, honouring, WithBaseURL(s.srv.URL), WithHTTPClient(s.srv.Client()))
	_, err = e.Translate(ctx, &translate.EngineRequest{Texts: []string{"a"}, Target: language.Spanish})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: err = %v", err)
	}
	if n := len(s.requests()); n != 0 {
		t.Errorf("%d requests sent without a token", n)
	}
}

func TestSupportedPairs(t *testing.T) {
	s := newServer(t, enginetest.Scenario{})
	has := func(ps []translate.LanguagePair, src, tgt string) bool {
		s, tg := language.Und, language.MustParse(tgt)
		if src != "" {
			s = language.MustParse(src)
		}
		for _, p := range ps {
			if p.Source == s && p.Target == tg {
				return true
			}
		}
		return false
	}

	ps, err := s.v2(t).SupportedPairs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// 12 distinct languages (iw and he are one): 12 targets x (11 sources + detect).
	if len(ps) != 12*12 {
		t.Errorf("v2: %d pairs", len(ps))
	}
	for _, c := range [][2]string{{"en", "es"}, {"", "es"}, {"he", "zh-TW"}, {"zh-CN", "en"}} {
		if !has(ps, c[0], c[1]) {
			t.Errorf("v2: missing %s -> %s", c[0], c[1])
		}
	}
	if has(ps, "en", "en") {
		t.Error("v2: en -> en listed")
	}
	r := s.requests()[0]
	if r.Method != http.MethodGet || r.Path != "/language/translate/v2/languages" || r.Header.Get("X-Goog-Api-Key") != testKey {
		t.Errorf("v2 languages request %s %s", r.Method, r.Path)
	}

	ps, err = s.v3(t).SupportedPairs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// 5 sources, 4 targets (la is source only).
	if len(ps) != 4*(1+4) {
		t.Errorf("v3: %d pairs", len(ps))
	}
	if !has(ps, "la", "en") || has(ps, "en", "la") {
		t.Error("v3: la must be a source only")
	}
	r = s.requests()[1]
	if r.Method != http.MethodGet || r.Path != "/v3/projects/my-project/locations/global/supportedLanguages" {
		t.Errorf("v3 languages request %s %s", r.Method, r.Path)
	}

	s.sc = enginetest.Scenario{}
	bad, _ := New("wrong-key", WithBaseURL(s.srv.URL), WithHTTPClient(s.srv.Client()))
	if _, err := bad.SupportedPairs(context.Background()); translate.KindOf(err) != translate.KindUnauthorized {
		t.Errorf("wrong key: err = %v", err)
	}
}

func TestNew(t *testing.T) {
	tok := staticToken("t")
	for name, f := range map[string]func() (*Engine, error){
		"empty key":      func() (*Engine, error) { return New("") },
		"bad base":       func() (*Engine, error) { return New("k", WithBaseURL("::nope")) },
		"relative base":  func() (*Engine, error) { return New("k", WithBaseURL("/v2")) },
		"query in base":  func() (*Engine, error) { return New("k", WithBaseURL("https://x/?key=k")) },
		"empty name":     func() (*Engine, error) { return New("k", WithName("")) },
		"empty project":  func() (*Engine, error) { return NewV3("", tok) },
		"nil token":      func() (*Engine, error) { return NewV3("p", nil) },
		"empty location": func() (*Engine, error) { return NewV3("p", tok, WithLocation("")) },
	} {
		if _, err := f(); translate.KindOf(err) != translate.KindInvalidInput {
			t.Errorf("%s: err = %v, want invalid input", name, err)
		}
	}
	e, err := New("k", WithName("google-eu"))
	if err != nil || e.Name() != "google-eu" {
		t.Fatalf("New: %v, %v", e, err)
	}
	if e.hc == http.DefaultClient {
		t.Error("http.DefaultClient used")
	}
	p := e.Profile()
	if p.MaxTexts != 128 || p.MaxChars != 30000 || p.CostPerMillion != 20 || p.Class != translate.ClassStandard {
		t.Errorf("Profile = %+v", p)
	}
	var _ translate.LanguageSupporter = e
}

// nativeOf is the Native of a bundled Profile, for the conformance suite.
func nativeOf(e *Engine, err error) fidelity.Native {
	if err != nil {
		panic(err)
	}
	return e.Profile().Native
}
