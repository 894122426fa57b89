package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/internal/httpx"
	"golang.org/x/text/language"
)

// maxStreamErrorBody is the most of a non-2xx answer read before the stream starts.
const maxStreamErrorBody = 1 << 20

// errStreamEnded is the cause of the error when the stream ends before data: [DONE].
var errStreamEnded = errors.New("stream ended early")

// TranslateStream translates the one text in req.Texts with a streamed chat completion
// (stream: true, answered with server-sent events) and yields the translation in pieces as
// the model writes it; the concatenation of the pieces is the translation. It implements
// translate.StreamEngine and is safe for concurrent use.
//
// The request, its prompt and its key (WithKeyFunc's, read again once after a 401 or 403)
// are those of Translate, with stream: true and Accept: text/event-stream. The pieces are
// the content deltas of the first choice, shaped as Translate shapes a whole answer where
// that can be done on the fly: the surrounding white space becomes the source's (a piece's
// trailing white space is held back until more text follows it) and a leading
// <think>...</think> block is dropped when the source has no such tag. Code fences or quotes
// the model wraps around its answer are not removed, as they are only known at the end.
// Empty and role-only deltas yield nothing. A blank text is yielded unchanged without a
// request. The whole stream must end within the HTTP client's Timeout (120s for the
// default client; see WithHTTPClient).
//
// The sequence ends after data: [DONE], or at the first error, yielded once as the last
// value with an empty string: a *translate.Error classified as Translate classifies the same
// failure. In detail:
//
//   - len(req.Texts) other than 1, or no target: KindInvalidInput, before any request.
//   - An HTTP error status: the Kind, status, message and RetryAfter that Translate returns.
//   - An error in the stream (a data line holding {"error": {...}}, or an "error" event):
//     classified by its code and type as Translate classifies the same error object:
//     insufficient_quota is KindQuotaExhausted, rate limit errors KindRateLimited, context
//     length KindTextTooLong, server errors and anything unknown KindUnavailable; a numeric
//     code between 400 and 599 (vLLM) is taken as the HTTP status.
//   - The stream ends before data: [DONE] (the connection was cut): KindUnavailable,
//     "stream ended early", unless the choice already ended with a finish_reason such as
//     "stop", in which case the translation is complete.
//   - finish_reason "length" is KindTextTooLong; "content_filter", a tool call, a refusal, no
//     text at all, an answer that is not an event stream or an event that is not a chat
//     completion chunk are KindBadOutput, as are a line or event over 1 MiB and a stream over
//     32 MiB.
//   - ctx canceled or past its deadline: KindCanceled or KindTimeout wrapping ctx.Err().
//
// Errors never hold the API key or the text. When the consumer stops ranging or ctx is done,
// the response body is closed and the request ends; no goroutine outlives the loop. Pieces
// already yielded before an error are not taken back: the caller decides what to do with a
// partial translation. Token usage and rate-limit headers are not reported.
func (e *Engine) TranslateStream(ctx context.Context, req *translate.EngineRequest) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := e.checkStream(req); err != nil {
			yield("", err)
			return
		}
		src := req.Texts[0]
		if strings.TrimSpace(src) == "" {
			if src != "" {
				yield(src, nil)
			}
			return
		}
		resp, key, err := e.openStream(ctx, req)
		if err != nil {
			yield("", err)
			return
		}
		defer resp.Body.Close()
		s := &streamRun{e: e, ctx: ctx, key: key, src: src, sh: newShaper(src)}
		if err := s.read(resp.Body, yield); err != nil {
			yield("", err)
		}
	}
}

// checkStream validates a streamed request.
func (e *Engine) checkStream(req *translate.EngineRequest) error {
	switch {
	case req == nil:
		return e.errorf(translate.KindInvalidInput, "nil request")
	case len(req.Texts) != 1:
		return e.errorf(translate.KindInvalidInput, "TranslateStream takes exactly one text, got %d", len(req.Texts))
	case req.Target == language.Und:
		return e.errorf(translate.KindInvalidInput, "target language is required")
	}
	return nil
}

// streamRequest is CreateChatCompletionRequest with stream set.
type streamRequest struct {
	chatRequest
	Stream bool `json:"stream"`
}

