package microsoft

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
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

func TestConformance(t *testing.T) {
	enginetest.Run(t, enginetest.Harness{
		NewEngine: func(t *testing.T, sc enginetest.Scenario) translate.Engine {
			return newServer(t, sc).engine(t)
		},
		ErrorKinds: errorKinds(),
		Secrets:    []string{testKey},
		MaxTexts:   maxTexts,
		Native:     nativeOf(New(testKey, "")),
	})
}

func TestRequest(t *testing.T) {
	tests := []struct {
		name      string
		src, tgt  language.Tag
		requestID string
		wantQuery map[string][]string
		wantTrace string
	}{
		{"detect", language.Und, language.Spanish, "not-a-uuid",
			map[string][]string{"api-version": {"3.0"}, "to": {"es"}, "textType": {"Plain"}}, ""},
		{"source", language.MustParse("en-GB"), language.MustParse("zh-TW"), "3f2504e0-4f89-41d3-9a0c-0305e82c3301",
			map[string][]string{"api-version": {"3.0"}, "to": {"zh-Hant"}, "from": {"en"}, "textType": {"Plain"}},
			"3f2504e0-4f89-41d3-9a0c-0305e82c3301"},
		{"variants", language.MustParse("zh-CN"), language.MustParse("pt-PT"), "",
			map[string][]string{"api-version": {"3.0"}, "to": {"pt-PT"}, "from": {"zh-Hans"}, "textType": {"Plain"}}, ""},
		{"aliases", language.MustParse("no"), language.MustParse("sr-Latn"), "",
			map[string][]string{"api-version": {"3.0"}, "to": {"sr-Latn"}, "from": {"nb"}, "textType": {"Plain"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, enginetest.Scenario{})
			s.region = ""
			if tt.name == "source" {
				s.region = testRegion
			}
			e := s.engine(t)
			res, err := e.Translate(context.Background(), &translate.EngineRequest{
				Texts: []string{"hello", "", "wörld"}, Source: tt.src, Target: tt.tgt, RequestID: tt.requestID})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"T:hello", "", "T:wörld"}, res.Texts); diff != "" {
				t.Errorf("texts (-want +got):\n%s", diff)
			}
			if res.BilledChars != 10 {
				t.Errorf("BilledChars = %d, want 10", res.BilledChars)
			}
			wantSrc := tt.src
			if wantSrc == language.Und {
				wantSrc = language.English
			}
			if res.Source != wantSrc {
				t.Errorf("Source = %v, want %v", res.Source, wantSrc)
			}
			if tt.src == language.Und { // each text's detected source (TranslateBatch reports it per item)
				if diff := cmp.Diff([]language.Tag{language.English, language.Und, language.English}, res.Sources,
					cmp.Comparer(func(a, b language.Tag) bool { return a == b })); diff != "" {
					t.Errorf("Sources (-want +got):\n%s", diff)
				}
			}
			reqs := s.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			r := reqs[0]
			if r.Method != http.MethodPost || r.Path != "/translate" {
				t.Errorf("request line %s %s", r.Method, r.Path)
			}
			if diff := cmp.Diff(tt.wantQuery, r.Query); diff != "" {
				t.Errorf("query (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]map[string]any{{"text": "hello"}, {"text": "wörld"}}, r.Body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if got := r.Header.Get("X-ClientTraceId"); got != tt.wantTrace {
				t.Errorf("X-ClientTraceId = %q, want %q", got, tt.wantTrace)
			}
			if _, ok := r.Header["Ocp-Apim-Subscription-Region"]; ok != (s.region != "") {
				t.Errorf("region header present = %v, region %q", ok, s.region)
			}
		})
	}
}

