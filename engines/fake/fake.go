// Package fake provides a deterministic, scriptable translation engine for tests, examples
// and load drills. It implements [translate.Engine] without any network access: by default
// it "translates" a text by prefixing it with the target tag ("[es] hello"), and everything
// else — failures of any [translate.Kind], latency, quota, bad output — is injected through
// options at construction or through methods at run time.
//
// Each call to [Engine.Translate] goes through these steps, in order:
//
//  1. The request is logged (a deep copy, see [Engine.Requests]) and counted ([Engine.Calls]).
//  2. If ctx is already done, the call fails at once with a *[translate.Error] of
//     [translate.KindTimeout] (deadline exceeded) or [translate.KindCanceled] whose Err is
//     ctx.Err(), so errors.Is(err, ctx.Err()) holds.
//  3. The hook set by [WithHook] runs; a non-nil error fails the call with that error as is.
//  4. The outcome is decided: the next scripted [Outcome] ([Engine.Script]) if any; else a
//     failure when the engine is down ([Engine.Down]); else a failure drawn from the
//     failure rate ([Engine.FailRate]); else success, with the bad output set by
//     [Engine.SetBadOutput] if any.
//  5. A successful outcome checks the quota: a call whose code points exceed what is left
//     fails with [translate.KindQuotaExhausted] (status 456) and consumes nothing.
//  6. The call waits its latency, whatever the outcome (failing engines can be slow too).
//     If ctx is done during the wait, the call fails with the same error as in step 2, and
//     gives back the quota it had reserved.
//  7. The outcome is returned: a *[translate.Error] for a failure, or the translated texts.
//
// Failures are *[translate.Error] values with Kind, Engine (the fake's name), StatusCode,
// RetryAfter and a Message such as "fake: scripted unavailable".
package fake

import (
	"context"
	"errors"
	"math/rand/v2"
	"regexp"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/internal/clock"
	"golang.org/x/text/language"
)

// Name is the name of an Engine created with an empty name.
const Name = "fake"

// Engine is a scriptable [translate.Engine]. Create one with [New]; the zero value is not
// usable. An Engine is safe for concurrent use by multiple goroutines: every method may be
// called while calls to Translate are in flight, and takes effect for the calls that reach
// the relevant step afterwards. No user function (hook, translator, latency function, wait)
// runs while the Engine holds its lock.
type Engine struct {
	name       string
	translator func(text string, source, target language.Tag) string
	detected   language.Tag
	hook       func(ctx context.Context, req *translate.EngineRequest) error
	wait       func(ctx context.Context, d time.Duration) error

	mu          sync.Mutex
	latency     time.Duration
	latencyFunc func() time.Duration // overrides latency when non-nil
	quotaLeft   int64                // -1 means unlimited
	script      []Outcome
	down        bool
	downKind    translate.Kind
	rateKind    translate.Kind
	rate        float64
	rng         *rand.Rand // nil when no failure rate is set
	bad         BadOutput
	retryAfter  time.Duration
	requests    []translate.EngineRequest
	calls       int
}

var _ translate.Engine = (*Engine)(nil)

// Option configures an Engine in [New].
type Option func(*Engine)

// WithLatency makes every call wait d before it returns, honouring ctx. The default is no
// latency. See also [WithLatencyFunc] and [Engine.SetLatency].
func WithLatency(d time.Duration) Option {
	return func(e *Engine) { e.latency, e.latencyFunc = d, nil }
}

// WithLatencyFunc makes every call wait f() before it returns, honouring ctx; drills use it to
// draw latencies from a seeded distribution. f is called once per call, without the Engine's
// lock held, so it must be safe for concurrent use. It replaces [WithLatency].
func WithLatencyFunc(f func() time.Duration) Option {
	return func(e *Engine) { e.latencyFunc = f }
}

