// Package telemetry is the mechanism of the Client's OpenTelemetry observer: its
// instruments, the attribute sets and span attributes built once per engine and outcome,
// the striped tallies its observable counters read, the replay of those counters after
// Close, and the keyed hash that correlates log lines without logging the text.
//
// The caller keeps the policy: what a request, an attempt or a degradation is, which
// outcome an error has, and what is logged. It passes outcomes as indexes into
// Options.Outcomes (0 is success) and engines as the *Engine NewEngine returns. Recording
// allocates nothing and builds no attribute set; with nothing listening it costs an atomic
// add or two. A Recorder is safe for concurrent use once Init returned.
package telemetry

import (
	"context"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/fanyi-go/translate/internal/tally"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/fanyi-go/translate"

// NumOutcomes counts the outcomes of a request or an attempt: success (0) and one per
// error kind of the caller.
const NumOutcomes = 15

// Degradation paths, as passed to Degraded and used in the "how" attribute.
const (
	HowStaleCache     = "stale_cache"
	HowFallbackEngine = "fallback_engine"
)

// decisionEvery is how often a routing decision is timed: its two clock reads cost as much
// as the decision itself.
const decisionEvery = 16

// Options configures Init.
type Options struct {
	TracerProvider trace.TracerProvider // nil: otel's global one
	MeterProvider  metric.MeterProvider // nil: otel's global one
	// Outcomes names the outcomes in metrics and spans: "ok" first, then the error kinds.
	Outcomes [NumOutcomes]string
	// Engines yields the running engines and the characters left in each one's quota
	// (negative: unlimited, no series). It is called at each collection until Close.
	Engines iter.Seq2[*Engine, int64]
}

// Recorder records requests, attempts and the Client's events as spans and metrics. The
// zero Recorder is not ready: call Init once, before any other method.
type Recorder struct {
	outcomes [NumOutcomes]string
	tracer   trace.Tracer // nil: no tracing (an explicit no-op provider)
	// unsetGlobal is the global tracer provider as Init found it when it was the API's own
	// delegating provider, before any otel.SetTracerProvider; nil otherwise. While
	// otel.GetTracerProvider still returns it no SDK is installed, and spans are skipped
	// altogether: the delegate's non-recording spans cost three allocations each.
	unsetGlobal trace.TracerProvider
	attStart    []trace.SpanStartOption

	instruments
	quotaReg  metric.Registration // the callback reading the caller's engines
	frozenReg metric.Registration // after Close: the counters' last values
	meter     metric.Meter

	req     [NumOutcomes][2][2]Sets // outcome, cache_hit, degraded
	reqN    [NumOutcomes][2][2]tally.Counter
	hit     [2]Sets // hit=false, hit=true
	hitN    [2]tally.Counter
	how     [2]Sets // stale_cache, fallback_engine
	noAttrs Sets
	// The span attributes that depend only on the outcome: translate.outcome and, for a
	// failure, error.type; for a request also cache_hit, degraded and fallback.
	outcomeSpan [NumOutcomes][]attribute.KeyValue
	reqSpan     [NumOutcomes][2][2][]attribute.KeyValue // outcome, cache_hit, degraded
	decisions   atomic.Uint32                           // counts routing decisions; one in decisionEvery is timed
	attrs       sync.Pool                               // of *attrBuf

	// freshN counts the fresh cache hits FreshHit records, by degraded: each is a request
	// (reqN: outcome ok, cache hit) and a cache lookup (hitN: hit), counted with one atomic
	// add instead of two.
	freshN [2]tally.Counter
}

// Init builds the tracer, the instruments and the attribute sets, and registers the
// callback of the observable instruments.
func (t *Recorder) Init(o Options) error {
	t.outcomes = o.Outcomes
	t.attrs.New = func() any { return new(attrBuf) }
	t.initTracing(o.TracerProvider)
	mp := o.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	t.meter = mp.Meter(ScopeName)
	if err := t.instruments.init(t.meter); err != nil {
		return err
	}
	t.initAttrs()
	return t.registerObserved(o.Engines)
}

// OutcomeName returns the name of outcome oc.
func (t *Recorder) OutcomeName(oc int) string { return t.outcomes[oc] }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Request counts a finished request with outcome oc and records its duration d, except
// for a fresh cache hit with d 0 (it read no clock). stripe is the caller's key that stays
// with its core (a per-processor scratch's); 0 for none: the processor's is taken (see
// internal/tally).
func (t *Recorder) Request(ctx context.Context, oc int, hit, degraded bool, stripe uint64, d time.Duration) {
	if stripe == 0 {
		stripe = tally.Here()
	}
	h, dg := b2i(hit), b2i(degraded)
	t.reqN[oc][h][dg].AddAt(stripe, 1)
	if d > 0 || !hit {
		t.requestDur.Record(ctx, d.Seconds(), t.req[oc][h][dg].rec...)
	}
}

// Requests returns the tally of the requests with outcome oc, hit and degraded as
// Request counted them (FreshHit's not included).
func (t *Recorder) Requests(oc int, hit, degraded bool) *tally.Counter {
	return &t.reqN[oc][b2i(hit)][b2i(degraded)]
}

// FreshHits returns the tally of the fresh cache hits FreshHit counted, by degraded: for
// tests of who adds where.
func (t *Recorder) FreshHits(degraded bool) *tally.Counter { return &t.freshN[b2i(degraded)] }

// Lookups returns the tally of the cache lookups CacheLookup counted, by hit: for tests of
// who adds where.
func (t *Recorder) Lookups(hit bool) *tally.Counter { return &t.hitN[b2i(hit)] }

// FreshHit counts a request answered by a fresh cache entry, and its cache lookup, with
// one atomic add on the processor's stripe: a hit has no key of its own that stays with
// its core (keyed by the text, two cores serving one hot entry would share a line).
func (t *Recorder) FreshHit(degraded bool) {
	t.freshN[b2i(degraded)].AddAt(tally.Here(), 1)
}

// CacheLookup counts a cache lookup on the processor's stripe (see FreshHit).
func (t *Recorder) CacheLookup(hit bool) {
	t.hitN[b2i(hit)].AddAt(tally.Here(), 1)
}

// Calls records the engine calls of a request not answered by the cache: n calls and,
// when an engine answered, the credits they cost. The histograms are recorded without
// the request's context: the SDK's exemplars would point at the request's span, as the
// request's duration already does, and offering them costs a clock read and a lock.
func (t *Recorder) Calls(n int, cost float64, answered bool) {
	if answered {
		t.reqCost.Record(context.Background(), cost, t.noAttrs.rec...)
	}
	t.reqAttempts.Record(context.Background(), int64(n), t.noAttrs.rec...)
}

// Switch counts a switch within a request away from the engine from (nil: one the
// configuration no longer has).
func (t *Recorder) Switch(ctx context.Context, from *Engine) {
	set := t.noAttrs.add
	if from != nil {
		set = from.engine.add
	}
	t.switches.Add(ctx, 1, set...)
}

// TimeDecision reports whether the caller should time the next routing decision and pass
// the duration to Decision: one decision in decisionEvery, when anyone records it.
func (t *Recorder) TimeDecision() bool {
	// Enabled first: with nothing recording, no shared counter is written.
	return t.decisionDur.Enabled(context.Background()) && t.decisions.Add(1)%decisionEvery == 1
}

// Decision records the duration of a routing decision timed after TimeDecision said so.
func (t *Recorder) Decision(d time.Duration) {
	t.decisionDur.Record(context.Background(), d.Seconds(), t.noAttrs.rec...)
}

// Degraded counts an answer served by a degradation path: HowStaleCache,
// HowFallbackEngine or another (whose attribute set is built on the spot).
func (t *Recorder) Degraded(how string) {
	switch how {
	case HowStaleCache:
		t.degradations.Add(context.Background(), 1, t.how[0].add...)
	case HowFallbackEngine:
		t.degradations.Add(context.Background(), 1, t.how[1].add...)
	default:
		t.degradations.Add(context.Background(), 1, metric.WithAttributes(attribute.String("how", how)))
	}
}

// Hedged counts a hedge sent to e.
func (t *Recorder) Hedged(e *Engine) {
	t.hedges.Add(context.Background(), 1, e.engine.add...)
}

// ConfigRejected counts a rejected configuration.
func (t *Recorder) ConfigRejected() {
	t.configRejected.Add(context.Background(), 1, t.noAttrs.add...)
}

// BreakerMove counts a circuit breaker's change of state on engine.
func (t *Recorder) BreakerMove(engine, from, to string) {
	t.breakerMoves.Add(context.Background(), 1, metric.WithAttributes(attribute.String("engine", engine),
		attribute.String("from", from), attribute.String("to", to)))
}

// CanarySteps returns the counter of ramping canaries' steps, to which the caller adds
// with attributes of its own.
func (t *Recorder) CanarySteps() metric.Int64Counter { return t.canarySteps }

// Close ends the callback that reads the caller's engines: the quota gauge stops, and the
// counters are frozen at their last values and reported from then on by a callback that
// holds no reference to the caller. The SDK keeps reporting a synchronous counter after
// its Client is gone (a scrape after Close still shows what it counted); the observable
// ones do the same. engines yields the engines of the running configuration.
func (t *Recorder) Close(engines iter.Seq[*Engine]) {
	if t.quotaReg == nil {
		return
	}
	if err := t.quotaReg.Unregister(); err != nil {
		otel.Handle(err)
	}
	var last frozen
	t.observeRequests(&last)
	for e := range engines {
		t.observeEngine(&last, e)
	}
	if len(last.ints) == 0 && len(last.floats) == 0 {
		return
	}
	reg, err := t.meter.RegisterCallback(last.replay, t.requests, t.cacheLookups, t.attempts, t.credits, t.chars)
	if err != nil {
		otel.Handle(err)
		return
	}
	t.frozenReg = reg
}
