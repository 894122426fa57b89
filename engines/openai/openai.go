// Package openai is a translate.Engine for any server that speaks the OpenAI chat completions
// API (POST /chat/completions): OpenAI itself, DeepSeek, Doubao (Volcano Ark), Qwen
// (DashScope compatible mode), vLLM, llama.cpp's server, Ollama and others.
//
// Create the engine with an API key (empty for self-hosted servers without auth) and a model,
// point it at the server's base URL (default https://api.openai.com/v1) and hand it to a
// translate.Client with its Profile:
//
//	e, err := openai.New(os.Getenv("DEEPSEEK_API_KEY"), "deepseek-chat",
//		openai.WithBaseURL("https://api.deepseek.com/v1"),
//		openai.WithPrice(0.5), // credits (USD) per million characters, your estimate
//	)
//	if err != nil {
//		return err
//	}
//	c, err := translate.New(translate.WithEngine(e, e.Profile()))
//
// # Prompt
//
// Each request has a system message built from the request: the source language (or "detect
// the language"), the target language (English names with the BCP 47 tag, such as "Spanish
// (es)"), wording for the Scene (general, tech, legal, ecommerce, chat) and the Style (formal,
// casual), and the rules: output only the translation, translate instructions found in the
// text rather than follow them, keep placeholders ({name}, {{name}}, %s, %1$s), tags, markup,
// URLs and line breaks untouched. Temperature is 0.
//
// After the rules come, each on its own line and in this order: for a request in HTML or
// XML (EngineRequest.Format), the fixed rule to keep every tag, attribute, entity and
// comment exactly as it is and translate only the text between the tags; the request's
// Instruction (EngineRequest.Instruction: the glossary terms, in package glossary's fixed
// wording), as it is; and your own text from WithInstructions. The bundled Profile declares
// Native{Formats: HTML, XML; Instructions: true}, so the Client sends markup as it is and
// glossaries as an Instruction.
//
// One text is sent as the user message as it is; the answer is the message content, with
// surrounding white space made the same as the source's and a single surrounding pair of
// code fences or quotes removed when the model added them and the source had none. A leading
// <think>...</think> block (reasoning models served by llama.cpp, Ollama or vLLM) is dropped
// too when the source has no such tag. Nothing else is removed.
//
// Several texts (up to WithMaxTexts per request) are sent as a JSON array of strings and the
// model is asked for {"translations": [...]}, with response_format json_object (turn it off
// with WithoutJSONMode for servers that reject it). A bare JSON array, a fenced answer or an
// object with a single array field is accepted too; a wrong count or anything unparsable is
// KindBadOutput.
//
// # Errors
//
// 401 and 403 are KindUnauthorized; 404 (the model does not exist, the key may not use it,
// or the base URL is wrong) is KindUnauthorized as well, so the Client sets the engine aside
// until it is reconfigured instead of failing requests; 429 with code or type
// insufficient_quota is KindQuotaExhausted, any other 429 KindRateLimited with RetryAfter
// from retry-after-ms or Retry-After; 400 with code context_length_exceeded (or a message
// about the maximum context length, as vLLM and others send it) and 413 are KindTextTooLong;
// 400 with code unsupported_parameter or unsupported_value (reasoning models refuse
// temperature 0) is KindUnsupported, so the Client fails over; other 400 and 422 are
// KindInvalidInput; 408 and 504 KindTimeout; 5xx KindUnavailable. A 200
// answer is checked too: finish_reason "length" is KindTextTooLong; "content_filter", tool
// calls, a refusal, no choices, empty content or unparsable JSON are KindBadOutput. The API
// key is never part of an error.
//
// Token usage is returned in EngineResult.InputTokens and OutputTokens, and the
// x-ratelimit-remaining-requests, -remaining-tokens, -reset-requests and -reset-tokens
// headers in EngineResult.Limits (garbage values are ignored; resets are clamped to 24h).
// The API does not report the detected source language, so EngineResult.Source stays
// language.Und.
//
// # Security
//
// No error carries the API key or the request's texts, in any encoding, even when the
// server's message quotes them. A redirect to another host is refused (KindUnavailable)
// instead of carrying the key and the texts there. Response bodies are read up to 8 MiB;
// Retry-After and retry-after-ms are clamped to [0, 5m]. WithKeyFunc rotates the key
// without a restart.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/internal/httpx"
	"github.com/fanyi-go/translate/internal/httpx/retryafter"
	"golang.org/x/text/language"
)

