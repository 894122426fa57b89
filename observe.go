package translate

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/fanyi-go/translate/internal/tally"
)

// scopeName is the instrumentation scope of the Client's tracer and meter.
const scopeName = "github.com/fanyi-go/translate"

// Span names.
const (
	spanRequest = "translate.Translate"
	spanAttempt = "translate.attempt"
)

// Span attribute keys. Metric attributes use the same names without the "translate."
// prefix (the metric name scopes them).
const (
	attrEngine    = attribute.Key("translate.engine")
	attrAttempt   = attribute.Key("translate.attempt")
	attrAttempts  = attribute.Key("translate.attempts")
	attrOutcome   = attribute.Key("translate.outcome")
	attrCacheHit  = attribute.Key("translate.cache_hit")
	attrDegraded  = attribute.Key("translate.degraded")
	attrFallback  = attribute.Key("translate.fallback")
	attrRequestID = attribute.Key("translate.request_id")
	attrTextLen   = attribute.Key("translate.text_len")
	attrErrorType = attribute.Key("error.type")
)

// Degradation paths, as passed to observer.degraded and used in the "how" attribute.
const (
	howStaleCache     = "stale_cache"
	howFallbackEngine = "fallback_engine"
)

// numOutcomes counts the outcomes of a request or an attempt: "ok" and every Kind.
const numOutcomes = len(kindNames) + 1

// outcomeIndex maps err to 0 for success and 1+Kind for a failure.
func outcomeIndex(err error) int {
	if err == nil {
		return 0
	}
	k := KindOf(err)
	if int(k) >= len(kindNames) {
		k = KindUnknown
	}
	return int(k) + 1
}

func outcomeName(i int) string {
	if i == 0 {
		return "ok"
	}
	return kindNames[i-1]
}

// measureOpts is one precomputed attribute set, ready to pass to Add, Record or Observe, so
// that recording allocates nothing.
type measureOpts struct {
	add []metric.AddOption
	rec []metric.RecordOption
	obs []metric.ObserveOption
}

func newMeasureOpts(kvs ...attribute.KeyValue) measureOpts {
	o := metric.WithAttributeSet(attribute.NewSet(kvs...))
	return measureOpts{add: []metric.AddOption{o}, rec: []metric.RecordOption{o}, obs: []metric.ObserveOption{o}}
}

// engineTel is what the observer precomputes for one engine, and its counters. It lives
// as long as the engine's name stays in the configuration (Reconfigure keeps it), so the
// counters, read by the observable instruments at each collection, stay cumulative.
type engineTel struct {
	engine   measureOpts              // engine=<name>
	attempts [numOutcomes]measureOpts // engine=<name>, outcome=<ok|kind>
	span     attribute.KeyValue       // translate.engine=<name>

	ok      tally.Counter              // successful calls (translate.attempts, outcome=ok)
	failed  [numOutcomes]atomic.Uint64 // failed calls by outcome: rarer, not striped
	credits tally.Float                // translate.cost
	chars   tally.Counter              // translate.chars
}

