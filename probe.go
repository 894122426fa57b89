package translate

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/fanyi-go/translate/internal/recovery"
)

func (p ProbePolicy) withDefaults() ProbePolicy {
	p.Interval, p.Failures = cmp.Or(p.Interval, recovery.DefaultInterval), cmp.Or(p.Failures, recovery.DefaultFailures)
	p.Text = cmp.Or(p.Text, recovery.DefaultText)
	p.Source, p.Target = cmp.Or(p.Source, recovery.DefaultSource), cmp.Or(p.Target, recovery.DefaultTarget)
	p.Expect = recovery.CloneExpect(p.Expect) // the caller keeps its map; the prober reads its own copy
	return p
}

func (p *ProbePolicy) validate() error {
	if err := checkLimits("ProbePolicy.", *p); err != nil {
		return err
	}
	d := p.withDefaults()
	if field, problem := recovery.Check(d.Text, d.Source, d.Target, maxTextBytes); field != "" {
		return configError("ProbePolicy."+field, problem)
	}
	return nil
}

// accepts reports whether answer passes the probe of engine (recovery.Accepts).
func (p *ProbePolicy) accepts(engine, answer string) bool {
	return recovery.Accepts(p.Expect[engine], answer)
}

// manualProbeClock is implemented only by the Clock wrapper of export_test.go. A Client on
// such a clock starts no probe loop: the test clock's Sleep returns at once, so it cannot
// pace one, and the tests run rounds themselves with ProbeRoundForTest.
type manualProbeClock interface{ manualProbes() }

// startProbes starts the recovery prober in New, and the prober when the running
// configuration has probes and it is not running yet: in New, and in Reconfigure when a
// configuration turns probes on. The
// prober's goroutines belong to the Client: Close closes c.stop, which cancels the
// prober's context, and waits for them on c.wg. Called with c.mu held, or in New.
func (c *Client) startProbes() {
	if c.wake == nil { // in New
		c.wake, c.repace = make(chan struct{}, 1), make(chan struct{}, 1)
		c.wg.Add(1)
		go c.recoveryLoop()
		c.startHoldWatch()
	}
	s := c.cfg.Load()
	if s.probes == nil {
		return
	}
	for name := range s.probes.Expect {
		if _, ok := s.byName[name]; !ok {
			c.obs.warn("probe: Expect names no engine of this client", name)
		}
	}
	if _, manual := c.clock.(manualProbeClock); manual || c.closed.Load() || !c.probing.CompareAndSwap(false, true) {
		return
	}
	c.untilClose(c.probeLoop)
}

// probeLoop runs a probe round every Interval on the Client's clock until ctx is canceled;
// while the running configuration has no probes it only waits. Reconfigure signals
// c.repace: a new Interval then counts from the last round, not after the old one.
func (c *Client) probeLoop(ctx context.Context) {
	recovery.Pace(ctx, c.clock.Now, c.clock.Sleep, c.probeInterval, c.repace, c.probeRound)
}

// probeInterval is the running configuration's probe Interval, the default without probes.
func (c *Client) probeInterval() time.Duration {
	if p := c.cfg.Load().probes; p != nil {
		return p.Interval
	}
	return recovery.DefaultInterval
}

// probeRound probes every engine that needs it, in parallel, and returns when all probes
// are done. Each engine's count of real calls restarts at every round.
func (c *Client) probeRound(ctx context.Context) {
	s := c.cfg.Load()
	if s.probes == nil || c.closed.Load() {
		return
	}
	r, err := c.probeRequest(s.probes)
	if err != nil {
		return // validated in New; unreachable
	}
	ctx, cancel := recovery.RoundContext(ctx, c.stop)
	defer cancel()
	now := c.now()
	var wg sync.WaitGroup
	for _, e := range s.engines {
		if e.has(flagSetAside) { // keyCheck's
			continue
		}
		busy := e.h.TakeServed() >= recovery.BusyCalls
		wg.Go(func() {
			defer c.contain()
			if !busy {
				c.probe(ctx, e, r, s.probes, now)
			}
			c.knownProbes(ctx, e, now) // quality.go
		})
	}
	wg.Wait()
}

// probeRequest builds the probe's request. It is only read by the probes of a round.
func (c *Client) probeRequest(p *ProbePolicy) (*request, error) {
	src, err := c.langs.Lookup(p.Source)
	if err != nil {
		return nil, err
	}
	tgt, err := c.langs.Lookup(p.Target)
	if err != nil {
		return nil, err
	}
	r := &request{Request: Request{Text: p.Text, Source: p.Source, Target: p.Target},
		src: src, srcID: src.ID, tgt: tgt, chars: runeCount(p.Text)}
	r.id = c.newResult("").RequestID
	return r, nil
}

