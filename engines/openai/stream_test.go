package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"golang.org/x/text/language"
)

// sseServer answers POST /v1/chat/completions as the API description says for stream: true:
// it checks the request (bearer key, a JSON CreateChatCompletionRequest) and hands the
// response to play. A streamed request must ask for text/event-stream.
type sseServer struct {
	t    *testing.T
	play func(w http.ResponseWriter, r *http.Request)

	mu   sync.Mutex
	seen []map[string]json.RawMessage
}

func (s *sseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body) // read first, so a closed connection cancels r.Context()
	if err != nil {
		s.t.Errorf("reading body: %v", err)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		s.t.Errorf("%s %s, want POST /v1/chat/completions", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		s.t.Errorf("Authorization = %q, want Bearer <key>", got)
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		s.t.Errorf("Content-Type = %q, want application/json", r.Header.Get("Content-Type"))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		s.t.Errorf("body is not a JSON object: %v", err)
	}
	for k := range raw {
		if !slices.Contains(requestFields, k) {
			s.t.Errorf("unrecognized request argument supplied: %s", k)
		}
	}
	if string(raw["stream"]) == "true" && r.Header.Get("Accept") != "text/event-stream" {
		s.t.Errorf("Accept = %q for a streamed request, want text/event-stream", r.Header.Get("Accept"))
	}
	s.mu.Lock()
	s.seen = append(s.seen, raw)
	s.mu.Unlock()
	s.play(w, r)
}

func (s *sseServer) requests() []map[string]json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// newStreamTest starts an sseServer with play and returns it with an engine pointed at it.
func newStreamTest(t *testing.T, play func(w http.ResponseWriter, r *http.Request), opts ...Option) (*sseServer, *Engine) {
	t.Helper()
	fake := &sseServer{t: t, play: play}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	e, err := New(testKey, testModel, append([]Option{WithBaseURL(srv.URL + "/v1")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return fake, e
}

// events answers with a 200 event stream of evs, flushing after each.
func events(evs ...string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		for _, ev := range evs {
			send(w, ev)
		}
	}
}

func startStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

func send(w http.ResponseWriter, s string) {
	io.WriteString(w, s)
	http.NewResponseController(w).Flush()
}

// chunkEvent is one CreateChatCompletionStreamResponse event for choice 0.
func chunkEvent(delta map[string]any, finish any) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1741570283,
		"model": testModel, "system_fingerprint": "fp_1", "obfuscation": "x1",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
	})
	return "data: " + string(b) + "\n\n"
}

func deltaEvent(content string) string { return chunkEvent(map[string]any{"content": content}, nil) }

var (
	roleEvent  = chunkEvent(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)
	stopEvent  = chunkEvent(map[string]any{}, "stop")
	usageEvent = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":3,"total_tokens":103}}` + "\n\n"
	doneEvent  = "data: [DONE]\n\n"
)

// collect ranges over the stream and returns the deltas and the error.
func collect(seq func(func(string, error) bool)) ([]string, error) {
	var got []string
	var last error
	for d, err := range seq {
		if last != nil {
			panic("a value after the error")
		}
		if err != nil {
			if d != "" {
				panic("error with text")
			}
			last = err
			continue
		}
		got = append(got, d)
	}
	return got, last
}

func TestStream(t *testing.T) {
	fake, e := newStreamTest(t, events(
		": keep-alive\n\n",
		roleEvent,
		deltaEvent("Ho"),
		": keep-alive\n\n",
		deltaEvent("la"),
		deltaEvent(""),
		deltaEvent(" mundo"),
		stopEvent,
		usageEvent,
		doneEvent,
	))
	got, err := collect(e.TranslateStream(context.Background(), request("en", "es", "Hello world")))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Ho", "la", " mundo"}, got); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	reqs := fake.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	var body struct {
		Model    string    `json:"model"`
		Stream   bool      `json:"stream"`
		Messages []message `json:"messages"`
	}
	for k, v := range reqs[0] {
		b, _ := json.Marshal(map[string]json.RawMessage{k: v})
		json.Unmarshal(b, &body)
	}
	want := []message{
		{Role: "system", Content: systemPrompt(request("en", "es", "Hello world"), 1, false, "")},
		{Role: "user", Content: "Hello world"},
	}
	if !body.Stream || body.Model != testModel || !cmp.Equal(want, body.Messages) {
		t.Errorf("request = %+v, want stream, model %s and the prompt of Translate", body, testModel)
	}
}

// specChunks are the chunks of the example of CreateChatCompletionStreamResponse in the
// API description (../shared/vendor-specs/openai/openapi.yaml, "The chat completion chunk
// object"), verbatim; the example's "...." stands for the chunks between, of which
// specWorld is one, written like its neighbours.
var specChunks = []string{
	`{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini", "system_fingerprint": "fp_44709d6fcb", "choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"obfuscation":"r4N7vQ2m"}`,
	`{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini", "system_fingerprint": "fp_44709d6fcb", "choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"obfuscation":"p9K3xT6w"}`,
	`{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini", "system_fingerprint": "fp_44709d6fcb", "choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"obfuscation":""}`,
}

