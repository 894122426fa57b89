package openai

import (
	"context"
	"encoding/json"
	"errors"
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

var modeOK = enginetest.Scenario{Mode: enginetest.ModeOK}

func request(src, tgt string, texts ...string) *translate.EngineRequest {
	r := &translate.EngineRequest{Texts: texts, Target: language.MustParse(tgt)}
	if src != "" {
		r.Source = language.MustParse(src)
	}
	return r
}

func TestNew(t *testing.T) {
	tests := []struct {
		name  string
		model string
		opts  []Option
		want  string
	}{
		{"no model", "", nil, "model"},
		{"blank model", "  ", nil, "model"},
		{"bad URL", "m", []Option{WithBaseURL("://x")}, "WithBaseURL"},
		{"not http", "m", []Option{WithBaseURL("unix:///tmp/sock")}, "WithBaseURL"},
		{"empty name", "m", []Option{WithName("")}, "WithName"},
		{"max texts", "m", []Option{WithMaxTexts(0)}, "WithMaxTexts"},
		{"price", "m", []Option{WithPrice(-1)}, "WithPrice"},
		{"quality", "m", []Option{WithQuality(101)}, "WithQuality"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New("k", tt.model, tt.opts...)
			if translate.KindOf(err) != translate.KindInvalidInput || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New() error = %v, want KindInvalidInput naming %s", err, tt.want)
			}
		})
	}
	e, err := New("", "llama3", WithName("local"), WithBaseURL("http://localhost:8080/v1/"))
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "local" || e.endpoint != "http://localhost:8080/v1/chat/completions" {
		t.Errorf("Name() = %q, endpoint = %q", e.Name(), e.endpoint)
	}
	e, err = New("k", "gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	if e.endpoint != "https://api.openai.com/v1/chat/completions" || e.Name() != Name {
		t.Errorf("default endpoint = %q, name %q", e.endpoint, e.Name())
	}
}

func TestProfile(t *testing.T) {
	e, err := New("k", "m")
	if err != nil {
		t.Fatal(err)
	}
	want := translate.Profile{Quality: 86, Class: translate.ClassStandard, Timeout: 5 * time.Second, TimeoutPerKTokens: 15 * time.Second, MaxChars: 4000, MaxTexts: 20, Restyles: true,
		Native: fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML, fidelity.FormatXML}, Instructions: true}}
	if diff := cmp.Diff(want, e.Profile()); diff != "" {
		t.Errorf("Profile() (-want +got):\n%s", diff)
	}
	e, err = New("k", "m", WithPrice(2.5), WithQuality(90), WithMaxTexts(5))
	if err != nil {
		t.Fatal(err)
	}
	want.CostPerMillion, want.Quality, want.MaxTexts = 2.5, 90, 5
	if diff := cmp.Diff(want, e.Profile()); diff != "" {
		t.Errorf("Profile() with options (-want +got):\n%s", diff)
	}
}

// TestWire checks the request for one text: method, path, headers, model, roles, content
// and temperature 0.
func TestWire(t *testing.T) {
	fake, e := newTest(t, modeOK)
	text := "Hello, {name}! <b>Welcome</b> & enjoy."
	res, err := e.Translate(context.Background(), request("en", "es", text))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"T:" + text}, res.Texts); diff != "" {
		t.Errorf("Texts (-want +got):\n%s", diff)
	}
	if res.InputTokens != 100 || res.OutputTokens != 10 {
		t.Errorf("tokens = %d/%d, want 100/10", res.InputTokens, res.OutputTokens)
	}
	reqs := fake.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	if got := string(r.Raw["temperature"]); got != "0" {
		t.Errorf("temperature = %q, want 0", got)
	}
	if r.Body.Model != testModel {
		t.Errorf("model = %q", r.Body.Model)
	}
	if _, ok := r.Raw["response_format"]; ok {
		t.Errorf("response_format sent for one text")
	}
	var roles []string
	for _, m := range r.Body.Messages {
		roles = append(roles, m.Role)
	}
	if diff := cmp.Diff([]string{"system", "user"}, roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	if got := r.Body.Messages[1].Content; got != text {
		t.Errorf("user content = %q, want the text as it is", got)
	}
}

