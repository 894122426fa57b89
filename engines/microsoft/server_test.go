package microsoft

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
)

// Credentials the test server expects.
const (
	testKey    = "0123456789abcdef0123456789abcdef"
	testRegion = "westeurope"
)

// errorReply is a documented error: HTTP status and the six-digit code of testdata/error_<code>.json.
type errorReply struct {
	status int
	code   int
}

// errorsByKind are the errors the server sends for enginetest.ModeError.
var errorsByKind = map[translate.Kind]errorReply{
	translate.KindUnauthorized:   {401, 401000},
	translate.KindQuotaExhausted: {403, 403001},
	translate.KindRateLimited:    {429, 429001},
	translate.KindUnsupported:    {400, 400036},
	translate.KindInvalidInput:   {400, 400000},
	translate.KindTextTooLong:    {400, 400050},
	translate.KindUnavailable:    {503, 503000},
	translate.KindTimeout:        {408, 408002},
}

func errorKinds() []translate.Kind {
	var out []translate.Kind
	for k := range errorsByKind {
		out = append(out, k)
	}
	return out
}

// Query parameters the spec defines for /translate and /languages.
var (
	translateParams = map[string]bool{
		"api-version": true, "to": true, "from": true, "textType": true, "category": true,
		"profanityAction": true, "profanityMarker": true, "includeAlignment": true,
		"includeSentenceLength": true, "suggestedFrom": true, "fromScript": true, "toScript": true,
		"allowFallback": true,
	}
	languagesParams = map[string]bool{"api-version": true, "scope": true}
)

// seen is one request as the server received it.
type seen struct {
	Method, Path string
	Query        map[string][]string
	Header       http.Header
	Body         []map[string]any
}

// server is an httptest server that follows the Translator v3.0 OpenAPI description: POST
// /translate with api-version=3.0, to, optional from and textType (Plain|Html), a JSON
// array of {"text"} (at most 1000 elements, 50 000 characters), the key in
// Ocp-Apim-Subscription-Key and the region in Ocp-Apim-Subscription-Region; GET /languages;
// ErrorResponse bodies with six-digit codes; x-metered-usage on success. It rejects what the
// spec rejects and records what it saw.
type server struct {
	t      *testing.T
	srv    *httptest.Server
	sc     enginetest.Scenario
	region string // expected region header, "" for a global resource

	// override, when set, answers translate requests after the checks.
	override func(w http.ResponseWriter, r *http.Request, texts []string)

	mu    sync.Mutex
	calls []seen
}

