package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
)

const (
	testKey   = "sk-test-8f3a9c2e71b54d0aa6e1c9f0d2b71234"
	testModel = "gpt-4o-mini"
)

// requestFields are the properties of CreateChatCompletionRequest (with those of
// CreateModelResponseProperties); anything else is rejected.
var requestFields = []string{
	"messages", "model", "modalities", "verbosity", "reasoning_effort", "max_completion_tokens",
	"frequency_penalty", "presence_penalty", "web_search_options", "top_logprobs",
	"response_format", "audio", "store", "stream", "stop", "logit_bias", "logprobs", "max_tokens",
	"n", "prediction", "seed", "stream_options", "tools", "tool_choice", "parallel_tool_calls",
	"function_call", "functions", "metadata", "temperature", "top_p", "user", "service_tier",
	"safety_identifier", "prompt_cache_key", "prompt_cache_retention", "prompt_cache_options", "moderation",
}

// errorFor is the documented answer a server gives for a Kind in ModeError: status, extra
// headers and a recorded body in testdata/.
func errorFor(k translate.Kind) (status int, header map[string]string, file string) {
	switch k {
	case translate.KindUnauthorized:
		return 401, nil, "error_401_invalid_api_key.json"
	case translate.KindRateLimited:
		return 429, map[string]string{"Retry-After": "2"}, "error_429_rate_limit.json"
	case translate.KindQuotaExhausted:
		return 429, nil, "error_429_insufficient_quota.json"
	case translate.KindTextTooLong:
		return 400, nil, "error_400_context_length.json"
	case translate.KindInvalidInput:
		return 400, nil, "error_400_invalid.json"
	case translate.KindUnavailable:
		return 503, map[string]string{"Retry-After": "1"}, "error_503_overloaded.json"
	case translate.KindBadOutput:
		return 200, nil, "chat_content_filter.json"
	}
	return 500, nil, "error_500.json"
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// chatRequestSeen is what the fake decoded from one request.
type chatRequestSeen struct {
	Header http.Header
	Raw    map[string]json.RawMessage
	Body   struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		Temperature    *float64 `json:"temperature"`
		ResponseFormat *struct {
			Type string `json:"type"`
		} `json:"response_format"`
		Stream *bool `json:"stream"`
	}
}

// fakeOpenAI follows the OpenAI API description for POST /chat/completions: bearer
// authentication, a JSON CreateChatCompletionRequest (model, messages with roles, temperature
// within 0..2, response_format json_object only with "JSON" in the messages), answers
// CreateChatCompletionResponse or ErrorResponse. A spec violation fails the test and gets the
// documented 400 or 401.
type fakeOpenAI struct {
	t  *testing.T
	sc enginetest.Scenario
	// key is the API key the server wants; "" means no authentication (self-hosted).
	key string
	// reply, when set, answers a valid request instead of the scenario.
	reply func(w http.ResponseWriter, seen *chatRequestSeen)

	mu   sync.Mutex
	seen []*chatRequestSeen
}

func (s *fakeOpenAI) requests() []*chatRequestSeen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var c any
	if code != "" {
		c = code
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": c}})
}

// completion writes a CreateChatCompletionResponse whose only choice says content.
func completion(w http.ResponseWriter, model, content string) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1741570283, "model": model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content, "refusal": nil, "annotations": []any{}},
			"logprobs":      nil,
			"finish_reason": "stop",
		}},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
	})
}