// Name is the default engine name.
const Name = "openai"

// DefaultBaseURL is the OpenAI API server, as the API description writes it.
const DefaultBaseURL = "https://api.openai.com/v1"

// Option configures an Engine in New.
type Option func(*config)

type config struct {
	baseURL      string
	hc           *http.Client
	name         string
	price        float64
	quality      float64
	instructions string
	maxTexts     int
	jsonMode     bool
	keyFunc      httpx.KeyFunc
}

func defaultConfig() config {
	return config{baseURL: DefaultBaseURL, name: Name, quality: 86, maxTexts: 20, jsonMode: true}
}

// WithBaseURL sets the server URL, such as "https://api.deepseek.com/v1" or
// "http://localhost:8000/v1"; the adapter appends /chat/completions. A trailing slash is
// tolerated. The default is DefaultBaseURL.
func WithBaseURL(u string) Option { return func(c *config) { c.baseURL = u } }

// WithHTTPClient sets the HTTP client. The default is a client with connection, TLS and
// header timeouts, never http.DefaultClient.
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.hc = hc } }

// WithName sets the engine name, so that several models or servers can serve one Client.
// The default is Name.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithPrice sets Profile().CostPerMillion: what a million characters of source text cost
// in credits (USD), input and output tokens together. Token prices differ by model and server,
// so the default is 0 (unknown, which the router scores as free): set it.
func WithPrice(perMillionChars float64) Option { return func(c *config) { c.price = perMillionChars } }

// WithQuality sets Profile().Quality, 0..100. The default is 86, a guess for current
// general-purpose models; measure yours.
func WithQuality(q float64) Option { return func(c *config) { c.quality = q } }

// WithInstructions appends text to the system prompt the engine builds, such as a glossary
// or a house style. The default is none.
func WithInstructions(s string) Option { return func(c *config) { c.instructions = s } }

// WithMaxTexts sets how many texts go in one request (and Profile().MaxTexts). The default
// is 20; use 1 for small models that do not follow the JSON batch format.
func WithMaxTexts(n int) Option { return func(c *config) { c.maxTexts = n } }

// WithKeyFunc reads the API key from f before every request instead of New's fixed key,
// so that a rotated key applies without a restart; f must be safe for concurrent use and
// fast (cache in it if fetching is slow). When the server answers 401 or 403, the engine
// calls f once more and, if the key changed, repeats the request once before returning
// KindUnauthorized. An error from f, or an empty key, is KindUnauthorized. The default is
// New's apiKey.
func WithKeyFunc(f func(context.Context) (string, error)) Option {
	return func(c *config) { c.keyFunc = f }
}

// WithoutJSONMode stops sending response_format {"type": "json_object"} with batches, for
// servers that reject it. The model is still asked for JSON and its answer still checked.
func WithoutJSONMode() Option { return func(c *config) { c.jsonMode = false } }

// Engine translates with a chat completions model. It is safe for concurrent use. Create it
// with New; the zero value is not usable.
type Engine struct {
	apiKey   string    // New's key; "" for servers without auth
	key      httpx.Key // apiKey, or WithKeyFunc's
	model    string
	endpoint string
	hc       *http.Client
	cfg      config
}

// New returns an Engine for model on the server. apiKey may be empty for servers without
// authentication. It returns a *translate.Error of KindInvalidInput naming the bad argument
// when model is empty or an option is invalid.
func New(apiKey, model string, opts ...Option) (*Engine, error) {
	c := defaultConfig()
	for _, o := range opts {
		o(&c)
	}
	switch {
	case strings.TrimSpace(model) == "":
		return nil, invalid("model is empty")
	case c.name == "":
		return nil, invalid("WithName: name is empty")
	case c.maxTexts <= 0:
		return nil, invalid("WithMaxTexts: must be positive, got " + strconv.Itoa(c.maxTexts))
	case c.price < 0:
		return nil, invalid("WithPrice: must not be negative")
	case c.quality < 0 || c.quality > 100:
		return nil, invalid("WithQuality: must be within 0..100")
	}
	base, err := httpx.BaseURL(c.baseURL)
	if err != nil {
		return nil, invalid("WithBaseURL: " + err.Error())
	}
	c.hc = httpx.Client(c.hc)
	return &Engine{
		apiKey:   apiKey,
		key:      httpx.NewKey(apiKey, c.keyFunc),
		model:    model,
		endpoint: base + "/chat/completions",
		hc:       c.hc,
		cfg:      c,
	}, nil
}