func newServer(t *testing.T, sc enginetest.Scenario) *server {
	t.Helper()
	s := &server{t: t, sc: sc, region: testRegion}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *server) engine(t *testing.T, opts ...Option) *Engine {
	t.Helper()
	e, err := New(testKey, s.region, append([]Option{WithBaseURL(s.srv.URL + "/"), WithHTTPClient(s.srv.Client())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (s *server) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.calls...)
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-RequestId", "0a1b2c3d-test")
	w.WriteHeader(status)
	w.Write(body)
}

// msError writes the recorded error of code, with the status its first digits name.
func (s *server) msError(w http.ResponseWriter, code int) {
	writeJSON(w, code/1000, readTestdata(s.t, fmt.Sprintf("error_%d.json", code)))
}

func (s *server) known() map[string]bool {
	var l struct {
		Translation map[string]any `json:"translation"`
	}
	if err := json.Unmarshal(readTestdata(s.t, "languages.json"), &l); err != nil {
		s.t.Fatal(err)
	}
	m := map[string]bool{}
	for c := range l.Translation {
		m[c] = true
	}
	return m
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := seen{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone()}
	if len(raw) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		var items []struct {
			Text *string `json:"text"`
		}
		if err := dec.Decode(&items); err != nil {
			s.msError(w, 400074)
			return
		}
		for _, it := range items {
			if it.Text == nil {
				s.msError(w, 400000)
				return
			}
			rec.Body = append(rec.Body, map[string]any{"text": *it.Text})
		}
	}
	s.mu.Lock()
	s.calls = append(s.calls, rec)
	s.mu.Unlock()

	if strings.Contains(r.URL.RawQuery, testKey) {
		s.t.Errorf("key in URL query: %s", r.URL.RawQuery)
	}
	if r.Header.Get("Ocp-Apim-Subscription-Key") != testKey {
		s.msError(w, 401000)
		return
	}
	if r.Header.Get("Ocp-Apim-Subscription-Region") != s.region {
		s.msError(w, 401000)
		return
	}
	if id := r.Header.Get("X-ClientTraceId"); id != "" && !isUUID(id) {
		writeJSON(w, 400, []byte(`{"error":{"code":400043,"message":"The client trace ID (ClientTraceId field or X-ClientTranceId header) is missing or invalid."}}`))
		return
	}
	q := r.URL.Query()
	if q.Get("api-version") != "3.0" {
		s.msError(w, 400021)
		return
	}
	switch r.URL.Path {
	case "/languages":
		if r.Method != http.MethodGet {
			writeJSON(w, 405, []byte(`{"error":{"code":405000,"message":"The request method is not supported for the requested resource."}}`))
			return
		}
		for p := range q {
			if !languagesParams[p] {
				s.msError(w, 400000)
				return
			}
		}
		if sc := q.Get("scope"); sc != "" && sc != "translation" {
			s.t.Errorf("scope = %q", sc)
		}
		w.Header().Set("ETag", `"A5F3EE7C9A9B3A0BE82E9E40D1A3C1F2"`)
		writeJSON(w, 200, readTestdata(s.t, "languages.json"))
	case "/translate":
		if r.Method != http.MethodPost {
			writeJSON(w, 405, []byte(`{"error":{"code":405000,"message":"The request method is not supported for the requested resource."}}`))
			return
		}
		s.translate(w, r, q, rec.Body)
	default:
		writeJSON(w, 404, []byte(`{"error":{"code":404001,"message":"The requested resource was not found."}}`))
	}
}

func (s *server) translate(w http.ResponseWriter, r *http.Request, q map[string][]string, body []map[string]any) {
	for p := range q {
		if !translateParams[p] {
			s.msError(w, 400000)
			return
		}
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		s.msError(w, 415000)
		return
	}
	known := s.known()
	to := q["to"]
	if len(to) != 1 || !known[to[0]] {
		s.msError(w, 400036)
		return
	}
	if from, ok := q["from"]; ok && (len(from) != 1 || !known[from[0]]) {
		s.msError(w, 400035)
		return
	}
	if tt := q["textType"]; len(tt) != 1 || tt[0] != "Plain" && tt[0] != "Html" {
		// The spec's enum is Plain|Html; without it the service takes plain, but we say so.
		if len(tt) == 1 {
			s.msError(w, 400071)
			return
		}
		s.t.Errorf("textType = %v, want Plain or Html", tt)
	}
	if len(body) == 0 {
		s.msError(w, 400000)
		return
	}
	if len(body) > maxTexts {
		s.msError(w, 400072)
		return
	}
	var texts []string
	chars := 0
	for _, it := range body {
		t := it["text"].(string)
		texts = append(texts, t)
		chars += utf8.RuneCountInString(t)
	}
	if chars > maxChars {
		s.msError(w, 400077)
		return
	}
	switch s.sc.Mode {
	case enginetest.ModeHang:
		<-r.Context().Done()
		return
	case enginetest.ModeError:
		er, ok := errorsByKind[s.sc.Kind]
		if !ok {
			s.t.Errorf("no documented error for kind %v", s.sc.Kind)
			er = errorReply{500, 500000}
		}
		writeJSON(w, er.status, readTestdata(s.t, fmt.Sprintf("error_%d.json", er.code)))
		return
	}
	if s.override != nil {
		s.override(w, r, texts)
		return
	}
	type item struct {
		DetectedLanguage *struct {
			Language string  `json:"language"`
			Score    float64 `json:"score"`
		} `json:"detectedLanguage,omitempty"`
		Translations []map[string]string `json:"translations"`
	}
	var out []item
	for _, t := range texts {
		it := item{Translations: []map[string]string{{"text": enginetest.Expected(t), "to": to[0]}}}
		if _, ok := q["from"]; !ok {
			it.DetectedLanguage = &struct {
				Language string  `json:"language"`
				Score    float64 `json:"score"`
			}{"en", 1}
		}
		out = append(out, it)
	}
	b, _ := json.Marshal(out)
	w.Header().Set("x-metered-usage", strconv.Itoa(chars))
	w.Header().Set("x-mt-system", "Team")
	writeJSON(w, 200, b)
}