// probe probes one engine, unless a probe would tell nothing or cost too much, and moves it
// in or out of maintenance.
func (c *Client) probe(ctx context.Context, e *engine, r *request, p *ProbePolicy, now int64) {
	if out, err, lat, ok := c.probeCall(ctx, e, r, now); ok {
		c.probeOutcome(e, r, p, out, err, lat)
	}
}

// probeCall makes one probe call of r on e, checked and charged like a request's, unless a
// probe would tell nothing or cost too much; ok is false when no call was made or Close
// ended it. The call runs apart from the prober (invokeApart), so Close returns promptly
// even when an engine ignores its context. An engine held for every replica (store.go) is
// probed by one replica at a time.
func (c *Client) probeCall(ctx context.Context, e *engine, r *request, now int64) (out *EngineResult, err error, lat time.Duration, ok bool) {
	if now < max(e.outUntil.Load(), e.coolUntil.Load()) || !e.supports(r.srcID, r.tgt.ID) {
		return nil, nil, 0, false
	}
	l := lease{texts: []string{r.Text}, chars: int64(r.chars)}
	if !c.probeGates(e, &l) {
		return nil, nil, 0, false
	}
	defer c.release(e, &l)
	if !c.mayProbe(e, now) || c.reserve(e, &l, now) != nil {
		return nil, nil, 0, false
	}
	start := time.Now()
	dctx := newDeadline(ctx, start.Add(e.prof.Timeout))
	req := &EngineRequest{Texts: l.texts, Target: r.tgt.Tag, RequestID: r.id}
	if r.src != nil {
		req.Source = r.src.Tag
	}
	out, err = c.invokeApart(dctx, e, req)
	err = c.check(dctx, ctx, e, r, l.texts, out, err)
	lat = time.Since(start)
	dctx.Release()
	if err != nil && !mayHaveBilled(KindOf(err), ctx.Err() != nil) {
		c.refund(e, &l)
	} else {
		c.charge(e, &l, out, now)
	}
	return out, err, lat, ctx.Err() == nil // Close: not the engine's fault
}

// probeGates takes a rate token and a slot if both are free at once: a probe must not take
// what real traffic is waiting for.
func (c *Client) probeGates(e *engine, l *lease) (ok bool) {
	l.slot, ok = recovery.TryGates(e.limiter, e.sem, c.clock.Now())
	return ok
}

// probeOutcome records what a probe of policy p said about the engine: of a set-aside
// engine, only whether its key is accepted now.
func (c *Client) probeOutcome(e *engine, r *request, p *ProbePolicy, out *EngineResult, err error, lat time.Duration) {
	pass := err == nil && p.accepts(e.name, out.Texts[0])
	if pass {
		c.probePassedShared(e)
	}
	switch kind := KindOf(err); {
	case e.has(flagSetAside):
		c.keyChecked(e, pass)
		return
	case err == nil:
	case kind == KindUnsupported:
		e.unsupported.add(r.srcID, r.tgt.ID)
		return
	case !breakerFailure(kind):
		return // says nothing about the engine's health
	}
	e.h.Record(uint64(time.Now().UnixNano()), pass, lat)
	c.probed(e, pass, p.Failures)
}

// probed counts a probe's outcome: Failures failed probes in a row put the engine in
// maintenance (never with Failures 0: recovery probes); a passing probe clears the count
// and takes it out.
func (c *Client) probed(e *engine, pass bool, failures int) {
	if pass {
		e.probeFails.Store(0)
		c.probePassed(e)
		if e.clear(flagMaintenance) {
			c.obs.poolChanged(e.name, PoolMaintenance, e.routingPool())
		}
		return
	}
	if failures > 0 && int(e.probeFails.Add(1)) >= failures && e.set(flagMaintenance) {
		c.obs.poolChanged(e.name, e.routingPool(), PoolMaintenance)
	}
}

// routingPool is the pool the engine stands in apart from maintenance.
func (e *engine) routingPool() Pool {
	if e.prof.FallbackOnly {
		return PoolFallback
	}
	return e.view.Load().pool
}

// recoveryPolicy is the recovery probes' policy: "hello" from en to es (or between the first
// two of the engine's Languages when it does not take that pair), any non-empty answer
// passes, and failures never put the engine in maintenance.
var recoveryPolicy = ProbePolicy{Interval: recovery.RecoveryEvery, Text: recovery.DefaultText,
	Source: recovery.DefaultSource, Target: recovery.DefaultTarget}

