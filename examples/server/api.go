package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fanyi-go/translate"
)

// translateRequest is the body of POST /v1/translate (seed 000 §2.1), and one item of a
// batch. Only text and target_lang are required.
type translateRequest struct {
	Text          string `json:"text"`
	SourceLang    string `json:"source_lang"` // BCP 47; "" or "auto" means detect
	TargetLang    string `json:"target_lang"`
	Scene         string `json:"scene"`    // general (default), tech, legal, ecommerce, chat
	Style         string `json:"style"`    // default, formal, casual
	UserID        string `json:"user_id"`  // stable routing for canaries and sticky routing
	Priority      string `json:"priority"` // normal (default), high
	RequestID     string `json:"request_id"`
	Engine        string `json:"engine"` // pin one engine by name
	AllowFallback bool   `json:"allow_fallback"`
}

// response is every answer's envelope: code 0 and message "ok" on success.
type response struct {
	Code      int    `json:"code"`
	Message   string `json:"message"`
	Data      any    `json:"data,omitempty"`
	RequestID string `json:"request_id,omitempty"`
}

// translation is the data of a successful translation.
type translation struct {
	TranslatedText string  `json:"translated_text"`
	Engine         string  `json:"engine"`
	SourceLang     string  `json:"source_lang,omitempty"`
	LatencyMS      float64 `json:"latency_ms"`
	CostCredit     float64 `json:"cost_credit"`
	FromCache      bool    `json:"from_cache"`
	Degraded       bool    `json:"degraded"`
	Attempts       int     `json:"attempts"` // engine calls made (and engines skipped at call time)
}

// failure is the data of a failed translation: what was tried and, when no engine could
// serve, why each was left out. It never holds the customer's text.
type failure struct {
	Kind     string            `json:"kind"` // the translate.Kind, snake_case
	Attempts []attemptOut      `json:"attempts,omitempty"`
	Excluded map[string]string `json:"excluded,omitempty"`
}

type attemptOut struct {
	Engine    string  `json:"engine"`
	LatencyMS float64 `json:"latency_ms"`
	Error     string  `json:"error,omitempty"` // the attempt's Kind
}

type batchRequest struct {
	Requests []translateRequest `json:"requests"`
}

type batchData struct {
	Results []response `json:"results"` // one per request, in order
}

// engineOut is one engine of GET /v1/engines.
type engineOut struct {
	Name          string  `json:"name"`
	Breaker       string  `json:"breaker"`
	Pool          string  `json:"pool"`
	Health        float64 `json:"health"`
	Score         float64 `json:"score"`
	QuotaLeft     int64   `json:"quota_left"` // -1 when unlimited
	SetAside      bool    `json:"set_aside"`
	LatencyEWMAMS float64 `json:"latency_ewma_ms"`
}

// api serves the HTTP endpoints over one Client. It is safe for concurrent use.
type api struct {
	client   *translate.Client
	set      settings
	tel      *telemetry
	draining atomic.Bool // set on SIGTERM: /readyz answers 503
}

func newAPI(c *translate.Client, s settings, tel *telemetry) *api {
	return &api{client: c, set: s, tel: tel}
}

func (a *api) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/translate", a.translate)
	mux.HandleFunc("POST /v1/translate/batch", a.batch)
	mux.HandleFunc("GET /v1/engines", a.engines)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, response{Code: codeOK, Message: "ok"})
	})
	mux.HandleFunc("GET /readyz", a.ready)
	if a.tel != nil {
		mux.Handle("GET /metrics", a.tel.handler())
	}
	for _, p := range []string{"/v1/translate", "/v1/translate/batch", "/v1/engines", "/healthz", "/readyz", "/metrics"} {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			fail(w, codeMethod, "method "+r.Method+" not allowed on "+p, "")
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, codeNotFound, "no such endpoint", "")
	})
	return mux
}

func (a *api) translate(w http.ResponseWriter, r *http.Request) {
	var in translateRequest
	if code, msg := a.decode(w, r, &in); code != codeOK {
		fail(w, code, msg, in.RequestID)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), a.set.timeout)
	defer cancel()
	out := a.one(ctx, r.Context(), in)
	if out.Code == codeRateLimited || out.Code == codeQuota {
		if ra := retryAfter(out.err); ra > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(ra))
		}
	}
	writeJSON(w, status(out.Code), out.response)
}

// result is one answer with the error it came from, for headers.
type result struct {
	response
	err error
}

