package translate

import (
	"context"
	"log/slog"
	"math"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Clock is the time source of a Client: health folds, breaker cooldowns, quota periods, the
// daily budget, cache expiry, request de-duplication and backoff waits all read it. Request
// and attempt deadlines are context deadlines and run on real time. Tests inject a Clock to
// make time-dependent behaviour deterministic. Implementations must be safe for concurrent
// use.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done, whichever comes first, and returns ctx.Err() in
	// the latter case. It stops any timer it starts.
	Sleep(ctx context.Context, d time.Duration) error
}

// systemClock is the real clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RetryPolicy bounds retries and switches. Zero fields mean the default written beside them.
type RetryPolicy struct {
	PerEngine   int           // calls on one engine, the first included; 0 means 2; 1 disables retries
	Backoff     time.Duration // wait before a retry on the same engine; 0 means 200ms, then x4, with jitter
	MaxAttempts int           // engine calls per request; 0 means 3
	MaxSwitches int           // engine switches per request; 0 means 2
	// HedgeAfter starts the next candidate too when the first attempt has not answered
	// after it; the first good answer wins and the other call is canceled. 0: no hedging;
	// negative is an error.
	HedgeAfter time.Duration
	// HedgeBudget is the most extra calls hedging may add, as a share of calls (a token
	// bucket, like gRPC's hedging throttle), within 0..1; 0 means 0.05.
	HedgeBudget float64
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.PerEngine == 0 {
		p.PerEngine = 2
	}
	if p.Backoff == 0 {
		p.Backoff = 200 * time.Millisecond
	}
	if p.MaxAttempts == 0 {
		p.MaxAttempts = 3
	}
	if p.MaxSwitches == 0 {
		p.MaxSwitches = 2
	}
	return p
}

func (p RetryPolicy) validate() error {
	switch {
	case p.PerEngine < 0:
		return configError("RetryPolicy.PerEngine", "must not be negative")
	case p.Backoff < 0:
		return configError("RetryPolicy.Backoff", "must not be negative")
	case p.MaxAttempts < 0:
		return configError("RetryPolicy.MaxAttempts", "must not be negative")
	case p.MaxSwitches < 0:
		return configError("RetryPolicy.MaxSwitches", "must not be negative")
	case p.HedgeAfter < 0:
		return configError("RetryPolicy.HedgeAfter", "must not be negative")
	case !(p.HedgeBudget >= 0 && p.HedgeBudget <= 1): // NaN too
		return configError("RetryPolicy.HedgeBudget", "must be within 0..1")
	}
	return nil
}

// Budget caps what the Client spends per UTC day. Zero fields mean the default written beside
// them.
type Budget struct {
	Daily     float64 // credits per day; 0 means unlimited; never exceeded
	EconomyAt float64 // fraction of Daily after which only free and standard engines serve; 0 means 0.8
}

// ProbePolicy configures active health probes (see WithProbes). Zero fields mean the default
// written beside them; the zero value probes every 30s with "hello" from en to es, accepts
// any non-empty answer and puts an engine in maintenance after 3 failed probes in a row.
// Expect answers are compared with the engine's answer with surrounding white space trimmed
// and case ignored; an engine with no entry (or an empty one) passes with any non-empty
// answer. New copies the policy, so later changes to Expect have no effect.
type ProbePolicy struct {
	Interval       time.Duration       // 0 means 30s
	Text           string              // "" means "hello"
	Source, Target string              // "" means en -> es
	Expect         map[string][]string // engine name -> acceptable answers; absent means any non-empty answer
	Failures       int                 // consecutive failed probes before maintenance; 0 means 3
}

// Option configures a Client in New.
type Option func(*options)

type engineSpec struct {
	e Engine
	p Profile
}

type options struct {
	// err is the first error an Option met and could not return (WithConfig's); New
	// returns it before any other validation.
	err              error
	engines          []engineSpec
	deadline         time.Duration
	retry            RetryPolicy
	breaker          BreakerPolicy
	routing          RoutingPolicy
	cacheEntries     int
	cacheTTL         time.Duration
	noCache          bool
	budget           Budget
	probes           *ProbePolicy
	logger           *slog.Logger
	tracerProvider   trace.TracerProvider
	meterProvider    metric.MeterProvider
	seed             uint64
	seeded           bool
	clock            Clock
	batchConcurrency int
	store            Store
	configs          int // WithConfig options applied: New notes where the last one is (reloadOptions)
}

