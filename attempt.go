package translate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fanyi-go/translate/internal/deadline"
	"github.com/fanyi-go/translate/internal/httpx/retryafter"
	"github.com/fanyi-go/translate/internal/placeholder"
	"github.com/fanyi-go/translate/internal/runes"
	"go.opentelemetry.io/otel/trace"

	"github.com/fanyi-go/translate/internal/quota"
)

// lease is everything one engine call holds: a concurrency slot, quota and budget
// reservations, a breaker permit, the request id's claim on the engine. admit takes it in
// one place and settle gives it back or commits it in one place, whatever the call did.
type lease struct {
	slot   bool // holds one of e.sem's slots
	chars  int64
	cost   float64
	permit *breaker      // the breaker whose permit was taken
	tenant *quota.Tenant // whose budget cost was reserved from, besides the Client's
	at     int64         // when the budget was reserved
	texts  []string
	waited bool // the gates made the request wait: read the time again
	// With a Store: the granted lease to settle, or an answer that needs no call.
	store     string
	served    *StoredAnswer
	fromCache bool // served is a second-level cache hit (else the request id's first answer)
}

// admit passes e's gates and takes what the call needs. A refusal leaves nothing taken.
func (w *walk) admit(e *engine, l *lease) error {
	c := w.c
	if n := e.abandoned.Load(); n > 0 && int(n) >= maxAbandoned(e) {
		return &Error{Kind: KindUnavailable, Engine: e.name, Message: "skipped: calls still running past their deadline"}
	}
	if err := c.enter(w, e, l); err != nil {
		return err
	}
	if w.j.fid != nil {
		w.j.fid.ready(w.j, e)
	}
	l.texts = w.j.batch(e)
	for _, t := range l.texts {
		l.chars += int64(runeCount(t))
	}
	l.tenant = w.r.tenant
	if err := c.reserve(e, l, w.now); err != nil {
		c.undo(e, l)
		return err
	}
	b := e.br.of(w.r.Scene)
	ok, tr := b.acquire()
	c.breakerMoved(e, tr)
	if !ok {
		c.undo(e, l)
		return &Error{Kind: KindUnavailable, Engine: e.name, Message: "skipped: circuit breaker open"}
	}
	l.permit = b
	if w.r.RequestID != "" && !c.seen.claim(w.r.RequestID, w.r.hash, e.idx, w.now) {
		c.undo(e, l)
		return &Error{Kind: KindUnavailable, Engine: e.name, Message: "skipped: request id already sent to this engine"}
	}
	if c.store != nil {
		if err := c.storeAdmit(w, e, l); err != nil {
			c.undo(e, l)
			c.unclaim(w.r, e, w.now)
			return err
		}
	}
	return nil
}

// reserve takes the call's characters from e's quota and, for a paid engine, its cost from
// the daily budget.
func (c *Client) reserve(e *engine, l *lease, now int64) error {
	if !e.q.Reserve(l.chars, now) {
		return &Error{Kind: KindQuotaExhausted, Engine: e.name, Message: "skipped: local quota exhausted"}
	}
	l.cost, l.at = reservedCost(&e.prof, l.chars), now
	if !e.free && !c.budget.Reserve(l.tenant, l.cost, now) {
		e.q.Refund(l.chars)
		l.chars, l.cost = 0, 0
		return &Error{Kind: KindBudgetExceeded, Engine: e.name, Message: "skipped: budget exhausted"}
	}
	return nil
}

// reservedCost is what a call of chars code points is reserved from the budget: its
// characters' price and, for an engine priced by tokens, a token a character each way (a
// generous guess: English takes about one per four), whichever is more. charge settles it
// at what the call cost.
func reservedCost(p *Profile, chars int64) float64 {
	return max(float64(chars)*p.CostPerMillion, float64(2*chars)*p.CostPerMillionTokens) / 1e6
}

// undo gives back everything a lease holds: the call was never sent.
func (c *Client) undo(e *engine, l *lease) {
	if l.permit != nil {
		c.breakerMoved(e, l.permit.record(true)) // a permit needs exactly one record
	}
	c.refund(e, l)
	c.release(e, l)
}