// observer is where the Client reports what happens: spans, metrics and logs. Every method
// is cheap when nothing listens: attribute sets are built once, in newObserver, and span
// attributes only for recording spans. An observer is safe for concurrent use.
type observer struct {
	log     *slog.Logger // nil: no logging
	hashKey []byte       // HMAC key for text_hash in logs; random per Client
	tracer  trace.Tracer // nil: no tracing (an explicit no-op provider)
	// unsetGlobal is the global tracer provider as New found it when it was the API's own
	// delegating provider, before any otel.SetTracerProvider; nil otherwise. While
	// otel.GetTracerProvider still returns it no SDK is installed, and spans are skipped
	// altogether: the delegate's non-recording spans cost three allocations each.
	unsetGlobal trace.TracerProvider

	attStart []trace.SpanStartOption
	hitSpans bool // WithCacheHitSpans: a span for fresh cache hits too

	// The counters every request adds to are observable instruments read from tallies at
	// each collection: a synchronous SDK counter costs a lookup, a lock and an exemplar
	// offer on every Add (see internal/tally).
	requests       metric.Int64ObservableCounter
	requestDur     metric.Float64Histogram
	attempts       metric.Int64ObservableCounter
	attemptDur     metric.Float64Histogram
	breakerMoves   metric.Int64Counter
	degradations   metric.Int64Counter
	cacheLookups   metric.Int64ObservableCounter
	credits        metric.Float64ObservableCounter
	chars          metric.Int64ObservableCounter
	decisionDur    metric.Float64Histogram
	quotaLeft      metric.Int64ObservableGauge
	configRejected metric.Int64Counter
	hedges         metric.Int64Counter
	switches       metric.Int64Counter
	reqAttempts    metric.Int64Histogram
	reqCost        metric.Float64Histogram
	canarySteps    metric.Int64Counter
	quotaReg       metric.Registration // the callback reading the Client
	frozenReg      metric.Registration // after Close: the counters' last values
	meter          metric.Meter

	req     [numOutcomes][2][2]measureOpts // outcome, cache_hit, degraded
	reqN    [numOutcomes][2][2]tally.Counter
	hit     [2]measureOpts // hit=false, hit=true
	hitN    [2]tally.Counter
	how     [2]measureOpts // stale_cache, fallback_engine
	noAttrs measureOpts
	// The span attributes that depend only on the outcome: translate.outcome and, for a
	// failure, error.type; for a request also cache_hit, degraded and fallback.
	outcomeSpan [numOutcomes][]attribute.KeyValue
	reqSpan     [numOutcomes][2][2][]attribute.KeyValue // outcome, cache_hit, degraded
	decisions   atomic.Uint32                           // counts routing decisions; one in decisionEvery is timed
	attrs       sync.Pool                               // of *attrBuf

	// freshN counts the fresh cache hits freshHit records without a span or a log, by
	// degraded: each is a request (reqN: outcome ok, cache hit) and a cache lookup (hitN:
	// hit), counted with one atomic add instead of two.
	freshN [2]tally.Counter
}

// decisionEvery is how often a routing decision is timed: its two clock reads cost as much
// as the decision itself.
const decisionEvery = 16

// newObserver builds the Client's observer: its logger, tracer and instruments, and the
// attribute sets recording needs.
func newObserver(c *Client, o options) (*observer, error) {
	ob := &observer{log: o.logger, hitSpans: o.cacheHitSpans}
	ob.attrs.New = func() any { return new(attrBuf) }
	if ob.log != nil {
		ob.hashKey = make([]byte, 32)
		rand.Read(ob.hashKey)
	}
	ob.initTracing(o.tracerProvider)
	mp := o.meterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(scopeName)
	ob.meter = m
	if err := ob.initInstruments(m); err != nil {
		return nil, fmt.Errorf("translate: telemetry: %w", err)
	}
	ob.initAttrs()
	if err := ob.registerObserved(m, c); err != nil {
		return nil, fmt.Errorf("translate: telemetry: %w", err)
	}
	return ob, nil
}

// initTracing picks the tracer: none for an explicit no-op provider, and none while the
// global provider is still the API's delegate (no SDK installed).
func (ob *observer) initTracing(tp trace.TracerProvider) {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if t := reflect.TypeOf(tp); t.Kind() == reflect.Pointer && t.Elem().PkgPath() == "go.opentelemetry.io/otel/internal/global" {
		ob.unsetGlobal = tp // the API's delegate: no SDK installed yet
	}
	if _, isNoop := tp.(tracenoop.TracerProvider); !isNoop {
		ob.tracer = tp.Tracer(scopeName)
	}
	ob.attStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
}

// Histogram bucket boundaries, in seconds: requests and attempts take from a fraction of a
// millisecond (cache hits) to the 8s deadline; a routing decision takes about a microsecond.
var (
	latencyBuckets  = metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
	decisionBuckets = metric.WithExplicitBucketBoundaries(1e-7, 2.5e-7, 5e-7, 1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 1e-3)
	attemptsBuckets = metric.WithExplicitBucketBoundaries(1, 2, 3, 4, 5, 6, 8, 10)
	costBuckets     = metric.WithExplicitBucketBoundaries(0, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10)
)

