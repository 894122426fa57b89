package libretranslate

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
)

const testKey = "lt-3f9a1c7e-5b2d-4e8f-a6c0-9d1b2e3f4a5c"

// server is an httptest server that follows LibreTranslate 1.9.6's /translate and
// /languages contract (vendor-specs/libretranslate/translate-contract.md). With key set it
// runs as with --api-keys. A request the contract rejects fails the test (the adapter must
// never send one) and gets LibreTranslate's 400.
type server struct {
	t   *testing.T
	key string // "" for a server without --api-keys
	sc  enginetest.Scenario
	// reply, when set, answers every valid /translate request (error table tests).
	reply func(w http.ResponseWriter)
	// translateFile, when set, answers /translate with that testdata file verbatim.
	translateFile string

	langs map[string][]string // code -> targets, from testdata/languages.json

	mu       sync.Mutex
	requests []request // valid /translate requests
	paths    []string
}

// request is a /translate request as the server understood it.
type request struct {
	Q      []string
	Batch  bool // q was an array
	Source string
	Target string
	APIKey *string
	HTML   bool // format was "html" (else "text")
}

func newServer(t *testing.T, sc enginetest.Scenario, setup ...func(*server)) (*server, *httptest.Server) {
	t.Helper()
	s := &server{t: t, sc: sc, langs: map[string][]string{}}
	var ls []struct {
		Code    string   `json:"code"`
		Targets []string `json:"targets"`
	}
	if err := json.Unmarshal(testdata(t, "languages.json"), &ls); err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		s.langs[l.Code] = l.Targets
	}
	for _, f := range setup {
		f(s)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (s *server) got() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.requests...)
}

func (s *server) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func errorBody(msg string) []byte {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return b
}