const specWorld = `{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini", "system_fingerprint": "fp_44709d6fcb", "choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}],"obfuscation":"q2W8"}`

// TestStreamSpecExample: the API description's own example, sent as the description says
// (data-only server-sent events, "terminated by a data: [DONE] message"), with keep-alive
// comments between the events as proxies and servers send them.
func TestStreamSpecExample(t *testing.T) {
	if spec, err := os.ReadFile("../../../shared/vendor-specs/openai/openapi.yaml"); err == nil {
		for _, c := range specChunks {
			if !strings.Contains(string(spec), c) {
				t.Errorf("not in the API description: %s", c)
			}
		}
	}
	var evs []string
	for _, c := range []string{specChunks[0], specChunks[1], specWorld, specChunks[2]} {
		evs = append(evs, ": keep-alive\n\n", "data: "+c+"\n\n")
	}
	_, e := newStreamTest(t, events(append(evs, ":\n\n", doneEvent)...))
	got, err := collect(e.TranslateStream(context.Background(), request("es", "en", "Hola mundo")))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Hello", " world"}, got); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
}

// TestStreamDoneEndsTheStream: data: [DONE] ends the stream even if the server keeps the
// connection open and sends more: nothing after it is read or yielded, and the request
// ends (the server sees the client go).
func TestStreamDoneEndsTheStream(t *testing.T) {
	gone, end := make(chan struct{}), make(chan struct{})
	_, e := newStreamTest(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		send(w, deltaEvent("Hola")+doneEvent+deltaEvent(" XX"))
		select {
		case <-r.Context().Done():
			close(gone)
		case <-end: // the test failed: let the server close
		}
	})
	t.Cleanup(func() { close(end) })
	var got []string
	for d, err := range e.TranslateStream(context.Background(), request("en", "es", "Hello")) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
		if d == " XX" {
			break // read past [DONE]
		}
	}
	if diff := cmp.Diff([]string{"Hola"}, got); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	waitClosed(t, gone, "the server seeing the client go")
}

func TestStreamImplementsStreamEngine(t *testing.T) {
	var _ translate.StreamEngine = (*Engine)(nil)
}

func TestStreamWireFormats(t *testing.T) {
	hola, mundo := strings.TrimSuffix(deltaEvent("Hola"), "\n\n"), strings.TrimSuffix(deltaEvent(" mundo"), "\n\n")
	tests := []struct {
		name   string
		writes []string
	}{
		{"CRLF", []string{hola + "\r\n\r\n", mundo + "\r\n\r\n", "data: [DONE]\r\n\r\n"}},
		{"CR", []string{hola + "\r\r", mundo + "\r\r", "data: [DONE]\r\r"}},
		{"no space after data:", []string{strings.Replace(hola, "data: ", "data:", 1) + "\n\n", mundo + "\n\n", "data:[DONE]\n\n"}},
		{"split anywhere", []string{hola[:3], hola[3:20], hola[20:] + "\r", "\n\r", "\n" + mundo[:9], mundo[9:] + "\n", "\n", "data: [DO", "NE]\n\n"}},
		{"multi-line data", []string{strings.Replace(hola, `,"model"`, "\ndata: ,\"model\"", 1) + "\n\n", mundo + "\n\n", doneEvent}},
		{"message event type", []string{"event: message\n" + hola + "\n\n", mundo + "\n\n", doneEvent}},
		{"other events ignored", []string{"event: ping\ndata: {}\n\n", hola + "\n\n", "id: 2\nretry: 100\n" + mundo + "\n\n", doneEvent}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, e := newStreamTest(t, events(tt.writes...))
			got, err := collect(e.TranslateStream(context.Background(), request("en", "es", "Hello world")))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"Hola", " mundo"}, got); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStreamDeltasArriveAsWritten: the first delta reaches the consumer while the server
// waits for the consumer to have it.
func TestStreamDeltasArriveAsWritten(t *testing.T) {
	next := make(chan struct{})
	_, e := newStreamTest(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		send(w, roleEvent+deltaEvent("Ho"))
		select {
		case <-next:
		case <-r.Context().Done():
			return
		}
		send(w, deltaEvent("la")+stopEvent+doneEvent)
	})
	// The deadline only turns a regression (the engine waits for the end) into a failure
	// instead of a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []string
	for d, err := range e.TranslateStream(ctx, request("en", "es", "Hello")) {
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, d)
		if len(got) == 1 {
			close(next)
		}
	}
	if diff := cmp.Diff([]string{"Ho", "la"}, got); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
}