func TestRecorded(t *testing.T) {
	s := newServer(t, enginetest.Scenario{})
	s.override = func(w http.ResponseWriter, r *http.Request, texts []string) {
		w.Header().Set("x-metered-usage", "48")
		writeJSON(w, 200, readTestdata(t, "translate_ok.json"))
	}
	res, err := s.engine(t).Translate(context.Background(), &translate.EngineRequest{
		Texts: []string{"Hello world", `Good morning, "friends" & <neighbours>`}, Target: language.Spanish})
	if err != nil {
		t.Fatal(err)
	}
	want := &translate.EngineResult{
		Texts:       []string{"Hola Mundo", `Buenos días, "amigos" & <vecinos>`},
		Source:      language.English,
		Sources:     []language.Tag{language.English, language.English},
		BilledChars: 48,
	}
	if diff := cmp.Diff(want, res, cmp.Comparer(func(a, b language.Tag) bool { return a == b })); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

func TestSplit(t *testing.T) {
	s := newServer(t, enginetest.Scenario{})
	n := 2*maxTexts + 5
	texts := make([]string, n)
	want := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("t%d", i)
		want[i] = enginetest.Expected(texts[i])
	}
	res, err := s.engine(t).Translate(context.Background(), &translate.EngineRequest{
		Texts: texts, Target: language.German, RequestID: "3f2504e0-4f89-41d3-9a0c-0305e82c3301"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, res.Texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	var sizes []int
	var billed int64
	for i, r := range s.requests() {
		sizes = append(sizes, len(r.Body))
		for _, it := range r.Body {
			billed += int64(len([]rune(it["text"].(string))))
		}
		if trace := r.Header.Get("X-ClientTraceId"); (trace != "") != (i == 0) {
			t.Errorf("request %d: X-ClientTraceId %q", i, trace)
		}
	}
	if diff := cmp.Diff([]int{1000, 1000, 5}, sizes); diff != "" {
		t.Errorf("sizes (-want +got):\n%s", diff)
	}
	if res.BilledChars != billed {
		t.Errorf("BilledChars = %d, want %d (sum of x-metered-usage)", res.BilledChars, billed)
	}

	// Characters: 50 000 per request.
	big := strings.Repeat("語", 20000)
	got, tooLong := split([]string{big, big, "", big, "x"}, maxTexts, maxChars)
	var slots [][]int
	for _, b := range got {
		slots = append(slots, b.slots)
	}
	if diff := cmp.Diff([][]int{{0, 1}, {3, 4}}, slots); diff != "" || tooLong != -1 {
		t.Errorf("split slots (-want +got):\n%s, tooLong %d", diff, tooLong)
	}
}

func TestTooLongNotSent(t *testing.T) {
	s := newServer(t, enginetest.Scenario{})
	_, err := s.engine(t).Translate(context.Background(), &translate.EngineRequest{
		Texts: []string{"a", strings.Repeat("b", maxChars+1)}, Target: language.German})
	if translate.KindOf(err) != translate.KindTextTooLong {
		t.Errorf("err = %v, want text too long", err)
	}
	if n := len(s.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestUnmappableTagNotSent(t *testing.T) {
	s := newServer(t, enginetest.Scenario{})
	e := s.engine(t)
	for _, req := range []*translate.EngineRequest{
		{Texts: []string{"a"}, Target: language.MustParse("x-klingon")},
		{Texts: []string{"a"}, Target: language.Und},
		{Texts: []string{"a"}, Source: language.MustParse("und-Latn"), Target: language.Spanish},
	} {
		if _, err := e.Translate(context.Background(), req); translate.KindOf(err) != translate.KindUnsupported {
			t.Errorf("%v -> %v: err %v, want unsupported", req.Source, req.Target, err)
		}
	}
	if n := len(s.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestMSCode(t *testing.T) {
	for in, want := range map[string]string{
		"zh": "zh-Hans", "zh-CN": "zh-Hans", "zh-Hans": "zh-Hans", "zh-SG": "zh-Hans",
		"zh-Hant": "zh-Hant", "zh-TW": "zh-Hant", "zh-HK": "zh-Hant",
		"pt": "pt", "pt-BR": "pt", "pt-PT": "pt-PT", "fr-CA": "fr-CA", "fr-BE": "fr",
		"en-US": "en", "es-419": "es", "no": "nb", "nb": "nb", "tl": "fil", "fil": "fil",
		"sr": "sr-Cyrl", "sr-Cyrl": "sr-Cyrl", "sr-Latn": "sr-Latn", "mn": "mn-Cyrl",
		"mn-Mong": "mn-Mong", "tlh": "tlh-Latn", "iu": "iu", "iu-Latn": "iu-Latn",
		"iw": "he", "yue": "yue",
	} {
		got, ok := msCode(language.MustParse(in))
		if !ok || got != want {
			t.Errorf("msCode(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		status, code int
		want         translate.Kind
	}{
		{400, 400000, translate.KindInvalidInput},
		{400, 400019, translate.KindUnsupported},
		{400, 400023, translate.KindUnsupported},
		{400, 400035, translate.KindUnsupported},
		{400, 400036, translate.KindUnsupported},
		{400, 400050, translate.KindTextTooLong},
		{400, 400077, translate.KindTextTooLong},
		{400, 400072, translate.KindInvalidInput},
		{400, 400074, translate.KindInvalidInput},
		{400, 400021, translate.KindInvalidInput},
		{400, 400071, translate.KindInvalidInput},
		{401, 401000, translate.KindUnauthorized},
		{401, 401015, translate.KindUnauthorized},
		{403, 403000, translate.KindUnauthorized},
		{403, 403001, translate.KindQuotaExhausted},
		{408, 408001, translate.KindUnavailable},
		{408, 408002, translate.KindTimeout},
		{415, 415000, translate.KindInvalidInput},
		{429, 429000, translate.KindRateLimited},
		{429, 429001, translate.KindRateLimited},
		{429, 429002, translate.KindRateLimited},
		{500, 500000, translate.KindUnavailable},
		{503, 503000, translate.KindUnavailable},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.code), func(t *testing.T) {
			checkError(t, tt.status, readTestdata(t, fmt.Sprintf("error_%d.json", tt.code)), tt.want)
		})
	}
	// Undocumented codes fall back to their first three digits, then to the status.
	t.Run("undocumented", func(t *testing.T) {
		checkError(t, 400, []byte(`{"error":{"code":429077,"message":"new limit"}}`), translate.KindRateLimited)
		checkError(t, 400, []byte(`{"error":{"code":"400036","message":"string code"}}`), translate.KindUnsupported)
		checkError(t, 502, []byte(`<html>Bad Gateway</html>`), translate.KindUnavailable)
	})
}

func checkError(t *testing.T, status int, body []byte, want translate.Kind) {
	t.Helper()
	s := newServer(t, enginetest.Scenario{})
	s.override = func(w http.ResponseWriter, r *http.Request, _ []string) {
		w.Header().Set("Retry-After", "3")
		writeJSON(w, status, body)
	}
	e := s.engine(t)
	_, err := e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"hello"}, Target: language.Spanish})
	var te *translate.Error
	if !errors.As(err, &te) {
		t.Fatalf("err = %v (%T), want *translate.Error", err, err)
	}
	if te.Kind != want || te.Engine != Name || te.StatusCode != status || te.Message == "" || te.RetryAfter != 3*time.Second {
		t.Errorf("err = %+v, want kind %v, status %d", te, want, status)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("key in error: %v", err)
	}
}

func TestNoCredentialInErrors(t *testing.T) {
	s := newServer(t, enginetest.Scenario{})
	s.override = func(w http.ResponseWriter, r *http.Request, _ []string) {
		writeJSON(w, 401, []byte(`{"error":{"code":401000,"message":"bad key `+testKey+`"}}`))
	}
	_, err := s.engine(t).Translate(context.Background(), &translate.EngineRequest{Texts: []string{"a"}, Target: language.Spanish})
	if translate.KindOf(err) != translate.KindUnauthorized || strings.Contains(err.Error(), testKey) {
		t.Errorf("err = %v", err)
	}

	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	e, err := New(testKey, "", WithBaseURL(deadURL))
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
		"count":   `[{"translations":[{"text":"one","to":"es"}]}]`,
		"empty":   `[{"translations":[]},{"translations":[]}]`,
		"garbled": `[{"translations":`,
	} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t, enginetest.Scenario{})
			s.override = func(w http.ResponseWriter, r *http.Request, _ []string) { writeJSON(w, 200, []byte(reply)) }
			_, err := s.engine(t).Translate(context.Background(), &translate.EngineRequest{Texts: []string{"a", "b"}, Target: language.Spanish})
			if translate.KindOf(err) != translate.KindBadOutput {
				t.Errorf("err = %v, want bad output", err)
			}
		})
	}
}