func (c *Client) refund(e *engine, l *lease) {
	e.q.Refund(l.chars)
	if !e.free {
		c.budget.Refund(l.tenant, l.cost, l.at)
	}
}

func (c *Client) release(e *engine, l *lease) {
	if l.slot {
		<-e.sem
		l.slot = false
	}
}

// settle ends a call's lease: the slot is freed, the breaker and health record the outcome,
// and quota and budget are charged what the call may have cost (the vendor's own count when
// it reported one) or refunded when the call certainly cost nothing.
func (c *Client) settle(w *walk, e *engine, l *lease, out *EngineResult, err error) {
	c.release(e, l)
	kind := KindOf(err)
	caller := err != nil && w.callerErr() != nil
	failed := err != nil && !caller && breakerFailure(kind)
	if (err == nil || failed) && c.recordCall(w, e, err == nil, kind) { // quality.go
		// Bad output of a tracked pair moves that pair's traffic (the live quality
		// signal), not the engine's: its breaker, which would cut every pair, takes the
		// call as answered.
		failed = false
	}
	c.breakerMoved(e, l.permit.record(!failed))
	if err == nil {
		e.h.Served(w.spread())
	}
	c.rampRecord(w, e, err, kind, caller)
	if err != nil && !mayHaveBilled(kind, caller) {
		c.refund(e, l)
		c.unclaim(w.r, e, w.now)
		c.storeSettle(w, e, l, out, err, false, 0, 0)
		return
	}
	if out != nil && out.Limits != nil {
		c.heedLimits(e, out.Limits, w.now)
	}
	chars, cost := c.charge(e, l, out, w.now)
	c.storeSettle(w, e, l, out, err, true, chars, cost)
	w.j.cost += cost
	c.obs.cost(e, w.spread(), cost, int(chars))
}

// mayHaveBilled reports whether a failed call may have been billed by the vendor: it timed
// out or was canceled after it was sent, or it answered with bad output.
func mayHaveBilled(kind Kind, caller bool) bool {
	return caller || kind == KindTimeout || kind == KindBadOutput
}

// charge commits a call's reservation at what the vendor billed, when it said, or at what
// was reserved. A vendor's count is an answer like its texts, and no more trusted: it is
// taken up to what the call could have cost (see billedBound, tokenBound), so that one
// answer claiming 10^15 characters cannot spend the day's budget of every engine.
func (c *Client) charge(e *engine, l *lease, out *EngineResult, now int64) (int64, float64) {
	chars, cost := l.chars, l.cost
	if out != nil && out.BilledChars > 0 {
		chars = min(out.BilledChars, billedBound(l.chars))
		cost = float64(chars) * e.prof.CostPerMillion / 1e6
	}
	if out != nil && e.prof.CostPerMillionTokens > 0 {
		bound := tokenBound(l.chars)
		if tokens := max(0, min(out.InputTokens, bound)) + max(0, min(out.OutputTokens, bound)); tokens > 0 {
			cost = float64(tokens) * e.prof.CostPerMillionTokens / 1e6
		}
	}
	e.q.Charge(l.chars, chars, now)
	if !e.free {
		c.budget.Charge(l.tenant, l.cost, cost, now)
	}
	return chars, cost
}

// billedBound is the most characters a vendor's own count may charge a call of chars code
// points: vendors count UTF-16 units (two for an emoji) and some count markup, so four
// times as many and 64 more.
func billedBound(chars int64) int64 { return 4*chars + 64 }

// tokenBound is the most tokens a language model's reported input, and its output, may
// each charge a call of chars code points: a token is at least a byte and a code point at
// most four, and 8,192 more for the prompt's instructions and glossary.
func tokenBound(chars int64) int64 { return 4*chars + 8192 }

// callStart is when the last call started, on deadline.Now's clock.
func (w *walk) callStart() int64 { return w.sc.callStart }