func defaultOptions() options {
	return options{
		deadline:         8 * time.Second,
		cacheEntries:     10000,
		cacheTTL:         24 * time.Hour,
		clock:            systemClock{},
		batchConcurrency: 8,
		seed:             uint64(time.Now().UnixNano()),
	}
}

// WithEngine adds an engine with its routing profile. At least one is required; names must
// be unique.
func WithEngine(e Engine, p Profile) Option {
	return func(o *options) { o.engines = append(o.engines, engineSpec{e, p}) }
}

// WithDeadline bounds a whole request, every retry and failover included. Default 8s. The
// caller's context may make it shorter.
func WithDeadline(d time.Duration) Option { return func(o *options) { o.deadline = d } }

// WithRetry sets the retry policy. Default: RetryPolicy{} (2 calls per engine, 200ms backoff,
// 3 calls and 2 switches per request).
func WithRetry(p RetryPolicy) Option { return func(o *options) { o.retry = p } }

// WithBreaker sets the circuit breaker policy. Default: BreakerPolicy{} (window 40, 20
// calls, ratio 0.5, cooldown 10s doubling to 5m, 5 half-open calls, per engine).
func WithBreaker(p BreakerPolicy) Option { return func(o *options) { o.breaker = p } }

// WithRouting sets the routing policy. Default: RoutingPolicy{} (weights 0.40/0.25/0.20/0.15,
// temperature 20/ln(7/3), MinHealth 0.8, no stickiness, folds every 10s).
func WithRouting(p RoutingPolicy) Option { return func(o *options) { o.routing = p } }

// WithCache sizes the in-process cache. Default 10 000 entries kept fresh for 24h; expired
// entries are kept (until evicted) to answer when every engine fails.
func WithCache(entries int, ttl time.Duration) Option {
	return func(o *options) { o.cacheEntries, o.cacheTTL, o.noCache = entries, ttl, false }
}

// WithoutCache turns the cache off. Identical concurrent requests are still coalesced and a
// repeated RequestID is still answered from its first call.
func WithoutCache() Option { return func(o *options) { o.noCache = true } }

// WithBudget sets a daily budget. Default: unlimited.
func WithBudget(b Budget) Option { return func(o *options) { o.budget = b } }

// WithProbes turns on active health probes. Default: off.
//
// Every p.Interval, waited on the Client's Clock, a background goroutine owned by the Client
// (Close stops it and waits for it) translates p.Text from p.Source to p.Target once on each
// engine, in parallel, with the engine's Timeout and the usual output checks. A probe fails
// when the call fails in a way that counts against an engine (Unavailable, Timeout,
// BadOutput, RateLimited, ...; see the Errors section) or when the answer is not one of
// p.Expect[engine name]. Probes feed the engine's health statistics like real calls, but
// never take or record a breaker permit. After p.Failures failed probes in a row the engine
// goes to PoolMaintenance and gets no traffic; the first probe that passes brings it back
// (Engines reports the pool; both moves are logged as pool changes).
//
// Probes cost money, so a round skips an engine when a probe would tell little or cost too
// much: it answered 5 or more real calls since the last round; it is set aside, out of quota
// or cooling down after a Retry-After; it has no rate-limit token or concurrency slot free;
// it does not translate p.Source to p.Target; or the probe does not fit its quota or the
// daily budget. A probe is charged like a request: its characters count in the engine's
// quota and, for engines not of ClassFree, its cost in the daily budget; a failed call is
// refunded. A call that fails with a Kind that says nothing of the engine's health
// (Unsupported, InvalidInput, TextTooLong) neither passes nor fails.
func WithProbes(p ProbePolicy) Option { return func(o *options) { o.probes = &p } }

// WithLogger sets the logger: debug per attempt, warn on breaker and pool transitions; never
// a credential nor the customer's text. Default: no logging.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithTracerProvider sets the OpenTelemetry tracer provider. Default: the global one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tracerProvider = tp }
}

// WithMeterProvider sets the OpenTelemetry meter provider. Default: the global one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) { o.meterProvider = mp }
}

// WithSeed makes routing reproducible: the same seed and the same sequence of requests pick
// the same engines. Default: seeded from the time.
func WithSeed(seed uint64) Option { return func(o *options) { o.seed, o.seeded = seed, true } }