// waitClosed fails the test unless ch is closed within a generous bound.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not happen", what)
	}
}

func TestStreamConsumerBreakEndsRequest(t *testing.T) {
	canceled := make(chan struct{})
	fake := &sseServer{t: t, play: func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		send(w, deltaEvent("Ho")+deltaEvent("la"))
		<-r.Context().Done() // the server keeps the stream open until the client goes
		close(canceled)
	}}
	srv := httptest.NewServer(fake)
	e, err := New(testKey, testModel, WithBaseURL(srv.URL+"/v1"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for d, err := range e.TranslateStream(context.Background(), request("en", "es", "Hello")) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
		break
	}
	if diff := cmp.Diff([]string{"Ho"}, got); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	waitClosed(t, canceled, "the server seeing the request canceled")
	srv.Close()
	goleak.VerifyNone(t)
}

func TestStreamContextCanceled(t *testing.T) {
	canceled := make(chan struct{})
	_, e := newStreamTest(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		send(w, deltaEvent("Ho"))
		<-r.Context().Done()
		close(canceled)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	var last error
	for d, err := range e.TranslateStream(ctx, request("en", "es", "Hello")) {
		if err != nil {
			last = err
			continue
		}
		got = append(got, d)
		cancel()
	}
	if !errors.Is(last, context.Canceled) || translate.KindOf(last) != translate.KindCanceled {
		t.Errorf("err = %v, want KindCanceled wrapping context.Canceled", last)
	}
	if diff := cmp.Diff([]string{"Ho"}, got); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	waitClosed(t, canceled, "the server seeing the request canceled")
}

func TestStreamDeadline(t *testing.T) {
	_, e := newStreamTest(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		send(w, deltaEvent("Ho"))
		<-r.Context().Done()
	})
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err := collect(e.TranslateStream(ctx, request("en", "es", "Hello")))
	if !errors.Is(err, context.DeadlineExceeded) || translate.KindOf(err) != translate.KindTimeout {
		t.Errorf("err = %v, want KindTimeout wrapping context.DeadlineExceeded", err)
	}
}

// hijacked answers with raw bytes on the connection and then closes it.
func hijacked(t *testing.T, raw string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer conn.Close()
		brw.WriteString(raw)
		brw.Flush()
	}
}

func TestStreamCut(t *testing.T) {
	const head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
	cutChunked := func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		send(w, deltaEvent("Ho")+"data: {\"id\":\"chatcmpl-1\",\"cho")
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		conn.Close() // inside a chunk of the chunked body
	}
	tests := []struct {
		name  string
		play  func(w http.ResponseWriter, r *http.Request)
		want  []string
		kind  translate.Kind
		cause error
	}{
		{"mid-event", hijacked(t, head+deltaEvent("Ho")+"data: {\"id\":\"chatcmpl-1\",\"cho"), []string{"Ho"}, translate.KindUnavailable, errStreamEnded},
		{"mid-chunk of a chunked body", cutChunked, []string{"Ho"}, translate.KindUnavailable, errStreamEnded},
		{"between events, no [DONE]", hijacked(t, head+deltaEvent("Ho")+deltaEvent("la")), []string{"Ho", "la"}, translate.KindUnavailable, errStreamEnded},
		{"before any event", hijacked(t, head), nil, translate.KindUnavailable, errStreamEnded},
		{"before the headers", hijacked(t, "HTTP/1.1 200 OK\r\nContent-"), nil, translate.KindUnavailable, nil},
		{"after finish_reason stop", hijacked(t, head+deltaEvent("Hola")+stopEvent), []string{"Hola"}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, e := newStreamTest(t, tt.play)
			got, err := collect(e.TranslateStream(context.Background(), request("en", "es", "Hello")))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
			if tt.kind == 0 {
				if err != nil {
					t.Errorf("err = %v, want none: the choice had finished", err)
				}
				return
			}
			if translate.KindOf(err) != tt.kind || (tt.cause != nil && !errors.Is(err, tt.cause)) {
				t.Errorf("err = %v, want %v (%v)", err, tt.kind, tt.cause)
			}
		})
	}
}

// errorAnswer answers every request, streamed or not, with status and body.
func errorAnswer(status int, header map[string]string, body []byte) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}
}