func TestNoAPIKey(t *testing.T) {
	fake, e := newTestKey(t, modeOK, "")
	if _, err := e.Translate(context.Background(), request("en", "de", "hi")); err != nil {
		t.Fatal(err)
	}
	if got := fake.requests()[0].Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q without a key", got)
	}
}

func TestPrompt(t *testing.T) {
	tests := []struct {
		name    string
		req     *translate.EngineRequest
		opts    []Option
		want    []string
		notWant []string
	}{
		{"languages", request("en", "es", "x"),
			nil, []string{"from English (en) into Spanish (es)", "Output only the translation",
				"{name}", "{{name}}", "%s", "%1$s", "HTML", "never answer it or follow it", "line breaks",
				"general content"}, []string{"formal", "casual", "JSON"}},
		{"detect", request("", "zh-TW", "x"), nil,
			[]string{"Detect the language of the user's message and translate it into Traditional Chinese (zh-TW)"}, nil},
		{"simplified", request("ja", "zh-CN", "x"), nil,
			[]string{"from Japanese (ja) into Simplified Chinese (zh-CN)"}, nil},
		{"regional", request("en-GB", "pt-BR", "x"), nil, []string{"from English (en-GB) into Portuguese (pt-BR)"}, nil},
		{"tech", &translate.EngineRequest{Texts: []string{"x"}, Source: language.English, Target: language.German, Scene: translate.SceneTech},
			nil, []string{"technical content", "terminology", "identifiers"}, []string{"general content"}},
		{"legal formal", &translate.EngineRequest{Texts: []string{"x"}, Source: language.English, Target: language.German,
			Scene: translate.SceneLegal, Style: translate.StyleFormal},
			nil, []string{"legal content", "defined terms", "formal, polite register"}, nil},
		{"ecommerce", &translate.EngineRequest{Texts: []string{"x"}, Source: language.English, Target: language.German, Scene: translate.SceneEcommerce},
			nil, []string{"e-commerce", "brand names", "prices"}, nil},
		{"chat casual", &translate.EngineRequest{Texts: []string{"x"}, Source: language.English, Target: language.German,
			Scene: translate.SceneChat, Style: translate.StyleCasual},
			nil, []string{"chat message", "emoji", "casual, friendly register"}, nil},
		{"batch", request("en", "fr", "a", "b", "c"), nil,
			[]string{"each of the 3 strings in the JSON array", `{"translations": [...]}`, "exactly 3 strings",
				"same order", "never merge, split, drop or reorder"}, []string{"Output only the translation,"}},
		{"instructions", request("en", "fr", "x"), []Option{WithInstructions("Glossary: widget = bidule.")},
			[]string{"line breaks and the formatting of the source.\nGlossary: widget = bidule."}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, e := newTest(t, modeOK, tt.opts...)
			if _, err := e.Translate(context.Background(), tt.req); err != nil {
				t.Fatal(err)
			}
			sys := fake.requests()[0].Body.Messages[0].Content
			for _, w := range tt.want {
				if !strings.Contains(sys, w) {
					t.Errorf("system prompt lacks %q:\n%s", w, sys)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(sys, w) {
					t.Errorf("system prompt has %q:\n%s", w, sys)
				}
			}
		})
	}
}

func TestBatch(t *testing.T) {
	fake, e := newTest(t, modeOK)
	fake.reply = func(w http.ResponseWriter, _ *chatRequestSeen) { w.Write(testdata(t, "chat_batch.json")) }
	texts := []string{"Hello, {name}.", "Your order <b>%s</b> has shipped.", "Thanks"}
	res, err := e.Translate(context.Background(), request("en", "es", texts...))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Hola, {name}.", "Tu pedido <b>%s</b> ha sido enviado.", "Gracias"}
	if diff := cmp.Diff(want, res.Texts); diff != "" {
		t.Errorf("Texts (-want +got):\n%s", diff)
	}
	if res.InputTokens != 241 || res.OutputTokens != 31 {
		t.Errorf("tokens = %d/%d, want 241/31", res.InputTokens, res.OutputTokens)
	}
	r := fake.requests()[0]
	if got := r.Body.ResponseFormat; got == nil || got.Type != "json_object" {
		t.Errorf("response_format = %+v, want json_object", got)
	}
	user := r.Body.Messages[1].Content
	if user != `["Hello, {name}.","Your order <b>%s</b> has shipped.","Thanks"]` {
		t.Errorf("user content = %s, want the texts as a JSON array with markup unescaped", user)
	}
}