// call makes one engine call under the attempt deadline and checks the answer. Its own
// frame, the one that waits through the engine's answer, is small: what a call needs
// before and after the engine is set up and read in frames that have returned (begin,
// end), and an inline call is made from here. Every garbage collection scans the stack of
// every request in flight, frame by frame, so a waiting request's stack is part of what
// a busy Client's collections cost (see BenchmarkLoadGC).
func (w *walk) call(e *engine, l *lease) (*EngineResult, error) {
	var a attemptCall
	w.begin(e, l, &a)
	var out *EngineResult
	var err error
	switch {
	case a.sink != nil:
		out, err = w.c.invokeStream(a.actx, e, a.req, a.ad, a.sink)
	case a.inline:
		out, err = protect(a.actx, e, a.req) // see inlineReturned
	default:
		out, err = w.invoke(a.dc, a.j)
	}
	return w.end(e, l, &a, out, err)
}

// attemptCall is what one engine call carries from begin to end.
type attemptCall struct {
	start, ad int64 // when the call started, its deadline (deadline.Now's clock)
	req       *EngineRequest
	dc        *deadline.Call
	j         *engineCall // set up for the runner (not inline, not streamed)
	actx      context.Context
	span      trace.Span
	sink      *streamSink // a streamed call's
	n         int         // the attempt's number
	inline    bool
}

// begin sets up the call a for e: its start, deadline, request, context and span.
func (w *walk) begin(e *engine, l *lease, a *attemptCall) {
	c, r := w.c, w.r
	a.start = w.start
	if w.called || l.waited {
		a.start = deadline.Now()
	}
	w.called = true
	w.sc.callStart = a.start
	a.ad = w.attemptDeadline(e, a.start, l.texts)
	req, dc, j := w.newAttempt()
	a.req, a.dc = req, dc
	a.inline = w.initCtx(dc, e, a.start, a.ad)
	*req = EngineRequest{Texts: l.texts, Target: r.tgt.Tag, Scene: r.Scene, Style: r.Style, RequestID: r.id}
	if r.src != nil {
		req.Source = r.src.Tag
	}
	a.sink = r.sink
	if w.j.fid != nil {
		w.j.fid.dress(req)
		a.sink = nil // a streaming engine's partial text would show the masks
	}
	a.n = len(w.attempts) + 1
	a.actx, a.span = c.obs.attemptStart(&dc.Ctx, e, a.n)
	if a.sink == nil && !a.inline {
		*j = engineCall{c: c, e: e, ctx: a.actx, dc: &dc.Ctx, req: req, ad: a.ad}
		a.j = j
	}
}

// end records and checks the answer of the call a to e.
func (w *walk) end(e *engine, l *lease, a *attemptCall, out *EngineResult, err error) (*EngineResult, error) {
	c := w.c
	w.ended = deadline.Now() // the monotonic clock only: half the cost of time.Now
	lat := time.Duration(w.ended - a.start)
	if a.inline {
		c.inlineReturned(e, a.start, w.ended, a.ad, a.dc.Ctx.Watched())
	}
	if w.j.pack {
		err = c.checkPack(w, a.actx, e, l.texts, out, err)
	} else {
		err = c.check(a.actx, w.ctx, e, w.r, l.texts, out, err)
	}
	if err == nil && w.j.fid != nil {
		err = w.j.fid.verify(w.j, e, out.Texts)
	}
	c.obs.attemptEnd(a.actx, a.span, e, a.n, lat, err, w.spread())
	w.sc.giveBack(a.dc)
	w.attempts = append(w.attempts, Attempt{Engine: e.name, Latency: lat, Err: err})
	w.last = e
	w.onCur++
	if err != nil {
		return nil, err
	}
	return out, nil
}

// initCtx sets up the attempt's context, for a call that runs inline (which it reports: see
// deadline.Trust), on the Client's runner (which ends the context), or streamed. start and
// ad are deadline.Now's instants.
func (w *walk) initCtx(dc *deadline.Call, e *engine, start, ad int64) (inline bool) {
	d := deadline.Time(ad)
	switch {
	case w.r.sink != nil && w.j.fid == nil: // a stream's call, made apart by invokeStream
		dc.Ctx.Init(w.ctx, d)
		return false
	case e.trust.Inline(start) && !e.has(flagIsolate):
		dc.Ctx.InitInline(w.ctx, d, &w.sc.wait, &e.trust)
		return true
	}
	dc.Ctx.InitWatched(w.ctx, d) // ended by c.runner
	return false
}

// overrunGrace is how late past its deadline an engine may return before the Client warns
// that it ignores ctx.
const overrunGrace = 50 * time.Millisecond

