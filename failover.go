package translate

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"golang.org/x/text/language"

	"github.com/fanyi-go/translate/internal/deadline"
	"github.com/fanyi-go/translate/internal/runes"
	"github.com/fanyi-go/translate/internal/segment"
)

// minAttemptTime is the least time left for which an attempt is started.
const minAttemptTime = 20 * time.Millisecond

// walk is one request's way through the engines, in the seeds' steps: pick an engine from
// the request's plan (next), take what the call needs (admit), make the call (call), check
// the answer (check), settle what was taken (settle), and decide what comes next (after):
// the next segment, a retry, a switch, a degradation or an error.
type walk struct {
	c        *Client
	ctx      context.Context
	r        *request
	j        *job
	stale    *cacheEntry // a stale cache entry, nil if none
	plan     plan
	at       int // the current stage's index in plan
	tried    set // engines called, skipped or refused
	attempts []Attempt
	cur      *engine // kept for a retry or the next segments; nil: pick anew
	onCur    int     // calls on cur since its last success
	last     *engine // the engine of the last call
	failures int     // failed calls: the attempt budget counts them
	switches int
	lastErr  error // the last call's error
	skipErr  error // the pinned engine's skip, or a request id's first error
	deadline int64 // when the request must end, on deadline.Now's clock (real time)
	now      int64 // the Client's clock when the request was admitted: one clock per request
	start    int64 // when the request started (r.t0), on deadline.Now's clock
	ended    int64 // when the last engine call returned (start before any), on deadline.Now's clock
	called   bool  // an engine was called: later attempts read the time anew
	stage    stage // the stage that served
	budget   bool  // the budget refused an engine
	sc       *scratch
	stored   *StoredAnswer // the Store's answer (second-level cache or the request id's first)
	launched bool          // a hedged attempt started a call (attempt numbering)
	bad      []int         // packed call: indices (in the call's texts) of the texts that came back bad
}

// newWalk starts r's walk, with b for its Result and stale, if not nil, to fall back on.
// r.t0 is set.
func (c *Client) newWalk(ctx context.Context, r *request, b *resultBuf, stale *cacheEntry, now int64, sc *scratch) walk {
	r.id = b.RequestID
	start, end := deadline.Span(ctx, r.t0, r.s.deadline) // r.s.deadline: at most an hour (options.validate)
	return walk{c: c, ctx: ctx, r: r, stale: stale, plan: planFor(r), attempts: b.Attempts,
		deadline: end, now: now, start: start, ended: start, sc: sc}
}

// left returns the time left before the request's deadline: a clock read.
func (w *walk) left() time.Duration { return time.Duration(w.deadline - deadline.Now()) }

// spread is the key of the stripe the walk's counters add to (see scratch.spread).
func (w *walk) spread() uint64 { return w.sc.spread }

// run walks until the request is served or fails for good. It returns nil when the job is
// done or a stale entry serves (w.stage == stageStale). A request that fails once the
// caller's ctx is done, or past the caller's deadline, fails with the caller's error (see
// callerError), whatever the engines said.
func (w *walk) run() error {
	err := w.steps()
	if err != nil {
		if cerr := w.callerErr(); cerr != nil {
			return w.callerError(cerr)
		}
	}
	return err
}

// steps is run's loop.
func (w *walk) steps() error {
	if a := w.r.avoid; a != "" { // a packed text that came back bad: not that engine again
		if e := w.r.s.byName[a]; e != nil {
			w.tried.add(e.idx)
		}
	}
	for {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		e, err := w.next()
		if e == nil {
			return err
		}
		if err := w.timeLeft(e); err != nil {
			return err
		}
		var l lease
		if err := w.admit(e, &l); err != nil {
			w.skip(e, err)
			continue
		}
		if l.served != nil { // the Store had the answer: no call
			w.c.undo(e, &l)
			w.stored = l.served
			return nil
		}
		var out *EngineResult
		if w.hedges() {
			e, out, err = w.callHedged(e, &l)
		} else {
			out, err = w.call(e, &l)
			w.c.settle(w, e, &l, out, err)
		}
		if err == nil {
			if w.accept(e, out) {
				return nil
			}
			continue
		}
		if err := w.after(e, err); err != nil {
			return err
		}
	}
}

