package translate

import (
	"cmp"
	"context"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/fanyi-go/translate/internal/deadline"
	"github.com/fanyi-go/translate/internal/quota"
)

// Hedged requests (RetryPolicy.HedgeAfter): when an engine call has not answered after
// HedgeAfter, the walk starts the next candidate too, and the first good answer wins. The
// other call is canceled; it is charged like any call that may have been sent, and its lease
// is settled when it returns. Hedges are calls: they count toward MaxAttempts and
// MaxSwitches, pass the same gates (budget, quota, rate limit, breaker) and are never sent
// past the economy threshold. A token bucket bounds them, as gRPC's hedging throttle does:
// every first call adds HedgeBudget of a token (at most maxHedgeTokens are kept) and every
// hedge spends a whole one, so hedges never exceed HedgeBudget of the calls.

// maxHedgeTokens bounds the hedges a quiet period can save up for a burst of slow calls.
const maxHedgeTokens = 10

// hedgeTokens is the Client's hedging bucket (quota.Tokens).
type hedgeTokens = quota.Tokens

// hedgeShare is RetryPolicy.HedgeBudget with its default.
func hedgeShare(rp *RetryPolicy) float64 { return cmp.Or(rp.HedgeBudget, 0.05) }

// racer is one engine call of a hedged attempt, running in a goroutine of its own.
type racer struct {
	e      *engine
	l      lease
	stage  stage
	n      int   // the attempt's number, for telemetry
	now    int64 // the Client's clock when the request was admitted: the lease's period
	start  int64 // when the call started, and returned, on deadline.Now's clock
	ended  int64
	actx   context.Context
	span   trace.Span
	cancel func() // ends the call's context
	out    *EngineResult
	err    error
}

// hedges reports whether the request's calls are hedged.
func (w *walk) hedges() bool { return w.r.s.retry.HedgeAfter > 0 && w.r.sink == nil && w.j.fid == nil }

// callHedged makes the call on e (admitted with l), and a hedge on the next candidate if e
// has not answered after HedgeAfter. It lands (records and settles) every call it made
// and returns the answer the walk goes on with: the first good one, or the last failure.
func (w *walk) callHedged(e *engine, l *lease) (*engine, *EngineResult, error) {
	rp := &w.r.s.retry
	w.c.hedge.Earn(hedgeShare(rp), maxHedgeTokens)
	ch := make(chan *racer, 2)
	first := w.launch(e, l, w.stage, ch)
	wait, stop := context.WithCancel(w.ctx)
	defer stop()
	timer := make(chan struct{})
	clk, after := w.c.clock, rp.HedgeAfter // the goroutine holds no pointer to w: w stays on the stack
	go func() {
		if clk.Sleep(wait, after) == nil {
			close(timer)
		}
	}()
	select {
	case r := <-ch:
		return w.land(r)
	case <-timer:
	case <-w.ctx.Done():
		return w.land(<-ch)
	}
	second := w.hedge(first, ch)
	if second == nil {
		return w.land(<-ch)
	}
	r := <-ch
	other := first
	if r == first {
		other = second
	}
	if r.err == nil {
		w.abandon(other, ch)
		return w.land(r)
	}
	w.landFailure(r)
	return w.land(<-ch)
}

// hedge starts the hedge of first when the policy, the budget and a candidate allow it,
// and returns it (nil: no hedge).
func (w *walk) hedge(first *racer, ch chan *racer) *racer {
	rp := &w.r.s.retry
	if w.r.economy || w.failures+1 >= rp.MaxAttempts || w.switches >= rp.MaxSwitches {
		return nil
	}
	if f := w.c.budgetFraction(w.r, w.now); f >= 0 && f >= w.r.s.economyAt {
		return nil
	}
	w.tried.add(first.e.idx)
	e, s := w.hedgeCandidate()
	if e == nil || !w.c.hedge.Spend() {
		return nil
	}
	var l lease
	if err := w.admit(e, &l); err != nil {
		w.c.hedge.Earn(1, maxHedgeTokens) // the token was not used
		return nil
	}
	if l.served != nil { // the Store had the answer: no call needed, but no hedge either
		w.c.undo(e, &l)
		w.c.hedge.Earn(1, maxHedgeTokens)
		return nil
	}
	w.switches++
	w.c.obs.hedged(e)
	return w.launch(e, &l, s, ch)
}

// hedgeCandidate picks the hedge's engine from the first stage of the plan, from the
// current one on, that has a candidate other than the engines tried.
func (w *walk) hedgeCandidate() (*engine, stage) {
	for i := w.at; i < w.plan.n; i++ {
		s := w.plan.stages[i]
		if s == stageStale {
			continue
		}
		if cands := w.candidates(s, w.sc.cands[:0]); len(cands) > 0 {
			return w.c.choose(w.r, cands), s
		}
	}
	return nil, 0
}