// WithClock sets the time source (see Clock). Default: the system clock.
func WithClock(c Clock) Option { return func(o *options) { o.clock = c } }

// WithBatchConcurrency bounds how many requests of one TranslateBatch run at once. Default 8.
func WithBatchConcurrency(n int) Option { return func(o *options) { o.batchConcurrency = n } }

// configError is the error New returns for a bad option; it names the field.
func configError(field, msg string) error {
	return &Error{Kind: KindInvalidInput, Message: "config: " + field + " " + msg}
}

// fail records an error an Option cannot return; New returns the first one.
func (o *options) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}

// validate checks every option New takes; the error names the bad field. An error an
// Option recorded (o.fail) comes first.
func (o *options) validate() error {
	if o.err != nil {
		return o.err
	}
	if len(o.engines) == 0 {
		return configError("WithEngine", "at least one engine is required")
	}
	for _, v := range []interface{ validate() error }{o.retry, o.breaker, o.routing} {
		if err := v.validate(); err != nil {
			return err
		}
	}
	if err := o.validateScalars(); err != nil {
		return err
	}
	if o.probes != nil {
		return o.probes.validate()
	}
	return nil
}

// validateScalars checks the options that are single values.
func (o *options) validateScalars() error {
	switch {
	case o.deadline <= 0:
		return configError("WithDeadline", "must be positive")
	case !o.noCache && (o.cacheEntries <= 0 || o.cacheTTL <= 0):
		return configError("WithCache", "entries and ttl must be positive")
	case o.budget.Daily < 0 || math.IsNaN(o.budget.Daily) || math.IsInf(o.budget.Daily, 0):
		return configError("Budget.Daily", "must not be negative")
	case !(o.budget.EconomyAt >= 0 && o.budget.EconomyAt <= 1):
		return configError("Budget.EconomyAt", "must be within 0..1")
	case o.batchConcurrency <= 0:
		return configError("WithBatchConcurrency", "must be positive")
	case o.clock == nil:
		return configError("WithClock", "must not be nil")
	}
	return nil
}

// validate checks a profile; field names are prefixed with prefix ("WithEngine[0].Profile.").
func (p *Profile) validate(prefix string) error {
	bad := func(v float64) bool { return v < 0 || math.IsNaN(v) || math.IsInf(v, 0) }
	pct := func(v float64) bool { return !(v >= 0 && v <= 100) }
	const neg, in100 = "must not be negative", "must be within 0..100"
	checks := []struct {
		failed     bool
		field, msg string
	}{
		{pct(p.Quality), "Quality", in100},
		{bad(p.CostPerMillion), "CostPerMillion", neg},
		{bad(p.CostPerMillionTokens), "CostPerMillionTokens", neg},
		{p.Class > ClassPremium, "Class", "unknown cost class"},
		{p.Timeout < 0, "Timeout", neg},
		{bad(p.RateLimit), "RateLimit", neg},
		{p.Burst < 0, "Burst", neg},
		{p.MaxConcurrency < 0, "MaxConcurrency", neg},
		{p.Quota < 0, "Quota", neg},
		{p.QuotaPeriod < 0, "QuotaPeriod", neg},
		{p.MaxChars < 0, "MaxChars", neg},
		{p.MaxTexts < 0, "MaxTexts", neg},
		{pct(p.Canary), "Canary", in100},
		{bad(p.SafeRate), "SafeRate", neg},
	}
	for _, c := range checks {
		if c.failed {
			return configError(prefix+c.field, c.msg)
		}
	}
	for s, q := range p.SceneQuality {
		if pct(q) || s > SceneChat {
			return configError(prefix+"SceneQuality["+s.String()+"]", in100)
		}
	}
	return nil
}

// withDefaults returns p with the defaults of its zero fields applied.
func (p Profile) withDefaults() Profile {
	if p.Quality == 0 {
		p.Quality = 80
	}
	if p.Timeout == 0 {
		p.Timeout = 5 * time.Second
	}
	if p.QuotaPeriod == 0 {
		p.QuotaPeriod = 24 * time.Hour
	}
	if p.MaxTexts == 0 {
		p.MaxTexts = 1
	}
	if p.RateLimit > 0 && p.Burst == 0 {
		p.Burst = max(1, int(math.Ceil(p.RateLimit)))
	}
	return p
}