// TestStreamHTTPErrorsAsTranslate: an error status before the stream starts is the error
// Translate returns for the same answer.
func TestStreamHTTPErrorsAsTranslate(t *testing.T) {
	tests := []struct {
		status int
		header map[string]string
		file   string
		kind   translate.Kind
	}{
		{401, nil, "error_401_invalid_api_key.json", translate.KindUnauthorized},
		{404, nil, "error_404_model.json", translate.KindUnauthorized},
		{429, map[string]string{"Retry-After": "2"}, "error_429_rate_limit.json", translate.KindRateLimited},
		{429, map[string]string{"Retry-After": "1", "retry-after-ms": "150"}, "error_429_rate_limit.json", translate.KindRateLimited},
		{429, map[string]string{"Retry-After": "20"}, "error_429_insufficient_quota.json", translate.KindQuotaExhausted},
		{400, nil, "error_400_context_length.json", translate.KindTextTooLong},
		{400, nil, "error_400_invalid.json", translate.KindInvalidInput},
		{500, nil, "error_500.json", translate.KindUnavailable},
		{503, map[string]string{"Retry-After": "1"}, "error_503_overloaded.json", translate.KindUnavailable},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status, " ", tt.file), func(t *testing.T) {
			_, e := newStreamTest(t, errorAnswer(tt.status, tt.header, testdata(t, tt.file)), WithName("llm-x"))
			_, want := e.Translate(context.Background(), request("en", "es", "Secret customer text"))
			_, got := collect(e.TranslateStream(context.Background(), request("en", "es", "Secret customer text")))
			var we, ge *translate.Error
			if !errors.As(want, &we) || !errors.As(got, &ge) {
				t.Fatalf("Translate: %v, TranslateStream: %v (%T), want *translate.Error", want, got, got)
			}
			if diff := cmp.Diff(we, ge); diff != "" {
				t.Errorf("TranslateStream's error differs from Translate's (-Translate +TranslateStream):\n%s", diff)
			}
			if ge.Kind != tt.kind {
				t.Errorf("kind = %v, want %v", ge.Kind, tt.kind)
			}
		})
	}
}

func TestStreamErrorEvents(t *testing.T) {
	errData := func(typ, code, msg string) string {
		var c any
		if code != "" {
			c = code
		}
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}})
		return string(b)
	}
	tests := []struct {
		name   string
		event  string
		kind   translate.Kind
		status int
		msg    string
	}{
		{"insufficient_quota", "data: " + errData("insufficient_quota", "insufficient_quota", "You exceeded your current quota") + "\n\n",
			translate.KindQuotaExhausted, 0, "insufficient_quota"},
		{"rate limit", "data: " + errData("requests", "rate_limit_exceeded", "Rate limit reached") + "\n\n",
			translate.KindRateLimited, 0, "Rate limit reached"},
		{"server_error", "data: " + errData("server_error", "", "The server had an error while processing your request.") + "\n\n",
			translate.KindUnavailable, 0, "server had an error"},
		{"overloaded", "data: " + errData("server_error", "overloaded_error", "Overloaded") + "\n\n",
			translate.KindUnavailable, 0, "Overloaded"},
		{"context length", "data: " + errData("invalid_request_error", "context_length_exceeded", "This model's maximum context length is 8192 tokens") + "\n\n",
			translate.KindTextTooLong, 0, "maximum context length"},
		{"timeout", "data: " + errData("timeout", "", "Request timed out") + "\n\n",
			translate.KindTimeout, 0, "timed out"},
		{"unknown", "data: " + errData("mystery", "", "Something odd") + "\n\n",
			translate.KindUnavailable, 0, "Something odd"},
		{"vLLM numeric code", `data: {"error": {"object": "error", "message": "Too many requests", "type": "TooManyRequests", "param": null, "code": 429}}` + "\n\n",
			translate.KindRateLimited, 429, "Too many requests"},
		{"vLLM 400", `data: {"error": {"object": "error", "message": "bad", "type": "BadRequestError", "param": null, "code": 400}}` + "\n\n",
			translate.KindInvalidInput, 400, "bad"},
		{"error event with an Error object", "event: error\ndata: " + `{"message": "The engine is currently overloaded", "type": "server_error", "param": null, "code": null}` + "\n\n",
			translate.KindUnavailable, 0, "overloaded"},
		{"error event with an ErrorResponse", "event: error\ndata: " + errData("insufficient_quota", "insufficient_quota", "quota") + "\n\n",
			translate.KindQuotaExhausted, 0, "insufficient_quota"},
		{"error event with plain text", "event: error\ndata: upstream died\n\n",
			translate.KindUnavailable, 0, "upstream died"},
		{"error string", `data: {"error": "upstream died"}` + "\n\n",
			translate.KindUnavailable, 0, "upstream died"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, e := newStreamTest(t, events(roleEvent, deltaEvent("Ho"), ": keep-alive\n\n", tt.event, deltaEvent("la"), doneEvent), WithName("llm-x"))
			got, err := collect(e.TranslateStream(context.Background(), request("en", "es", "Hello")))
			if diff := cmp.Diff([]string{"Ho"}, got); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
			var te *translate.Error
			if !errors.As(err, &te) {
				t.Fatalf("err = %v (%T), want *translate.Error", err, err)
			}
			if te.Kind != tt.kind || te.Engine != "llm-x" || te.StatusCode != tt.status || te.RetryAfter != 0 {
				t.Errorf("err = %+v, want kind %v, engine llm-x, status %d", te, tt.kind, tt.status)
			}
			if !strings.Contains(te.Message, tt.msg) {
				t.Errorf("Message = %q, want it to contain %q", te.Message, tt.msg)
			}
		})
	}
}