// next returns the engine for the next call: the current one (a retry, or the next
// segments), or a pick from the first stage of the plan that has a candidate. It returns
// (nil, nil) when a stale cache entry serves, and (nil, err) when nothing is left.
func (w *walk) next() (*engine, error) {
	if w.cur != nil {
		return w.cur, nil
	}
	for ; w.at < w.plan.n; w.at++ {
		s := w.plan.stages[w.at]
		if s == stageStale {
			if w.staleServes() {
				w.stage = s
				return nil, nil
			}
			continue
		}
		if w.spent() || w.keepLastCall(s) {
			continue
		}
		cands := w.candidates(s, w.sc.cands[:0])
		if len(cands) == 0 {
			w.pinnedSkipped(s)
			continue
		}
		e := w.c.choose(w.r, cands)
		if w.last != nil && e != w.last {
			w.switches++
		}
		w.cur, w.onCur, w.stage = e, 0, s
		return e, nil
	}
	return nil, w.noEngine()
}

// candidates returns the engines of stage s that may serve now.
func (w *walk) candidates(s stage, dst []candidate) []candidate {
	timed := w.c.obs.timeDecision()
	var t0 time.Time
	if timed {
		t0 = time.Now()
	}
	dst = w.c.filter(w.r, &w.tried, s, w.now, dst)
	if timed {
		w.c.obs.decision(time.Since(t0))
	}
	return dst
}

// spent reports whether the attempt or switch budget is used up: at most MaxAttempts
// failed calls and MaxSwitches switches per request, last-resort engines included.
func (w *walk) spent() bool {
	rp := &w.r.s.retry
	return w.failures >= rp.MaxAttempts || (w.last != nil && w.switches >= rp.MaxSwitches)
}

// keepLastCall keeps the request's last call (or switch) for the last-resort pool: when
// only one is left, the normal pool gives way if a last-resort engine could serve.
func (w *walk) keepLastCall(s stage) bool {
	if s != stageNormal && s != stagePinned {
		return false
	}
	rp := &w.r.s.retry
	if w.failures < rp.MaxAttempts-1 && (w.last == nil || w.switches < rp.MaxSwitches-1) {
		return false
	}
	for i := w.at + 1; i < w.plan.n; i++ {
		if t := w.plan.stages[i]; t == stageLast {
			var buf [8]candidate
			return len(w.c.filter(w.r, &w.tried, t, w.now, buf[:0])) > 0
		}
	}
	return false
}

// pinnedSkipped records a pinned engine the filters left out as skipped, with its reason.
func (w *walk) pinnedSkipped(s stage) {
	p := w.r.pinned
	if s != stagePinned || w.tried.has(p.idx) {
		return
	}
	why, _ := w.c.exclude(p, p.view.Load(), w.r, w.now, w.c.budgetFraction(w.r, w.now))
	err := &Error{Kind: reasonKind(why), Engine: p.name, Message: "skipped: " + reasonText[why]}
	w.skip(p, err)
	w.skipErr = err
}

// staleServes reports whether a stale cache entry may serve the request: one exists, the
// request may use another engine's text or the pinned engine made it.
func (w *walk) staleServes() bool {
	st := w.stale
	if st == nil || w.callerErr() != nil || errors.Is(w.lastErr, ErrInvalidInput) {
		return false
	}
	return w.r.pinned == nil || w.r.AllowFallback || st.engine == w.r.pinned.name
}

// timeLeft checks that an attempt on e can still start before the request's deadline.
func (w *walk) timeLeft(e *engine) error {
	now := w.start // the request's start serves its first attempt
	if w.called {
		now = deadline.Now()
	}
	if time.Duration(w.deadline-now) < min(minAttemptTime, e.prof.Timeout) {
		if w.callersDeadline() {
			return w.callerError(context.DeadlineExceeded)
		}
		return w.fail(&Error{Kind: KindTimeout, Message: "request deadline reached"})
	}
	return nil
}

