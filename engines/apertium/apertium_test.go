package apertium

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"golang.org/x/text/language"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeAPy is a test server that follows the APy /translate contract
// (vendor-specs/apertium/apy-translate-contract.md): POST form fields langpair=SRC|TGT and q,
// errors as {"status","code","message","explanation"}, HTML 404 for unknown paths, JSON with
// "</" escaped as "<\/" and non-ASCII written as UTF-8 (APy's dump_json).
type fakeAPy struct {
	t     *testing.T
	pairs map[string]bool // installed pairs, "eng|spa"
	mode  enginetest.Mode
	kind  translate.Kind // for ModeError

	// translate answers q; nil means enginetest.Expected.
	translate func(pair, q string) string
	// format is the format every /translate must have, or formats separated by '|'; ""
	// means txt.
	format string
	// hook, if set, runs before each /translate answer (after validation).
	hook func(pair, q string)

	mu       sync.Mutex
	requests []call // every /translate request, in arrival order
}

type call struct{ Pair, Q string }

func newAPy(t *testing.T, pairs ...string) *fakeAPy {
	a := &fakeAPy{t: t, pairs: map[string]bool{}}
	for _, p := range pairs {
		a.pairs[p] = true
	}
	return a
}

// start serves a on a fresh httptest.Server, closed at the end of the test.
func (a *fakeAPy) start() *httptest.Server {
	srv := httptest.NewServer(a)
	a.t.Cleanup(srv.Close)
	return srv
}

func (a *fakeAPy) seen() []call {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]call(nil), a.requests...)
}

func (a *fakeAPy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/translate":
		a.serveTranslate(w, r)
	case "/listPairs":
		if r.Method != http.MethodGet {
			a.t.Errorf("/listPairs: method %s, want GET", r.Method)
		}
		writeFile(a.t, w, http.StatusOK, "listpairs.json")
	default:
		writeFile(a.t, w, http.StatusNotFound, "not_found.html")
	}
}

func (a *fakeAPy) serveTranslate(w http.ResponseWriter, r *http.Request) {
	t := a.t
	// The adapter POSTs a form; APy would take GET too, but the adapter must not put the
	// text in the URL.
	if r.Method != http.MethodPost {
		t.Errorf("/translate: method %s, want POST", r.Method)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		t.Errorf("/translate: Content-Type %q, want application/x-www-form-urlencoded", ct)
	}
	if r.URL.RawQuery != "" {
		t.Errorf("/translate: query %q, want the parameters in the body", r.URL.RawQuery)
	}
	if err := r.ParseForm(); err != nil {
		t.Errorf("/translate: bad form: %v", err)
	}
	for _, f := range []string{"langpair", "q", "markUnknown", "format"} {
		if n := len(r.PostForm[f]); n != 1 {
			t.Errorf("/translate: field %s sent %d times, want once", f, n)
		}
	}
	for k := range r.PostForm {
		switch k {
		case "langpair", "q", "markUnknown", "format":
		default:
			t.Errorf("/translate: unexpected field %q", k)
		}
	}
	// Without these APy marks unknown words with '*' and parses the text as HTML.
	if v := r.PostForm.Get("markUnknown"); v != "no" {
		t.Errorf("/translate: markUnknown=%q, want no", v)
	}
	want := a.format
	if want == "" {
		want = "txt"
	}
	if v := r.PostForm.Get("format"); !slices.Contains(strings.Split(want, "|"), v) {
		t.Errorf("/translate: format=%q, want %s", v, want)
	}

	pair := r.PostForm.Get("langpair")
	q, hasQ := r.PostForm["q"]
	switch {
	case !strings.Contains(pair, "|"):
		writeFile(t, w, http.StatusBadRequest, "error_invalid_pair.json")
		return
	case !hasQ:
		writeFile(t, w, http.StatusBadRequest, "error_missing_q.json")
		return
	}
	a.mu.Lock()
	a.requests = append(a.requests, call{Pair: pair, Q: q[0]})
	a.mu.Unlock()
	if !a.pairs[pair] {
		writeFile(t, w, http.StatusBadRequest, "error_not_installed.json")
		return
	}
	if a.hook != nil {
		a.hook(pair, q[0])
	}
	switch a.mode {
	case enginetest.ModeHang:
		<-r.Context().Done()
		return
	case enginetest.ModeError:
		switch a.kind {
		case translate.KindUnsupported:
			writeFile(t, w, http.StatusBadRequest, "error_not_installed.json")
		case translate.KindInvalidInput:
			writeFile(t, w, http.StatusBadRequest, "error_missing_q.json")
		case translate.KindUnavailable:
			writeFile(t, w, http.StatusServiceUnavailable, "error_internal.json")
		default:
			t.Errorf("no APy error for kind %v", a.kind)
			writeFile(t, w, http.StatusInternalServerError, "internal_server_error.html")
		}
		return
	}
	out := enginetest.Expected(q[0])
	if a.translate != nil {
		out = a.translate(pair, q[0])
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"responseData":    map[string]any{"translatedText": out},
		"responseDetails": nil,
		"responseStatus":  200,
	})
}