// one translates in under ctx; caller is the HTTP request's own context, to tell a client
// that hung up from the server's timeout.
func (a *api) one(ctx, caller context.Context, in translateRequest) result {
	req, msg := in.toRequest()
	if msg != "" {
		return result{response: response{Code: codeInvalidInput, Message: msg, RequestID: in.RequestID}}
	}
	res, err := a.client.Translate(ctx, req)
	if err != nil {
		return errorResult(err, caller.Err() != nil, in.RequestID)
	}
	return result{response: response{Code: codeOK, Message: "ok", RequestID: res.RequestID, Data: translation{
		TranslatedText: res.Text, Engine: res.Engine, SourceLang: res.Source,
		LatencyMS: ms(res.Latency), CostCredit: res.Cost, FromCache: res.FromCache,
		Degraded: res.Degraded, Attempts: len(res.Attempts),
	}}}
}

func errorResult(err error, clientGone bool, reqID string) result {
	code := codeOf(err, clientGone)
	f := failure{Kind: translate.KindOf(err).String()}
	msg := err.Error() // the library's errors never hold customer text or credentials
	var te *translate.Error
	if errors.As(err, &te) {
		if te.Kind == translate.KindInvalidInput && te.Engine == "" {
			msg = jsonMessage(msg) // the Client checked the request: name the body's members
		}
		f.Excluded = te.Excluded
		for _, at := range te.Attempts {
			f.Attempts = append(f.Attempts, attemptOut{Engine: at.Engine, LatencyMS: ms(at.Latency), Error: translate.KindOf(at.Err).String()})
		}
	}
	return result{response: response{Code: code, Message: msg, Data: f, RequestID: reqID}, err: err}
}

// retryAfter is the Retry-After to send, in whole seconds (at least 1): the vendor's, or
// the longest one among the attempts.
func retryAfter(err error) int {
	var d time.Duration
	var te *translate.Error
	if errors.As(err, &te) {
		d = te.RetryAfter
		for _, at := range te.Attempts {
			var ae *translate.Error
			if errors.As(at.Err, &ae) {
				d = max(d, ae.RetryAfter)
			}
		}
	}
	return max(1, int(math.Ceil(d.Seconds())))
}

func (a *api) batch(w http.ResponseWriter, r *http.Request) {
	var in batchRequest
	if code, msg := a.decode(w, r, &in); code != codeOK {
		fail(w, code, msg, "")
		return
	}
	switch {
	case len(in.Requests) == 0:
		fail(w, codeBadRequest, "requests: want at least one item", "")
		return
	case len(in.Requests) > a.set.maxBatch:
		fail(w, codeTooLarge, fmt.Sprintf("requests: %d items, at most %d", len(in.Requests), a.set.maxBatch), "")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), a.set.timeout)
	defer cancel()
	// Items that fail validation here are answered without reaching the Client; the others
	// go through TranslateBatch, which keeps their order and bounds the concurrency.
	out := make([]response, len(in.Requests))
	var reqs []translate.Request
	var at []int
	for i, item := range in.Requests {
		req, msg := item.toRequest()
		if msg != "" {
			out[i] = response{Code: codeInvalidInput, Message: fmt.Sprintf("requests[%d]: %s", i, msg), RequestID: item.RequestID}
			continue
		}
		reqs = append(reqs, req)
		at = append(at, i)
	}
	for k, br := range a.client.TranslateBatch(ctx, reqs) {
		i := at[k]
		if br.Err != nil {
			out[i] = errorResult(br.Err, r.Context().Err() != nil, in.Requests[i].RequestID).response
			continue
		}
		res := br.Result
		out[i] = response{Code: codeOK, Message: "ok", RequestID: res.RequestID, Data: translation{
			TranslatedText: res.Text, Engine: res.Engine, SourceLang: res.Source,
			LatencyMS: ms(res.Latency), CostCredit: res.Cost, FromCache: res.FromCache,
			Degraded: res.Degraded, Attempts: len(res.Attempts),
		}}
	}
	writeJSON(w, http.StatusOK, response{Code: codeOK, Message: "ok", Data: batchData{Results: out}})
}

func (a *api) engines(w http.ResponseWriter, _ *http.Request) {
	st := a.client.Engines()
	out := make([]engineOut, len(st))
	for i, s := range st {
		out[i] = engineOut{Name: s.Name, Breaker: s.Breaker.String(), Pool: s.Pool.String(),
			Health: s.Health, Score: s.Score, QuotaLeft: s.QuotaLeft, SetAside: s.SetAside,
			LatencyEWMAMS: ms(s.LatencyEWMA)}
	}
	writeJSON(w, http.StatusOK, response{Code: codeOK, Message: "ok", Data: out})
}

