package deepl

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
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
	url string // the httptest server's URL, once started
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

	// Glossaries (POST /v3/glossaries, DELETE /v3/glossaries/{id}), as deepl-mock keeps them.
	glossaries map[string]*mockGlossary // by glossary_id
	created    []createBody             // valid creation bodies, in arrival order
	// createGate, when set, holds each creation until it can receive.
	createGate chan struct{}
	// glossaryFails answers every translation with a glossary with a 400 that names no
	// glossary (as deepl-mock does when its own lookup fails).
	glossaryFails bool
	// unlisted makes GET /v3/glossaries list nothing.
	unlisted bool
	// createReply, when set, answers each valid creation instead (status, body).
	createReply func(w http.ResponseWriter)
}

// mockGlossary is one glossary the server holds: its one dictionary's pair and entries.
type mockGlossary struct {
	name           string
	source, target string
	entries        map[string]string
}

func newServer(t *testing.T, sc enginetest.Scenario, setup ...func(*server)) (*server, *httptest.Server) {
	t.Helper()
	s := &server{t: t, key: testKey, sc: sc, sources: readLanguages(t, "source"), targets: readLanguages(t, "target")}
	for _, f := range setup {
		f(s)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	s.url = hs.URL
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
	case r.URL.Path == "/v3/glossaries" && r.Method == http.MethodPost:
		s.createGlossary(w, r)
	case r.URL.Path == "/v3/glossaries" && r.Method == http.MethodGet:
		s.listGlossaries(w)
	case strings.HasPrefix(r.URL.Path, "/v3/glossaries/") && r.Method == http.MethodDelete:
		s.deleteGlossary(w, strings.TrimPrefix(r.URL.Path, "/v3/glossaries/"))
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
		TagHandling          *string  `json:"tag_handling"`
		GlossaryID           *string  `json:"glossary_id"`
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
	if th := body.TagHandling; th != nil && *th != "html" && *th != "xml" {
		s.reject(w, http.StatusBadRequest, "Value for 'tag_handling' not supported.")
		return
	}
	var gl *mockGlossary
	if id := body.GlossaryID; id != nil {
		if !isUUID(*id) {
			s.reject(w, http.StatusBadRequest, "Value for 'glossary_id' not supported.")
			return
		}
		if body.SourceLang == nil {
			s.reject(w, http.StatusBadRequest, "Use of a glossary requires the source_lang parameter to be specified")
			return
		}
		s.mu.Lock()
		gl = s.glossaries[*id]
		s.mu.Unlock()
		if gl != nil && (!strings.EqualFold(gl.source, *body.SourceLang) ||
			!strings.EqualFold(gl.target, strings.SplitN(body.TargetLang, "-", 2)[0])) {
			s.reject(w, http.StatusBadRequest, "glossary %s-%s for %s-%s", gl.source, gl.target, *body.SourceLang, body.TargetLang)
			return
		}
	}
	rec := translateBody{Text: body.Text, TargetLang: body.TargetLang}
	if body.TagHandling != nil {
		rec.TagHandling = *body.TagHandling
	}
	if body.GlossaryID != nil {
		rec.GlossaryID = *body.GlossaryID
	}
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
	if body.GlossaryID != nil && s.glossaryFails {
		writeJSON(w, http.StatusBadRequest, []byte(`{"message":"Cannot read properties of undefined (reading 'entryList')"}`))
		return
	}
	if body.GlossaryID != nil && gl == nil { // deleted or never made: deepl-mock's answer
		writeJSON(w, http.StatusBadRequest, []byte(`{"message":"Glossary not found"}`))
		return
	}

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
		if t, ok := gl.lookup(txt); ok { // as deepl-mock: a text that is a whole source term
			out.Translations[i].Text = t
		}
		if billed {
			n := utf8.RuneCountInString(txt)
			out.Translations[i].BilledCharacters = &n
		}
	}
	b, _ := json.Marshal(out)
	writeJSON(w, http.StatusOK, b)
}

func (g *mockGlossary) lookup(text string) (string, bool) {
	if g == nil {
		return "", false
	}
	t, ok := g.entries[text]
	return t, ok
}