// openStream sends the streamed chat completion and returns the response, once its status
// is 2xx and it is an event stream, with the key it was sent with; otherwise it returns the
// classified error. As Translate does, it re-reads a WithKeyFunc key once after a 401 or
// 403 and, if the key changed, asks again.
func (e *Engine) openStream(ctx context.Context, req *translate.EngineRequest) (*http.Response, string, error) {
	src := req.Texts[0]
	body := streamRequest{chatRequest: chatRequest{Model: e.model, Temperature: 0}, Stream: true}
	body.Messages = []message{
		{Role: "system", Content: systemPrompt(req, 1, false, e.cfg.instructions)},
		{Role: "user", Content: src},
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(body); err != nil {
		return nil, "", e.errorf(translate.KindInvalidInput, "encoding request: %v", err)
	}
	type opened struct {
		resp *http.Response
		key  string
	}
	o, err := httpx.WithKey(ctx, e.key, e.Name(), func(key string) (opened, error) {
		resp, err := e.postStream(ctx, key, buf.Bytes(), src)
		return opened{resp, key}, err
	})
	return o.resp, o.key, err
}

// postStream sends one streamed request with key and returns the response when it is a 2xx
// event stream.
func (e *Engine) postStream(ctx context.Context, key string, body []byte, src string) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, e.errorf(translate.KindInvalidInput, "building request: %v", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if key != "" {
		hreq.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := e.hc.Do(hreq)
	if err != nil {
		return nil, httpx.TransportError(ctx, e.Name(), err, key, src)
	}
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 && isEventStream(resp.Header) {
		return resp, nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxStreamErrorBody))
	if err != nil {
		return nil, httpx.TransportError(ctx, e.Name(), err, key, src)
	}
	r := &httpx.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, e.vendorError(r, key, src)
	}
	msg := "the answer is not an event stream"
	if m := errorMessage(b); m != "" {
		msg += ": " + m
	}
	return nil, httpx.Error(e.Name(), translate.KindBadOutput, r, msg, key, src)
}

// isEventStream reports whether h announces text/event-stream; a missing Content-Type is
// given the benefit of the doubt, as some compatible servers send none.
func isEventStream(h http.Header) bool {
	ct := h.Get("Content-Type")
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "text/event-stream"
}

// streamChunk is CreateChatCompletionStreamResponse, the fields used, or an ErrorResponse.
type streamChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Error json.RawMessage `json:"error"`
}

// streamRun is the state of one streamed call.
type streamRun struct {
	e        *Engine
	ctx      context.Context
	key      string // the API key the request was sent with
	src      string // the text
	sh       shaper
	finished bool // the choice ended with an acceptable finish_reason
}

// errStop is read's signal that the consumer stopped ranging: nothing more may be yielded.
var errStop = errors.New("consumer stopped")

// read yields the translation deltas of the event stream in body. It returns nil when the
// stream is done and everything is yielded, or the error to yield last.
func (s *streamRun) read(body io.Reader, yield func(string, error) bool) error {
	r := newSSEReader(body)
	for {
		ev, err := r.Next()
		if err != nil {
			return s.endError(err, yield)
		}
		var done bool
		switch ev.Type {
		case "error":
			err = s.eventError([]byte(ev.Data), true)
		case "message":
			done, err = s.event(ev.Data, yield)
		}
		switch {
		case err == errStop:
			return nil
		case err != nil:
			return err
		case done:
			return s.finish(yield)
		}
	}
}

// event handles one message event: a chunk, an error or [DONE] (done).
func (s *streamRun) event(data string, yield func(string, error) bool) (done bool, err error) {
	if strings.TrimSpace(data) == "[DONE]" {
		return true, nil
	}
	var ch streamChunk
	if err := json.Unmarshal([]byte(data), &ch); err != nil {
		return false, s.e.errorf(translate.KindBadOutput, "event is not a chat completion chunk: %v", err)
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		return false, s.eventError([]byte(data), false)
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		if c.Delta.Refusal != nil && *c.Delta.Refusal != "" {
			return false, s.e.errorf(translate.KindBadOutput, "the model refused to translate")
		}
		if c.Delta.Content != nil {
			if out := s.sh.push(*c.Delta.Content); out != "" && !yield(out, nil) {
				return false, errStop
			}
		}
		if c.FinishReason != nil {
			if err := s.finishReason(*c.FinishReason); err != nil {
				return false, err
			}
		}
	}
	return false, nil
}

// finishReason checks a choice's finish_reason as Translate does.
func (s *streamRun) finishReason(reason string) error {
	switch reason {
	case "":
		return nil
	case "length":
		return &translate.Error{Kind: translate.KindTextTooLong, Engine: s.e.Name(),
			Message: "finish_reason length: the answer was cut at the model's token limit"}
	case "content_filter":
		return s.e.errorf(translate.KindBadOutput, "finish_reason content_filter: content was omitted by the content filter")
	case "tool_calls", "function_call":
		return s.e.errorf(translate.KindBadOutput, "finish_reason %s: the model called a tool instead of answering", reason)
	}
	s.finished = true
	return nil
}

// finish ends a complete stream: the source's trailing white space, or KindBadOutput when
// the model wrote no text.
func (s *streamRun) finish(yield func(string, error) bool) error {
	tail, ok := s.sh.end()
	if !ok {
		return s.e.errorf(translate.KindBadOutput, "empty message content")
	}
	if tail != "" {
		yield(tail, nil)
	}
	return nil
}

// endError classifies the error that ended the event stream.
func (s *streamRun) endError(err error, yield func(string, error) bool) error {
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		if s.finished && s.ctx.Err() == nil {
			return s.finish(yield)
		}
		if s.ctx.Err() != nil {
			return httpx.TransportError(s.ctx, s.e.Name(), err, s.key, s.src)
		}
		return &translate.Error{Kind: translate.KindUnavailable, Engine: s.e.Name(),
			Message: "stream ended early, before data: [DONE]", Err: errStreamEnded}
	case err == errSSELineTooLong || err == errSSEEventTooLong || err == errSSETooLong:
		return &translate.Error{Kind: translate.KindBadOutput, Engine: s.e.Name(), Message: err.Error(), Err: err}
	}
	return httpx.TransportError(s.ctx, s.e.Name(), err, s.key, s.src)
}