// initInstruments creates every instrument.
func (ob *observer) initInstruments(m metric.Meter) error {
	var errs []error
	counter := func(dst *metric.Int64Counter, name, unit, desc string) {
		var err error
		*dst, err = m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
	}
	histogram := func(dst *metric.Float64Histogram, name, desc string, b metric.HistogramOption) {
		var err error
		*dst, err = m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), b)
		errs = append(errs, err)
	}
	observed := func(dst *metric.Int64ObservableCounter, name, unit, desc string) {
		var err error
		*dst, err = m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
	}
	observed(&ob.requests, "translate.requests", "{request}", "Requests answered, by outcome (ok or the error Kind), cache hit and degradation.")
	histogram(&ob.requestDur, "translate.request.duration", "Duration of Translate calls, end to end.", latencyBuckets)
	observed(&ob.attempts, "translate.attempts", "{attempt}", "Engine calls, by engine and outcome (ok or the error Kind).")
	histogram(&ob.attemptDur, "translate.attempt.duration", "Duration of engine calls, by engine.", latencyBuckets)
	counter(&ob.breakerMoves, "translate.breaker.transitions", "{transition}", "Circuit breaker state changes, by engine and states.")
	counter(&ob.degradations, "translate.degradations", "{request}", "Requests answered by a degradation path: a stale cache entry or a fallback-only engine.")
	observed(&ob.cacheLookups, "translate.cache.lookups", "{lookup}", "Cache lookups, by hit (a fresh entry) or miss.")
	observed(&ob.chars, "translate.chars", "{char}", "Standard characters (code points) charged for engine calls, by engine.")
	counter(&ob.hedges, "translate.hedges", "{call}", "Hedged calls: a second engine started because the first had not answered after HedgeAfter, by engine.")
	counter(&ob.configRejected, "translate.config.rejected", "{config}", "Configurations Reconfigure rejected; the running one was kept.")
	histogram(&ob.decisionDur, "translate.routing.decision.duration", "Duration of routing decisions (filter, score, pick), sampled one in 16.", decisionBuckets)
	var err error
	ob.credits, err = m.Float64ObservableCounter("translate.cost", metric.WithUnit("{credit}"),
		metric.WithDescription("Credits charged for engine calls, by engine."))
	errs = append(errs, err)
	counter(&ob.canarySteps, "translate.canary.step", "{step}", "Steps of ramping canaries (Profile.Ramp), by engine, shares from and to, and reason.")
	counter(&ob.switches, "translate.switches", "{switch}", "Switches from one engine to another within a request (failover or hedging), by the engine left.")
	ob.reqAttempts, err = m.Int64Histogram("translate.request.attempts", metric.WithUnit("{attempt}"),
		metric.WithDescription("Engine calls per request not answered by the cache."), attemptsBuckets)
	errs = append(errs, err)
	ob.reqCost, err = m.Float64Histogram("translate.request.cost", metric.WithUnit("{credit}"),
		metric.WithDescription("Credits charged per request answered by an engine."), costBuckets)
	errs = append(errs, err)
	ob.quotaLeft, err = m.Int64ObservableGauge("translate.quota.left", metric.WithUnit("{char}"),
		metric.WithDescription("Standard characters left in the engine's quota period; engines without a quota have no series."))
	errs = append(errs, err)
	return errors.Join(errs...)
}