// WithTranslator sets how a text is translated. f must be safe for concurrent use. The
// default returns "[" + target.String() + "] " + text, for example "[es] hello".
func WithTranslator(f func(text string, source, target language.Tag) string) Option {
	return func(e *Engine) {
		if f != nil {
			e.translator = f
		}
	}
}

// WithQuota sets how many standard characters (code points) the engine translates in total
// before every further call fails with [translate.KindQuotaExhausted]. 0, the default,
// means unlimited. See also [Engine.SetQuotaLeft].
func WithQuota(chars int64) Option {
	return func(e *Engine) { e.quotaLeft = quotaFromTotal(chars) }
}

// WithDetected sets the source language reported in [translate.EngineResult].Source when
// the request's Source is [language.Und]. The default is [language.English].
func WithDetected(tag language.Tag) Option {
	return func(e *Engine) { e.detected = tag }
}

// WithHook sets a function that runs at the start of every call, after logging and before
// the outcome is decided or any latency waited. A non-nil error fails the call with that
// error, returned as is. Tests use it to observe calls or to block them (waiting on a
// channel or on ctx). f runs without the Engine's lock held and must be safe for concurrent
// use. The default is no hook.
func WithHook(f func(ctx context.Context, req *translate.EngineRequest) error) Option {
	return func(e *Engine) { e.hook = f }
}

// WithWait sets how latency is waited: f must return nil after d, or an error (normally
// ctx.Err()) as soon as ctx is done. Tests inject a fake clock through it. The default uses a
// timer and selects on ctx.Done(), stopping the timer either way.
func WithWait(f func(ctx context.Context, d time.Duration) error) Option {
	return func(e *Engine) {
		if f != nil {
			e.wait = f
		}
	}
}

// New returns an Engine called name ([Name] when name is ""), configured by opts. With no
// options it succeeds on every call, instantly, with unlimited quota.
func New(name string, opts ...Option) *Engine {
	if name == "" {
		name = Name
	}
	e := &Engine{
		name:       name,
		translator: defaultTranslator,
		detected:   language.English,
		wait:       clock.System{}.Sleep, // d, or until ctx is done
		quotaLeft:  -1,
	}
	for _, o := range opts {
		if o != nil {
			o(e)
		}
	}
	return e
}

func defaultTranslator(text string, _, target language.Tag) string {
	return "[" + target.String() + "] " + text
}

func quotaFromTotal(chars int64) int64 {
	if chars <= 0 {
		return -1
	}
	return chars
}

// Name returns the engine's name.
func (e *Engine) Name() string { return e.name }

// Script appends outcomes to the engine's queue. Each call takes the first queued outcome,
// which overrides Down, FailRate and SetBadOutput for that call; when the queue is empty,
// calls behave as configured.
func (e *Engine) Script(outcomes ...Outcome) {
	e.mu.Lock()
	e.script = append(e.script, outcomes...)
	e.mu.Unlock()
}

// FailRate makes each call that is neither scripted nor down fail with kind with probability
// rate (0..1), drawn from a PCG generator (math/rand/v2) seeded with seed: the same seed
// gives the same sequence of failures for the same sequence of calls. A rate of 0 or less
// turns the failure rate off. Calling FailRate again restarts the sequence.
func (e *Engine) FailRate(kind translate.Kind, rate float64, seed uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if rate <= 0 {
		e.rate, e.rng = 0, nil
		return
	}
	e.rateKind, e.rate = kind, rate
	e.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// Down makes every call that is not scripted fail with kind, until [Engine.Up].
func (e *Engine) Down(kind translate.Kind) {
	e.mu.Lock()
	e.down, e.downKind = true, kind
	e.mu.Unlock()
}

// Up clears Down, FailRate, the script and SetBadOutput. Latency, quota, SetRetryAfter and
// the request log are kept.
func (e *Engine) Up() {
	e.mu.Lock()
	e.down = false
	e.rate, e.rng = 0, nil
	e.script = nil
	e.bad = BadNone
	e.mu.Unlock()
}

// SetLatency makes every later call wait d (0 means none), replacing [WithLatency] and
// [WithLatencyFunc].
func (e *Engine) SetLatency(d time.Duration) {
	e.mu.Lock()
	e.latency, e.latencyFunc = d, nil
	e.mu.Unlock()
}

// SetQuota sets the total quota as [WithQuota] does: chars characters may be translated
// from now on, and 0 means unlimited. To exhaust the quota, use [Engine.SetQuotaLeft](0).
func (e *Engine) SetQuota(chars int64) {
	e.mu.Lock()
	e.quotaLeft = quotaFromTotal(chars)
	e.mu.Unlock()
}

// SetQuotaLeft sets the remaining quota in characters: -1 (or any negative value) means
// unlimited, 0 means exhausted now.
func (e *Engine) SetQuotaLeft(chars int64) {
	if chars < 0 {
		chars = -1
	}
	e.mu.Lock()
	e.quotaLeft = chars
	e.mu.Unlock()
}

// QuotaLeft returns the remaining quota in characters, -1 when unlimited.
func (e *Engine) QuotaLeft() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.quotaLeft
}