// writeJSON writes v the way APy does: UTF-8, "</" escaped as "<\/".
func writeJSON(w http.ResponseWriter, status int, v any) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(strings.ReplaceAll(strings.TrimSpace(b.String()), "</", `<\/`)))
}

func writeFile(t *testing.T, w http.ResponseWriter, status int, name string) {
	body, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Errorf("testdata: %v", err)
	}
	ct := "application/json; charset=UTF-8"
	if strings.HasSuffix(name, ".html") {
		ct = "text/html; charset=UTF-8"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func newEngine(t *testing.T, srv *httptest.Server, opts ...Option) *Engine {
	t.Helper()
	e, err := New(srv.URL, append([]Option{WithHTTPClient(srv.Client())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func enReq(texts ...string) *translate.EngineRequest {
	return &translate.EngineRequest{Texts: texts, Source: language.English, Target: language.Spanish}
}

func TestConformance(t *testing.T) {
	enginetest.Run(t, enginetest.Harness{
		NewEngine: func(t *testing.T, sc enginetest.Scenario) translate.Engine {
			a := newAPy(t, "eng|spa")
			a.mode, a.kind = sc.Mode, sc.Kind
			a.format = "txt|html" // the Native subtest sends HTML too
			return newEngine(t, a.start())
		},
		ErrorKinds: []translate.Kind{translate.KindUnsupported, translate.KindInvalidInput, translate.KindUnavailable},
		MaxTexts:   1,
		Native:     nativeOf(New("http://127.0.0.1:2737")),
	})
}

func TestTranslate(t *testing.T) {
	a := newAPy(t, "eng|spa")
	e := newEngine(t, a.start())
	texts := []string{"The house is red.", "", "Fish & chips <b>now</b>", "Grüße aus Köln", "a/b </c>"}
	res, err := e.Translate(context.Background(), enReq(texts...))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"T:The house is red.", "", "T:Fish & chips <b>now</b>", "T:Grüße aus Köln", "T:a/b </c>"}
	if diff := cmp.Diff(want, res.Texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	if res.Source != language.Und {
		t.Errorf("Source = %v, want und (APy reports no detected source)", res.Source)
	}
	got := map[string]bool{}
	for _, u := range a.seen() {
		if u.Pair != "eng|spa" {
			t.Errorf("langpair %q, want eng|spa", u.Pair)
		}
		got[u.Q] = true
	}
	if len(a.seen()) != 4 || got[""] {
		t.Errorf("requests %v: want one per non-empty text", a.seen())
	}
}

func TestTranslateRecordedAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeFile(t, w, http.StatusOK, "translate_ok.json")
	}))
	defer srv.Close()
	e := newEngine(t, srv)
	res, err := e.Translate(context.Background(), enReq("Hello World. The house is red."))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Hola Mundo. La casa es roja."}, res.Texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
}

func TestTranslateOnlyEmptyTexts(t *testing.T) {
	a := newAPy(t, "eng|spa")
	e := newEngine(t, a.start())
	res, err := e.Translate(context.Background(), enReq("", ""))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"", ""}, res.Texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	if n := len(a.seen()); n != 0 {
		t.Errorf("%d requests for empty texts, want 0", n)
	}
}