// initAttrs precomputes the attribute sets recording uses and the span attributes that
// depend only on the outcome, so that recording allocates nothing and builds no set.
func (ob *observer) initAttrs() {
	for k := range ob.req {
		for h := range 2 {
			for d := range 2 {
				ob.req[k][h][d] = newMeasureOpts(attribute.String("outcome", outcomeName(k)),
					attribute.Bool("cache_hit", h == 1), attribute.Bool("degraded", d == 1))
			}
		}
	}
	ob.hit[0] = newMeasureOpts(attribute.Bool("hit", false))
	ob.hit[1] = newMeasureOpts(attribute.Bool("hit", true))
	ob.how[0] = newMeasureOpts(attribute.String("how", howStaleCache))
	ob.how[1] = newMeasureOpts(attribute.String("how", howFallbackEngine))
	ob.noAttrs = newMeasureOpts()
	for k := range ob.reqSpan {
		ob.outcomeSpan[k] = []attribute.KeyValue{attrOutcome.String(outcomeName(k))}
		if k != 0 {
			ob.outcomeSpan[k] = append(ob.outcomeSpan[k], attrErrorType.String(outcomeName(k)))
		}
		for h := range 2 {
			for d := range 2 {
				ob.reqSpan[k][h][d] = append(trueOnly(attrCacheHit.Bool(h == 1), attrDegraded.Bool(d == 1),
					attrFallback.Bool(d == 1 && h == 0)), ob.outcomeSpan[k]...)
			}
		}
	}
}

// trueOnly returns the boolean attributes of kvs that are true: a span carries
// translate.cache_hit, translate.degraded and translate.fallback only when they hold, as
// OpenTelemetry's semantic conventions do with such flags (absent means false). Each
// attribute costs a span 64 bytes and a copy; on a plain miss these three would be three of
// its eight.
func trueOnly(kvs ...attribute.KeyValue) []attribute.KeyValue {
	var out []attribute.KeyValue
	for _, kv := range kvs {
		if kv.Value.AsBool() {
			out = append(out, kv)
		}
	}
	return out
}

// engineTel precomputes the attribute sets of the engine named name.
func (ob *observer) engineTel(name string) *engineTel {
	et := &engineTel{engine: newMeasureOpts(attribute.String("engine", name)), span: attrEngine.String(name)}
	for k := range et.attempts {
		et.attempts[k] = newMeasureOpts(attribute.String("engine", name), attribute.String("outcome", outcomeName(k)))
	}
	return et
}

// registerObserved registers the callback of the observable instruments: the tallies of
// requests and cache lookups, each engine's attempts, credits and characters, and the
// quota left of every engine of the running configuration that has a quota (or whose
// vendor said its quota is spent: 0). A counter that is still 0 has no series, as a
// synchronous counter never added to has none.
func (ob *observer) registerObserved(m metric.Meter, c *Client) error {
	var err error
	ob.quotaReg, err = m.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		ob.observeRequests(obs)
		s := c.cfg.Load()
		if s == nil {
			return nil
		}
		now := c.now()
		for _, e := range s.engines {
			ob.observeEngine(obs, e.tel)
			left := e.q.Left(now)
			if left != 0 && now < e.outUntil.Load() {
				left = 0 // the vendor said the quota is spent
			}
			if left < 0 {
				continue // unlimited: no series, so that sums over engines stay right
			}
			obs.ObserveInt64(ob.quotaLeft, left, e.tel.engine.obs...)
		}
		return nil
	}, ob.quotaLeft, ob.requests, ob.cacheLookups, ob.attempts, ob.credits, ob.chars)
	return err
}

// observeRequests reports the request and cache lookup counters.
func (ob *observer) observeRequests(obs metric.Observer) {
	for k := range ob.reqN {
		for h := range 2 {
			for d := range 2 {
				n := ob.reqN[k][h][d].Load()
				if k == 0 && h == 1 {
					n += ob.freshN[d].Load()
				}
				if n > 0 {
					obs.ObserveInt64(ob.requests, int64(n), ob.req[k][h][d].obs...)
				}
			}
		}
	}
	for h := range ob.hitN {
		n := ob.hitN[h].Load()
		if h == 1 {
			n += ob.freshN[0].Load() + ob.freshN[1].Load()
		}
		if n > 0 {
			obs.ObserveInt64(ob.cacheLookups, int64(n), ob.hit[h].obs...)
		}
	}
}