// reject answers a request the contract does not allow and fails the test.
func (s *server) reject(w http.ResponseWriter, status int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.t.Errorf("libretranslate server: adapter sent a request the contract rejects: %s", msg)
	writeJSON(w, status, errorBody(msg))
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.paths = append(s.paths, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	if r.URL.RawQuery != "" {
		s.reject(w, http.StatusBadRequest, "unexpected query (a key must ride in the body)")
		return
	}
	switch {
	case r.URL.Path == "/translate" && r.Method == http.MethodPost:
		s.translate(w, r)
	case r.URL.Path == "/languages" && r.Method == http.MethodGet:
		if !s.scenario(w, r) {
			writeJSON(w, http.StatusOK, testdata(s.t, "languages.json"))
		}
	default:
		s.reject(w, http.StatusNotFound, "%s %s is not in the contract", r.Method, r.URL.Path)
	}
}

// scenario plays the reply override, ModeHang and ModeError; it reports whether it answered.
func (s *server) scenario(w http.ResponseWriter, r *http.Request) bool {
	switch {
	case s.reply != nil:
		s.reply(w)
	case s.sc.Mode == enginetest.ModeHang:
		<-r.Context().Done()
	case s.sc.Mode == enginetest.ModeError:
		status, file := errorFor(s.t, s.sc.Kind)
		writeJSON(w, status, testdata(s.t, file))
	default:
		return false
	}
	return true
}

// errorFor is LibreTranslate's documented error for a Kind.
func errorFor(t *testing.T, k translate.Kind) (int, string) {
	switch k {
	case translate.KindUnauthorized:
		return http.StatusForbidden, "error_403.json"
	case translate.KindRateLimited:
		return http.StatusTooManyRequests, "error_429.json"
	case translate.KindUnavailable:
		return http.StatusInternalServerError, "error_500.json"
	case translate.KindInvalidInput:
		return http.StatusBadRequest, "error_400_missing_q.json"
	case translate.KindUnsupported:
		return http.StatusBadRequest, "error_400_unsupported.json"
	case translate.KindTextTooLong:
		return http.StatusBadRequest, "error_400_char_limit.json"
	}
	t.Fatalf("no LibreTranslate error for kind %v", k)
	return 0, ""
}

// lang resolves a code as LibreTranslate does: lower-cased, legacy aliases mapped.
func (s *server) lang(code string) (string, bool) {
	c := strings.ToLower(code)
	switch c {
	case "zh":
		c = "zh-hans"
	case "zt":
		c = "zh-hant"
	case "pb":
		c = "pt-br"
	}
	for k := range s.langs {
		if strings.ToLower(k) == c {
			return k, true
		}
	}
	return "", false
}

func (s *server) translate(w http.ResponseWriter, r *http.Request) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		s.reject(w, http.StatusBadRequest, "Content-Type %q, want application/json", r.Header.Get("Content-Type"))
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		s.reject(w, http.StatusBadRequest, "body is not a JSON object: %v", err)
		return
	}
	for f := range fields {
		switch f {
		case "q", "source", "target", "format", "alternatives", "api_key":
		default:
			s.reject(w, http.StatusBadRequest, "unknown field %q", f)
			return
		}
	}
	var body struct {
		Source string  `json:"source"`
		Target string  `json:"target"`
		Format *string `json:"format"`
		APIKey *string `json:"api_key"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		s.reject(w, http.StatusBadRequest, "field types: %v", err)
		return
	}
	req := request{Source: body.Source, Target: body.Target, APIKey: body.APIKey}
	var one string
	switch q := fields["q"]; {
	case json.Unmarshal(q, &req.Q) == nil && req.Q != nil:
		req.Batch = true
	case json.Unmarshal(q, &one) == nil && one != "":
		req.Q = []string{one}
	default:
		s.reject(w, http.StatusBadRequest, "Invalid request: missing q parameter")
		return
	}
	switch {
	case body.Source == "":
		s.reject(w, http.StatusBadRequest, "Invalid request: missing source parameter")
		return
	case body.Target == "":
		s.reject(w, http.StatusBadRequest, "Invalid request: missing target parameter")
		return
	case body.Format == nil || *body.Format != "text" && *body.Format != "html":
		// "text" is the default, but the adapter must say so: html would change the output.
		s.reject(w, http.StatusBadRequest, "format must be text or html")
		return
	}
	req.HTML = *body.Format == "html"
	// Keys: a server without --api-keys ignores api_key, but the adapter must not send an
	// empty one; a server with --api-keys wants it.
	switch {
	case s.key == "" && body.APIKey != nil:
		s.reject(w, http.StatusBadRequest, "api_key sent to a server without keys")
		return
	case s.key != "" && (body.APIKey == nil || *body.APIKey == ""):
		writeJSON(w, http.StatusBadRequest, testdata(s.t, "error_400_api_key.json"))
		return
	case s.key != "" && *body.APIKey != s.key:
		writeJSON(w, http.StatusForbidden, testdata(s.t, "error_403.json"))
		return
	}
	src, srcOK := s.lang(body.Source)
	if body.Source == "auto" {
		src, srcOK = "auto", true
	}
	if !srcOK {
		s.reject(w, http.StatusBadRequest, "%s is not supported", body.Source)
		return
	}
	tgt, ok := s.lang(body.Target)
	if !ok {
		s.reject(w, http.StatusBadRequest, "%s is not supported", body.Target)
		return
	}
	if src != "auto" && !contains(s.langs[src], tgt) {
		s.reject(w, http.StatusBadRequest, "%s is not available as a target language from %s", tgt, src)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	if s.scenario(w, r) {
		return
	}
	if s.translateFile != "" {
		writeJSON(w, http.StatusOK, testdata(s.t, s.translateFile))
		return
	}
	type det struct {
		Confidence float64 `json:"confidence"`
		Language   string  `json:"language"`
	}
	out := map[string]any{}
	texts := make([]string, len(req.Q))
	dets := make([]det, len(req.Q))
	for i, q := range req.Q {
		texts[i] = enginetest.Expected(q)
		dets[i] = det{90, "en"}
	}
	if req.Batch {
		out["translatedText"] = texts
		if src == "auto" {
			out["detectedLanguage"] = dets
		}
	} else {
		out["translatedText"] = texts[0]
		if src == "auto" {
			out["detectedLanguage"] = dets[0]
		}
	}
	b, _ := json.Marshal(out)
	writeJSON(w, http.StatusOK, b)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