func TestStreamErrorsHideKeyAndText(t *testing.T) {
	const text = "Secret customer text about the merger"
	echo := fmt.Sprintf(`{"error": {"message": "Invalid request \"%s\" with key Bearer %s", "type": "invalid_request_error", "param": null, "code": null}}`, text, testKey)
	for name, play := range map[string]func(w http.ResponseWriter, r *http.Request){
		"in the stream":      events(deltaEvent("Ho"), "data: "+echo+"\n\n"),
		"error event":        events(deltaEvent("Ho"), "event: error\ndata: "+echo+"\n\n"),
		"before the stream":  errorAnswer(400, nil, []byte(echo)),
		"200 but not events": errorAnswer(200, nil, []byte(echo)),
	} {
		t.Run(name, func(t *testing.T) {
			_, e := newStreamTest(t, play)
			_, err := collect(e.TranslateStream(context.Background(), request("en", "es", text)))
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "merger") {
				t.Errorf("error %q leaks the key or the text", err)
			}
		})
	}
}

func TestStreamFinish(t *testing.T) {
	tests := []struct {
		name string
		evs  []string
		want []string
		kind translate.Kind
		msg  string
	}{
		{"length", []string{deltaEvent("Ho"), chunkEvent(map[string]any{}, "length"), doneEvent}, []string{"Ho"}, translate.KindTextTooLong, "length"},
		{"content_filter", []string{deltaEvent("Ho"), chunkEvent(map[string]any{}, "content_filter"), doneEvent}, []string{"Ho"}, translate.KindBadOutput, "content_filter"},
		{"tool call", []string{chunkEvent(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "c", "type": "function", "function": map[string]any{"name": "f", "arguments": ""}}}}, nil),
			chunkEvent(map[string]any{}, "tool_calls"), doneEvent}, nil, translate.KindBadOutput, "tool"},
		{"refusal", []string{roleEvent, chunkEvent(map[string]any{"refusal": "I can't"}, nil), doneEvent}, nil, translate.KindBadOutput, "refused"},
		{"no text", []string{roleEvent, deltaEvent("  "), stopEvent, doneEvent}, nil, translate.KindBadOutput, "empty"},
		{"only [DONE]", []string{doneEvent}, nil, translate.KindBadOutput, "empty"},
		{"only thinking", []string{deltaEvent("<think>hmm"), stopEvent, doneEvent}, nil, translate.KindBadOutput, "empty"},
		{"not a chunk", []string{deltaEvent("Ho"), "data: <html>\n\n"}, []string{"Ho"}, translate.KindBadOutput, "not a chat completion chunk"},
		{"other choices ignored", []string{`data: {"choices":[{"index":1,"delta":{"content":"X"},"finish_reason":null}]}` + "\n\n", deltaEvent("Ho"), stopEvent, doneEvent}, []string{"Ho"}, 0, ""},
		{"unknown finish_reason accepted", []string{deltaEvent("Ho"), chunkEvent(map[string]any{}, "eos"), doneEvent}, []string{"Ho"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, e := newStreamTest(t, events(tt.evs...))
			got, err := collect(e.TranslateStream(context.Background(), request("en", "es", "Hello")))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
			if tt.kind == 0 {
				if err != nil {
					t.Errorf("err = %v, want none", err)
				}
				return
			}
			if translate.KindOf(err) != tt.kind || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %v, want %v mentioning %q", err, tt.kind, tt.msg)
			}
		})
	}
}

func TestStreamNotAnEventStream(t *testing.T) {
	_, e := newStreamTest(t, func(w http.ResponseWriter, r *http.Request) {
		completion(w, testModel, "Hola") // a server that ignores stream: true
	})
	_, err := collect(e.TranslateStream(context.Background(), request("en", "es", "Hello")))
	if translate.KindOf(err) != translate.KindBadOutput || !strings.Contains(err.Error(), "not an event stream") {
		t.Errorf("err = %v, want KindBadOutput: not an event stream", err)
	}
}

func TestStreamNoContentTypeAccepted(t *testing.T) {
	_, e := newStreamTest(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no sniffing
		send(w, deltaEvent("Hola")+doneEvent)
	})
	got, err := collect(e.TranslateStream(context.Background(), request("en", "es", "Hello")))
	if err != nil || !cmp.Equal([]string{"Hola"}, got) {
		t.Errorf("got %q, %v; want [Hola]", got, err)
	}
}

