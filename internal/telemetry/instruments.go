package telemetry

import (
	"errors"

	"go.opentelemetry.io/otel/metric"
)

// instruments are the Recorder's instruments. The counters every request adds to are
// observable instruments read from tallies at each collection: a synchronous SDK counter
// costs a lookup, a lock and an exemplar offer on every Add (see internal/tally).
type instruments struct {
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
}

// Histogram bucket boundaries, in seconds: requests and attempts take from a fraction of a
// millisecond (cache hits) to the 8s deadline; a routing decision takes about a microsecond.
var (
	latencyBuckets  = metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
	decisionBuckets = metric.WithExplicitBucketBoundaries(1e-7, 2.5e-7, 5e-7, 1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 1e-3)
	attemptsBuckets = metric.WithExplicitBucketBoundaries(1, 2, 3, 4, 5, 6, 8, 10)
	costBuckets     = metric.WithExplicitBucketBoundaries(0, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10)
)

// init creates every instrument.
func (in *instruments) init(m metric.Meter) error {
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
	observed(&in.requests, "translate.requests", "{request}", "Requests answered, by outcome (ok or the error Kind), cache hit and degradation.")
	histogram(&in.requestDur, "translate.request.duration", "Duration of Translate calls, end to end.", latencyBuckets)
	observed(&in.attempts, "translate.attempts", "{attempt}", "Engine calls, by engine and outcome (ok or the error Kind).")
	histogram(&in.attemptDur, "translate.attempt.duration", "Duration of engine calls, by engine.", latencyBuckets)
	counter(&in.breakerMoves, "translate.breaker.transitions", "{transition}", "Circuit breaker state changes, by engine and states.")
	counter(&in.degradations, "translate.degradations", "{request}", "Requests answered by a degradation path: a stale cache entry or a fallback-only engine.")
	observed(&in.cacheLookups, "translate.cache.lookups", "{lookup}", "Cache lookups, by hit (a fresh entry) or miss.")
	observed(&in.chars, "translate.chars", "{char}", "Standard characters (code points) charged for engine calls, by engine.")
	counter(&in.hedges, "translate.hedges", "{call}", "Hedged calls: a second engine started because the first had not answered after HedgeAfter, by engine.")
	counter(&in.configRejected, "translate.config.rejected", "{config}", "Configurations Reconfigure rejected; the running one was kept.")
	histogram(&in.decisionDur, "translate.routing.decision.duration", "Duration of routing decisions (filter, score, pick), sampled one in 16.", decisionBuckets)
	var err error
	in.credits, err = m.Float64ObservableCounter("translate.cost", metric.WithUnit("{credit}"),
		metric.WithDescription("Credits charged for engine calls, by engine."))
	errs = append(errs, err)
	counter(&in.canarySteps, "translate.canary.step", "{step}", "Steps of ramping canaries (Profile.Ramp), by engine, shares from and to, and reason.")
	counter(&in.switches, "translate.switches", "{switch}", "Switches from one engine to another within a request (failover or hedging), by the engine left.")
	in.reqAttempts, err = m.Int64Histogram("translate.request.attempts", metric.WithUnit("{attempt}"),
		metric.WithDescription("Engine calls per request not answered by the cache."), attemptsBuckets)
	errs = append(errs, err)
	in.reqCost, err = m.Float64Histogram("translate.request.cost", metric.WithUnit("{credit}"),
		metric.WithDescription("Credits charged per request answered by an engine."), costBuckets)
	errs = append(errs, err)
	in.quotaLeft, err = m.Int64ObservableGauge("translate.quota.left", metric.WithUnit("{char}"),
		metric.WithDescription("Standard characters left in the engine's quota period; engines without a quota have no series."))
	errs = append(errs, err)
	return errors.Join(errs...)
}