// ready reports 200 while the server takes traffic: not shutting down, and at least one
// engine is usable (breaker not open, not in maintenance, not set aside).
func (a *api) ready(w http.ResponseWriter, _ *http.Request) {
	if a.draining.Load() {
		fail(w, codeClosed, "shutting down", "")
		return
	}
	for _, s := range a.client.Engines() {
		if s.Breaker != translate.BreakerOpen && s.Pool != translate.PoolMaintenance && !s.SetAside {
			writeJSON(w, http.StatusOK, response{Code: codeOK, Message: "ok"})
			return
		}
	}
	fail(w, codeNoEngine, "no engine is usable: every breaker is open or every engine is out", "")
}

// decode reads a JSON body strictly into v (see readBody): no unknown fields, one value and
// nothing after it.
func (a *api) decode(w http.ResponseWriter, r *http.Request, v any) (code int, msg string) {
	body, code, msg := readBody(w, r, a.set.maxBody)
	if code != codeOK {
		return code, msg
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err, a.set.maxBody)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return codeBadRequest, "body: one JSON object expected, found more after it"
	}
	return codeOK, ""
}

// decodeError turns a decoding error into a message that names the field and never quotes
// the body.
func decodeError(err error, limit int64) (int, string) {
	var mbe *http.MaxBytesError
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &mbe):
		return codeTooLarge, fmt.Sprintf("body: larger than %d bytes", limit)
	case errors.Is(err, io.EOF):
		return codeBadRequest, "body: empty; a JSON object expected"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return codeBadRequest, "body: truncated JSON"
	case errors.As(err, &syn):
		return codeBadRequest, fmt.Sprintf("body: invalid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return codeBadRequest, fmt.Sprintf("body: want a JSON object, not %s", typ.Value)
		}
		return codeBadRequest, fmt.Sprintf("%s: want %s, not %s", field, jsonType(typ.Type.Kind().String()), typ.Value)
	}
	var unknown string
	if n, _ := fmt.Sscanf(err.Error(), "json: unknown field %q", &unknown); n == 1 {
		return codeBadRequest, fmt.Sprintf("body: unknown field %q", unknown)
	}
	return codeBadRequest, "body: invalid JSON"
}

func jsonType(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return "a " + goKind
}

// toRequest converts and checks the enumerations; the Client validates the rest (text,
// language tags) and answers KindInvalidInput itself.
func (in translateRequest) toRequest() (translate.Request, string) {
	req := translate.Request{Text: in.Text, Source: in.SourceLang, Target: in.TargetLang,
		UserID: in.UserID, RequestID: in.RequestID, Engine: in.Engine, AllowFallback: in.AllowFallback}
	if req.Source == "auto" {
		req.Source = ""
	}
	var ok bool
	if req.Scene, ok = parseEnum(in.Scene, translate.SceneGeneral, translate.SceneTech, translate.SceneLegal, translate.SceneEcommerce, translate.SceneChat); !ok {
		return req, fmt.Sprintf("scene: %q is not one of general, tech, legal, ecommerce, chat", in.Scene)
	}
	if req.Style, ok = parseEnum(in.Style, translate.StyleDefault, translate.StyleFormal, translate.StyleCasual); !ok {
		return req, fmt.Sprintf("style: %q is not one of default, formal, casual", in.Style)
	}
	if req.Priority, ok = parseEnum(in.Priority, translate.PriorityNormal, translate.PriorityHigh); !ok {
		return req, fmt.Sprintf("priority: %q is not one of normal, high", in.Priority)
	}
	return req, ""
}

// parseEnum finds s among the String() names of values; "" means the first value.
func parseEnum[T fmt.Stringer](s string, values ...T) (T, bool) {
	if s == "" {
		return values[0], true
	}
	for _, v := range values {
		if v.String() == s {
			return v, true
		}
	}
	return values[0], false
}

func fail(w http.ResponseWriter, code int, msg, reqID string) {
	writeJSON(w, status(code), response{Code: code, Message: msg, RequestID: reqID})
}

func writeJSON(w http.ResponseWriter, statusCode int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		statusCode = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"code":50001,"message":"encoding the answer failed"}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(statusCode)
	w.Write(buf.Bytes())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