func (s *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body) // read first, so a closed connection cancels r.Context()
	if s.sc.Mode == enginetest.ModeHang {
		<-r.Context().Done()
		return
	}
	if err != nil {
		s.t.Errorf("reading body: %v", err)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		s.t.Errorf("%s %s, want POST /v1/chat/completions", r.Method, r.URL.Path)
		writeError(w, 404, "invalid_request_error", "unknown_url", "Unknown request URL")
		return
	}
	if s.key != "" && r.Header.Get("Authorization") != "Bearer "+s.key {
		s.t.Errorf("Authorization = %q, want Bearer <key>", r.Header.Get("Authorization"))
		writeError(w, 401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided")
		return
	}
	if s.key == "" && r.Header.Get("Authorization") != "" {
		s.t.Errorf("Authorization = %q sent without an API key", r.Header.Get("Authorization"))
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		s.t.Errorf("Content-Type = %q, want application/json", r.Header.Get("Content-Type"))
	}
	seen := &chatRequestSeen{Header: r.Header.Clone()}
	if err := json.Unmarshal(body, &seen.Raw); err != nil {
		s.t.Errorf("body is not a JSON object: %v", err)
		writeError(w, 400, "invalid_request_error", "", "We could not parse the JSON body of your request.")
		return
	}
	if err := json.Unmarshal(body, &seen.Body); err != nil {
		s.t.Errorf("body does not match CreateChatCompletionRequest: %v", err)
		writeError(w, 400, "invalid_request_error", "", err.Error())
		return
	}
	s.mu.Lock()
	s.seen = append(s.seen, seen)
	s.mu.Unlock()
	if msg := validate(seen); msg != "" {
		s.t.Errorf("request violates the spec: %s", msg)
		writeError(w, 400, "invalid_request_error", "invalid_value", msg)
		return
	}
	if s.reply != nil {
		s.reply(w, seen)
		return
	}
	if s.sc.Mode == enginetest.ModeError {
		status, header, file := errorFor(s.sc.Kind)
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(testdata(s.t, file))
		return
	}
	// ModeOK: a batch is a JSON array of strings under a system prompt that asks for one.
	user := seen.Body.Messages[len(seen.Body.Messages)-1].Content
	var texts []string
	if strings.Contains(seen.Body.Messages[0].Content, "JSON array") && json.Unmarshal([]byte(user), &texts) == nil {
		out := make([]string, len(texts))
		for i, t := range texts {
			out[i] = enginetest.Expected(t)
		}
		b, _ := json.Marshal(map[string][]string{"translations": out})
		completion(w, seen.Body.Model, string(b))
		return
	}
	completion(w, seen.Body.Model, enginetest.Expected(user))
}

// validate checks a request against the CreateChatCompletionRequest schema; "" means valid.
func validate(seen *chatRequestSeen) string {
	for k := range seen.Raw {
		if !slices.Contains(requestFields, k) {
			return fmt.Sprintf("unrecognized request argument supplied: %s", k)
		}
	}
	b := &seen.Body
	if b.Model == "" {
		return "model is required"
	}
	if len(b.Messages) == 0 {
		return "messages: minItems 1"
	}
	mentionsJSON := false
	for i, m := range b.Messages {
		if !slices.Contains([]string{"system", "developer", "user", "assistant"}, m.Role) {
			return fmt.Sprintf("messages[%d].role %q", i, m.Role)
		}
		if m.Role != "assistant" && m.Content == "" {
			return fmt.Sprintf("messages[%d].content is required", i)
		}
		if strings.Contains(strings.ToLower(m.Content), "json") {
			mentionsJSON = true
		}
	}
	if t := b.Temperature; t != nil && (*t < 0 || *t > 2) {
		return "temperature must be within 0..2"
	}
	if rf := b.ResponseFormat; rf != nil {
		if !slices.Contains([]string{"text", "json_object", "json_schema"}, rf.Type) {
			return fmt.Sprintf("response_format.type %q", rf.Type)
		}
		if rf.Type == "json_object" && !mentionsJSON {
			return "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'."
		}
	}
	if b.Stream != nil && *b.Stream {
		return "stream is not expected"
	}
	return ""
}

// newTest starts a fakeOpenAI playing sc and returns it with an engine pointed at it.
func newTest(t *testing.T, sc enginetest.Scenario, opts ...Option) (*fakeOpenAI, *Engine) {
	t.Helper()
	return newTestKey(t, sc, testKey, opts...)
}

func newTestKey(t *testing.T, sc enginetest.Scenario, key string, opts ...Option) (*fakeOpenAI, *Engine) {
	t.Helper()
	fake := &fakeOpenAI{t: t, sc: sc, key: key}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	opts = append([]Option{WithBaseURL(srv.URL + "/v1/"), WithHTTPClient(srv.Client())}, opts...)
	e, err := New(key, testModel, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return fake, e
}
