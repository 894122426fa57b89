package translate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/language"

	"github.com/fanyi-go/translate/internal/deadline"
	"github.com/fanyi-go/translate/internal/placeholder"
	"github.com/fanyi-go/translate/internal/segment"
)

// minAttemptTime is the least time left for which an attempt is started.
const minAttemptTime = 20 * time.Millisecond

// breakerFailure reports whether a Kind counts as a failure for breakers and health.
func breakerFailure(k Kind) bool {
	switch k {
	case KindUnauthorized, KindQuotaExhausted, KindRateLimited, KindUnavailable, KindUnknown,
		KindTimeout, KindBadOutput:
		return true
	}
	return false
}

// retrySame reports whether a Kind may be retried once on the same engine.
func retrySame(k Kind) bool {
	return k == KindUnknown || k == KindUnavailable || k == KindRateLimited
}

// job is the text of one request as the engines see it: one part, or the segments of a long
// text, with the translations made so far. Segments stay on one engine; when it fails
// mid-way, the untranslated rest fails over.
type job struct {
	split    segment.Segments
	out      []string // translations of split.Parts[:next]
	next     int
	by       []string // engines that translated parts, in order, without repeats
	forceMax int      // after a TextTooLong answer: split the rest this small
	cost     float64
	billed   int64
	srcTag   string
}

// prepare splits the text for e when it is longer than e's MaxChars (or maxChars, when a
// TextTooLong answer asked for smaller pieces). Parts already translated are kept.
func (j *job) prepare(r *request, e *engine, maxChars int) {
	if maxChars <= 0 {
		return
	}
	// Re-split every untranslated part longer than maxChars, keeping separators.
	var parts, seps []string
	changed := false
	for i := j.next; i < len(j.split.Parts); i++ {
		p := j.split.Parts[i]
		if runeCount(p) <= maxChars {
			parts, seps = append(parts, p), append(seps, j.split.Seps[i])
			continue
		}
		changed = true
		s := segment.Split(p, maxChars)
		if len(s.Parts) == 0 {
			parts, seps = append(parts, p), append(seps, j.split.Seps[i])
			continue
		}
		if s.Prefix != "" {
			if len(parts) > 0 {
				seps[len(seps)-1] += s.Prefix
			} else if j.next > 0 {
				j.split.Seps[j.next-1] += s.Prefix
			} else {
				j.split.Prefix += s.Prefix
			}
		}
		parts = append(parts, s.Parts...)
		seps = append(seps, s.Seps...)
		seps[len(seps)-1] += j.split.Seps[i]
	}
	if changed {
		j.split.Parts = append(j.split.Parts[:j.next:j.next], parts...)
		j.split.Seps = append(j.split.Seps[:j.next:j.next], seps...)
	}
}

func (j *job) done() bool { return j.split.Parts != nil && j.next >= len(j.split.Parts) }

func (j *job) text() (string, error) {
	if len(j.split.Parts) == 1 && j.split.Prefix == "" && j.split.Seps[0] == "" {
		return j.out[0], nil
	}
	return j.split.Join(j.out)
}

func (j *job) credit(name string) {
	if len(j.by) == 0 || j.by[len(j.by)-1] != name {
		j.by = append(j.by, name)
	}
}