// attemptDeadline returns when e's call on texts, starting at start, must end: after e's
// timeout (Profile.Timeout, grown by Profile.TimeoutPerKTokens for the texts' length), and
// never after the request's deadline. When another engine could make a call after it, the
// call ends early enough to leave that call its reserve (deadline.Reserve: a quarter of the
// request's deadline, or half the time left when less is left), so that a hung engine never
// takes the time a backup needs. Instants are deadline.Now's.
func (w *walk) attemptDeadline(e *engine, start int64, texts []string) int64 {
	// deadline.Add saturates: a timeout grown past int64 ends at the request's deadline.
	ad := min(deadline.Add(start, deadline.Grown(e.prof.Timeout, e.prof.TimeoutPerKTokens, texts)), w.deadline)
	reserve := deadline.Reserve(w.r.s.deadline, time.Duration(w.deadline-start))
	if time.Duration(w.deadline-ad) >= reserve || !w.nextCallLeft(e) {
		return ad
	}
	return w.deadline - int64(reserve)
}

// nextCallLeft reports whether, should e's call fail, the request could still make a call
// on another engine: the attempt and switch budgets allow one and a candidate is left.
func (w *walk) nextCallLeft(e *engine) bool {
	rp := &w.r.s.retry
	return w.failures+1 < rp.MaxAttempts && w.switches < rp.MaxSwitches && w.othersLeft(e)
}

// callersDeadline reports whether the request's deadline is the caller's ctx's (it comes
// before the Client's).
func (w *walk) callersDeadline() bool {
	d, ok := w.ctx.Deadline()
	return ok && deadline.At(d) <= w.deadline
}

// callerErr returns ctx's error once ctx is done, or context.DeadlineExceeded once the
// caller's deadline has passed by the Client's reading of the clock (ctx's own timer may
// fire a moment later); nil while the caller still waits.
func (w *walk) callerErr() error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if w.callersDeadline() && deadline.Now() >= w.deadline {
		return context.DeadlineExceeded
	}
	return nil
}

// callerError is the request's error when the caller's ctx ended it: KindTimeout wrapping
// context.DeadlineExceeded when its deadline passed, KindCanceled wrapping context.Canceled
// when it was canceled, with every attempt made.
func (w *walk) callerError(err error) error {
	e := &Error{Kind: KindCanceled, Message: "canceled by the caller", Err: err, Attempts: w.attempts}
	if errors.Is(err, context.DeadlineExceeded) {
		e.Kind, e.Message = KindTimeout, "the caller's deadline passed"
	}
	return e
}

