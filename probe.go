package translate

import (
	"context"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fanyi-go/translate/internal/lang"
)

// Probe defaults (see ProbePolicy).
const (
	defaultProbeInterval = 30 * time.Second
	defaultProbeText     = "hello"
	defaultProbeSource   = "en"
	defaultProbeTarget   = "es"
	defaultProbeFailures = 3
)

// probeBusyCalls is how many real calls an engine must have answered since the last probe
// round to be spared a probe: recent real traffic is fresher and free evidence.
const probeBusyCalls = 5

func (p ProbePolicy) withDefaults() ProbePolicy {
	if p.Interval == 0 {
		p.Interval = defaultProbeInterval
	}
	if p.Text == "" {
		p.Text = defaultProbeText
	}
	if p.Source == "" {
		p.Source = defaultProbeSource
	}
	if p.Target == "" {
		p.Target = defaultProbeTarget
	}
	if p.Failures == 0 {
		p.Failures = defaultProbeFailures
	}
	if p.Expect != nil { // the caller keeps its map; the prober reads its own copy
		m := make(map[string][]string, len(p.Expect))
		for k, v := range p.Expect {
			m[k] = append([]string(nil), v...)
		}
		p.Expect = m
	}
	return p
}

func (p *ProbePolicy) validate() error {
	if err := checkLimits("ProbePolicy.", *p); err != nil {
		return err
	}
	switch {
	case p.Text != "" && strings.TrimSpace(p.Text) == "":
		return configError("ProbePolicy.Text", "must not be blank")
	case !utf8.ValidString(p.Text):
		return configError("ProbePolicy.Text", "is not valid UTF-8")
	case len(p.Text) > maxTextBytes:
		return configError("ProbePolicy.Text", "exceeds 1 MiB")
	}
	d := p.withDefaults()
	_, src, err := lang.Parse(d.Source)
	if err != nil {
		return configError("ProbePolicy.Source", "is not a valid BCP 47 tag")
	}
	_, tgt, err := lang.Parse(d.Target)
	if err != nil {
		return configError("ProbePolicy.Target", "is not a valid BCP 47 tag")
	}
	if src == tgt {
		return configError("ProbePolicy.Target", "is the same language as Source")
	}
	return nil
}

// accepts reports whether answer passes the probe of engine: one of its Expect answers
// (surrounding white space trimmed, case ignored), or any non-empty answer without any.
func (p *ProbePolicy) accepts(engine, answer string) bool {
	answer = strings.TrimSpace(answer)
	want := p.Expect[engine]
	if len(want) == 0 {
		return answer != ""
	}
	for _, w := range want {
		if strings.EqualFold(answer, strings.TrimSpace(w)) {
			return true
		}
	}
	return false
}

// manualProbeClock is implemented only by the Clock wrapper of export_test.go. A Client on
// such a clock starts no probe loop: the test clock's Sleep returns at once, so it cannot
// pace one, and the tests run rounds themselves with ProbeRoundForTest.
type manualProbeClock interface{ manualProbes() }

// startProbes starts the prober when the running configuration has probes and it is not
// running yet: in New, and in Reconfigure when a configuration turns probes on. The
// prober's goroutines belong to the Client: Close closes c.stop, which cancels the
// prober's context, and waits for them on c.wg. Called with c.mu held, or in New.
func (c *Client) startProbes() {
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
	ctx, cancel := context.WithCancel(context.Background())
	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		<-c.stop
		cancel()
	}()
	go func() {
		defer c.wg.Done()
		c.probeLoop(ctx)
	}()
}

// probeLoop runs a probe round every Interval on the Client's clock until ctx is canceled;
// while the running configuration has no probes it only waits.
func (c *Client) probeLoop(ctx context.Context) {
	for {
		every := defaultProbeInterval
		if p := c.cfg.Load().probes; p != nil {
			every = p.Interval
		}
		if err := c.clock.Sleep(ctx, every); err != nil || ctx.Err() != nil {
			return
		}
		c.probeRound(ctx)
	}
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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // Close cancels the round's probes
		select {
		case <-c.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	now := c.now()
	var wg sync.WaitGroup
	for _, e := range s.engines {
		if e.h.TakeServed() >= probeBusyCalls {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.probe(ctx, e, r, now)
		}()
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
// in or out of maintenance. The call runs apart from the prober (invokeApart), so Close
// returns promptly even when an engine ignores its context.
func (c *Client) probe(ctx context.Context, e *engine, r *request, now int64) {
	if e.has(flagSetAside) || now < e.offUntil.Load() || !e.supports(r.srcID, r.tgt.ID) {
		return
	}
	l := lease{texts: []string{r.Text}, chars: int64(r.chars)}
	if !c.probeGates(e, &l) {
		return
	}
	defer c.release(e, &l)
	if c.reserve(e, &l, now) != nil {
		return
	}
	start := time.Now()
	dctx := newDeadline(ctx, start.Add(e.prof.Timeout))
	req := &EngineRequest{Texts: l.texts, Source: r.src.Tag, Target: r.tgt.Tag, RequestID: r.id}
	out, err := c.invokeApart(dctx, e, req)
	err = c.check(dctx, ctx, e, r, l.texts, out, err)
	lat := time.Since(start)
	dctx.Release()
	if err != nil && !mayHaveBilled(KindOf(err), ctx.Err() != nil) {
		c.refund(e, &l)
	} else {
		c.charge(e, &l, out, now)
	}
	if ctx.Err() != nil {
		return // Close: not the engine's fault
	}
	c.probeOutcome(e, r, out, err, lat)
}

// probeGates takes a rate token and a slot if both are free at once: a probe must not take
// what real traffic is waiting for.
func (c *Client) probeGates(e *engine, l *lease) bool {
	if e.limiter != nil && !e.limiter.AllowN(c.clock.Now(), 1) {
		return false
	}
	if e.sem != nil {
		select {
		case e.sem <- struct{}{}:
			l.slot = true
		default:
			return false
		}
	}
	return true
}

// probeOutcome records what a probe said about the engine.
func (c *Client) probeOutcome(e *engine, r *request, out *EngineResult, err error, lat time.Duration) {
	switch kind := KindOf(err); {
	case err == nil:
	case kind == KindUnsupported:
		e.unsupported.add(r.srcID, r.tgt.ID)
		return
	case !breakerFailure(kind):
		return // says nothing about the engine's health
	}
	p := e.s.probes
	if p == nil {
		return // the configuration changed: probes are off
	}
	pass := err == nil && p.accepts(e.name, out.Texts[0])
	e.h.Record(uint64(time.Now().UnixNano()), pass, lat)
	c.probed(e, pass, p.Failures)
}

// probed counts a probe's outcome: Failures failed probes in a row put the engine in
// maintenance; a passing probe clears the count and takes it out.
func (c *Client) probed(e *engine, pass bool, failures int) {
	if pass {
		e.probeFails.Store(0)
		c.probePassed(e)
		if e.clear(flagMaintenance) {
			c.obs.poolChanged(e.name, PoolMaintenance, e.routingPool())
		}
		return
	}
	if int(e.probeFails.Add(1)) >= failures && e.set(flagMaintenance) {
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