// invalid is New's error for a bad argument.
func invalid(msg string) error {
	return &translate.Error{Kind: translate.KindInvalidInput, Engine: Name, Message: "openai.New: " + msg}
}

// Name returns the engine's name: Name unless set with WithName.
func (e *Engine) Name() string { return e.cfg.name }

// Profile describes the engine to the router: ClassStandard, CostPerMillion from WithPrice
// (default 0: unknown), Quality from WithQuality (default 86), MaxChars 4000, MaxTexts from
// WithMaxTexts (default 20), Timeout 5s plus TimeoutPerKTokens 15s for every 1,000 tokens
// of the call's texts (language models take longer the more they write: 20s for a 1,000-token
// segment, within the request's deadline), and Restyles (the prompt asks for the request's
// Style, so Formal and Casual requests prefer the engine), and Native{Formats: HTML, XML;
// Instructions: true} (see Prompt in the package doc). Set Class to
// ClassPremium yourself for expensive models, and RateLimit to your account's limits.
func (e *Engine) Profile() translate.Profile {
	return translate.Profile{
		Quality:           e.cfg.quality,
		Class:             translate.ClassStandard,
		CostPerMillion:    e.cfg.price,
		Timeout:           5 * time.Second,
		TimeoutPerKTokens: 15 * time.Second,
		MaxChars:          4000,
		MaxTexts:          e.cfg.maxTexts,
		Restyles:          true, // the prompt asks for the Style's register
		Native: fidelity.Native{
			Formats:      []fidelity.Format{fidelity.FormatHTML, fidelity.FormatXML},
			Instructions: true, // appended to the system prompt
		},
	}
}

// Translate translates req.Texts with one chat completion per WithMaxTexts texts. Empty and
// blank texts are returned unchanged without being sent. It is safe for concurrent use.
func (e *Engine) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	if req == nil {
		return nil, e.errorf(translate.KindInvalidInput, "nil request")
	}
	if req.Target == language.Und {
		return nil, e.errorf(translate.KindInvalidInput, "target language is required")
	}
	out := make([]string, len(req.Texts))
	var todo []int // indexes of the texts to send
	for i, t := range req.Texts {
		if strings.TrimSpace(t) == "" {
			out[i] = t
			continue
		}
		todo = append(todo, i)
	}
	res := &translate.EngineResult{}
	for len(todo) > 0 {
		n := min(len(todo), e.cfg.maxTexts)
		chunk := todo[:n]
		todo = todo[n:]
		texts := make([]string, n)
		for j, i := range chunk {
			texts[j] = req.Texts[i]
		}
		got, err := e.complete(ctx, req, texts, res)
		if err != nil {
			return nil, err
		}
		for j, i := range chunk {
			out[i] = got[j]
		}
	}
	if err := httpx.CountTexts(e.Name(), len(out), len(req.Texts)); err != nil {
		return nil, err
	}
	res.Texts = out
	return res, nil
}