// observeEngine reports an engine's attempts, credits and characters.
func (ob *observer) observeEngine(obs metric.Observer, et *engineTel) {
	if n := et.ok.Load(); n > 0 {
		obs.ObserveInt64(ob.attempts, int64(n), et.attempts[0].obs...)
	}
	for k := 1; k < numOutcomes; k++ {
		if n := et.failed[k].Load(); n > 0 {
			obs.ObserveInt64(ob.attempts, int64(n), et.attempts[k].obs...)
		}
	}
	if et.ok.Load() == 0 {
		return // no answer yet: no cost or characters series, as before the first Add
	}
	obs.ObserveFloat64(ob.credits, et.credits.Load(), et.engine.obs...)
	obs.ObserveInt64(ob.chars, int64(et.chars.Load()), et.engine.obs...)
}

// hedged counts a hedge sent to e.
func (o *observer) hedged(e *engine) {
	o.hedges.Add(context.Background(), 1, e.tel.engine.add...)
}

// configRejectedOne counts a rejected configuration and warns.
func (o *observer) configRejectedOne(err error) {
	o.configRejected.Add(context.Background(), 1, o.noAttrs.add...)
	if o.log != nil {
		o.log.Warn("translate: configuration rejected; the running one is kept", slog.String("error", err.Error()))
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tracing reports whether spans are made: a provider was given, or the global one is set.
func (o *observer) tracing() bool {
	return o.tracer != nil && (o.unsetGlobal == nil || otel.GetTracerProvider() != o.unsetGlobal)
}

// requestStart starts the request's span (kind internal, the default). The span is nil
// when tracing is off. If t0 is not nil, still zero (a request that waited for a
// Reconfigure has its clock started already), and the span tells a start time read from this
// process's monotonic clock (the SDK's does), *t0 is set to it: the request's clock starts
// with its span, with one clock read for both. A start time without a monotonic reading
// came from some other clock (another tracer's), and the request reads its own.
func (o *observer) requestStart(ctx context.Context, t0 *time.Time) (context.Context, trace.Span) {
	if !o.tracing() {
		return ctx, nil
	}
	ctx, span := o.tracer.Start(ctx, spanRequest)
	if st, ok := span.(interface{ StartTime() time.Time }); ok && t0 != nil && t0.IsZero() { // set: waited for a Reconfigure
		if start := st.StartTime(); start != start.Round(0) { // Round(0) strips the monotonic reading
			*t0 = start
		}
	}
	return ctx, span
}

// recording reports whether span records what it is given. A sampled span does (in the
// SDK sampling implies recording), and asking that takes no lock, where IsRecording does.
func recording(span trace.Span) bool {
	return span.SpanContext().IsSampled() || span.IsRecording()
}

// freshHit records a request answered by a fresh cache entry, and its cache lookup (the
// Client's peek leaves it uncounted): its span only when asked for (WithCacheHitSpans).
// Without a span or a debug log that is one atomic add.
func (o *observer) freshHit(ctx context.Context, r *request, res *Result) {
	if !o.hitSpans && (o.log == nil || !o.log.Enabled(ctx, slog.LevelDebug)) {
		o.freshN[b2i(res.Degraded)].AddAt(r.hash, 1)
		return
	}
	o.cacheLookup(r, true)
	var span trace.Span
	if o.hitSpans {
		ctx, span = o.requestStart(ctx, nil)
	}
	o.requestEnd(ctx, span, r, res, nil, 0)
}

// requestEnd records a finished request: res is nil when err is not.
func (o *observer) requestEnd(ctx context.Context, span trace.Span, r *request, res *Result, err error, d time.Duration) {
	oc := outcomeIndex(err)
	var hit, degraded bool
	if res != nil {
		hit, degraded = res.FromCache, res.Degraded
	}
	set := &o.req[oc][b2i(hit)][b2i(degraded)]
	o.reqN[oc][b2i(hit)][b2i(degraded)].AddAt(r.hash^r.spread, 1) // one hot text: its scratches' stripes
	if d > 0 || !hit {                                            // a fresh cache hit reads no clock: it has no duration to record
		o.requestDur.Record(ctx, d.Seconds(), set.rec...)
	}
	o.calls(ctx, r, res, err)
	if span != nil {
		if recording(span) {
			o.setRequestAttrs(span, r, res, err, oc)
		}
		span.End()
	}
	if o.log != nil && o.log.Enabled(ctx, slog.LevelDebug) {
		attrs := []slog.Attr{slog.String("request_id", requestIDOf(r, res)),
			slog.Int("text_len", textLen(r)), slog.String("text_hash", o.textHash(r.Text)),
			slog.String("outcome", outcomeName(oc)), slog.Duration("latency", d),
			slog.Bool("cache_hit", hit), slog.Bool("degraded", degraded)}
		if res != nil && res.Engine != "" {
			attrs = append(attrs, slog.String("engine", res.Engine))
		}
		o.log.LogAttrs(ctx, slog.LevelDebug, "translate: request", attrs...)
	}
}

// setRequestAttrs sets the attributes of the request's span, all in one call: the SDK
// copies them into a slice of its own, which every further call would grow (trace.
// WithAttributes at the start would copy them twice). Those that depend only on the
// outcome come ready-made from initAttrs.
func (o *observer) setRequestAttrs(span trace.Span, r *request, res *Result, err error, oc int) {
	buf := o.attrs.Get().(*attrBuf)
	var attrs []attribute.KeyValue
	if res != nil {
		attrs = append(buf[:0], o.reqSpan[oc][b2i(res.FromCache)][b2i(res.Degraded)]...)
		attrs = append(attrs, attrAttempts.Int(len(res.Attempts)))
		if res.Engine != "" {
			attrs = append(attrs, attrEngine.String(res.Engine))
		}
	} else {
		attrs = append(buf[:0], o.reqSpan[oc][0][0]...)
		var ae *Error
		if errors.As(err, &ae) {
			attrs = append(attrs, attrAttempts.Int(len(ae.Attempts)))
		}
		span.SetStatus(codes.Error, outcomeName(oc))
	}
	attrs = append(attrs, attrTextLen.Int(textLen(r)))
	if id := requestIDOf(r, res); id != "" {
		attrs = append(attrs, attrRequestID.String(id))
	}
	span.SetAttributes(attrs...)
	o.attrs.Put(buf)
}

// calls records the engine calls of a request not answered by the cache: how many, what
// they cost (when an engine answered), and each switch from one engine to the next. The
// two histograms are recorded without the request's context: the SDK's exemplars would
// point at the request's span, as translate.request.duration's already do, and offering
// them costs a clock read and a lock per record.
func (o *observer) calls(ctx context.Context, r *request, res *Result, err error) {
	var atts []Attempt
	if res != nil && res.FromCache {
		return
	}
	if res != nil {
		atts = res.Attempts
		o.reqCost.Record(context.Background(), res.Cost, o.noAttrs.rec...)
	} else if ae := (*Error)(nil); errors.As(err, &ae) {
		atts = ae.Attempts
	}
	o.reqAttempts.Record(context.Background(), int64(len(atts)), o.noAttrs.rec...)
	for i := 1; i < len(atts); i++ {
		if from := atts[i-1].Engine; atts[i].Engine != from {
			set := o.noAttrs.add
			if r.s != nil {
				if e := r.s.byName[from]; e != nil {
					set = e.tel.engine.add
				}
			}
			o.switches.Add(ctx, 1, set...)
		}
	}
}

// textLen is the length of the request's text in code points.
func textLen(r *request) int {
	if r.chars > 0 || r.Text == "" {
		return r.chars
	}
	return runeCount(r.Text) // the request failed validation before it was counted
}

func requestIDOf(r *request, res *Result) string {
	if res != nil {
		return res.RequestID
	}
	if r.id != "" {
		return r.id
	}
	return r.RequestID
}

// textHash is a short keyed hash of a text, to correlate log lines without logging the
// text: the first 8 hex digits of HMAC-SHA256 under a key drawn for each Client.
func (o *observer) textHash(s string) string {
	h := hmac.New(sha256.New, o.hashKey)
	h.Write([]byte(s))
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:4])
}