// callerEnded reports whether err is a request's error because its caller's ctx ended (not
// the engines' answer): such errors are neither shared with identical requests nor
// remembered for a request id.
func callerEnded(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// skip records an engine chosen but not called, and leaves it out of this request.
func (w *walk) skip(e *engine, err error) {
	w.attempts = append(w.attempts, Attempt{Engine: e.name, Err: err})
	w.tried.add(e.idx)
	if KindOf(err) == KindBudgetExceeded {
		w.budget = true
	}
	if w.cur == e {
		w.cur = nil
	}
}

// accept takes a successful call's texts and reports whether the job is done; if not, the
// next segments go to the same engine.
func (w *walk) accept(e *engine, out *EngineResult) bool {
	j := w.j
	if j.pack {
		j.settlePack(e, out, w.bad)
	}
	j.out = append(j.out, out.Texts...)
	j.next += len(out.Texts)
	j.credit(e.name)
	if j.srcTag == "" && out.Source != language.Und {
		j.srcTag = out.Source.String()
	}
	w.onCur = 0
	return j.done()
}

// after decides what follows a failed call, by the error's Kind (see the Failover section
// of the package documentation). It returns the request's error when the walk must stop.
func (w *walk) after(e *engine, err error) error {
	kind := KindOf(err)
	if cerr := w.callerErr(); cerr != nil || kind == KindCanceled {
		return cmp.Or(cerr, err)
	}
	w.failures++
	w.lastErr = err
	if kind == KindInvalidInput {
		return w.fail(err)
	}
	w.c.react(e, w.r, kind, err, w.now)
	if kind == KindTextTooLong && w.resplit(e) {
		w.failures-- // a re-split is not a new try of the text
		return nil
	}
	if wait, ok := w.retrySame(e, kind, err); ok {
		return w.c.clock.Sleep(w.ctx, wait)
	}
	w.tried.add(e.idx)
	w.cur = nil
	if w.r.pinned == e && !w.r.AllowFallback {
		w.at = w.plan.n - 1 // only a stale entry the pinned engine made may serve now
	}
	return nil
}

// retrySame decides whether the failed engine is called again, and after what wait: on
// RateLimited with a Retry-After that fits the deadline, or, after Unavailable, Unknown or
// an attempt Timeout, when no other engine is left; never more than RetryPolicy.PerEngine
// calls, and for a caller's RequestID never after a failure that may have been billed (the
// id reaches an engine that may have billed it at most once).
func (w *walk) retrySame(e *engine, kind Kind, err error) (time.Duration, bool) {
	rp := &w.r.s.retry
	if w.onCur >= rp.PerEngine || w.failures >= rp.MaxAttempts || (w.r.RequestID != "" && mayHaveBilled(kind, false)) {
		return 0, false
	}
	var wait time.Duration
	switch kind {
	case KindRateLimited:
		var ae *Error
		if errors.As(err, &ae) && ae.RetryAfter > 0 {
			wait = ae.RetryAfter
		} else if w.othersLeft(e) {
			return 0, false
		} else {
			wait = w.c.backoff(w.r.s.retry.Backoff, w.onCur, w.r)
		}
	case KindUnavailable, KindUnknown, KindTimeout:
		if w.othersLeft(e) {
			return 0, false
		}
		wait = w.c.backoff(w.r.s.retry.Backoff, w.onCur, w.r)
	default:
		return 0, false
	}
	need := wait + min(minAttemptTime, e.prof.Timeout)
	if kind == KindTimeout {
		need = wait + e.prof.Timeout
	}
	return wait, w.left() > need
}

// othersLeft reports whether an engine other than e could serve in the current stage or a
// later one.
func (w *walk) othersLeft(e *engine) bool {
	w.tried.add(e.idx)
	defer w.tried.del(e.idx)
	var buf [8]candidate
	for i := w.at; i < w.plan.n; i++ {
		if s := w.plan.stages[i]; s != stageStale && len(w.c.filter(w.r, &w.tried, s, w.now, buf[:0])) > 0 {
			return true
		}
	}
	return false
}

// resplit asks for smaller segments after a TextTooLong answer, once per engine.
func (w *walk) resplit(e *engine) bool {
	j := w.j
	l := runeCount(runes.Longest(j.split.Parts[j.next:]))
	if j.pack || j.resplitBy == e || l <= 1 { // a pack is split by its texts (TranslateBatch)
		return false
	}
	j.resplitBy = e
	j.forceMax = l / 2
	return true
}

// noEngine is the error when nothing is left to try: the last call's error, the pinned
// engine's skip, the budget, or KindNoEngine naming every engine and why it was left out.
func (w *walk) noEngine() error {
	switch {
	case w.lastErr != nil:
		return w.fail(w.lastErr)
	case w.skipErr != nil:
		return w.fail(w.skipErr)
	case w.budget:
		return w.fail(&Error{Kind: KindBudgetExceeded, Message: "the budget does not cover any engine"})
	}
	ex := w.c.excluded(w.r, &w.tried, w.now)
	w.notRetried(ex)
	kind := KindNoEngine
	for _, why := range ex {
		if why == reasonText[reasonBudget] {
			kind = KindBudgetExceeded // the budget is what leaves engines out
		}
	}
	return w.fail(&Error{Kind: kind, Message: "no engine available: " + joinReasons(ex), Excluded: ex})
}

// notRetried adds to ex the engines the walk left out for having been tried before it: by
// the request id (its first request reached them) or by the batch (the text came back bad
// from it). The engines it tried itself are in its attempts; without this, a request whose
// id had reached every engine it may go to failed with no reason at all.
func (w *walk) notRetried(ex map[string]string) {
	for _, e := range w.r.s.engines {
		if !w.tried.has(e.idx) || slices.ContainsFunc(w.attempts, func(a Attempt) bool { return a.Engine == e.name }) {
			continue
		}
		if e.name == w.r.avoid {
			ex[e.name] = "its text came back bad from it"
		} else {
			ex[e.name] = "the request id already reached it"
		}
	}
}

// fail returns the request's error for err: a *Error of err's Kind listing every attempt.
func (w *walk) fail(err error) error {
	e := &Error{Kind: KindOf(err), Attempts: w.attempts}
	var ae *Error
	if errors.As(err, &ae) {
		e.StatusCode, e.RetryAfter, e.Excluded = ae.StatusCode, ae.RetryAfter, ae.Excluded
		if ae.Engine == "" {
			e.Message = ae.Message // the Client's own error: no need to wrap it
			return e
		}
	}
	e.Message = "every engine tried failed"
	if e.Kind == KindInvalidInput {
		e.Message = "the engine rejected the request"
	}
	e.Err = err
	return e
}

// backoff returns the wait before retry n+1 (n calls made) on the same engine: d (Backoff) x
// 4^(n-1), with +-20% jitter.
func (c *Client) backoff(d time.Duration, n int, r *request) time.Duration {
	return deadline.Backoff(d, n, unit(c.draw(r)))
}

// job is the text of one request as the engines see it: one part, or the segments of a long
// text, with the translations made so far. Segments stay on one engine; when it fails
// mid-way, the untranslated rest fails over.
type job struct {
	split     segment.Segments
	out       []string // translations of split.Parts[:next]
	next      int
	by        []string // engines that translated parts, in order, without repeats
	forceMax  int      // after a TextTooLong answer: split the rest this small
	resplitBy *engine  // the engine whose TextTooLong answer forced the last re-split
	cost      float64
	srcTag    string
	// A packed batch (TranslateBatch): the parts are separate texts, never split or
	// stitched; each part records the engine that made it, or that it came back bad.
	pack    bool
	partBy  []*engine
	failed  []bool
	partSrc []string    // the source the engine detected for each part; "" if none
	fid     *contentJob // content.go: the text prepared for the engine; nil on the plain path
}

// settlePack records the engine and detected source of the parts a packed call answered,
// and which of them came back bad (bad: indices in the call's texts).
func (j *job) settlePack(e *engine, out *EngineResult, bad []int) {
	for i := range out.Texts {
		j.partBy = append(j.partBy, e)
		j.failed = append(j.failed, false)
		j.partSrc = append(j.partSrc, textSource(out, i))
	}
	for _, i := range bad {
		j.failed[j.next+i] = true
	}
}

func (j *job) done() bool { return j.split.Parts != nil && j.next >= len(j.split.Parts) }

func (j *job) text() (string, error) {
	if j.fid != nil {
		return j.fid.text, nil
	}
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

// batch returns the texts of e's next call: at most MaxTexts parts and MaxChars characters
// in all (at least one part), splitting the rest for e's per-text limit first unless the
// parts are a packed batch's texts.
func (j *job) batch(e *engine) []string {
	maxChars, perText := e.prof.MaxChars, textChars(&e.prof)
	if j.forceMax > 0 && (perText == 0 || j.forceMax < perText) {
		perText, maxChars = j.forceMax, j.forceMax
	}
	if !j.pack && j.fid == nil {
		j.split.SplitFrom(j.next, perText)
	}
	n := runes.Fit(j.split.Parts[j.next:], e.prof.MaxTexts, maxChars)
	return j.split.Parts[j.next : j.next+n]
}

// newAttempt returns the attempt's request, call (with its context) and job: the
// preallocated ones for the first attempt, new ones after (an engine that timed out may
// still hold the first).
func (w *walk) newAttempt() (*EngineRequest, *deadline.Call, *engineCall) {
	if req, dc, j := w.sc.take(); req != nil {
		return req, dc, j
	}
	return &EngineRequest{}, &deadline.Call{}, &engineCall{}
}