// SetBadOutput makes every successful call that is not scripted produce bad output of kind
// m; [BadNone] turns it off.
func (e *Engine) SetBadOutput(m BadOutput) {
	e.mu.Lock()
	e.bad = m
	e.mu.Unlock()
}

// SetRetryAfter sets the RetryAfter carried by every failure of [translate.KindRateLimited]
// that does not set its own: Down, FailRate, and scripted outcomes whose RetryAfter is 0.
func (e *Engine) SetRetryAfter(d time.Duration) {
	e.mu.Lock()
	e.retryAfter = d
	e.mu.Unlock()
}

// Requests returns deep copies of every request received since New or the last
// [Engine.Reset], in the order the calls arrived, including the calls that failed.
func (e *Engine) Requests() []translate.EngineRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]translate.EngineRequest, len(e.requests))
	for i, r := range e.requests {
		r.Texts = slices.Clone(r.Texts)
		out[i] = r
	}
	return out
}

// Calls returns the number of calls received since New or the last [Engine.Reset],
// including the calls that failed.
func (e *Engine) Calls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls
}

// Reset clears the request log and the call count. Nothing else changes.
func (e *Engine) Reset() {
	e.mu.Lock()
	e.requests = nil
	e.calls = 0
	e.mu.Unlock()
}

// Translate implements [translate.Engine], following the steps in the package
// documentation.
func (e *Engine) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	if req == nil {
		return nil, &translate.Error{Kind: translate.KindInvalidInput, Engine: e.name, Message: "fake: nil request"}
	}
	e.log(req)
	if ctx.Err() != nil {
		return nil, e.ctxError(ctx)
	}
	if e.hook != nil {
		if err := e.hook(ctx, req); err != nil {
			return nil, err
		}
	}
	c := e.begin(req)
	if err := e.delay(ctx, &c); err != nil {
		return nil, err
	}
	if err := e.scriptedError(&c); err != nil {
		return nil, err
	}
	src := req.Source
	if src == language.Und {
		src = e.detected
	}
	return &translate.EngineResult{Texts: e.answer(req, c.out.Bad), Source: src, BilledChars: c.chars}, nil
}

// log records a copy of req and counts the call.
func (e *Engine) log(req *translate.EngineRequest) {
	logged := *req
	logged.Texts = slices.Clone(req.Texts)
	e.mu.Lock()
	e.requests = append(e.requests, logged)
	e.calls++
	e.mu.Unlock()
}

// call is what one call decided when it began.
type call struct {
	out                 Outcome
	chars               int64 // code points in the request's texts
	reserved, quotaFail bool  // chars were taken from the quota; the quota could not hold them
	latency, retryAfter time.Duration
}

