package deepl

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
	"unicode/utf8"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
)

// testKey is a free-plan key; tests always override the base URL.
const testKey = "8c1e0b5a-3f2d-4e6c-9a7b-0d1c2e3f4a5b:fx"

// translateFields are the JSON properties DeepL's spec lists for POST /v2/translate.
var translateFields = map[string]bool{
	"text": true, "source_lang": true, "target_lang": true, "context": true,
	"show_billed_characters": true, "split_sentences": true, "preserve_formatting": true,
	"formality": true, "model_type": true, "glossary_id": true, "glossary_ids": true,
	"style_id": true, "translation_memory_id": true, "translation_memory_threshold": true,
	"custom_instructions": true, "tag_handling": true, "tag_handling_version": true,
	"outline_detection": true, "enable_beta_languages": true, "non_splitting_tags": true,
	"splitting_tags": true, "ignore_tags": true,
}

// server is an httptest server that follows DeepL's API description (openapi.yaml v3.11.0)
// and the mock server's extra checks for POST /v2/translate and GET /v2/languages. A request
// the spec rejects fails the test (the adapter must never send one) and gets DeepL's 4xx.
type server struct {
	t   *testing.T
	key string
	sc  enginetest.Scenario
	// reply, when set, answers every authorized, valid request (error table tests).
	reply func(w http.ResponseWriter)
	// translateFile, when set, answers /v2/translate with that testdata file verbatim.
	translateFile string

	sources, targets map[string]language2

	mu       sync.Mutex
	requests []translateBody // valid /v2/translate bodies, in arrival order
	paths    []string        // every request's method and path
}