// callGrace is how long past an attempt's deadline (or the caller's ctx's end) the request
// waits for the engine to return, once its context is done: an engine that honours ctx
// returns within it, one that ignores ctx is left running apart.
const callGrace = 20 * time.Millisecond

// engineCall is one engine call as the Client's runner makes it (internal/deadline.Runner):
// what it sends and what came back.
type engineCall struct {
	c   *Client
	e   *engine
	ctx context.Context
	dc  *deadline.Context // the call's own, under ctx
	req *EngineRequest
	ad  int64 // the attempt's deadline, on deadline.Now's clock
	out *EngineResult
	err error
}

// Run calls the engine, turning a panic into an error, and records for the engine's trust
// how long it took, whether it watched its context and whether it returned in time (see
// deadline.Trust).
func (j *engineCall) Run() {
	start := deadline.Now()
	j.out, j.err = protect(j.ctx, j.e, j.req)
	end := deadline.Now()
	j.e.trust.Record(start, end, j.dc != nil && j.dc.Watched(), end <= j.ad)
}

// inlineReturned records an inline call that ran from start to ended for its engine's trust
// (watched: it asked its context for Done); if it returned well past its deadline ad, the
// engine's calls run on the runner for good (see overran). Instants are deadline.Now's.
func (c *Client) inlineReturned(e *engine, start, ended, ad int64, watched bool) {
	e.trust.Record(start, ended, watched, ended <= ad)
	if time.Duration(ended-ad) > overrunGrace {
		c.overran(e, ad, ended)
	}
}

// Late ends an abandoned call: it no longer counts among its engine's, and an engine that
// returned well past its deadline is reported once as ignoring its context.
func (j *engineCall) Late() {
	j.e.abandoned.Add(-1)
	j.c.overran(j.e, j.ad, deadline.Now())
}

// invoke makes the engine call j on the Client's runner, so that the request goes on by the
// attempt's deadline (plus callGrace) whatever the engine does, from its first call: a call
// that does not return by then is abandoned, left running apart and counted among its
// engine's abandoned calls until it returns; the request's scratch is then not reused (the
// call still holds its request). The runner's goroutines are pooled: a call that returns
// in time costs two goroutine switches and no allocation. An engine that earned it (its
// calls return at once, or they watch ctx and return by their deadline: see
// deadline.Trust) is called inline, on the caller's goroutine, and costs no switch; if such
// a call returns well past its deadline, the engine's calls run on the runner for good (see
// overran), and while one is still running at its deadline the calls after it run on the
// runner until the engine earns inline calls again (the alarm that ends its context tells
// its trust). Inline calls are made by call itself.
func (w *walk) invoke(dc *deadline.Call, j *engineCall) (*EngineResult, error) {
	if w.c.runner.Do(&w.sc.wait, dc, j, callGrace) {
		return j.out, j.err
	}
	j.e.abandoned.Add(1)
	w.sc.reusable = false
	return nil, dc.Ctx.Err()
}

// overran marks e as one that ignores its context (and warns, once) if its call, which
// returned at ended, returned well past its deadline ad (instants of deadline.Now's clock).
// Streamed and hedged calls, and probes, then run apart (see invokeApart).
func (c *Client) overran(e *engine, ad, ended int64) {
	if time.Duration(ended-ad) > overrunGrace && e.set(flagIsolate) {
		c.obs.warn("engine ignores its context: its calls now run apart", e.name)
	}
}

// maxAbandoned bounds the calls of an engine still running after their deadline; past it
// the engine is skipped until some return.
func maxAbandoned(e *engine) int { return max(16, e.prof.MaxConcurrency) }

// invokeApart runs the call in a goroutine of its own (runApart) and returns at ctx's end,
// or overrunGrace after it, even if the engine does not. req is copied: an abandoned call
// may still read it.
func (c *Client) invokeApart(ctx context.Context, e *engine, req *EngineRequest) (*EngineResult, error) {
	own := *req
	own.Texts = append([]string(nil), req.Texts...)
	return c.runApart(ctx, e, func() (*EngineResult, error) { return protect(ctx, e, &own) })
}