// begin decides the call's outcome (decideLocked) and, for a success, takes its characters
// from the quota, under one lock, and reads the latency and Retry-After then in force.
func (e *Engine) begin(req *translate.EngineRequest) call {
	c := call{}
	for _, t := range req.Texts {
		c.chars += int64(utf8.RuneCountInString(t))
	}
	e.mu.Lock()
	c.out = e.decideLocked()
	if c.out.OK && e.quotaLeft >= 0 {
		if c.chars > e.quotaLeft {
			c.quotaFail = true
		} else {
			e.quotaLeft -= c.chars
			c.reserved = true
		}
	}
	latencyFunc := e.latencyFunc
	c.latency, c.retryAfter = e.latency, e.retryAfter
	e.mu.Unlock()
	switch { // the latency function runs unlocked: it may call the engine's methods
	case c.out.Latency > 0:
		c.latency = c.out.Latency
	case latencyFunc != nil:
		c.latency = latencyFunc()
	}
	return c
}

// delay waits the call's latency; when ctx ends first (or the wait fails) it gives the
// reserved characters back and returns the error.
func (e *Engine) delay(ctx context.Context, c *call) error {
	if c.latency <= 0 {
		return nil
	}
	err := e.wait(ctx, c.latency)
	if err == nil && ctx.Err() == nil {
		return nil
	}
	if c.reserved {
		e.mu.Lock()
		if e.quotaLeft >= 0 {
			e.quotaLeft += c.chars
		}
		e.mu.Unlock()
	}
	if ctx.Err() != nil {
		return e.ctxError(ctx)
	}
	return err
}

// scriptedError returns the call's error: quota exhausted, or the scripted failure.
func (e *Engine) scriptedError(c *call) error {
	if c.quotaFail {
		return &translate.Error{Kind: translate.KindQuotaExhausted, Engine: e.name, StatusCode: 456,
			Message: "fake: quota exhausted"}
	}
	if c.out.OK {
		return nil
	}
	ra := c.out.RetryAfter
	if ra == 0 && c.out.Kind == translate.KindRateLimited {
		ra = c.retryAfter
	}
	status := c.out.Status
	if status == 0 {
		status = DefaultStatus(c.out.Kind)
	}
	return &translate.Error{Kind: c.out.Kind, Engine: e.name, StatusCode: status, RetryAfter: ra,
		Message: "fake: scripted " + c.out.Kind.String()}
}

// answer translates req's texts, spoiled as bad says.
func (e *Engine) answer(req *translate.EngineRequest, bad BadOutput) []string {
	texts := make([]string, len(req.Texts))
	for i, t := range req.Texts {
		switch bad {
		case BadEmpty:
			texts[i] = ""
		case BadEcho:
			texts[i] = t
		case BadDropPlaceholders:
			texts[i] = dropPlaceholders(e.translator(t, req.Source, req.Target))
		default:
			texts[i] = e.translator(t, req.Source, req.Target)
		}
	}
	if bad == BadWrongCount {
		if len(texts) > 0 {
			return texts[:len(texts)-1]
		}
		return []string{""}
	}
	return texts
}

// decideLocked picks the outcome of one call: script, then Down, then FailRate, then
// SetBadOutput. e.mu must be held.
func (e *Engine) decideLocked() Outcome {
	if len(e.script) > 0 {
		o := e.script[0]
		e.script[0] = Outcome{}
		e.script = e.script[1:]
		if len(e.script) == 0 {
			e.script = nil
		}
		return o
	}
	if e.down {
		return Fail(e.downKind)
	}
	if e.rng != nil && e.rng.Float64() < e.rate {
		return Fail(e.rateKind)
	}
	return Outcome{OK: true, Bad: e.bad}
}

func (e *Engine) ctxError(ctx context.Context) error {
	err := ctx.Err()
	kind := translate.KindCanceled
	if errors.Is(err, context.DeadlineExceeded) {
		kind = translate.KindTimeout
	}
	return &translate.Error{Kind: kind, Engine: e.name, Err: err}
}