// attemptStart starts the span of attempt n (1-based, as in Result.Attempts) on e, for
// every attempt but the first: a request's first engine call gets a span of its own only
// if it fails (see attemptEnd), because most requests make one call that succeeds, and
// then the request's span says all its span would (translate.engine, translate.outcome,
// translate.attempts, translate.fallback) at half the cost.
func (o *observer) attemptStart(ctx context.Context, e *engine, n int) (context.Context, trace.Span) {
	if n == 1 || !o.tracing() {
		return ctx, nil
	}
	return o.tracer.Start(ctx, spanAttempt, o.attStart...)
}

// attemptEnd records attempt n on e, which took d and failed with err (nil: success). A
// first attempt that failed gets its span now, dated back to its start: a sibling of the
// spans the engine made under ctx, not their parent. The attempt's duration is recorded
// under its span, if it has one, so that the SDK's exemplars point at it; a first attempt
// that succeeded records none (the request's duration points at the request's span).
func (o *observer) attemptEnd(ctx context.Context, span trace.Span, e *engine, n int, d time.Duration, err error) {
	oc := outcomeIndex(err)
	et := e.tel
	if oc == 0 {
		et.ok.Add(1)
	} else {
		et.failed[oc].Add(1)
	}
	rctx := context.Background()
	switch {
	case span != nil:
		rctx = ctx
		o.endAttemptSpan(span, e, n, oc)
	case oc != 0 && o.tracing():
		end := time.Now()
		rctx, span = o.tracer.Start(ctx, spanAttempt, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithTimestamp(end.Add(-d)))
		o.endAttemptSpan(span, e, n, oc, trace.WithTimestamp(end))
	}
	o.attemptDur.Record(rctx, d.Seconds(), et.engine.rec...)
	if o.log != nil && o.log.Enabled(ctx, slog.LevelDebug) {
		o.log.LogAttrs(ctx, slog.LevelDebug, "translate: attempt", slog.String("engine", e.name),
			slog.Int("attempt", n), slog.Duration("latency", d), slog.String("outcome", outcomeName(oc)))
	}
}