// attemptLoop runs the attempts of one request in pool ph until it succeeds, fails for good or
// runs out of calls, switches or time. excl carries the engines already tried across phases.
func (c *Client) attemptLoop(ctx context.Context, r *request, j *job, ph phase, st *loopState, res *Result) error {
	var cbuf [16]candidate
	var cur *engine
	perEngine := 0
	resplit := false
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		now := st.now
		if now == 0 {
			now = c.now()
		}
		st.now = 0
		if cur == nil {
			var t0 time.Time
			timed := c.obs.timeDecision()
			if timed {
				t0 = time.Now()
			}
			cands := c.filter(r, &st.excl, ph, now, cbuf[:0])
			if len(cands) == 0 {
				if c.budgetIsWhy(r, &st.excl, ph, now) {
					st.budgetHit = true
				}
				if timed {
					c.obs.decision(time.Since(t0))
				}
				return st.fail(KindNoEngine, "no engine available")
			}
			cur = c.pick(r, cands)
			if timed {
				c.obs.decision(time.Since(t0))
			}
			if st.called != nil && st.called != cur {
				if st.switches >= c.retry.MaxSwitches && ph == phaseNormal {
					return st.fail(KindNoEngine, "switch limit reached")
				}
				st.switches++
			}
			perEngine, resplit = 0, false
		}
		e := cur
		if st.failures >= c.retry.MaxAttempts && ph == phaseNormal {
			return st.fail(KindNoEngine, "attempt limit reached")
		}
		realNow := st.start // the request's start serves its first attempt
		if st.attempted {
			realNow = time.Now()
		}
		st.attempted = true
		left := st.deadline.Sub(realNow)
		if left < min(minAttemptTime, e.prof.Timeout) {
			return st.fail(KindTimeout, "request deadline reached")
		}
		maxChars := e.prof.MaxChars
		if j.forceMax > 0 && (maxChars == 0 || j.forceMax < maxChars) {
			maxChars = j.forceMax
		}
		j.prepare(r, e, maxChars)

		// Gates: a saturated engine is skipped at once unless it is the last candidate.
		release, waited, gateErr := c.enter(ctx, e, r, st, left)
		if gateErr != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			st.skip(e, gateErr)
			cur = nil
			continue
		}
		n := min(len(j.split.Parts)-j.next, e.prof.MaxTexts)
		texts := j.split.Parts[j.next : j.next+n]
		chars := 0
		for _, t := range texts {
			chars += runeCount(t)
		}
		cost := float64(chars) * e.prof.CostPerMillion / 1e6
		if !e.q.Reserve(int64(chars), now) {
			release()
			st.skip(e, &Error{Kind: KindQuotaExhausted, Engine: e.name, Message: "local quota exhausted"})
			cur = nil
			continue
		}
		if e.prof.Class != ClassFree && !c.budget.Reserve(cost, now) {
			e.q.Refund(int64(chars))
			release()
			st.skip(e, &Error{Kind: KindBudgetExceeded, Engine: e.name, Message: "daily budget exhausted"})
			st.budgetHit = true
			cur = nil
			continue
		}
		b := e.br.of(r.Scene)
		ok, tr := b.acquire()
		c.breakerMoved(e, tr)
		if !ok {
			e.q.Refund(int64(chars))
			c.budget.Refund(cost)
			release()
			st.skip(e, &Error{Kind: KindUnavailable, Engine: e.name, Message: "circuit breaker open"})
			cur = nil
			continue
		}

		st.called = e
		perEngine++
		attemptDeadline := realNow.Add(e.prof.Timeout)
		if st.deadline.Before(attemptDeadline) {
			attemptDeadline = st.deadline
		}
		// A timed-out engine may still hold its request and context: only the first attempt
		// uses the preallocated ones, later attempts get new ones.
		ereq, dctx := st.req, st.ctx
		st.req, st.ctx = nil, nil
		if ereq == nil {
			ereq, dctx = &EngineRequest{}, &deadline.Context{}
		}
		if waited {
			realNow = time.Now()
		}
		dctx.Init(ctx, attemptDeadline)
		out, lat, err := c.call(ctx, dctx, e, r, ereq, texts, realNow, len(st.attempts)+1)
		if reusable := dctx.Release(); dctx == st.first {
			st.firstReusable = reusable
		}
		st.end = realNow.Add(lat)
		release()
		kind := KindOf(err)
		if err != nil && ctx.Err() != nil {
			// The caller gave up: not the engine's fault, and not a domain error.
			e.q.Refund(int64(chars))
			c.budget.Refund(cost)
			c.breakerMoved(e, b.record(true))
			st.attempts = append(st.attempts, Attempt{Engine: e.name, Latency: lat, Err: ctx.Err()})
			return ctx.Err()
		}
		if err == nil || !breakerFailure(kind) {
			c.breakerMoved(e, b.record(true))
		} else {
			c.breakerMoved(e, b.record(false))
		}
		if err == nil || breakerFailure(kind) {
			e.h.record(r.hash, err == nil, lat)
		}
		st.attempts = append(st.attempts, Attempt{Engine: e.name, Latency: lat, Err: err})
		if err == nil {
			e.h.served(r.hash) // real traffic spares the engine a probe (probe.go)
			j.out = append(j.out, out.Texts...)
			j.next += n
			j.credit(e.name)
			j.cost += cost
			c.obs.cost(ctx, e, cost, chars)
			j.billed += out.BilledChars
			if j.srcTag == "" && out.Source != language.Und {
				j.srcTag = out.Source.String()
			}
			if j.done() {
				return nil
			}
			continue // the next segments, on the same engine
		}
		e.q.Refund(int64(chars))
		c.budget.Refund(cost)
		st.failures++
		st.lastErr = err

		now = c.now()
		var ae *Error
		errors.As(err, &ae)
		switch kind {
		case KindInvalidInput:
			return st.failWith(err)
		case KindUnsupported:
			e.markUnsupported(r.srcID, r.tgt.ID)
		case KindUnauthorized:
			if e.set(flagSetAside) {
				c.obs.warn("engine set aside: unauthorized", e.name)
			}
		case KindQuotaExhausted:
			until := now + int64(e.prof.QuotaPeriod)
			if !e.q.Unlimited() {
				until = e.q.PeriodEnd(now)
				e.q.Exhaust()
			}
			e.outFor(&e.outUntil, until)
			c.obs.warn("engine out: quota exhausted", e.name)
		case KindRateLimited:
			if ae != nil && ae.RetryAfter > 0 {
				e.outFor(&e.coolUntil, now+int64(ae.RetryAfter))
			}
		case KindTextTooLong:
			if l := runeCount(longest(j.split.Parts[j.next:])); !resplit && l > 1 {
				resplit = true
				j.forceMax = l / 2
				st.failures-- // a re-split is not a new try of the text
				continue
			}
		}
		if retrySame(kind) && perEngine < c.retry.PerEngine && st.failures < c.retry.MaxAttempts {
			wait := c.backoff(perEngine)
			if ae != nil && ae.RetryAfter > 0 {
				wait = ae.RetryAfter
			}
			if kind == KindRateLimited && (ae == nil || ae.RetryAfter == 0) {
				wait = c.backoff(perEngine)
			}
			if time.Until(st.deadline) > wait+min(minAttemptTime, e.prof.Timeout) {
				if err := c.clock.Sleep(ctx, wait); err != nil {
					return err
				}
				continue
			}
		}
		st.excl.add(e.idx)
		cur = nil
		if r.pinned != nil {
			if !r.AllowFallback {
				return st.failWith(err)
			}
			r.pinned = nil // the pinned engine failed: others may serve
		}
	}
}