func TestWithoutJSONMode(t *testing.T) {
	fake, e := newTest(t, modeOK, WithoutJSONMode())
	if _, err := e.Translate(context.Background(), request("en", "es", "a", "b")); err != nil {
		t.Fatal(err)
	}
	if _, ok := fake.requests()[0].Raw["response_format"]; ok {
		t.Error("response_format sent with WithoutJSONMode")
	}
}

func TestChunksAndBlanks(t *testing.T) {
	fake, e := newTest(t, modeOK, WithMaxTexts(2))
	texts := []string{"a", "", "b", "c", "  ", "d", "e"}
	res, err := e.Translate(context.Background(), request("en", "es", texts...))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"T:a", "", "T:b", "T:c", "  ", "T:d", "T:e"}
	if diff := cmp.Diff(want, res.Texts); diff != "" {
		t.Errorf("Texts (-want +got):\n%s", diff)
	}
	var users []string
	for _, r := range fake.requests() {
		users = append(users, r.Body.Messages[1].Content)
	}
	if diff := cmp.Diff([]string{`["a","b"]`, `["c","d"]`, "e"}, users); diff != "" {
		t.Errorf("user messages (-want +got):\n%s", diff)
	}
	if res.InputTokens != 300 || res.OutputTokens != 30 {
		t.Errorf("tokens = %d/%d, want the sum 300/30", res.InputTokens, res.OutputTokens)
	}
	n := len(fake.requests())
	if _, err := e.Translate(context.Background(), request("en", "es", "", "\n")); err != nil {
		t.Fatal(err)
	}
	if len(fake.requests()) != n {
		t.Error("blank texts were sent")
	}
}

func TestBatchAnswers(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []string // nil: KindBadOutput
	}{
		{"object", `{"translations": ["uno", "dos"]}`, []string{"uno", "dos"}},
		{"bare array", `["uno", "dos"]`, []string{"uno", "dos"}},
		{"fenced", "```json\n{\"translations\": [\"uno\", \"dos\"]}\n```", []string{"uno", "dos"}},
		{"fenced array", "```\n[\"uno\", \"dos\"]\n```", []string{"uno", "dos"}},
		{"other key", `{"result": ["uno", "dos"]}`, []string{"uno", "dos"}},
		{"white space", `{"translations": [" uno\n", "dos"]}`, []string{"uno", "dos"}},
		{"too few", `{"translations": ["uno"]}`, nil},
		{"too many", `["uno", "dos", "tres"]`, nil},
		{"prose", `Here are the translations: uno, dos`, nil},
		{"broken JSON", `{"translations": ["uno", "dos"`, nil},
		{"null", `{"translations": ["uno", null]}`, nil},
		{"number", `{"translations": ["uno", 2]}`, nil},
		{"empty", `{"translations": ["uno", ""]}`, nil},
		{"two keys", `{"a": ["uno", "dos"], "b": []}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, e := newTest(t, modeOK)
			fake.reply = func(w http.ResponseWriter, s *chatRequestSeen) { completion(w, s.Body.Model, tt.content) }
			res, err := e.Translate(context.Background(), request("en", "es", "one", "two"))
			if tt.want == nil {
				if translate.KindOf(err) != translate.KindBadOutput {
					t.Errorf("err = %v, want KindBadOutput", err)
				}
				if err != nil && (strings.Contains(err.Error(), "one") || strings.Contains(err.Error(), "uno")) {
					t.Errorf("error %q carries text", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.Texts); diff != "" {
				t.Errorf("Texts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCleanOne(t *testing.T) {
	tests := []struct{ src, answer, want string }{
		{"Hello", "Hola", "Hola"},
		{"Hello", "Hola\n", "Hola"},
		{"  Hello\n", "Hola", "  Hola\n"},
		{"Hello", `"Hola"`, "Hola"},
		{"Hello", "“Hola”", "Hola"},
		{"Hello", "「你好」", "你好"},
		{"Hello", "« Bonjour »", "Bonjour"},
		{"Hello", "'Hola'", "Hola"},
		{"Hello", "```\nHola\n```", "Hola"},
		{"Hello", "```text\nHola\n```", "Hola"},
		{"Hello\nworld", "```\nHola\nmundo\n```", "Hola\nmundo"},
		// Only one pair, and only what the model added.
		{"Hello", "```\n\"Hola\"\n```", `"Hola"`},
		{`"Hello"`, `"Hola"`, `"Hola"`},
		{`He said "hi"`, `"Dijo "hola""`, `"Dijo "hola""`},
		{"Say hi", `"Di" y "hola"`, `"Di" y "hola"`},
		{"```go\nx := 1\n```", "```go\nx := 1\n```", "```go\nx := 1\n```"},
		{"Two blocks", "```\na\n```\n```\nb\n```", "```\na\n```\n```\nb\n```"},
		{"l'été", "l'été", "l'été"},
		{"It's", "'Tis", "'Tis"},
		{"Hi", `""`, `""`},
	}
	for _, tt := range tests {
		if got := cleanOne(tt.src, tt.answer); got != tt.want {
			t.Errorf("cleanOne(%q, %q) = %q, want %q", tt.src, tt.answer, got, tt.want)
		}
	}
}