// endAttemptSpan sets the attributes of attempt n's span on e, whose outcome is oc, and
// ends it.
func (o *observer) endAttemptSpan(span trace.Span, e *engine, n, oc int, end ...trace.SpanEndOption) {
	if recording(span) {
		buf := o.attrs.Get().(*attrBuf)
		attrs := append(buf[:0], e.tel.span, attrAttempt.Int(n))
		if e.fallbackOnly(e.view.Load()) {
			attrs = append(attrs, attrFallback.Bool(true))
		}
		attrs = append(attrs, o.outcomeSpan[oc]...)
		if oc != 0 {
			span.SetStatus(codes.Error, outcomeName(oc))
		}
		span.SetAttributes(attrs...)
		o.attrs.Put(buf)
	}
	span.End(end...)
}

// attrBuf holds a span's attributes while they are set: the SDK copies them, so the
// buffer goes back to the observer's pool right after.
type attrBuf [10]attribute.KeyValue

// timeDecision reports whether the caller should time the next routing decision and pass
// the duration to decision: one decision in decisionEvery, when anyone records it.
func (o *observer) timeDecision() bool {
	// Enabled first: with nothing recording, no shared counter is written.
	return o.decisionDur.Enabled(context.Background()) && o.decisions.Add(1)%decisionEvery == 1
}

// decision records the duration of a routing decision timed after timeDecision said so.
func (o *observer) decision(d time.Duration) {
	o.decisionDur.Record(context.Background(), d.Seconds(), o.noAttrs.rec...)
}