// DefaultStatus returns the HTTP-like status a failure of kind carries when its Outcome
// sets none: 400 for invalid input and unsupported, 401 unauthorized, 456 quota exhausted
// (DeepL's), 429 rate limited, 503 unavailable, 504 timeout, 413 text too long, 500 unknown,
// and 0 for the kinds no vendor reports over HTTP (bad output, budget, no engine, canceled).
func DefaultStatus(kind translate.Kind) int {
	switch kind {
	case translate.KindUnknown:
		return 500
	case translate.KindInvalidInput, translate.KindUnsupported:
		return 400
	case translate.KindUnauthorized:
		return 401
	case translate.KindQuotaExhausted:
		return 456
	case translate.KindRateLimited:
		return 429
	case translate.KindUnavailable:
		return 503
	case translate.KindTimeout:
		return 504
	case translate.KindTextTooLong:
		return 413
	}
	return 0
}

// Outcome is the scripted result of one call (see [Engine.Script]). The zero value is a
// failure of [translate.KindUnknown] with status 500 and no extra latency; the
// constructors below cover the usual cases.
type Outcome struct {
	Kind       translate.Kind // failure kind; ignored when OK
	OK         bool           // succeed (with Bad output, if set)
	Status     int            // status carried in the error; 0 means DefaultStatus(Kind)
	RetryAfter time.Duration  // carried in the error; 0 means the SetRetryAfter value for KindRateLimited
	Bad        BadOutput      // with OK: succeed, but with bad output of this kind
	Latency    time.Duration  // >0 overrides the engine's latency for this call
}

// OK returns an Outcome that succeeds normally.
func OK() Outcome { return Outcome{OK: true} }

// Fail returns an Outcome that fails with kind and its [DefaultStatus].
func Fail(kind translate.Kind) Outcome { return Outcome{Kind: kind} }

// FailStatus returns an Outcome that fails with kind and the given status.
func FailStatus(kind translate.Kind, status int) Outcome {
	return Outcome{Kind: kind, Status: status}
}

// RateLimited returns an Outcome that fails with [translate.KindRateLimited], status 429 and
// the given RetryAfter.
func RateLimited(retryAfter time.Duration) Outcome {
	return Outcome{Kind: translate.KindRateLimited, RetryAfter: retryAfter}
}

// Bad returns an Outcome that succeeds with bad output of kind m.
func Bad(m BadOutput) Outcome { return Outcome{OK: true, Bad: m} }

// Slow returns an Outcome that succeeds after d (honouring ctx).
func Slow(d time.Duration) Outcome { return Outcome{OK: true, Latency: d} }

// BadOutput is a kind of bad output a successful call can produce. The zero value,
// BadNone, is good output.
type BadOutput int

// Bad outputs.
const (
	BadNone             BadOutput = iota // good output
	BadEmpty                             // "" for every text
	BadEcho                              // every source text returned unchanged
	BadDropPlaceholders                  // the translation with {x}, {{x}}, %s-style verbs and <tags> removed
	BadWrongCount                        // one text fewer than requested (one empty text when none was requested)
)

var badNames = [...]string{"none", "empty", "echo", "drop-placeholders", "wrong-count"}

// String returns the bad output's name, such as "echo".
func (m BadOutput) String() string {
	if m >= 0 && int(m) < len(badNames) {
		return badNames[m]
	}
	return "bad(?)"
}

// placeholderRE matches what BadDropPlaceholders removes: {{x}}, {x}, printf verbs
// (%s, %5.2f, %1$s, %[1]d, ...) and markup tags.
var placeholderRE = regexp.MustCompile(`\{\{[^{}\n]+\}\}|\{[^{}\s]+\}|%(?:\d+\$|\[\d+\])?[-+#0]*(?:\d+|\*)?(?:\.(?:\d+|\*)?)?(?:hh|ll|[hlLzjq])?[bcdeEfFgGoOpqstTuUvxXiw@]|</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>`)

func dropPlaceholders(s string) string {
	return placeholderRE.ReplaceAllString(s, "")
}