// TestConcurrencyBound checks that several texts are in flight together, never more than
// WithConcurrency, and come back in order.
func TestConcurrencyBound(t *testing.T) {
	const parallel, n = 3, 10
	var inflight, peak atomic.Int32
	arrived := make(chan struct{}, n)
	release := make(chan struct{})
	a := newAPy(t, "eng|spa")
	a.hook = func(pair, q string) {
		cur := inflight.Add(1)
		for {
			p := peak.Load()
			if cur <= p || peak.CompareAndSwap(p, cur) {
				break
			}
		}
		arrived <- struct{}{}
		<-release
		inflight.Add(-1)
	}
	e := newEngine(t, a.start(), WithConcurrency(parallel))
	texts := make([]string, n)
	want := make([]string, n)
	for i := range texts {
		texts[i] = "text " + string(rune('a'+i))
		want[i] = enginetest.Expected(texts[i])
	}
	type result struct {
		res *translate.EngineResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := e.Translate(context.Background(), enReq(texts...))
		done <- result{res, err}
	}()
	// The first text settles the pair alone.
	<-arrived
	release <- struct{}{}
	// Then up to parallel at a time: wait until parallel are in flight before releasing one.
	for i := 0; i < n-1; i++ {
		if i == 0 {
			for range min(parallel, n-1) {
				<-arrived
			}
		} else if i+parallel-1 < n-1 {
			<-arrived
		}
		release <- struct{}{}
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if diff := cmp.Diff(want, r.res.Texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	if p := peak.Load(); p != parallel {
		t.Errorf("peak in-flight requests = %d, want %d", p, parallel)
	}
}

// TestFirstErrorCancelsTheRest: one failing text fails the call with its own error, and the
// texts still in flight are canceled rather than awaited.
func TestFirstErrorCancelsTheRest(t *testing.T) {
	a := newAPy(t, "eng|spa")
	hang := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		switch r.PostForm.Get("q") {
		case "bad":
			once.Do(func() { <-hang }) // answer only once the hanging ones are in flight
			writeFile(t, w, http.StatusServiceUnavailable, "error_internal.json")
		case "slow":
			select {
			case hang <- struct{}{}:
			case <-r.Context().Done():
				return
			}
			<-r.Context().Done() // canceled by the adapter after "bad" fails
		default:
			a.ServeHTTP(w, r)
		}
	}))
	defer srv.Close()
	e := newEngine(t, srv, WithConcurrency(4))
	_, err := e.Translate(context.Background(), enReq("ok", "slow", "bad", "slow", "slow"))
	if k := translate.KindOf(err); k != translate.KindUnavailable {
		t.Fatalf("err = %v (kind %v), want the 503's KindUnavailable", err, k)
	}
}