// launch starts the call on e in a goroutine; its answer arrives on ch.
func (w *walk) launch(e *engine, l *lease, s stage, ch chan<- *racer) *racer {
	c, r := w.c, w.r
	h := &racer{e: e, l: *l, stage: s, start: deadline.Now(), n: len(w.attempts) + 1, now: w.now}
	if w.launched {
		h.n++
	}
	w.launched = true
	ad := w.attemptDeadline(e, h.start, h.l.texts)
	dc := &deadline.Call{}
	dc.Ctx.InitWatched(w.ctx, deadline.Time(ad)) // ended by c.runner
	h.cancel = func() { dc.Ctx.Release() }
	// The call's own texts: an abandoned call may still read them after the request's
	// scratch, which holds the request's parts, went back to the pool.
	texts := append([]string(nil), h.l.texts...)
	req := &EngineRequest{Texts: texts, Target: r.tgt.Tag, Scene: r.Scene, Style: r.Style, RequestID: r.id}
	if r.src != nil {
		req.Source = r.src.Tag
	}
	h.actx, h.span = c.obs.attemptStart(&dc.Ctx, e, h.n)
	parent := w.ctx
	go func() {
		// On the runner, as any call: the racer lands by its deadline (plus callGrace)
		// whatever the engine does, so the walk never waits longer for it.
		j := &engineCall{c: c, e: e, ctx: h.actx, dc: &dc.Ctx, req: req, ad: ad}
		var wait deadline.Waiter
		var out *EngineResult
		var err error
		if c.runner.Do(&wait, dc, j, callGrace) {
			out, err = j.out, j.err
		} else {
			e.abandoned.Add(1)
			err = dc.Ctx.Err()
		}
		h.ended = deadline.Now()
		h.out, h.err = out, c.check(h.actx, parent, e, r, texts, out, err)
		ch <- h
	}()
	return h
}

// land records a call of a hedged attempt and settles its lease, as call and settle do
// for an unhedged one, and returns its answer.
func (w *walk) land(h *racer) (*engine, *EngineResult, error) {
	lat := time.Duration(h.ended - h.start)
	w.c.obs.attemptEnd(h.actx, h.span, h.e, h.n, lat, h.err, w.spread())
	h.cancel()
	w.attempts = append(w.attempts, Attempt{Engine: h.e.name, Latency: lat, Err: h.err})
	w.last, w.ended, w.called, w.stage = h.e, h.ended, true, h.stage
	w.cur = h.e
	w.sc.callStart = h.start
	w.onCur++
	w.c.settle(w, h.e, &h.l, h.out, h.err)
	if h.err != nil {
		return h.e, nil, h.err
	}
	return h.e, h.out, nil
}

// landFailure lands the failed first answer of two calls in flight: the failure counts, and
// its engine is out of the request; the walk waits for the other call.
func (w *walk) landFailure(h *racer) {
	_, _, err := w.land(h)
	w.failures++
	w.lastErr = err
	w.c.react(h.e, w.r, KindOf(err), err, w.now)
	w.tried.add(h.e.idx)
	w.cur = nil
}

// abandon cancels the slower call of a hedged attempt once the other answered. It is
// recorded as canceled, its reserved cost is counted in the request's cost (it may have
// been sent), and its lease is settled, as sent, when it returns.
func (w *walk) abandon(h *racer, ch <-chan *racer) {
	h.cancel()
	w.sc.reusable = false // the racer still reads the request, which lives in the scratch
	w.attempts = append(w.attempts, Attempt{Engine: h.e.name,
		Err: &Error{Kind: KindCanceled, Engine: h.e.name, Message: "hedge lost: another engine answered first"}})
	w.j.cost += h.l.cost
	c, stripe := w.c, w.spread()
	go func() {
		defer c.contain() // settling calls the Store's Settle on a goroutine of the Client's own
		h := <-ch
		c.obs.attemptEnd(h.actx, h.span, h.e, h.n, time.Duration(h.ended-h.start), h.err, stripe)
		c.settleAbandoned(h, stripe)
	}()
}

// settleAbandoned settles the lease of a canceled hedge: no breaker or health verdict (the
// Client canceled it), and quota and budget charged as for any call that may have been sent.
// stripe is the key of the walk's stripes.
func (c *Client) settleAbandoned(h *racer, stripe uint64) {
	e, l := h.e, &h.l
	c.release(e, l)
	c.breakerMoved(e, l.permit.record(true))
	chars, cost := c.charge(e, l, nil, h.now)
	c.obs.cost(e, stripe, cost, int(chars))
	if l.store != "" {
		ctx, cancel := context.WithTimeout(context.Background(), storeWait)
		defer cancel()
		if err := c.store.Settle(ctx, Settlement{Lease: l.store, Now: c.clock.Now(), Sent: true, Credits: cost, Chars: chars}); err != nil {
			c.obs.warn("store unreachable: settlement left to the lease's expiry", e.name)
		}
	}
}
