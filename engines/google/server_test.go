package google

import (
	"context"
	"encoding/json"
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

// Credentials the test servers expect.
const (
	testKey      = "AIzaSyTEST-key-0123456789abcdefghijk"
	testToken    = "ya29.TEST-access-token-0123456789"
	testProject  = "my-project"
	testLocation = "global"
)

// errorReply is a documented error response: HTTP status and a testdata file.
type errorReply struct {
	status int
	file   string
}

// Errors the servers send for enginetest.ModeError, one per Kind Google documents.
var (
	v2Errors = map[translate.Kind]errorReply{
		translate.KindUnauthorized:   {400, "v2_error_key_invalid.json"},
		translate.KindQuotaExhausted: {403, "v2_error_daily_limit.json"},
		translate.KindRateLimited:    {403, "v2_error_user_rate_limit.json"},
		translate.KindUnsupported:    {400, "v2_error_bad_language.json"},
		translate.KindInvalidInput:   {400, "v2_error_required.json"},
		translate.KindTextTooLong:    {400, "v2_error_payload_too_large.json"},
		translate.KindUnavailable:    {503, "v2_error_503.json"},
	}
	v3Errors = map[translate.Kind]errorReply{
		translate.KindUnauthorized:   {401, "v3_error_unauthenticated.json"},
		translate.KindQuotaExhausted: {429, "v3_error_resource_exhausted_daily.json"},
		translate.KindRateLimited:    {429, "v3_error_resource_exhausted.json"},
		translate.KindUnsupported:    {400, "v3_error_target_language.json"},
		translate.KindInvalidInput:   {400, "v3_error_invalid_argument.json"},
		translate.KindTextTooLong:    {400, "v3_error_text_too_long.json"},
		translate.KindUnavailable:    {503, "v3_error_unavailable.json"},
		translate.KindTimeout:        {504, "v3_error_deadline_exceeded.json"},
	}
)

func kindsOf(m map[translate.Kind]errorReply) []translate.Kind {
	var out []translate.Kind
	for k := range m {
		out = append(out, k)
	}
	return out
}

// seen is one request as the server received it.
type seen struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   map[string]any
}

// server is an httptest server that follows Google's specs: the v2 discovery document
// (POST /language/translate/v2 with a TranslateTextRequest body, GET
// /language/translate/v2/languages, the "data" wrapper, the key in X-Goog-Api-Key or the
// key query parameter) and the v3 proto's HTTP mapping (POST
// /v3/projects/*/locations/*:translateText with the JSON form of TranslateTextRequest, GET
// .../supportedLanguages, bearer tokens). It rejects what the specs reject and records what
// it saw.
type server struct {
	t   *testing.T
	srv *httptest.Server
	sc  enginetest.Scenario

	// override, when set, answers translate requests after the checks.
	override func(w http.ResponseWriter, r *http.Request, texts []string)

	mu    sync.Mutex
	calls []seen
}

func newServer(t *testing.T, sc enginetest.Scenario) *server {
	t.Helper()
	s := &server{t: t, sc: sc}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// v2 returns a v2 engine on s.
func (s *server) v2(t *testing.T, opts ...Option) *Engine {
	t.Helper()
	e, err := New(testKey, append([]Option{WithBaseURL(s.srv.URL), WithHTTPClient(s.srv.Client())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// v3 returns a v3 engine on s.
func (s *server) v3(t *testing.T, opts ...Option) *Engine {
	t.Helper()
	e, err := NewV3(testProject, staticToken(testToken),
		append([]Option{WithBaseURL(s.srv.URL + "/"), WithHTTPClient(s.srv.Client())}, opts...)...)
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
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	w.Write(body)
}

// googleError writes an error in Google's format.
func googleError(w http.ResponseWriter, code int, status, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": code, "message": msg, "status": status,
		"errors": []any{map[string]any{"message": msg, "domain": "global", "reason": "badRequest"}},
	}})
	writeJSON(w, code, b)
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := seen{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone()}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &rec.Body); err != nil {
			googleError(w, 400, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error())
			return
		}
	}
	s.mu.Lock()
	s.calls = append(s.calls, rec)
	s.mu.Unlock()

	// Credentials must never ride in the URL.
	if strings.Contains(r.URL.RawQuery, testKey) || strings.Contains(r.URL.RawQuery, testToken) {
		s.t.Errorf("credential in URL query: %s", r.URL.RawQuery)
	}

	v3Prefix := "/v3/projects/" + testProject + "/locations/"
	switch {
	case r.URL.Path == "/language/translate/v2" || r.URL.Path == "/language/translate/v2/languages":
		if r.Header.Get("X-Goog-Api-Key") == "" && r.URL.Query().Get("key") == "" {
			writeJSON(w, 403, readTestdata(s.t, "v2_error_missing_key.json"))
			return
		}
		if r.Header.Get("X-Goog-Api-Key") != testKey {
			writeJSON(w, 400, readTestdata(s.t, "v2_error_key_invalid.json"))
			return
		}
	case strings.HasPrefix(r.URL.Path, v3Prefix):
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			writeJSON(w, 401, readTestdata(s.t, "v3_error_unauthenticated.json"))
			return
		}
	default:
		googleError(w, 404, "NOT_FOUND", "The requested URL "+r.URL.Path+" was not found on this server.")
		return
	}

	switch {
	case r.URL.Path == "/language/translate/v2/languages":
		if r.Method != http.MethodGet {
			googleError(w, 405, "", "Method Not Allowed")
			return
		}
		writeJSON(w, 200, readTestdata(s.t, "v2_languages.json"))
	case r.URL.Path == "/language/translate/v2":
		if r.Method != http.MethodPost {
			googleError(w, 405, "", "Method Not Allowed")
			return
		}
		s.translateV2(w, r, raw)
	case r.URL.Path == v3Prefix+testLocation+"/supportedLanguages":
		if r.Method != http.MethodGet {
			googleError(w, 405, "", "Method Not Allowed")
			return
		}
		writeJSON(w, 200, readTestdata(s.t, "v3_supported_languages.json"))
	case strings.HasPrefix(r.URL.Path, v3Prefix) && strings.HasSuffix(r.URL.Path, ":translateText"):
		loc := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, v3Prefix), ":translateText")
		if loc == "" || strings.Contains(loc, "/") {
			googleError(w, 404, "NOT_FOUND", "bad location")
			return
		}
		if r.Method != http.MethodPost {
			googleError(w, 405, "", "Method Not Allowed")
			return
		}
		s.translateV3(w, r, raw)
	default:
		googleError(w, 404, "NOT_FOUND", "The requested URL "+r.URL.Path+" was not found on this server.")
	}
}