func TestVariants(t *testing.T) {
	tests := []struct {
		name      string
		installed []string
		src, tgt  language.Tag
		texts     []string
		wantPairs []string // langpair of each request, in order (texts after the first in any order)
	}{
		{"variant installed", []string{"spa|eng", "spa|eng_US"}, language.Spanish, language.AmericanEnglish,
			[]string{"uno"}, []string{"spa|eng_US"}},
		{"variant missing falls back once", []string{"spa|por"}, language.Spanish, language.BrazilianPortuguese,
			[]string{"uno", "dos", "tres"}, []string{"spa|por_BR", "spa|por", "spa|por", "spa|por"}},
		{"no variant asked", []string{"spa|eng", "spa|eng_US"}, language.Spanish, language.English,
			[]string{"uno"}, []string{"spa|eng"}},
		{"valencian", []string{"spa|cat_valencia"}, language.Spanish, language.MustParse("ca-ES-valencia"),
			[]string{"uno"}, []string{"spa|cat_valencia"}},
		{"bokmål from no", []string{"nob|nno"}, language.Norwegian, language.MustParse("nn"),
			[]string{"en"}, []string{"nob|nno"}},
		{"croatian as serbo-croatian", []string{"mkd|hbs_HR"}, language.Macedonian, language.Croatian,
			[]string{"a"}, []string{"mkd|hbs_HR"}},
		{"source region ignored", []string{"eng|spa"}, language.AmericanEnglish, language.MustParse("es-419"),
			[]string{"a"}, []string{"eng|spa"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAPy(t, tt.installed...)
			e := newEngine(t, a.start(), WithConcurrency(1))
			res, err := e.Translate(context.Background(), &translate.EngineRequest{Texts: tt.texts, Source: tt.src, Target: tt.tgt})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Texts) != len(tt.texts) {
				t.Fatalf("got %d texts, want %d", len(res.Texts), len(tt.texts))
			}
			var pairs []string
			for _, u := range a.seen() {
				pairs = append(pairs, u.Pair)
			}
			if diff := cmp.Diff(tt.wantPairs, pairs); diff != "" {
				t.Errorf("langpairs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVariantMissingEverywhere(t *testing.T) {
	a := newAPy(t, "eng|spa")
	e := newEngine(t, a.start())
	_, err := e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"x"}, Source: language.Spanish, Target: language.BrazilianPortuguese})
	if k := translate.KindOf(err); k != translate.KindUnsupported {
		t.Fatalf("err = %v, want KindUnsupported", err)
	}
	if n := len(a.seen()); n != 2 {
		t.Errorf("%d requests, want 2 (por_BR, then por)", n)
	}
}

// TestUnsupportedBeforeRequest: no request for what APy cannot do.
func TestUnsupportedBeforeRequest(t *testing.T) {
	a := newAPy(t, "eng|spa")
	e := newEngine(t, a.start())
	for _, req := range []*translate.EngineRequest{
		{Texts: []string{"x"}, Source: language.Und, Target: language.Spanish},
		{Texts: []string{"x"}, Source: language.English, Target: language.Chinese},
		{Texts: []string{"x"}, Source: language.Japanese, Target: language.Spanish},
		{Texts: []string{"x"}, Source: language.English, Target: language.Und},
	} {
		_, err := e.Translate(context.Background(), req)
		var te *translate.Error
		if !errors.As(err, &te) || te.Kind != translate.KindUnsupported || te.Engine != Name {
			t.Errorf("%v -> %v: err = %v, want a KindUnsupported *translate.Error from %q", req.Source, req.Target, err, Name)
		}
	}
	if n := len(a.seen()); n != 0 {
		t.Errorf("%d requests sent, want 0", n)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		file       string // testdata file, or "" to use body
		body       string
		header     http.Header
		want       translate.Kind
		wantStatus int
		wantMsg    string
		wantRetry  time.Duration
	}{
		{name: "pair not installed", status: 400, file: "error_not_installed.json",
			want: translate.KindUnsupported, wantStatus: 400, wantMsg: "That pair is not installed"},
		{name: "pair invalid", status: 400, file: "error_invalid_pair.json",
			want: translate.KindUnsupported, wantStatus: 400, wantMsg: "That pair is invalid, use e.g. eng|spa"},
		{name: "missing q", status: 400, file: "error_missing_q.json",
			want: translate.KindInvalidInput, wantStatus: 400, wantMsg: "Missing argument q"},
		{name: "pipeline failure", status: 503, file: "error_internal.json",
			want: translate.KindUnavailable, wantStatus: 503, wantMsg: "internal error"},
		{name: "tornado 500 page", status: 500, file: "internal_server_error.html",
			want: translate.KindUnavailable, wantStatus: 500},
		{name: "wrong base URL (404 page)", status: 404, file: "not_found.html",
			want: translate.KindUnavailable, wantStatus: 404, wantMsg: "/translate not found: is the base URL an APy server?"},
		{name: "408 timeout", status: 408, body: `{"status": "error", "code": 408, "message": "Request Timeout", "explanation": "Request timed out"}`,
			want: translate.KindTimeout, wantStatus: 408, wantMsg: "Request timed out"},
		{name: "proxy rate limit", status: 429, body: "Too Many Requests", header: http.Header{"Retry-After": {"7"}},
			want: translate.KindRateLimited, wantStatus: 429, wantRetry: 7 * time.Second},
		{name: "proxy 502", status: 502, body: "<html>Bad Gateway</html>",
			want: translate.KindUnavailable, wantStatus: 502},
		{name: "200 not JSON", status: 200, body: "<html>welcome</html>",
			want: translate.KindBadOutput, wantStatus: 200},
		{name: "200 without translatedText", status: 200, body: `{"responseData": {}, "responseDetails": null, "responseStatus": 200}`,
			want: translate.KindBadOutput, wantStatus: 200},
		{name: "error inside a 200", status: 200, body: `{"status": "error", "code": 400, "message": "Bad Request", "explanation": "That pair is not installed"}`,
			want: translate.KindUnsupported, wantStatus: 400, wantMsg: "That pair is not installed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header()[k] = v
				}
				if tt.file != "" {
					writeFile(t, w, tt.status, tt.file)
					return
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			e := newEngine(t, srv)
			_, err := e.Translate(context.Background(), enReq("secret customer text"))
			var te *translate.Error
			if !errors.As(err, &te) {
				t.Fatalf("err = %v (%T), want *translate.Error", err, err)
			}
			got := struct {
				Kind   translate.Kind
				Status int
				Engine string
				Retry  time.Duration
			}{te.Kind, te.StatusCode, te.Engine, te.RetryAfter}
			want := struct {
				Kind   translate.Kind
				Status int
				Engine string
				Retry  time.Duration
			}{tt.want, tt.wantStatus, Name, tt.wantRetry}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error %v (-want +got):\n%s", err, diff)
			}
			if tt.wantMsg != "" && te.Message != tt.wantMsg {
				t.Errorf("Message = %q, want %q", te.Message, tt.wantMsg)
			}
			if strings.Contains(err.Error(), "secret customer text") {
				t.Errorf("error %q contains the customer's text", err)
			}
		})
	}
}

func TestTransportErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close() // nothing listens there any more

	e, err := New("http://apy:s3cr3t-pw@" + strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Translate(context.Background(), enReq("x"))
	if k := translate.KindOf(err); k != translate.KindUnavailable {
		t.Errorf("refused connection: err = %v, want KindUnavailable", err)
	}
	if err != nil && strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Errorf("error %q contains the base URL's password", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = e.Translate(ctx, enReq("x"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("canceled ctx: err = %v, want context.Canceled", err)
	}
}

func TestBasicAuthRedacted(t *testing.T) {
	a := newAPy(t, "eng|spa")
	srv := a.start()
	u := "http://apy:s3cr3t-pw@" + strings.TrimPrefix(srv.URL, "http://") + "/wrong/"
	e, err := New(u, WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Translate(context.Background(), enReq("x"))
	if k := translate.KindOf(err); k != translate.KindUnavailable {
		t.Errorf("err = %v, want KindUnavailable for a 404", err)
	}
	if err != nil && strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Errorf("error %q contains the base URL's password", err)
	}
}

func TestSupportedPairs(t *testing.T) {
	a := newAPy(t)
	e := newEngine(t, a.start())
	got, err := e.SupportedPairs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tag := language.MustParse
	want := []translate.LanguagePair{
		{Source: tag("es"), Target: tag("en")},
		{Source: tag("es"), Target: tag("en-US")},
		{Source: tag("en"), Target: tag("es")},
		{Source: tag("es"), Target: tag("ca")},
		{Source: tag("es"), Target: tag("ca-valencia")},
		{Source: tag("ca"), Target: tag("es")},
		{Source: tag("es"), Target: tag("pt")},
		{Source: tag("es"), Target: tag("pt-BR")},
		{Source: tag("oc"), Target: tag("ca")},
		{Source: tag("ca"), Target: tag("oc-aranes")},
		{Source: tag("nb"), Target: tag("nn")},
		// nob-nno_e: a variant this package does not know, left out.
		{Source: tag("mk"), Target: tag("hr")},
		{Source: tag("sh"), Target: tag("sl")},
		{Source: tag("eu"), Target: tag("es")},
		// xyz-eng: not a language Apertium has, left out.
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b language.Tag) bool { return a.String() == b.String() })); diff != "" {
		t.Errorf("pairs (-want +got):\n%s", diff)
	}
	// Every listed pair must be addressable: Translate sends exactly the listed codes.
	for _, p := range got {
		if _, ok := sourceCode(p.Source); !ok {
			t.Errorf("listed source %v has no code", p.Source)
		}
		if _, ok := targetCodes(p.Target); !ok {
			t.Errorf("listed target %v has no code", p.Target)
		}
	}
}

func TestSupportedPairsErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeFile(t, w, http.StatusNotFound, "not_found.html")
	}))
	defer srv.Close()
	e := newEngine(t, srv)
	_, err := e.SupportedPairs(context.Background())
	if k := translate.KindOf(err); k != translate.KindUnavailable {
		t.Errorf("err = %v, want KindUnavailable", err)
	}
}