// backoff returns the wait before retry n (1-based) on the same engine: Backoff x 4^(n-1),
// with +-20% jitter.
func (c *Client) backoff(n int) time.Duration {
	d := c.retry.Backoff
	for i := 1; i < n; i++ {
		d *= 4
	}
	return time.Duration(float64(d) * (0.8 + 0.4*c.random()))
}

func longest(ss []string) string {
	l := ""
	for _, s := range ss {
		if len(s) > len(l) {
			l = s
		}
	}
	return l
}

// loopState is what the attempt loops of one request share.
type loopState struct {
	excl      set
	attempts  []Attempt
	called    *engine
	switches  int
	failures  int
	deadline  time.Time
	lastErr   error
	budgetHit bool
	now       int64             // the clock reading the request started with, used once
	req       *EngineRequest    // the first attempt's request, preallocated
	ctx       *deadline.Context // the first attempt's context, preallocated
	first     *deadline.Context // the same, kept to see whether it can be reused
	// firstReusable is false when the first attempt's engine armed its context: it may still
	// hold it and its request, which are then not pooled.
	firstReusable bool
	start         time.Time // when the request started, in real time
	attempted     bool      // an attempt was prepared: later ones read the time
	end           time.Time // when the last engine call returned
}

func (st *loopState) skip(e *engine, err error) {
	st.attempts = append(st.attempts, Attempt{Engine: e.name, Err: err})
	st.excl.add(e.idx)
}