// Wire types: CreateChatCompletionRequest and CreateChatCompletionResponse, the fields used.

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []message       `json:"messages"`
	Temperature    float64         `json:"temperature"` // always sent: 0
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type chatResponse struct {
	Choices []choice `json:"choices"`
	Usage   *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// choice is one of CreateChatCompletionResponse's choices.
type choice struct {
	Index   int `json:"index"`
	Message struct {
		Content   *string         `json:"content"`
		Refusal   *string         `json:"refusal"`
		ToolCalls json.RawMessage `json:"tool_calls"`
	} `json:"message"`
	FinishReason string `json:"finish_reason"`
}

// complete sends texts in one chat completion and returns their translations, adding the
// token usage to res.
func (e *Engine) complete(ctx context.Context, req *translate.EngineRequest, texts []string, res *translate.EngineResult) ([]string, error) {
	body, user, err := e.chatBody(req, texts)
	if err != nil {
		return nil, err
	}
	secrets := append([]string{user, req.Instruction}, texts...)
	resp, err := e.post(ctx, body, secrets)
	if err != nil {
		return nil, err
	}
	ch, err := e.decode(resp, res, secrets)
	if err != nil {
		return nil, err
	}
	content, err := e.content(resp, ch, texts)
	if err != nil {
		return nil, err
	}
	if len(texts) == 1 {
		return []string{cleanOne(texts[0], content)}, nil
	}
	return e.batchAnswer(resp, texts, content)
}

// chatBody is the JSON request for texts and the user message in it: the one text as it
// is, or several as a JSON array, answered in JSON mode unless WithoutJSONMode.
func (e *Engine) chatBody(req *translate.EngineRequest, texts []string) ([]byte, string, error) {
	batch := len(texts) > 1
	body := chatRequest{Model: e.model, Temperature: 0}
	user := texts[0]
	if batch {
		var err error
		if user, err = marshalTexts(texts); err != nil {
			return nil, "", e.errorf(translate.KindInvalidInput, "encoding texts: %v", err)
		}
		if e.cfg.jsonMode {
			body.ResponseFormat = &responseFormat{Type: "json_object"}
		}
	}
	body.Messages = []message{
		{Role: "system", Content: systemPrompt(req, len(texts), batch, e.cfg.instructions)},
		{Role: "user", Content: user},
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(body); err != nil {
		return nil, "", e.errorf(translate.KindInvalidInput, "encoding request: %v", err)
	}
	return buf.Bytes(), user, nil
}

// decode reads a 2xx answer, adding its rate-limit headers and token usage to res, and
// returns its first choice. An answer without choices is KindBadOutput, with the error
// message of the body, if any, quoting none of secrets.
func (e *Engine) decode(resp *httpx.Response, res *translate.EngineResult, secrets []string) (choice, error) {
	if l := httpx.Limits(resp.Header); l != nil {
		res.Limits = l
	}
	var cr chatResponse
	if err := json.Unmarshal(resp.Body, &cr); err != nil {
		return choice{}, e.badOutput(resp, "response is not a chat completion: %v", err)
	}
	if cr.Usage != nil {
		res.InputTokens += cr.Usage.PromptTokens
		res.OutputTokens += cr.Usage.CompletionTokens
	}
	if len(cr.Choices) == 0 {
		if m := errorMessage(resp.Body); m != "" {
			return choice{}, httpx.Error(e.Name(), translate.KindBadOutput, resp, "no choices: "+m, append(secrets, e.apiKey)...)
		}
		return choice{}, e.badOutput(resp, "no choices in the response")
	}
	return cr.Choices[0], nil
}

// content is the answer of ch without a leading thinking block the texts do not have. A
// choice cut at the token limit is KindTextTooLong; a filtered answer, a tool call, a
// refusal or no text are KindBadOutput.
func (e *Engine) content(resp *httpx.Response, ch choice, texts []string) (string, error) {
	switch ch.FinishReason {
	case "length":
		return "", httpx.Error(e.Name(), translate.KindTextTooLong, resp,
			"finish_reason length: the answer was cut at the model's token limit")
	case "content_filter":
		return "", e.badOutput(resp, "finish_reason content_filter: content was omitted by the content filter")
	case "tool_calls", "function_call":
		return "", e.badOutput(resp, "finish_reason %s: the model called a tool instead of answering", ch.FinishReason)
	}
	if ch.Message.Refusal != nil && *ch.Message.Refusal != "" {
		return "", e.badOutput(resp, "the model refused to translate")
	}
	if ch.Message.Content == nil || strings.TrimSpace(*ch.Message.Content) == "" {
		return "", e.badOutput(resp, "empty message content")
	}
	content := stripThinking(texts, *ch.Message.Content)
	if strings.TrimSpace(content) == "" {
		return "", e.badOutput(resp, "empty message content")
	}
	return content, nil
}

// batchAnswer reads the translations of texts from content, a JSON answer, each with the
// white space around its text; a missing or blank translation is KindBadOutput.
func (e *Engine) batchAnswer(resp *httpx.Response, texts []string, content string) ([]string, error) {
	got, err := parseTexts(content, len(texts))
	if err != nil {
		return nil, e.badOutput(resp, "batch answer: %v", err)
	}
	for i, g := range got {
		if strings.TrimSpace(g) == "" {
			return nil, e.badOutput(resp, "batch answer: text %d of %d is empty", i+1, len(got))
		}
		got[i] = sameSpace(texts[i], strings.TrimSpace(g))
	}
	return got, nil
}

// apiError is the Error schema: message, type, param, code. Code is a string or null in the
// description; some compatible servers send a number.
type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// parseError reads an ErrorResponse body ({"error": {...}}); some compatible servers send
// {"error": "message"} or {"message": ...} instead.
func parseError(body []byte) (msg, typ, code string) {
	var er struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &er) != nil {
		return "", "", ""
	}
	var ae apiError
	if json.Unmarshal(er.Error, &ae) == nil {
		var s string
		if json.Unmarshal(ae.Code, &s) != nil && len(ae.Code) > 0 && string(ae.Code) != "null" {
			s = string(ae.Code)
		}
		return ae.Message, ae.Type, s
	}
	var s string
	if json.Unmarshal(er.Error, &s) == nil {
		return s, "", ""
	}
	return er.Message, "", ""
}

// errorMessage is the message of an error body, "" when there is none.
func errorMessage(body []byte) string {
	msg, typ, code := parseError(body)
	return joinNonEmpty(code, typ, msg)
}

func joinNonEmpty(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ": ")
}