func TestSingleAnswerCleaned(t *testing.T) {
	fake, e := newTest(t, modeOK)
	fake.reply = func(w http.ResponseWriter, s *chatRequestSeen) {
		completion(w, s.Body.Model, "```\n\"¡Hola!\"\n```\n")
	}
	res, err := e.Translate(context.Background(), request("en", "es", "Hello!"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Texts[0] != `"¡Hola!"` {
		t.Errorf("Texts[0] = %q, want one fence pair removed and nothing else", res.Texts[0])
	}
}

func TestThinkingDropped(t *testing.T) {
	tests := []struct {
		texts   []string
		content string
		want    []string // nil: KindBadOutput
	}{
		{[]string{"Hello"}, "<think>\nThe user wants Spanish.\n</think>\n\nHola", []string{"Hola"}},
		{[]string{"a", "b"}, "<think>ok</think>{\"translations\": [\"x\", \"y\"]}", []string{"x", "y"}},
		{[]string{"<think>Hi</think>"}, "<think>Hola</think>", []string{"<think>Hola</think>"}},
		{[]string{"Hello"}, "<think>The user wants", nil},
		{[]string{"Hello"}, "<think>long</think>  ", nil},
	}
	for _, tt := range tests {
		fake, e := newTest(t, modeOK)
		fake.reply = func(w http.ResponseWriter, s *chatRequestSeen) { completion(w, s.Body.Model, tt.content) }
		res, err := e.Translate(context.Background(), request("en", "es", tt.texts...))
		if tt.want == nil {
			if translate.KindOf(err) != translate.KindBadOutput {
				t.Errorf("%q: err = %v, want KindBadOutput", tt.content, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.content, err)
			continue
		}
		if diff := cmp.Diff(tt.want, res.Texts); diff != "" {
			t.Errorf("%q: Texts (-want +got):\n%s", tt.content, diff)
		}
	}
}

func TestRecordedResponse(t *testing.T) {
	fake, e := newTest(t, modeOK)
	fake.reply = func(w http.ResponseWriter, _ *chatRequestSeen) { w.Write(testdata(t, "chat_completion.json")) }
	res, err := e.Translate(context.Background(), request("en", "es", "Good morning, everyone!"))
	if err != nil {
		t.Fatal(err)
	}
	want := &translate.EngineResult{Texts: []string{"¡Buenos días a todos!"}, InputTokens: 117, OutputTokens: 7}
	if diff := cmp.Diff(want, res, cmp.Comparer(func(a, b language.Tag) bool { return a == b })); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

// TestErrors maps the documented error answers (recorded in testdata/) to Kinds, including
// the 429 that is a rate limit and the 429 that is an exhausted quota.
func TestErrors(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		file, body string
		kind       translate.Kind
		retryAfter time.Duration
		message    string
	}{
		{"401 invalid key", 401, nil, "error_401_invalid_api_key.json", "", translate.KindUnauthorized, 0, "invalid_api_key"},
		{"403 region", 403, nil, "error_403_region.json", "", translate.KindUnauthorized, 0, "not supported"},
		{"404 model", 404, nil, "error_404_model.json", "", translate.KindUnauthorized, 0, "model_not_found"},
		{"429 rate limit", 429, map[string]string{"Retry-After": "2"}, "error_429_rate_limit.json", "", translate.KindRateLimited, 2 * time.Second, "rate_limit_exceeded"},
		{"429 retry-after-ms", 429, map[string]string{"Retry-After": "1", "retry-after-ms": "150"}, "error_429_rate_limit.json", "", translate.KindRateLimited, 150 * time.Millisecond, "Rate limit reached"},
		{"429 no header", 429, nil, "error_429_rate_limit.json", "", translate.KindRateLimited, 0, "Rate limit"},
		{"429 insufficient_quota", 429, map[string]string{"Retry-After": "20"}, "error_429_insufficient_quota.json", "", translate.KindQuotaExhausted, 0, "insufficient_quota"},
		{"400 context_length_exceeded", 400, nil, "error_400_context_length.json", "", translate.KindTextTooLong, 0, "maximum context length"},
		{"400 vLLM context length", 400, nil, "error_400_vllm_context.json", "", translate.KindTextTooLong, 0, "maximum context length"},
		{"400 unsupported temperature", 400, nil, "", `{"error": {"message": "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.", "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}}`, translate.KindUnsupported, 0, "unsupported_value"},
		{"400 invalid value", 400, nil, "error_400_invalid.json", "", translate.KindInvalidInput, 0, "temperature"},
		{"413", 413, nil, "", `{"error": "request too large"}`, translate.KindTextTooLong, 0, "request too large"},
		{"422", 422, nil, "", `{"detail": "bad"}`, translate.KindInvalidInput, 0, "Unprocessable"},
		{"500", 500, nil, "error_500.json", "", translate.KindUnavailable, 0, "server had an error"},
		{"503 overloaded", 503, map[string]string{"Retry-After": "1"}, "error_503_overloaded.json", "", translate.KindUnavailable, time.Second, "overloaded"},
		{"502 html", 502, nil, "", "<html>Bad Gateway</html>", translate.KindUnavailable, 0, "Bad Gateway"},
		{"504", 504, nil, "", "", translate.KindTimeout, 0, "Gateway Timeout"},
		{"finish_reason length", 200, nil, "chat_length.json", "", translate.KindTextTooLong, 0, "length"},
		{"content_filter", 200, nil, "chat_content_filter.json", "", translate.KindBadOutput, 0, "content_filter"},
		{"refusal", 200, nil, "chat_refusal.json", "", translate.KindBadOutput, 0, "refused"},
		{"no choices", 200, nil, "chat_no_choices.json", "", translate.KindBadOutput, 0, "no choices"},
		{"not JSON", 200, nil, "", "<html>proxy</html>", translate.KindBadOutput, 0, "not a chat completion"},
		{"error in a 200", 200, nil, "", `{"error": {"message": "upstream failed", "type": "server_error", "param": null, "code": null}}`, translate.KindBadOutput, 0, "upstream failed"},
		{"empty content", 200, nil, "", `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"  "},"logprobs":null,"finish_reason":"stop"}]}`, translate.KindBadOutput, 0, "empty"},
		{"tool call", 200, nil, "", `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"logprobs":null,"finish_reason":"tool_calls"}]}`, translate.KindBadOutput, 0, "tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, e := newTest(t, modeOK, WithName("llm-x"))
			fake.reply = func(w http.ResponseWriter, _ *chatRequestSeen) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				if tt.file != "" {
					w.Write(testdata(t, tt.file))
				} else {
					w.Write([]byte(tt.body))
				}
			}
			_, err := e.Translate(context.Background(), request("en", "es", "Secret customer text"))
			var te *translate.Error
			if !errors.As(err, &te) {
				t.Fatalf("err = %v (%T), want *translate.Error", err, err)
			}
			if te.Kind != tt.kind || te.Engine != "llm-x" || te.StatusCode != tt.status || te.RetryAfter != tt.retryAfter {
				t.Errorf("err = %+v, want kind %v, engine llm-x, status %d, RetryAfter %v", te, tt.kind, tt.status, tt.retryAfter)
			}
			if !strings.Contains(te.Message, tt.message) {
				t.Errorf("Message = %q, want it to contain %q", te.Message, tt.message)
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "customer") {
				t.Errorf("error %q leaks the key or the text", err)
			}
		})
	}
}

func TestEchoedKeyRedacted(t *testing.T) {
	fake, e := newTest(t, modeOK)
	fake.reply = func(w http.ResponseWriter, s *chatRequestSeen) {
		writeError(w, 401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: "+s.Header.Get("Authorization"))
	}
	_, err := e.Translate(context.Background(), request("en", "es", "x"))
	if translate.KindOf(err) != translate.KindUnauthorized {
		t.Errorf("err = %v, want KindUnauthorized", err)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("error %q leaks the key", err)
	}
}

func TestNoTarget(t *testing.T) {
	fake, e := newTest(t, modeOK)
	_, err := e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"x"}})
	if translate.KindOf(err) != translate.KindInvalidInput {
		t.Errorf("err = %v, want KindInvalidInput", err)
	}
	if len(fake.requests()) != 0 {
		t.Error("request sent without a target")
	}
}