// fail returns the request's error: the last engine error's Kind when there was one.
func (st *loopState) fail(k Kind, msg string) error {
	if st.lastErr != nil {
		return st.failWith(st.lastErr)
	}
	if st.budgetHit {
		k = KindBudgetExceeded
	}
	return &Error{Kind: k, Message: msg, Attempts: st.attempts}
}

func (st *loopState) failWith(err error) error {
	e := &Error{Kind: KindOf(err), Err: err, Attempts: st.attempts, Message: "every engine tried failed"}
	if e.Kind == KindInvalidInput {
		e.Message = "the engine rejected the request"
	}
	var ae *Error
	if errors.As(err, &ae) {
		e.StatusCode, e.RetryAfter = ae.StatusCode, ae.RetryAfter
	}
	return e
}

// enter passes the engine's rate limiter and concurrency gate. A candidate without a token
// or a free slot is skipped at once, unless it is the last one and the wait fits the time
// left. It returns the function that frees the slot.
func (c *Client) enter(ctx context.Context, e *engine, r *request, st *loopState, left time.Duration) (release func(), waited bool, err error) {
	last := -1 // computed lazily: are there other candidates?
	isLast := func() bool {
		if last < 0 {
			var buf [16]candidate
			st.excl.add(e.idx)
			others := c.filter(r, &st.excl, phaseOf(e), c.now(), buf[:0])
			st.excl.del(e.idx)
			last = 0
			if len(others) == 0 {
				last = 1
			}
		}
		return last == 1
	}
	if e.limiter != nil {
		now := c.clock.Now()
		rv := e.limiter.ReserveN(now, 1)
		if d := rv.DelayFrom(now); d > 0 {
			if !isLast() || d > left-minAttemptTime {
				rv.CancelAt(now)
				return nil, false, &Error{Kind: KindRateLimited, Engine: e.name, Message: "skipped: local rate limit"}
			}
			if err := c.clock.Sleep(ctx, d); err != nil {
				rv.CancelAt(c.clock.Now())
				return nil, false, err
			}
			waited = true
		}
	}
	if e.sem == nil {
		return noop, waited, nil
	}
	select {
	case e.sem <- struct{}{}:
		return func() { <-e.sem }, waited, nil
	default:
	}
	if !isLast() {
		return nil, false, &Error{Kind: KindRateLimited, Engine: e.name, Message: "skipped: concurrency limit"}
	}
	t := time.NewTimer(left - minAttemptTime)
	defer t.Stop()
	select {
	case e.sem <- struct{}{}:
		return func() { <-e.sem }, true, nil
	case <-t.C:
		return nil, false, &Error{Kind: KindTimeout, Engine: e.name, Message: "no free slot in time"}
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

func phaseOf(e *engine) phase {
	if e.fallbackOnly(e.view.Load()) {
		return phaseFallback
	}
	return phaseNormal
}

func noop() {}

// call makes one engine call under the attempt deadline and checks what comes back: a
// (nil, nil), a wrong number of texts, an empty or untranslated text, or a lost placeholder
// becomes KindBadOutput; a panic becomes KindUnknown; the attempt's own deadline KindTimeout.
// dctx is the attempt's context, set up with its deadline, which the caller releases; start
// is the real time the call starts at, read by the caller.
func (c *Client) call(ctx context.Context, dctx *deadline.Context, e *engine, r *request, req *EngineRequest, texts []string, start time.Time, n int) (res *EngineResult, lat time.Duration, err error) {
	actx, span := c.obs.attemptStart(dctx, e, n)
	*req = EngineRequest{Texts: texts, Target: r.tgt.Tag, Scene: r.Scene, Style: r.Style, RequestID: r.id}
	if r.src != nil {
		req.Source = r.src.Tag
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = &Error{Kind: KindUnknown, Engine: e.name, Message: fmt.Sprintf("%T panicked: %v", e.eng, p)}
			}
		}()
		res, err = e.eng.Translate(actx, req)
	}()
	lat = time.Since(start)
	err = c.check(actx, ctx, e, r, texts, res, err)
	c.obs.attemptEnd(actx, span, e, n, lat, err)
	if err != nil {
		return nil, lat, err
	}
	return res, lat, nil
}