// demoted reports whether the engine's health moved it to the fallback pool: an engine in
// that pool by its profile (FallbackOnly) is not demoted.
func (e *engine) demoted() bool {
	return !e.prof.FallbackOnly && e.view.Load().pool == PoolFallback
}

// wakeRecovery tells the recovery prober that an engine is demoted; it never blocks.
func (c *Client) wakeRecovery() { recovery.Wake(c.wake) }

// recoveryLoop runs a recovery round each time a fold finds an engine demoted, until Close.
// It waits on folds, not on the clock, so any Clock paces it.
func (c *Client) recoveryLoop() {
	defer c.wg.Done()
	recovery.OnWake(c.stop, c.wake, c.recoveryRound)
}

// recoveryRound probes, in parallel, the engines out that no traffic can bring back: each
// engine demoted by its health whose last recovery probe is recovery.RecoveryEvery old, when the
// configuration has no probes of its own (with them, probeRound probes every engine); each
// engine set aside (unauthorized) whose last key check is recovery.KeyCheckEvery old; and each
// engine held down for every replica (store.go) whose last probe is recovery.HoldProbeEvery old. A
// demoted engine gets no ordinary traffic to show it has recovered: two passing probes bring
// it back (probePassed); a set-aside engine comes back when one passes (keyChecked); a held
// one when one passes on any replica (probePassedShared). Probes run on folds, which run on
// the request path, and on the hold watch's readings: an idle Client probes nothing but
// held engines.
func (c *Client) recoveryRound() {
	s := c.cfg.Load()
	if c.closed.Load() {
		return
	}
	ctx, cancel := recovery.RoundContext(context.Background(), c.stop)
	defer cancel()
	now := c.now()
	var wg sync.WaitGroup
	for _, e := range s.engines {
		if !recoveryDue(s, e, now) {
			continue
		}
		r := c.recoveryRequest(e)
		if r == nil {
			continue
		}
		wg.Go(func() {
			defer c.contain()
			c.probe(ctx, e, r, &recoveryPolicy, now)
		})
	}
	wg.Wait()
}

// recoveryDue reports whether e is due a recovery probe or a key check now, and if so
// marks it done.
func recoveryDue(s *setup, e *engine, now int64) bool {
	switch {
	case e.has(flagSetAside): // the first round that sees it set aside starts its minute
		return recovery.Due(&e.recoveryAt, now, recovery.KeyCheckEvery, true)
	case e.heldDown(now): // held down for every replica (store.go)
		return recovery.Due(&e.recoveryAt, now, recovery.HoldProbeEvery, true)
	case e.demoted() && s.probes == nil:
		return recovery.Due(&e.recoveryAt, now, recovery.RecoveryEvery, false)
	}
	return false
}

// keyChecked brings a set-aside engine back when its probe passed: its key function
// returns a key the vendor accepts.
func (c *Client) keyChecked(e *engine, pass bool) {
	if pass && e.clear(flagSetAside) {
		e.recoveryAt.Store(0)
		c.obs.warn("engine back: its key is accepted again", e.name)
	}
}

// recoveryRequest is the recovery probe's request for e: recoveryPolicy's pair, or the
// first two of e's Languages when e does not take it; nil when there is none.
func (c *Client) recoveryRequest(e *engine) *request {
	p := recoveryPolicy
	r, err := c.probeRequest(&p)
	if err == nil && e.supports(r.srcID, r.tgt.ID) {
		return r
	}
	if len(e.prof.Languages) < 2 {
		return nil
	}
	p.Source, p.Target = e.prof.Languages[0], e.prof.Languages[1]
	if r, err = c.probeRequest(&p); err != nil {
		return nil
	}
	return r
}

// contain stops a panic on one of the Client's own goroutines (the hold watch and the probe
// loop, which untilClose runs, and each probe): they call a user-supplied Store's methods
// (WatchHolds, ProbeLock, Unhold), and a panic there must not end the process. The
// goroutine ends; contain logs a warning (the Client's logger, else slog.Default) with the
// panic's type, a runtime error's message and the stack, never another panic value, which
// may hold a credential. It must be deferred directly: recover works only there.
func (c *Client) contain() {
	p := recover()
	if p == nil {
		return
	}
	attrs := []slog.Attr{slog.String("panic", fmt.Sprintf("%T", p))}
	if re, ok := p.(runtime.Error); ok {
		attrs = append(attrs, slog.String("error", re.Error()))
	}
	attrs = append(attrs, slog.String("stack", string(debug.Stack())))
	c.configLogger().LogAttrs(context.Background(), slog.LevelWarn,
		"translate: a background task of the Client panicked and stopped (a Store's method?)", attrs...)
}