func TestSupportedPairs(t *testing.T) {
	s := newServer(t, enginetest.Scenario{})
	e := s.engine(t)
	ps, err := e.SupportedPairs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const n = 18 // languages in testdata/languages.json
	if len(ps) != n*n {
		t.Errorf("%d pairs, want %d", len(ps), n*n)
	}
	has := func(src, tgt language.Tag) bool {
		for _, p := range ps {
			if p.Source == src && p.Target == tgt {
				return true
			}
		}
		return false
	}
	for _, c := range [][2]language.Tag{
		{language.Und, language.Spanish}, {language.English, language.MustParse("zh-Hant")},
		{language.MustParse("sr-Latn"), language.MustParse("pt-PT")},
	} {
		if !has(c[0], c[1]) {
			t.Errorf("missing %v -> %v", c[0], c[1])
		}
	}
	r := s.requests()[0]
	want := map[string][]string{"api-version": {"3.0"}, "scope": {"translation"}}
	if r.Method != http.MethodGet || r.Path != "/languages" || !cmp.Equal(want, r.Query) {
		t.Errorf("request %s %s %v", r.Method, r.Path, r.Query)
	}
}

func TestNew(t *testing.T) {
	for name, f := range map[string]func() (*Engine, error){
		"empty key":     func() (*Engine, error) { return New("", "") },
		"bad base":      func() (*Engine, error) { return New("k", "", WithBaseURL("::nope")) },
		"relative base": func() (*Engine, error) { return New("k", "", WithBaseURL("translate")) },
		"query in base": func() (*Engine, error) { return New("k", "", WithBaseURL("https://x/?a=b")) },
		"empty name":    func() (*Engine, error) { return New("k", "", WithName("")) },
	} {
		if _, err := f(); translate.KindOf(err) != translate.KindInvalidInput {
			t.Errorf("%s: err = %v, want invalid input", name, err)
		}
	}
	e, err := New("k", "", WithName("ms-eu"))
	if err != nil || e.Name() != "ms-eu" {
		t.Fatalf("New: %v, %v", e, err)
	}
	if e.hc == http.DefaultClient {
		t.Error("http.DefaultClient used")
	}
	p := e.Profile()
	if p.MaxTexts != 1000 || p.MaxChars != 50000 || p.CostPerMillion != 10 || p.Quality != 84 {
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