// post sends one chat completion request with body and returns the 2xx response, or the
// classified error, which quotes neither the key nor any of secrets (the texts). An
// unauthorized answer re-reads a key from WithKeyFunc once and, if it changed, repeats the
// request.
func (e *Engine) post(ctx context.Context, body []byte, secrets []string) (*httpx.Response, error) {
	return httpx.WithKey(ctx, e.key, e.Name(), func(key string) (*httpx.Response, error) {
		hreq, err := httpx.NewRequest(ctx, http.MethodPost, e.endpoint, body, "application/json")
		if err != nil {
			return nil, e.errorf(translate.KindInvalidInput, "building request: %v", err)
		}
		if key != "" {
			hreq.Header.Set("Authorization", "Bearer "+key)
		}
		return httpx.Send(e.hc, e.Name(), hreq, e.classify, append([]string{key}, secrets...)...)
	})
}

// classify is vendorError as an httpx.Classify (engine is e.Name()).
func (e *Engine) classify(_ string, resp *httpx.Response, secrets ...string) *translate.Error {
	return e.vendorError(resp, secrets...)
}

// vendorError classifies a non-2xx answer; its message quotes none of secrets (the key and
// the request's texts).
func (e *Engine) vendorError(resp *httpx.Response, secrets ...string) *translate.Error {
	msg, typ, code := parseError(resp.Body)
	kind := httpx.StatusKind(resp.Status)
	switch resp.Status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		kind = translate.KindUnauthorized
	case http.StatusTooManyRequests:
		if code == "insufficient_quota" || typ == "insufficient_quota" {
			kind = translate.KindQuotaExhausted
		}
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		switch {
		case code == "context_length_exceeded" || typ == "context_length_exceeded" ||
			strings.Contains(strings.ToLower(msg), "maximum context length"):
			kind = translate.KindTextTooLong
		case code == "unsupported_parameter" || code == "unsupported_value":
			// The model does not take a parameter the engine sends (reasoning models and
			// temperature 0): the engine's fault, not the request's.
			kind = translate.KindUnsupported
		}
	}
	text := joinNonEmpty(code, msg)
	if text == "" {
		text = http.StatusText(resp.Status)
	}
	te := httpx.Error(e.Name(), kind, resp, text, secrets...)
	if kind == translate.KindQuotaExhausted {
		te.RetryAfter = 0 // not retryable: it needs billing, not waiting
	} else if ms := retryafter.Millis(resp.Header.Get("retry-after-ms")); ms > 0 {
		te.RetryAfter = ms
	}
	return te
}

func (e *Engine) badOutput(resp *httpx.Response, format string, args ...any) error {
	return httpx.Error(e.Name(), translate.KindBadOutput, resp, fmt.Sprintf(format, args...), e.apiKey)
}

func (e *Engine) errorf(kind translate.Kind, format string, args ...any) *translate.Error {
	return &translate.Error{Kind: kind, Engine: e.Name(), Message: fmt.Sprintf(format, args...)}
}