func TestStreamBadRequests(t *testing.T) {
	fake, e := newStreamTest(t, events(deltaEvent("x"), doneEvent))
	for name, req := range map[string]*translate.EngineRequest{
		"nil":       nil,
		"no texts":  request("en", "es"),
		"two texts": request("en", "es", "a", "b"),
		"no target": {Texts: []string{"a"}},
	} {
		_, err := collect(e.TranslateStream(context.Background(), req))
		if translate.KindOf(err) != translate.KindInvalidInput {
			t.Errorf("%s: err = %v, want KindInvalidInput", name, err)
		}
	}
	if n := len(fake.requests()); n != 0 {
		t.Errorf("%d requests sent for bad input", n)
	}
}

func TestStreamBlankText(t *testing.T) {
	fake, e := newStreamTest(t, events(deltaEvent("x"), doneEvent))
	for _, text := range []string{"", " \n"} {
		got, err := collect(e.TranslateStream(context.Background(), request("en", "es", text)))
		if err != nil || strings.Join(got, "") != text {
			t.Errorf("%q: got %q, %v", text, got, err)
		}
	}
	if n := len(fake.requests()); n != 0 {
		t.Errorf("%d requests sent for blank texts", n)
	}
}

func TestStreamUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	e, err := New(testKey, testModel, WithBaseURL(srv.URL+"/v1"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = collect(e.TranslateStream(context.Background(), request("en", "es", "Hello")))
	if translate.KindOf(err) != translate.KindUnavailable || strings.Contains(err.Error(), testKey) {
		t.Errorf("err = %v, want KindUnavailable", err)
	}
}

func TestStreamLimits(t *testing.T) {
	long := strings.Repeat("a", maxSSELine)
	endless := func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		send(w, deltaEvent("Ho"))
		line := ":" + strings.Repeat(" ", 64<<10-2) + "\n"
		for n := 0; n < maxSSEStream+(1<<20) && r.Context().Err() == nil; n += len(line) {
			if _, err := io.WriteString(w, line); err != nil {
				return
			}
		}
	}
	tests := []struct {
		name  string
		play  func(w http.ResponseWriter, r *http.Request)
		cause error
	}{
		{"line over 1 MiB", events(deltaEvent("Ho"), "data: "+long+"\n\n", doneEvent), errSSELineTooLong},
		{"comment over 1 MiB", events(deltaEvent("Ho"), ":"+long+"\n", doneEvent), errSSELineTooLong},
		{"event over 1 MiB", events(deltaEvent("Ho"), "data: "+long[:600<<10]+"\ndata: "+long[:600<<10]+"\n\n", doneEvent), errSSEEventTooLong},
		{"endless keep-alives", endless, errSSETooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, e := newStreamTest(t, tt.play)
			got, err := collect(e.TranslateStream(context.Background(), request("en", "es", "Hello")))
			if !cmp.Equal([]string{"Ho"}, got) {
				t.Errorf("deltas = %q, want [Ho]", got)
			}
			if translate.KindOf(err) != translate.KindBadOutput || !errors.Is(err, tt.cause) {
				t.Errorf("err = %v, want KindBadOutput caused by %v", err, tt.cause)
			}
		})
	}
}

func TestStreamShaping(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		deltas []string
		want   []string // what is yielded, in order
	}{
		{"plain", "Hello", []string{"Ho", "la"}, []string{"Ho", "la"}},
		{"model's space replaced by the source's", "  Hello\n", []string{"\n ", " Ho", "la ", "\n"}, []string{"  Ho", "la", "\n"}},
		{"inner space kept, trailing held", "Hello world", []string{"Hola ", " ", "mundo", " "}, []string{"Hola", "  mundo"}},
		{"think block dropped", "Hello", []string{"<th", "ink>I should", " say</thi", "nk>\n\n", "Hola"}, []string{"Hola"}},
		{"think block in one delta", " Hello", []string{"<think>x</think> Hola"}, []string{" Hola"}},
		{"only one think block", "Hello", []string{"<think>x</think><think>y</think>"}, []string{"<think>y</think>"}},
		{"think kept when the source has it", "<think>Hello</think>", []string{"<think>", "Hola</think>"}, []string{"<think>", "Hola</think>"}},
		{"looks like think, is not", "Hello", []string{"<th", "e>Hola"}, []string{"<the>Hola"}},
		{"ends looking like think", "Hello", []string{"<thi"}, []string{"<thi"}},
		{"unicode space", "Hello\u3000", []string{"\u3000Hola\u3000"}, []string{"Hola", "\u3000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newShaper(tt.src)
			var got []string
			for _, d := range tt.deltas {
				if out := sh.push(d); out != "" {
					got = append(got, out)
				}
			}
			if tail, ok := sh.end(); !ok {
				t.Fatal("end: no translation")
			} else if tail != "" {
				got = append(got, tail)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("yielded (-want +got):\n%s", diff)
			}
			// The whole answer shaped at once agrees with what Translate does to it.
			whole := cleanOne(tt.src, stripThinking([]string{tt.src}, strings.Join(tt.deltas, "")))
			if strings.Join(got, "") != whole {
				t.Errorf("stream gives %q, Translate's cleaning %q", strings.Join(got, ""), whole)
			}
		})
	}
}