// protect calls the engine and turns a panic into a KindUnknown error that names the
// engine's type but not the panic's value, which may hold the customer's text.
func protect(ctx context.Context, e *engine, req *EngineRequest) (out *EngineResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, &Error{Kind: KindUnknown, Engine: e.name, Message: fmt.Sprintf("%T panicked (%T)", e.eng, p)}
		}
	}()
	return e.eng.Translate(ctx, req)
}

// check classifies an engine's answer: an error by its Kind, and as KindBadOutput a
// (nil, nil), a wrong number of texts, an empty text, a lost placeholder or an echo of the
// source.
func (c *Client) check(actx, ctx context.Context, e *engine, r *request, texts []string, out *EngineResult, err error) error {
	if err != nil {
		return classify(actx, ctx, e, err)
	}
	bad := func(msg string) error { return &Error{Kind: KindBadOutput, Engine: e.name, Message: msg} }
	switch {
	case out == nil:
		return bad(fmt.Sprintf("%T returned a nil result and a nil error", e.eng))
	case len(out.Texts) != len(texts):
		return bad(fmt.Sprintf("%T returned %d texts for %d", e.eng, len(out.Texts), len(texts)))
	}
	for i, src := range texts {
		if err := checkText(e, r, src, out.Texts[i], out); err != nil {
			return err
		}
	}
	return nil
}

// checkText checks one translated text: KindBadOutput when it is empty, lost a placeholder
// or echoes the source.
func checkText(e *engine, r *request, src, got string, out *EngineResult) error {
	bad := func(msg string) error { return &Error{Kind: KindBadOutput, Engine: e.name, Message: msg} }
	switch {
	case strings.TrimSpace(got) == "" && strings.TrimSpace(src) != "":
		return bad("empty translation")
	case placeholder.Lost(src, got) != nil:
		return bad(fmt.Sprintf("translation lost %d placeholder(s)", len(placeholder.Lost(src, got))))
	case r.echoedBy(e, src, got, out):
		return bad("text came back untranslated")
	}
	return nil
}

// checkPack checks a packed call's answer: a failure or a malformed answer fails the call
// as a whole, and so does an answer whose every text is bad; otherwise the bad texts are
// noted in w.bad, to fail over alone, and the call succeeds for the others.
func (c *Client) checkPack(w *walk, actx context.Context, e *engine, texts []string, out *EngineResult, err error) error {
	if err != nil || out == nil || len(out.Texts) != len(texts) {
		return c.check(actx, w.ctx, e, w.r, texts, out, err)
	}
	w.bad = w.bad[:0]
	var first error
	for i, src := range texts {
		if err := checkText(e, w.r, src, out.Texts[i], textResult(out, i)); err != nil {
			w.bad = append(w.bad, i)
			first = cmp.Or(first, err)
		}
	}
	if len(w.bad) == len(texts) {
		return first
	}
	return nil
}

// maxMessage bounds an engine's message in an error.
const maxMessage = 512

// classify turns an engine's error into the Client's view of it: the caller's own
// cancellation passes as is; the attempt's deadline is KindTimeout; a *Error keeps its Kind
// (an unknown Kind, or one an engine has no business returning, becomes KindUnknown), gets
// the engine's name, a capped message and a clamped Retry-After; any other error is
// KindUnknown, its text kept out (it may quote the request). The engine's own error is not
// kept either: its text may hold what the capped, cleaned message leaves out.
func classify(actx, ctx context.Context, e *engine, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if actx.Err() != nil {
		return &Error{Kind: KindTimeout, Engine: e.name, Message: "attempt timed out"}
	}
	var ae *Error
	if !errors.As(err, &ae) || ae == nil {
		return &Error{Kind: KindUnknown, Engine: e.name, Message: fmt.Sprintf("%T error", err)}
	}
	out := &Error{Kind: ae.Kind, Engine: e.name, StatusCode: ae.StatusCode,
		RetryAfter: retryafter.Clamp(ae.RetryAfter), Message: capMessage(ae.Message, e.name)}
	switch ae.Kind {
	case KindCanceled, KindNoEngine, KindBudgetExceeded, KindClosed:
		out.Kind = KindUnknown
	}
	if int(out.Kind) >= len(kindNames) {
		out.Kind = KindUnknown
	}
	return out
}