func (o *observer) cacheLookup(r *request, hit bool) {
	o.hitN[b2i(hit)].AddAt(r.hash, 1)
}

// degraded records an answer served by a degradation path: howStaleCache or
// howFallbackEngine.
func (o *observer) degraded(how string) {
	switch how {
	case howStaleCache:
		o.degradations.Add(context.Background(), 1, o.how[0].add...)
	case howFallbackEngine:
		o.degradations.Add(context.Background(), 1, o.how[1].add...)
	default:
		o.degradations.Add(context.Background(), 1, metric.WithAttributes(attribute.String("how", how)))
	}
}

// cost records a successful engine call on e: the credits it cost and the standard
// characters it translated.
func (o *observer) cost(e *engine, credits float64, chars int) {
	e.tel.credits.Add(credits)
	e.tel.chars.Add(uint64(max(chars, 0)))
}

func (o *observer) breakerChanged(engine string, from, to BreakerState) {
	o.breakerMoves.Add(context.Background(), 1, metric.WithAttributes(attribute.String("engine", engine),
		attribute.String("from", from.String()), attribute.String("to", to.String())))
	if o.log != nil {
		o.log.LogAttrs(context.Background(), slog.LevelWarn, "translate: breaker "+to.String(),
			slog.String("engine", engine), slog.String("from", from.String()), slog.String("to", to.String()))
	}
}

func (o *observer) poolChanged(engine string, from, to Pool) {
	if o.log != nil {
		o.log.LogAttrs(context.Background(), slog.LevelWarn, "translate: pool "+to.String(),
			slog.String("engine", engine), slog.String("from", from.String()), slog.String("to", to.String()))
	}
}

func (o *observer) warn(msg, engine string) {
	if o.log != nil {
		o.log.LogAttrs(context.Background(), slog.LevelWarn, "translate: "+msg, slog.String("engine", engine))
	}
}

// close ends the callback that reads the Client: the quota gauge stops, and the counters
// are frozen at their last values and reported from then on by a callback that holds no
// reference to the Client. The SDK keeps reporting a synchronous counter after its Client
// is gone (a scrape after Close still shows what it counted); the observable ones do the
// same. s is the running configuration (nil when New failed before it had one).
func (o *observer) close(s *setup) {
	if o.quotaReg == nil {
		return
	}
	if err := o.quotaReg.Unregister(); err != nil {
		otel.Handle(err)
	}
	var last frozen
	o.observeRequests(&last)
	if s != nil {
		for _, e := range s.engines {
			o.observeEngine(&last, e.tel)
		}
	}
	if len(last.ints) == 0 && len(last.floats) == 0 {
		return
	}
	reg, err := o.meter.RegisterCallback(last.replay, o.requests, o.cacheLookups, o.attempts, o.credits, o.chars)
	if err != nil {
		otel.Handle(err)
		return
	}
	o.frozenReg = reg
}

// frozen is a recording of one observation of the counters, replayed at every collection
// once the Client is closed.
type frozen struct {
	embedded.Observer
	ints   []frozenInt
	floats []frozenFloat
}

type frozenInt struct {
	inst metric.Int64Observable
	v    int64
	opts []metric.ObserveOption
}

type frozenFloat struct {
	inst metric.Float64Observable
	v    float64
	opts []metric.ObserveOption
}

func (f *frozen) ObserveInt64(inst metric.Int64Observable, v int64, opts ...metric.ObserveOption) {
	f.ints = append(f.ints, frozenInt{inst, v, opts})
}

func (f *frozen) ObserveFloat64(inst metric.Float64Observable, v float64, opts ...metric.ObserveOption) {
	f.floats = append(f.floats, frozenFloat{inst, v, opts})
}

func (f *frozen) replay(_ context.Context, obs metric.Observer) error {
	for _, x := range f.ints {
		obs.ObserveInt64(x.inst, x.v, x.opts...)
	}
	for _, x := range f.floats {
		obs.ObserveFloat64(x.inst, x.v, x.opts...)
	}
	return nil
}