// TestStreamShapingIsLinear: trailing white space is held back until text follows, and a
// model writing 20,000 one-space deltas costs 20,000 appends: held white space copied into
// every delta's buffer cost 200 MB here (the square of the deltas) and minutes at a million.
func TestStreamShapingIsLinear(t *testing.T) {
	const n = 20000
	sh := newShaper("Hello")
	var got []string
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got = append(got, sh.push("Hola"))
	for range n {
		if out := sh.push(" "); out != "" {
			got = append(got, out)
		}
	}
	got = append(got, sh.push("mundo "))
	runtime.ReadMemStats(&after)
	if tail, ok := sh.end(); !ok || tail != "" {
		t.Fatalf("end = %q, %v", tail, ok)
	}
	if want := []string{"Hola", strings.Repeat(" ", n) + "mundo"}; !cmp.Equal(want, got) {
		t.Errorf("yielded %d pieces of %d bytes, want Hola, %d spaces and mundo", len(got), len(strings.Join(got, "")), n)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("shaping %d one-space deltas allocated %d KB, want at most 1 MB", n, alloc>>10)
	}
}

func TestStreamThinkingOverTheWire(t *testing.T) {
	_, e := newStreamTest(t, events(roleEvent, deltaEvent("<think>"), deltaEvent("Spanish, formal."), deltaEvent("</think>\n\n"), deltaEvent("Hola"), stopEvent, doneEvent))
	got, err := collect(e.TranslateStream(context.Background(), request("en", "es", "Hello\n")))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Hola", "\n"}, got); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
}

// ExampleEngine_TranslateStream prints a translation as it streams in. The server here is a
// stand-in for a chat completions server.
func ExampleEngine_TranslateStream() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{"Hola", ",", " mundo"} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", d)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	e, err := New("sk-...", "gpt-4o-mini", WithBaseURL(srv.URL+"/v1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &translate.EngineRequest{Texts: []string{"Hello, world"}, Target: language.Spanish}
	for delta, err := range e.TranslateStream(context.Background(), req) {
		if err != nil {
			fmt.Println("\nerror:", translate.KindOf(err))
			return
		}
		fmt.Printf("[%s]", delta)
	}
	fmt.Println()
	// Output: [Hola][,][ mundo]
}

// TestStreamEndWhileCanceled: an end of stream that comes with a canceled ctx is the
// caller's cancellation, not a cut connection nor a finished answer.
func TestStreamEndWhileCanceled(t *testing.T) {
	e, err := New(testKey, testModel)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, body := range map[string]string{
		"cut":      deltaEvent("Ho"),
		"finished": deltaEvent("Ho") + stopEvent,
	} {
		s := &streamRun{e: e, ctx: ctx, src: "Hello", sh: newShaper("Hello")}
		err := s.read(strings.NewReader(body), func(string, error) bool { return true })
		if !errors.Is(err, context.Canceled) || translate.KindOf(err) != translate.KindCanceled {
			t.Errorf("%s: err = %v, want KindCanceled wrapping context.Canceled", name, err)
		}
	}
}

func TestStreamKeyFunc(t *testing.T) {
	const oldKey, newKey = "sk-old-1f2e3d4c5b6a7980", "sk-new-0a9b8c7d6e5f4321"
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		auth := r.Header.Get("Authorization")
		mu.Lock()
		seen = append(seen, auth)
		mu.Unlock()
		if auth != "Bearer "+newKey {
			writeError(w, 401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: "+auth)
			return
		}
		startStream(w)
		send(w, deltaEvent("Hola")+doneEvent)
	}))
	defer srv.Close()
	keys := []string{oldKey, newKey}
	e, err := New("", testModel, WithBaseURL(srv.URL+"/v1"), WithKeyFunc(func(context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		k := keys[0]
		if len(keys) > 1 {
			keys = keys[1:]
		}
		return k, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := collect(e.TranslateStream(context.Background(), request("en", "es", "Hello")))
	if err != nil || !cmp.Equal([]string{"Hola"}, got) {
		t.Errorf("rotated: got %q, %v; want [Hola]", got, err)
	}
	if diff := cmp.Diff([]string{"Bearer " + oldKey, "Bearer " + newKey}, seen); diff != "" {
		t.Errorf("Authorization headers (-want +got):\n%s", diff)
	}

	keys = []string{oldKey}
	_, err = collect(e.TranslateStream(context.Background(), request("en", "es", "Hello")))
	if translate.KindOf(err) != translate.KindUnauthorized || strings.Contains(err.Error(), oldKey) {
		t.Errorf("stale key: err = %v, want KindUnauthorized without the key", err)
	}
}

func TestStreamRedirectToAnotherHostRefused(t *testing.T) {
	reached := make(chan struct{}, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- struct{}{}
	}))
	defer other.Close()
	_, e := newStreamTest(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
	})
	_, err := collect(e.TranslateStream(context.Background(), request("en", "es", "Secret customer text")))
	if translate.KindOf(err) != translate.KindUnavailable || strings.Contains(err.Error(), "customer") {
		t.Errorf("err = %v, want KindUnavailable without the text", err)
	}
	select {
	case <-reached:
		t.Error("the request (key and text) reached the other host")
	default:
	}
}