// capMessage drops a leading "<engine>: " (the error names the engine already) and cuts
// the message to maxMessage bytes on a rune boundary.
func capMessage(msg, engine string) string {
	return runes.Cap(strings.TrimPrefix(msg, engine+": "), maxMessage)
}

// react applies what a failure says about the engine beyond this request: an unsupported
// pair is remembered, an unauthorized engine set aside, an exhausted quota keeps it out
// until its period ends, a Retry-After cools it down.
func (c *Client) react(e *engine, r *request, kind Kind, err error, now int64) {
	switch kind {
	case KindUnsupported:
		e.unsupported.add(r.srcID, r.tgt.ID)
	case KindUnauthorized:
		if e.set(flagSetAside) {
			c.obs.warn("engine set aside: unauthorized", e.name)
		}
		c.storeHold(e, kind, now+int64(unauthorizedHold))
	case KindQuotaExhausted:
		until := now + int64(e.prof.QuotaPeriod)
		if !e.q.Unlimited() {
			until = e.q.PeriodEnd(now)
			e.q.Exhaust()
		}
		e.outFor(&e.outUntil, until)
		c.obs.warn("engine out: quota exhausted", e.name)
		c.storeHold(e, kind, until)
	case KindRateLimited:
		var ae *Error
		if errors.As(err, &ae) && ae.RetryAfter > 0 {
			e.outFor(&e.coolUntil, now+int64(ae.RetryAfter))
		}
	}
}

// breakerFailure reports whether a Kind counts as a failure for breakers and health.
func breakerFailure(k Kind) bool {
	switch k {
	case KindUnauthorized, KindQuotaExhausted, KindRateLimited, KindUnavailable, KindUnknown,
		KindTimeout, KindBadOutput:
		return true
	}
	return false
}

// breakerMoved reports a breaker transition, and resets an engine's health when its breaker
// closes after half-open trials.
func (c *Client) breakerMoved(e *engine, t transition) {
	if !t.changed() {
		return
	}
	if t.to == BreakerOpen {
		c.shareDown(e) // store.go
	}
	if t.from == BreakerHalfOpen && t.to == BreakerClosed {
		c.resetHealth(e)
	}
	c.obs.breakerChanged(e.name, t.from, t.to)
}

// enter passes the engine's rate limiter and concurrency gate. A candidate without a token
// or a free slot is skipped at once, unless it is the last one and the wait fits the time
// left.
func (c *Client) enter(w *walk, e *engine, l *lease) error {
	if e.limiter == nil && e.sem == nil {
		return nil
	}
	left := w.left()
	if e.limiter != nil {
		if err := c.enterRate(w, e, l, left); err != nil {
			return err
		}
	}
	if e.sem == nil {
		return nil
	}
	select {
	case e.sem <- struct{}{}:
		l.slot = true
		return nil
	default:
	}
	if w.othersLeft(e) {
		return &Error{Kind: KindRateLimited, Engine: e.name, Message: "skipped: concurrency limit"}
	}
	t := time.NewTimer(left - minAttemptTime)
	defer t.Stop()
	select {
	case e.sem <- struct{}{}:
		l.slot, l.waited = true, true
		return nil
	case <-t.C:
		return &Error{Kind: KindTimeout, Engine: e.name, Message: "skipped: no free slot in time"}
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

// enterRate takes a rate-limit token, waiting for it only when e is the last candidate.
func (c *Client) enterRate(w *walk, e *engine, l *lease, left time.Duration) error {
	now := c.clock.Now()
	rv := e.limiter.ReserveN(now, 1)
	d := rv.DelayFrom(now)
	if d <= 0 {
		return nil
	}
	if d > left-minAttemptTime || w.othersLeft(e) {
		rv.CancelAt(now)
		return &Error{Kind: KindRateLimited, Engine: e.name, Message: "skipped: local rate limit"}
	}
	if err := c.clock.Sleep(w.ctx, d); err != nil {
		rv.CancelAt(c.clock.Now())
		return err
	}
	l.waited = true
	return nil
}

// newDeadline is a helper for probes: a fresh attempt context.
func newDeadline(ctx context.Context, d time.Time) *deadline.Context { return deadline.New(ctx, d) }