func newServer(t *testing.T, sc enginetest.Scenario, setup ...func(*server)) (*server, *httptest.Server) {
	t.Helper()
	s := &server{t: t, key: testKey, sc: sc, sources: readLanguages(t, "source"), targets: readLanguages(t, "target")}
	for _, f := range setup {
		f(s)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs
}

func readLanguages(t *testing.T, typ string) map[string]language2 {
	t.Helper()
	var ls []language2
	if err := json.Unmarshal(testdata(t, "languages_"+typ+".json"), &ls); err != nil {
		t.Fatal(err)
	}
	m := make(map[string]language2, len(ls))
	for _, l := range ls {
		m[l.Language] = l
	}
	return m
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (s *server) bodies() []translateBody {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]translateBody(nil), s.requests...)
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

// reject answers a request the spec does not allow and fails the test.
func (s *server) reject(w http.ResponseWriter, status int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.t.Errorf("deepl server: adapter sent a request the spec rejects: %s", msg)
	b, _ := json.Marshal(map[string]string{"message": msg})
	writeJSON(w, status, b)
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.paths = append(s.paths, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	if r.Header.Get("User-Agent") == "" {
		s.reject(w, http.StatusBadRequest, "missing User-Agent") // the mock's extra check
		return
	}
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "DeepL-Auth-Key ")
	if !ok {
		s.reject(w, http.StatusForbidden, "Authorization header lacks the DeepL-Auth-Key scheme")
		return
	}
	if r.URL.Query().Has("auth_key") {
		s.reject(w, http.StatusForbidden, "key in the query")
		return
	}
	if auth != s.key {
		writeJSON(w, http.StatusForbidden, testdata(s.t, "error_403.json"))
		return
	}
	switch {
	case r.URL.Path == "/v2/translate" && r.Method == http.MethodPost:
		s.translate(w, r)
	case r.URL.Path == "/v2/languages" && r.Method == http.MethodGet:
		s.languages(w, r)
	default:
		s.reject(w, http.StatusNotFound, "%s %s is not in the spec", r.Method, r.URL.Path)
	}
}

func (s *server) languages(w http.ResponseWriter, r *http.Request) {
	typ := r.URL.Query().Get("type")
	if typ != "source" && typ != "target" {
		s.reject(w, http.StatusBadRequest, "type=%q", typ)
		return
	}
	if s.scenario(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, testdata(s.t, "languages_"+typ+".json"))
}

// scenario plays ModeHang and ModeError and the reply override; it reports whether it
// answered.
func (s *server) scenario(w http.ResponseWriter, r *http.Request) bool {
	switch {
	case s.reply != nil:
		s.reply(w)
	case s.sc.Mode == enginetest.ModeHang:
		<-r.Context().Done()
	case s.sc.Mode == enginetest.ModeError:
		status, file := errorFor(s.t, s.sc.Kind)
		var body []byte
		if file != "" {
			body = testdata(s.t, file)
		}
		writeJSON(w, status, body)
	default:
		return false
	}
	return true
}

// errorFor is DeepL's documented error for a Kind.
func errorFor(t *testing.T, k translate.Kind) (int, string) {
	switch k {
	case translate.KindUnauthorized:
		return http.StatusForbidden, "error_403.json"
	case translate.KindQuotaExhausted:
		return 456, "error_456.json"
	case translate.KindRateLimited:
		return http.StatusTooManyRequests, "error_429.json"
	case translate.KindUnavailable:
		return http.StatusGatewayTimeout, "" // documented as "Resource currently unavailable", no body
	case translate.KindTextTooLong:
		return http.StatusRequestEntityTooLarge, "error_413.json"
	case translate.KindInvalidInput:
		return http.StatusBadRequest, "error_400.json"
	case translate.KindUnsupported:
		return http.StatusBadRequest, "error_400_target_lang.json"
	}
	t.Fatalf("no DeepL error for kind %v", k)
	return 0, ""
}

func (s *server) translate(w http.ResponseWriter, r *http.Request) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		s.reject(w, http.StatusUnsupportedMediaType, "Content-Type %q", r.Header.Get("Content-Type"))
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
	if err != nil {
		return // the client went away
	}
	if len(raw) > MaxRequestBytes {
		s.reject(w, http.StatusRequestEntityTooLarge, "body over 128 KiB")
		return
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		s.reject(w, http.StatusBadRequest, "body is not a JSON object: %v", err)
		return
	}
	for f := range fields {
		if !translateFields[f] {
			s.reject(w, http.StatusBadRequest, "unknown field %q", f)
			return
		}
	}
	var body struct {
		Text                 []string `json:"text"`
		TargetLang           string   `json:"target_lang"`
		SourceLang           *string  `json:"source_lang"`
		Formality            *string  `json:"formality"`
		ShowBilledCharacters *bool    `json:"show_billed_characters"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		s.reject(w, http.StatusBadRequest, "field types: %v", err)
		return
	}
	switch {
	case body.Text == nil:
		s.reject(w, http.StatusBadRequest, "Parameter 'text' not specified.")
		return
	case len(body.Text) > MaxTexts:
		s.reject(w, http.StatusRequestEntityTooLarge, "%d texts, at most 50", len(body.Text))
		return
	case body.TargetLang == "":
		s.reject(w, http.StatusBadRequest, "Parameter 'target_lang' not specified.")
		return
	}
	tgt, ok := s.targets[strings.ToUpper(body.TargetLang)]
	if !ok {
		s.reject(w, http.StatusBadRequest, "Value for 'target_lang' not supported.")
		return
	}
	if body.SourceLang != nil {
		if _, ok := s.sources[strings.ToUpper(*body.SourceLang)]; !ok {
			s.reject(w, http.StatusBadRequest, "Value for 'source_lang' not supported.")
			return
		}
	}
	if f := body.Formality; f != nil {
		switch *f {
		case "default", "prefer_more", "prefer_less":
		case "more", "less":
			if !tgt.SupportsFormality {
				s.reject(w, http.StatusBadRequest, "'formality' is not supported for given 'target_lang'.")
				return
			}
		default:
			s.reject(w, http.StatusBadRequest, "Value for 'formality' not supported.")
			return
		}
	}
	rec := translateBody{Text: body.Text, TargetLang: body.TargetLang}
	if body.SourceLang != nil {
		rec.SourceLang = *body.SourceLang
	}
	if body.Formality != nil {
		rec.Formality = *body.Formality
	}
	billed := body.ShowBilledCharacters != nil && *body.ShowBilledCharacters
	rec.ShowBilledCharacters = billed
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	s.mu.Unlock()

	if s.scenario(w, r) {
		return
	}
	if s.translateFile != "" {
		writeJSON(w, http.StatusOK, testdata(s.t, s.translateFile))
		return
	}
	detected := "EN"
	if body.SourceLang != nil {
		detected = strings.ToUpper(*body.SourceLang)
	}
	type tr struct {
		DetectedSourceLanguage string `json:"detected_source_language"`
		Text                   string `json:"text"`
		BilledCharacters       *int   `json:"billed_characters,omitempty"`
	}
	out := struct {
		Translations []tr `json:"translations"`
	}{Translations: make([]tr, len(body.Text))}
	for i, txt := range body.Text {
		out.Translations[i] = tr{DetectedSourceLanguage: detected, Text: enginetest.Expected(txt)}
		if billed {
			n := utf8.RuneCountInString(txt)
			out.Translations[i].BilledCharacters = &n
		}
	}
	b, _ := json.Marshal(out)
	writeJSON(w, http.StatusOK, b)
}