// newStreamClient returns a Client over engines (each with its own Profile) that prefers
// them in the order given, with no cache; it is closed when the test ends.
func newStreamClient(t *testing.T, engines ...*Engine) *translate.Client {
	t.Helper()
	opts := []translate.Option{translate.WithSeed(1), translate.WithoutCache(),
		translate.WithRouting(translate.RoutingPolicy{Temperature: 0.5})}
	for i, e := range engines {
		p := e.Profile()
		p.Quality = 100 / float64(1+99*i) // 100, 1, ...
		opts = append(opts, translate.WithEngine(e, p))
	}
	c, err := translate.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// pacedStream answers with one delta event per value of deltas, each sent once ack has
// taken a value (the test saw the delta before), then ends with end: "cut" closes the
// connection inside an event, "done" finishes the answer; it returns when the client goes.
func pacedStream(t *testing.T, ack <-chan struct{}, end string, gone chan<- struct{}, deltas ...string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		defer close(gone)
		startStream(w)
		for i, d := range deltas {
			if i > 0 {
				select {
				case <-ack:
				case <-r.Context().Done():
					return
				}
			}
			send(w, deltaEvent(d))
		}
		select {
		case <-ack:
		case <-r.Context().Done():
			return
		}
		switch end {
		case "cut":
			send(w, `data: {"id":"chatcmpl-1","cho`)
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			conn.Close()
		case "done":
			send(w, stopEvent+doneEvent)
		}
	}
}

// TestStreamThroughClient: Client.TranslateStream over this engine shows the model's text
// as it arrives, as Partial chunks, and breaking out of the loop ends the HTTP request at
// once: the server sees the client go, and no goroutine is left.
func TestStreamThroughClient(t *testing.T) {
	ack, gone := make(chan struct{}), make(chan struct{})
	_, e := newStreamTest(t, pacedStream(t, ack, "done", gone, "Hola", " mun", "do."), WithName("llm"))
	c := newStreamClient(t, e)
	before := goleak.IgnoreCurrent()
	var got []translate.Chunk
	for ch, err := range c.TranslateStream(context.Background(), translate.Request{Text: "Hello world.", Source: "en", Target: "es"}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch)
		if len(got) == 2 {
			break
		}
		ack <- struct{}{}
	}
	want := []translate.Chunk{
		{Segment: 0, Text: "Hola", Partial: true, Engine: "llm"},
		{Segment: 0, Text: "Hola mun", Partial: true, Engine: "llm"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	waitClosed(t, gone, "the server seeing the client go")
	goleak.VerifyNone(t, before)
}

// TestStreamFailoverThroughClient: a stream cut mid-event fails over for its segment, and
// the next engine's text replaces the partial text.
func TestStreamFailoverThroughClient(t *testing.T) {
	ackA, goneA := make(chan struct{}), make(chan struct{})
	ackB, goneB := make(chan struct{}), make(chan struct{})
	_, a := newStreamTest(t, pacedStream(t, ackA, "cut", goneA, "Hola", " mun"), WithName("a"))
	_, b := newStreamTest(t, pacedStream(t, ackB, "done", goneB, "Hola,", " mundo."), WithName("b"))
	c := newStreamClient(t, a, b)
	var got []translate.Chunk
	for ch, err := range c.TranslateStream(context.Background(), translate.Request{Text: "Hello world.", Source: "en", Target: "es"}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch)
		if ch.Partial {
			if ch.Engine == "a" {
				ackA <- struct{}{}
			} else {
				ackB <- struct{}{}
			}
		}
	}
	want := []translate.Chunk{
		{Segment: 0, Text: "Hola", Partial: true, Engine: "a"},
		{Segment: 0, Text: "Hola mun", Partial: true, Engine: "a"},
		{Segment: 0, Text: "Hola,", Partial: true, Engine: "b"},
		{Segment: 0, Text: "Hola, mundo.", Partial: true, Engine: "b"},
		{Segment: 0, Text: "Hola, mundo.", Engine: "b"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	waitClosed(t, goneA, "a's request ending")
	waitClosed(t, goneB, "b's request ending")
}