// scenario plays the hang and error modes; it reports whether it answered.
func (s *server) scenario(w http.ResponseWriter, r *http.Request, errs map[translate.Kind]errorReply) bool {
	switch s.sc.Mode {
	case enginetest.ModeHang:
		<-r.Context().Done()
		return true
	case enginetest.ModeError:
		er, ok := errs[s.sc.Kind]
		if !ok {
			s.t.Errorf("no documented error for kind %v", s.sc.Kind)
			er = errorReply{500, "v2_error_500.json"}
		}
		writeJSON(w, er.status, readTestdata(s.t, er.file))
		return true
	}
	return false
}

// knownLanguages are the codes of testdata/v2_languages.json.
func (s *server) knownLanguages() map[string]bool {
	var l v2Languages
	if err := json.Unmarshal(readTestdata(s.t, "v2_languages.json"), &l); err != nil {
		s.t.Fatal(err)
	}
	m := map[string]bool{}
	for _, x := range l.Data.Languages {
		m[x.Language] = true
	}
	return m
}

func jsonContentType(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

func (s *server) translateV2(w http.ResponseWriter, r *http.Request, raw []byte) {
	if !jsonContentType(r) {
		googleError(w, 400, "INVALID_ARGUMENT", "Content-Type must be application/json")
		return
	}
	var req struct {
		Q      []string `json:"q"`
		Target *string  `json:"target"`
		Source *string  `json:"source"`
		Format *string  `json:"format"`
		Model  *string  `json:"model"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		googleError(w, 400, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error())
		return
	}
	switch {
	case len(req.Q) == 0:
		writeJSON(w, 400, readTestdata(s.t, "v2_error_required.json"))
		return
	case len(req.Q) > v2MaxTexts:
		writeJSON(w, 400, readTestdata(s.t, "v2_error_too_many_segments.json"))
		return
	case req.Target == nil || *req.Target == "":
		googleError(w, 400, "INVALID_ARGUMENT", "Required Text")
		return
	}
	// Without format=text Google treats input as HTML and escapes the answer.
	if req.Format == nil || *req.Format != "text" && *req.Format != "html" {
		s.t.Errorf("v2 request without format text or html: %s", raw)
	}
	known := s.knownLanguages()
	if !known[*req.Target] || (req.Source != nil && !known[*req.Source]) {
		writeJSON(w, 400, readTestdata(s.t, "v2_error_bad_language.json"))
		return
	}
	if s.scenario(w, r, v2Errors) {
		return
	}
	if s.override != nil {
		s.override(w, r, req.Q)
		return
	}
	type tr struct {
		TranslatedText         string `json:"translatedText"`
		DetectedSourceLanguage string `json:"detectedSourceLanguage,omitempty"`
	}
	var out struct {
		Data struct {
			Translations []tr `json:"translations"`
		} `json:"data"`
	}
	for _, q := range req.Q {
		t := tr{TranslatedText: enginetest.Expected(q)}
		if req.Source == nil {
			t.DetectedSourceLanguage = "en"
		}
		out.Data.Translations = append(out.Data.Translations, t)
	}
	b, _ := json.Marshal(out)
	writeJSON(w, 200, b)
}

func (s *server) translateV3(w http.ResponseWriter, r *http.Request, raw []byte) {
	if !jsonContentType(r) {
		googleError(w, 400, "INVALID_ARGUMENT", "Content-Type must be application/json")
		return
	}
	var req struct {
		Contents           []string          `json:"contents"`
		MimeType           *string           `json:"mimeType"`
		SourceLanguageCode *string           `json:"sourceLanguageCode"`
		TargetLanguageCode *string           `json:"targetLanguageCode"`
		Parent             *string           `json:"parent"`
		Model              *string           `json:"model"`
		Labels             map[string]string `json:"labels"`
		GlossaryConfig     *struct {
			Glossary                     string `json:"glossary"`
			IgnoreCase                   *bool  `json:"ignoreCase"`
			ContextualTranslationEnabled *bool  `json:"contextualTranslationEnabled"`
		} `json:"glossaryConfig"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		googleError(w, 400, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error())
		return
	}
	chars := 0
	for _, c := range req.Contents {
		chars += utf8.RuneCountInString(c)
	}
	switch {
	case len(req.Contents) == 0:
		writeJSON(w, 400, readTestdata(s.t, "v3_error_invalid_argument.json"))
		return
	case len(req.Contents) > v3MaxTexts:
		writeJSON(w, 400, readTestdata(s.t, "v3_error_too_many_contents.json"))
		return
	case req.TargetLanguageCode == nil || *req.TargetLanguageCode == "":
		googleError(w, 400, "INVALID_ARGUMENT", "Target language code is required.")
		return
	case req.Parent != nil:
		s.t.Errorf("parent sent in the body as well as the path: %s", raw)
	}
	if chars > maxCodepoints && len(req.Contents) > 1 {
		s.t.Errorf("v3 request over the recommended %d code points: %d", maxCodepoints, chars)
	}
	if req.MimeType == nil || *req.MimeType != "text/plain" && *req.MimeType != "text/html" {
		s.t.Errorf("v3 request without mimeType text/plain or text/html: %s", raw)
	}
	glossary := ""
	if g := req.GlossaryConfig; g != nil {
		// The proto: projects/{p}/locations/{l}/glossaries/{id}, in the parent's location,
		// which for a custom glossary must not be global; the source language is required.
		loc := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v3/projects/"+testProject+"/locations/"), ":translateText")
		p := strings.Split(g.Glossary, "/")
		if len(p) != 6 || p[0] != "projects" || p[2] != "locations" || p[3] != loc || p[4] != "glossaries" ||
			loc == "global" || req.SourceLanguageCode == nil {
			s.t.Errorf("glossaryConfig the spec rejects: %s", raw)
			googleError(w, 400, "INVALID_ARGUMENT", "Invalid glossary.")
			return
		}
		if strings.HasSuffix(g.Glossary, "/glossaries/missing") {
			googleError(w, 404, "NOT_FOUND", "Glossary not found.")
			return
		}
		glossary = g.Glossary
	}
	known := s.knownLanguages()
	if !known[*req.TargetLanguageCode] {
		writeJSON(w, 400, readTestdata(s.t, "v3_error_target_language.json"))
		return
	}
	if req.SourceLanguageCode != nil && !known[*req.SourceLanguageCode] {
		googleError(w, 400, "INVALID_ARGUMENT", "Source language is invalid.")
		return
	}
	if s.scenario(w, r, v3Errors) {
		return
	}
	if s.override != nil {
		s.override(w, r, req.Contents)
		return
	}
	type glossaryConfig struct {
		Glossary string `json:"glossary"`
	}
	type tr struct {
		TranslatedText       string          `json:"translatedText"`
		DetectedLanguageCode string          `json:"detectedLanguageCode,omitempty"`
		GlossaryConfig       *glossaryConfig `json:"glossaryConfig,omitempty"`
	}
	var out struct {
		Translations         []tr `json:"translations"`
		GlossaryTranslations []tr `json:"glossaryTranslations,omitempty"`
	}
	for _, c := range req.Contents {
		t := tr{TranslatedText: enginetest.Expected(c)}
		if req.SourceLanguageCode == nil {
			t.DetectedLanguageCode = "en"
		}
		out.Translations = append(out.Translations, t)
		if glossary != "" {
			out.GlossaryTranslations = append(out.GlossaryTranslations,
				tr{TranslatedText: "G" + enginetest.Expected(c), GlossaryConfig: &glossaryConfig{glossary}})
		}
	}
	b, _ := json.Marshal(out)
	writeJSON(w, 200, b)
}

// staticToken is a token func that always returns tok.
func staticToken(tok string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return tok, nil }
}