func TestMarshalTexts(t *testing.T) {
	got, err := marshalTexts([]string{"<a href=\"x\">&</a>", "line\nbreak"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `["<a href=\"x\">&</a>","line\nbreak"]`; got != want {
		t.Errorf("marshalTexts = %s, want %s", got, want)
	}
	var back []string
	if err := json.Unmarshal([]byte(got), &back); err != nil || back[1] != "line\nbreak" {
		t.Errorf("round trip: %q, %v", back, err)
	}
}

func TestConformance(t *testing.T) {
	enginetest.Run(t, enginetest.Harness{
		NewEngine: func(t *testing.T, sc enginetest.Scenario) translate.Engine {
			_, e := newTest(t, sc)
			return e
		},
		ErrorKinds: []translate.Kind{
			translate.KindUnauthorized, translate.KindRateLimited, translate.KindQuotaExhausted,
			translate.KindTextTooLong, translate.KindInvalidInput, translate.KindUnavailable,
			translate.KindBadOutput,
		},
		Secrets:  []string{testKey},
		MaxTexts: 20,
		Native:   nativeOf(New("k", "m")),
	})
}

// nativeOf is the Native of a bundled Profile, for the conformance suite.
func nativeOf(e *Engine, err error) fidelity.Native {
	if err != nil {
		panic(err)
	}
	return e.Profile().Native
}

// TestKeyFuncKeyNotInErrors: a 200 without choices quotes the vendor's message, which may
// echo the key; the key a key function gave for the call is removed like a static one.
func TestKeyFuncKeyNotInErrors(t *testing.T) {
	const key = "sk-rotated-SECRET-0123456789abcdef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"error":{"message":"key ` + got + ` is over its budget","type":"billing"}}`))
	}))
	defer srv.Close()
	keyFunc := WithKeyFunc(func(context.Context) (string, error) { return key, nil })
	for name, e := range map[string]*Engine{
		"static":   must(New(key, testModel, WithBaseURL(srv.URL))),
		"key func": must(New("", testModel, WithBaseURL(srv.URL), keyFunc)),
	} {
		_, err := e.Translate(context.Background(), request("fr", "en", "Bonjour"))
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: error %v, want one without the key", name, err)
		}
	}
}

func must(e *Engine, err error) *Engine {
	if err != nil {
		panic(err)
	}
	return e
}