// check classifies an engine's answer.
func (c *Client) check(actx, ctx context.Context, e *engine, r *request, texts []string, res *EngineResult, err error) error {
	if err != nil {
		var ae *Error
		if !errors.As(err, &ae) {
			if actx.Err() != nil && ctx.Err() == nil {
				return &Error{Kind: KindTimeout, Engine: e.name, Message: "attempt timed out", Err: err}
			}
			if ctx.Err() != nil {
				return err
			}
			return &Error{Kind: KindUnknown, Engine: e.name, Err: err}
		}
		if ctx.Err() == nil && actx.Err() != nil && (ae.Kind == KindCanceled || ae.Kind == KindUnknown) {
			return &Error{Kind: KindTimeout, Engine: e.name, Message: "attempt timed out", Err: err}
		}
		if ae.Engine == "" {
			cp := *ae
			cp.Engine = e.name
			return &cp
		}
		return err
	}
	if res == nil {
		return &Error{Kind: KindBadOutput, Engine: e.name, Message: fmt.Sprintf("%T returned a nil result and a nil error", e.eng)}
	}
	if len(res.Texts) != len(texts) {
		return &Error{Kind: KindBadOutput, Engine: e.name, Message: fmt.Sprintf("%T returned %d texts for %d", e.eng, len(res.Texts), len(texts))}
	}
	for i, src := range texts {
		out := res.Texts[i]
		if strings.TrimSpace(out) == "" && strings.TrimSpace(src) != "" {
			return &Error{Kind: KindBadOutput, Engine: e.name, Message: "empty translation"}
		}
		if lost := placeholder.Lost(src, out); lost != nil {
			return &Error{Kind: KindBadOutput, Engine: e.name, Message: fmt.Sprintf("translation lost %d placeholder(s)", len(lost))}
		}
		if out == src && !untranslatable(src) && r.src != nil && r.src.Key != r.tgt.Key {
			return &Error{Kind: KindBadOutput, Engine: e.name, Message: "text came back untranslated"}
		}
	}
	return nil
}

// untranslatable reports whether a text may legitimately come back unchanged: short texts,
// names, numbers and codes. Only texts of four or more words with twenty or more letters are
// expected to change.
func untranslatable(s string) bool {
	words, letters := 0, 0
	inWord := false
	for _, r := range s {
		if unicode.IsLetter(r) {
			letters++
			if !inWord {
				words++
				inWord = true
			}
		} else if unicode.IsSpace(r) {
			inWord = false
		}
	}
	return words < 4 || letters < 20
}

// breakerMoved reports a breaker transition, and resets an engine's health when its breaker
// closes after half-open trials.
func (c *Client) breakerMoved(e *engine, t transition) {
	if !t.changed() {
		return
	}
	if t.from == BreakerHalfOpen && t.to == BreakerClosed {
		c.resetHealth(e)
	}
	c.obs.breakerChanged(e.name, t.from, t.to)
}