func TestNew(t *testing.T) {
	for _, tt := range []struct {
		name string
		base string
		opts []Option
		ok   bool
	}{
		{"plain", "http://127.0.0.1:2737", nil, true},
		{"trailing slash and path", "https://example.org/apy/", nil, true},
		{"empty", "", nil, false},
		{"blank", "   ", nil, false},
		{"no scheme", "127.0.0.1:2737", nil, false},
		{"ftp", "ftp://example.org", nil, false},
		{"no host", "http://", nil, false},
		{"garbage", "http://[::1", nil, false},
		{"empty name", "http://127.0.0.1:2737", []Option{WithName("")}, false},
		{"base URL option", "", []Option{WithBaseURL("http://127.0.0.1:2737")}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(tt.base, tt.opts...)
			if tt.ok {
				if err != nil || e == nil {
					t.Fatalf("New(%q) = %v, %v; want an engine", tt.base, e, err)
				}
				return
			}
			if k := translate.KindOf(err); k != translate.KindInvalidInput || e != nil {
				t.Fatalf("New(%q) = %v, %v; want a KindInvalidInput error", tt.base, e, err)
			}
		})
	}
	e, err := New("http://u:pw-123@example.org:8080/apy/", WithName("apy-2"))
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "apy-2" || e.base != "http://u:pw-123@example.org:8080/apy" {
		t.Errorf("name %q base %q", e.Name(), e.base)
	}
	_, err = New("ftp://u:pw-123@example.org")
	if err == nil || strings.Contains(err.Error(), "pw-123") {
		t.Errorf("New error %v must not echo the URL's password", err)
	}
}

func TestProfile(t *testing.T) {
	e, err := New("http://127.0.0.1:2737")
	if err != nil {
		t.Fatal(err)
	}
	want := translate.Profile{Quality: 60, Class: translate.ClassFree, Timeout: 5 * time.Second, MaxChars: 5000, MaxTexts: 1,
		Native: fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML}}}
	if diff := cmp.Diff(want, e.Profile()); diff != "" {
		t.Errorf("profile (-want +got):\n%s", diff)
	}
}

func TestCodes(t *testing.T) {
	for _, tt := range []struct {
		tag  string
		src  string // "" means unsupported
		tgts []string
	}{
		{"en", "eng", []string{"eng"}},
		{"en-US", "eng", []string{"eng_US", "eng"}},
		{"en-GB", "eng", []string{"eng_GB", "eng"}},
		{"en-AU", "eng", []string{"eng"}},
		{"es", "spa", []string{"spa"}},
		{"es-MX", "spa", []string{"spa"}},
		{"pt-BR", "por", []string{"por_BR", "por"}},
		{"pt-PT", "por", []string{"por"}},
		{"ca", "cat", []string{"cat"}},
		{"ca-valencia", "cat", []string{"cat_valencia", "cat"}},
		{"oc-aranes", "oci", []string{"oci_aran", "oci"}},
		{"gl", "glg", []string{"glg"}},
		{"it", "ita", []string{"ita"}},
		{"an", "arg", []string{"arg"}},
		{"eu", "eus", []string{"eus"}},
		{"nb", "nob", []string{"nob"}},
		{"no", "nob", []string{"nob"}},
		{"nn", "nno", []string{"nno"}},
		{"sv", "swe", []string{"swe"}},
		{"da", "dan", []string{"dan"}},
		{"fr", "fra", []string{"fra"}},
		{"hr", "hbs", []string{"hbs_HR", "hbs"}},
		{"sr", "hbs", []string{"hbs_SR", "hbs"}},
		{"ms", "zlm", []string{"zlm"}},
		{"se", "sme", []string{"sme"}},
		{"zh", "", nil},
		{"ja", "", nil},
		{"und", "", nil},
	} {
		tag := language.MustParse(tt.tag)
		src, ok := sourceCode(tag)
		if !ok {
			src = ""
		}
		tgts, _ := targetCodes(tag)
		if src != tt.src || !cmp.Equal(tgts, tt.tgts) {
			t.Errorf("%s: source %q targets %q; want %q %q", tt.tag, src, tgts, tt.src, tt.tgts)
		}
	}
}

// nativeOf is the Native of a bundled Profile, for the conformance suite.
func nativeOf(e *Engine, err error) fidelity.Native {
	if err != nil {
		panic(err)
	}
	return e.Profile().Native
}