// createGlossary is POST /v3/glossaries (CreateMultilingualGlossaryParameters, JSON), with
// deepl-mock's checks of the TSV entries.
func (s *server) createGlossary(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		s.reject(w, http.StatusUnsupportedMediaType, "Content-Type %q", r.Header.Get("Content-Type"))
		return
	}
	var body createBody
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		s.reject(w, http.StatusBadRequest, "glossary body: %v", err)
		return
	}
	if body.Name == "" || len(body.Dictionaries) == 0 {
		s.reject(w, http.StatusBadRequest, "Missing or invalid argument: name or dictionaries")
		return
	}
	g := &mockGlossary{name: body.Name, entries: map[string]string{}}
	for _, d := range body.Dictionaries {
		if !strings.Contains(glossaryCodes, " "+d.SourceLang+" ") || !strings.Contains(glossaryCodes, " "+d.TargetLang+" ") {
			s.reject(w, http.StatusBadRequest, "Unsupported glossary source and target language pair")
			return
		}
		if d.EntriesFormat != "tsv" {
			s.reject(w, http.StatusBadRequest, "Value for entries_format not supported.")
			return
		}
		for i, line := range strings.Split(d.Entries, "\n") {
			src, tgt, ok := strings.Cut(strings.TrimSpace(line), "\t")
			if !ok || src == "" || tgt == "" || strings.ContainsAny(src+tgt, "\t\r") {
				s.reject(w, http.StatusBadRequest, "Invalid glossary entries provided: entry %d", i)
				return
			}
			if _, dup := g.entries[src]; dup {
				s.reject(w, http.StatusBadRequest, "Invalid glossary entries provided: entry %d duplicates a key", i)
				return
			}
			g.entries[src] = tgt
		}
		g.source, g.target = d.SourceLang, d.TargetLang
	}
	s.mu.Lock()
	s.created = append(s.created, body)
	n := len(s.created)
	gate, reply := s.createGate, s.createReply
	s.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if reply != nil {
		reply(w)
		return
	}
	id := fmt.Sprintf("def3a26b-3e84-45b3-84ae-%012d", n)
	s.mu.Lock()
	if s.glossaries == nil {
		s.glossaries = map[string]*mockGlossary{}
	}
	s.glossaries[id] = g
	s.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"glossary_id": id, "name": body.Name, "creation_time": "2021-08-03T14:16:18.329Z",
		"dictionaries": []map[string]any{{"source_lang": g.source, "target_lang": g.target, "entry_count": len(g.entries)}}})
	writeJSON(w, http.StatusCreated, b)
}

// listGlossaries is GET /v3/glossaries: every glossary held, without entries, in id order.
func (s *server) listGlossaries(w http.ResponseWriter) {
	s.mu.Lock()
	var list []map[string]any
	for _, id := range slices.Sorted(maps.Keys(s.glossaries)) {
		if s.unlisted {
			break
		}
		g := s.glossaries[id]
		list = append(list, map[string]any{"glossary_id": id, "name": g.name, "creation_time": "2021-08-03T14:16:18.329Z",
			"dictionaries": []map[string]any{{"source_lang": g.source, "target_lang": g.target, "entry_count": len(g.entries)}}})
	}
	s.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"glossaries": list})
	writeJSON(w, http.StatusOK, b)
}

// deleteGlossary is DELETE /v3/glossaries/{glossary_id}.
func (s *server) deleteGlossary(w http.ResponseWriter, id string) {
	s.mu.Lock()
	_, ok := s.glossaries[id]
	delete(s.glossaries, id)
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, nil)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// forgetGlossaries drops every glossary, as DeepL does with an expired or deleted one.
func (s *server) forgetGlossaries() {
	s.mu.Lock()
	clear(s.glossaries)
	s.mu.Unlock()
}

func (s *server) creations() []createBody {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]createBody(nil), s.created...)
}

// isUUID reports whether id has the 8-4-4-4-12 hex form deepl-mock requires of glossary ids.
func isUUID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i, c := range id {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}