// eventError classifies an error sent inside the stream. data is a chunk holding
// {"error": ...} or, for an "error" event, the Error object itself (or any text).
func (s *streamRun) eventError(data []byte, errorEvent bool) error {
	body := data
	if errorEvent {
		var probe struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(data, &probe) != nil || len(probe.Error) == 0 {
			inner := data
			if !json.Valid(data) {
				inner, _ = json.Marshal(string(data))
			}
			body = append(append([]byte(`{"error":`), inner...), '}')
		}
	}
	_, typ, code := parseError(body)
	status, given := streamErrorStatus(typ, code)
	err := s.e.vendorError(&httpx.Response{Status: status, Header: http.Header{}, Body: body}, s.key, s.src)
	var te *translate.Error
	if errors.As(err, &te) {
		te.RetryAfter = 0
		if !given {
			te.StatusCode = 0
		}
	}
	return err
}

// streamErrorStatus is the HTTP status an error object sent inside a stream stands for, so
// that it is classified as the same error answered with that status would be. given
// reports whether the server gave the status itself, as a numeric code.
func streamErrorStatus(typ, code string) (status int, given bool) {
	if n, err := strconv.Atoi(code); err == nil && n >= 400 && n <= 599 {
		return n, true
	}
	c, t := strings.ToLower(code), strings.ToLower(typ)
	has := func(s string) bool { return strings.Contains(c, s) || strings.Contains(t, s) }
	switch {
	case has("insufficient_quota"), has("rate_limit"), t == "requests", t == "tokens":
		return http.StatusTooManyRequests, false
	case has("context_length"), has("unsupported_"), has("invalid_request"):
		return http.StatusBadRequest, false
	case has("invalid_api_key"), has("authentication"), has("permission"):
		return http.StatusUnauthorized, false
	case has("timeout"):
		return http.StatusGatewayTimeout, false
	}
	return http.StatusInternalServerError, false // server_error, overloaded, unknown
}

// shaper turns the model's content deltas into translation deltas, doing on the fly what
// cleanOne and stripThinking do to a whole answer: the model's leading and trailing white
// space are replaced by the source's, and a leading <think>...</think> block is dropped
// unless the source has the tag. The zero value is not usable; see newShaper.
type shaper struct {
	lead, trail string // the source's surrounding white space
	think       bool   // a <think> block may still be dropped
	state       shaperState
	held        string // start: a possible "<think>" prefix; thinking: the tail that may start "</think>"
	space       []byte // body: the white space the answer ends with so far, held back
}

type shaperState uint8

const (
	shapeStart    shaperState = iota // nothing but white space so far
	shapeThinking                    // inside <think>...</think>
	shapeBody                        // the translation has begun
)

const thinkOpen, thinkClose = "<think>", "</think>"

// newShaper returns a shaper for the translation of src.
func newShaper(src string) shaper {
	return shaper{
		lead:  src[:len(src)-len(strings.TrimLeftFunc(src, unicode.IsSpace))],
		trail: src[len(strings.TrimRightFunc(src, unicode.IsSpace)):],
		think: !strings.Contains(src, thinkOpen),
	}
}

// push takes the next content delta and returns what may be yielded now ("" for nothing).
func (s *shaper) push(d string) string {
	switch s.state {
	case shapeThinking:
		buf := s.held + d
		if i := strings.Index(buf, thinkClose); i >= 0 {
			s.state, s.held = shapeStart, ""
			return s.push(buf[i+len(thinkClose):])
		}
		s.held = buf[max(0, len(buf)-len(thinkClose)+1):]
		return ""
	case shapeBody:
		// Only d is trimmed, and white space is appended to what is held: a model that
		// writes a million white-space deltas costs a million appends, not their square.
		core := strings.TrimRightFunc(d, unicode.IsSpace)
		if core == "" {
			s.space = append(s.space, d...)
			return ""
		}
		out := string(s.space) + core
		s.space = append(s.space[:0], d[len(core):]...)
		return out
	}
	t := strings.TrimLeftFunc(s.held+d, unicode.IsSpace)
	s.held = ""
	if t == "" {
		return ""
	}
	if s.think {
		if len(t) < len(thinkOpen) && strings.HasPrefix(thinkOpen, t) {
			s.held = t
			return ""
		}
		if strings.HasPrefix(t, thinkOpen) {
			s.think, s.state = false, shapeThinking
			return s.push(t[len(thinkOpen):])
		}
	}
	s.think, s.state = false, shapeBody
	return s.push(s.lead + t)
}

// end returns what is left to yield when the answer is complete, and false when the model
// wrote no translation at all.
func (s *shaper) end() (string, bool) {
	switch {
	case s.state == shapeBody:
		return s.trail, true
	case s.state == shapeStart && s.held != "":
		return s.lead + s.held + s.trail, true // an answer that only looked like "<think>" might start
	}
	return "", false
}
