package translate

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"reflect"
	"time"

	"github.com/fanyi-go/translate/internal/clock"
	"github.com/fanyi-go/translate/internal/ranges"
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
type systemClock = clock.System

// RetryPolicy bounds retries and switches. Zero fields mean the default written beside them.
type RetryPolicy struct {
	PerEngine   int           // calls on one engine, the first included; 1..10, 0 means 2; 1 disables retries
	Backoff     time.Duration // wait before a retry on the same engine, then x4, with jitter; 1ns..1m, 0 means 200ms
	MaxAttempts int           // engine calls per request; 1..10, 0 means 3
	MaxSwitches int           // engine switches per request; 1..10, 0 means 2
	// HedgeAfter starts the next candidate too when the first attempt has not answered
	// after it; the first good answer wins and the other call is canceled. 0s..1h; 0: no
	// hedging.
	HedgeAfter time.Duration
	// HedgeBudget is the most extra calls hedging may add, as a share of calls (a token
	// bucket, like gRPC's hedging throttle), within 0..1; 0 means 0.05.
	HedgeBudget float64
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	p.PerEngine = cmp.Or(p.PerEngine, 2)
	p.Backoff = cmp.Or(p.Backoff, 200*time.Millisecond)
	p.MaxAttempts = cmp.Or(p.MaxAttempts, 3)
	p.MaxSwitches = cmp.Or(p.MaxSwitches, 2)
	return p
}

func (p RetryPolicy) validate() error { return checkLimits("RetryPolicy.", p) }

// Budget caps what the Client spends per UTC day and per UTC calendar month, and, with
// Tenants, what each tenant spends (Request.Tenant). Zero fields mean the default written
// beside them. A paid call is reserved from every limit that applies (the Client's day and
// month, and its tenant's when it has a budget of its own), all or nothing; a call one of
// them cannot cover is refused with KindBudgetExceeded.
type Budget struct {
	Daily float64 // credits per UTC day, 0..1e12; 0 means unlimited; never exceeded
	// Monthly is credits per UTC calendar month, 0..1e14; 0 means unlimited; never
	// exceeded. A month starts at 00:00 UTC on its first day (by the Client's clock).
	Monthly float64
	// EconomyAt is the fraction of Daily or Monthly (whichever is closer to its limit) after
	// which only free and standard engines serve, 0..1; 0 means 0.8. A tenant's must be 0:
	// the Client's applies to its figures too.
	EconomyAt float64
	// Tenants gives tenants budgets of their own, by Request.Tenant: a tenant's Daily and
	// Monthly cap what its requests spend, and the Client's Daily and Monthly still cap what
	// all requests spend together. A tenant not named here (and the default tenant "") spends
	// the Client's budget only. At most 10000 tenants, each named by 1..64 ASCII letters,
	// digits and - _ . : @ /; a tenant's own Tenants must be empty. New copies the map.
	Tenants map[string]Budget
}

// ProbePolicy configures active health probes (see WithProbes). Zero fields mean the default
// written beside them; the zero value probes every 30s with "hello" from en to es, accepts
// any non-empty answer and puts an engine in maintenance after 3 failed probes in a row.
// Expect answers are compared with the engine's answer with surrounding white space trimmed
// and case ignored; an engine with no entry (or an empty one) passes with any non-empty
// answer. New copies the policy, so later changes to Expect have no effect.
type ProbePolicy struct {
	Interval       time.Duration       // 1s..24h; 0 means 30s
	Text           string              // "" means "hello"
	Source, Target string              // "" means en -> es
	Expect         map[string][]string // engine name -> acceptable answers; absent means any non-empty answer
	Failures       int                 // consecutive failed probes before maintenance, 1..100; 0 means 3
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
	cacheHitSpans    bool
	seed             uint64
	seeded           bool
	clock            Clock
	batchConcurrency int
	store            Store
	memory           *MemoryPolicy  // WithMemory; nil: no translation memory
	configs          int            // WithConfig options applied: New notes where the last one is (reloadOptions)
	content          contentOptions // content.go: glossaries and placeholders
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

// WithDeadline bounds a whole request, every retry and failover included: 1ns..1h, default
// 8s. The caller's context may make it shorter.
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

// WithCache sizes the in-process cache: entries 1..1e8, ttl 1ns..8760h; default 10 000
// entries kept fresh for 24h (answers of fallback engines one minute at most). Expired entries are kept (until evicted) to answer when every
// engine fails. The cache grows with use: New allocates a few kilobytes whatever entries is
// (its lock-free index starts at 1,024 slots), and the index doubles as entries are stored,
// to at most 32 bytes per entry stored besides the entries themselves.
func WithCache(entries int, ttl time.Duration) Option {
	return func(o *options) { o.cacheEntries, o.cacheTTL, o.noCache = entries, ttl, false }
}

// WithoutCache turns the cache off. Identical concurrent requests are still coalesced and a
// repeated RequestID is still answered from its first call.
func WithoutCache() Option { return func(o *options) { o.noCache = true } }

// WithBudget sets the daily, monthly and tenants' budgets. Default: unlimited.
func WithBudget(b Budget) Option {
	b.Tenants = maps.Clone(b.Tenants)
	return func(o *options) { o.budget = b }
}

// WithProbes turns on active health probes. Default: off; without them only engines demoted
// by their health are probed, every 30s, to bring them back (see Routing in the package doc).
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
// Each round also makes known-answer probes of the language pairs that carry each engine's
// traffic, up to 4 per engine (see Routing in the package doc): a wrong answer marks the
// engine's pair down at once, without touching its other pairs.
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

// WithCacheHitSpans makes a span for every fresh cache hit too. Default: off. A fresh hit
// takes about 50 ns and a sampled span about 1 µs, so spans would make every hit some 20
// times slower; hits are still counted (translate.requests with cache_hit=true,
// translate.cache.lookups) and lie inside the caller's own span. Requests answered from a
// stale entry after failed attempts always have their span.
func WithCacheHitSpans() Option { return func(o *options) { o.cacheHitSpans = true } }

// WithSeed makes routing reproducible: the same seed and the same sequence of requests pick
// the same engines. Default: seeded from the time.
func WithSeed(seed uint64) Option { return func(o *options) { o.seed, o.seeded = seed, true } }

// WithClock sets the time source (see Clock). Default: the system clock.
func WithClock(c Clock) Option { return func(o *options) { o.clock = c } }

// WithBatchConcurrency bounds how many requests of one TranslateBatch run at once: 1..1000,
// default 8.
func WithBatchConcurrency(n int) Option { return func(o *options) { o.batchConcurrency = n } }

// limit is the documented range of a numeric setting (mechanism in internal/ranges).
type limit ranges.Limit

func (l limit) String(dur bool) string {
	return ranges.Limit(l).String(dur)
}

const (
	year = 8760 * time.Hour
	maxI = 1e15 // the largest count a setting takes: exact in a float64
)

// limits are the ranges of the numeric settings, by "Type.Field". Each field's doc comment
// states its range (TestEveryNumberHasARange); New and ParseConfig reject a value outside
// it, so that no accepted value can exhaust memory, burn a core or overflow arithmetic.
// Weights, FailureRatio's pair and SceneQuality have their own checks.
var limits = map[string]limit{
	"Config.Deadline":               {1, float64(time.Hour), true},
	"CacheConfig.Entries":           {1, maxCacheEntries, true},
	"CacheConfig.TTL":               {1, float64(year), true},
	"Budget.Daily":                  {0, 1e12, false},
	"Budget.Monthly":                {0, 1e14, false},
	"Budget.EconomyAt":              {0, 1, false},
	"RetryPolicy.PerEngine":         {1, 10, true},
	"RetryPolicy.Backoff":           {1, float64(time.Minute), true},
	"RetryPolicy.MaxAttempts":       {1, 10, true},
	"RetryPolicy.MaxSwitches":       {1, 10, true},
	"RetryPolicy.HedgeAfter":        {0, float64(time.Hour), false},
	"RetryPolicy.HedgeBudget":       {0, 1, false},
	"BreakerPolicy.Window":          {1, 10000, true},
	"BreakerPolicy.MinCalls":        {1, 10000, true},
	"BreakerPolicy.FailureRatio":    {0.2, 0.9, true},
	"BreakerPolicy.Cooldown":        {1, float64(maxCooldown), true},
	"BreakerPolicy.HalfOpenCalls":   {1, 100, true},
	"RoutingPolicy.Temperature":     {0.2, 1000, true},
	"RoutingPolicy.MinHealth":       {0, 1, false},
	"RoutingPolicy.HealthEvery":     {float64(100 * time.Millisecond), float64(time.Hour), true},
	"RoutingPolicy.LegalMinQuality": {0, 100, false},
	"RoutingPolicy.ChatMaxLatency":  {1, float64(time.Hour), true},
	"Window.From":                   {0, float64(24 * time.Hour), false},
	"Window.To":                     {0, float64(24 * time.Hour), false},
	"ProbePolicy.Interval":          {float64(time.Second), float64(24 * time.Hour), true},
	"ProbePolicy.Failures":          {1, 100, true},
	"Profile.Quality":               {0, 100, false},
	"Profile.CostPerMillion":        {0, 1e9, false},
	"Profile.CostPerMillionTokens":  {0, 1e9, false},
	"Profile.Timeout":               {1, float64(time.Hour), true},
	"Profile.TimeoutPerKTokens":     {0, float64(time.Hour), false},
	"Profile.RateLimit":             {0, 1e6, false},
	"Profile.Burst":                 {0, 1e6, false},
	"Profile.MaxConcurrency":        {0, 10000, false},
	"Profile.Quota":                 {0, maxI, false},
	"Profile.QuotaPeriod":           {float64(time.Second), float64(year), true},
	"Profile.MaxChars":              {0, 1e7, false},
	"Profile.MaxTexts":              {1, 10000, true},
	"Profile.MaxTextChars":          {0, 1e7, false},
	"Profile.Canary":                {0, 100, false},
	"Profile.SafeRate":              {0, 1e6, false},
	"Ramp.MinRequests":              {1, 1e6, true},
	"Ramp.StepEvery":                {1, float64(24 * time.Hour), true},
	"Ramp.MaxErrorRateDelta":        {0, 1, false},
	"Ramp.MinQualityRatio":          {0, 1, false},
	"Ramp.MaxLatencyRatio":          {1, 100, true},
	"MemoryPolicy.MaxEntries":       {1, 1e7, true},
	"MemoryPolicy.MaxBytes":         {1024, 1e10, true},
	"MemoryPolicy.Threshold":        {0.5, 1, true},
}

// maxCacheEntries bounds the cache's size (CacheConfig.Entries, WithCache). The cache
// grows with use, so a large bound costs nothing until it is filled.
const maxCacheEntries = 1e8

// outOfRange returns the first numeric field of the struct v outside its limit, and why.
func outOfRange(v any) (field, msg string) { return ranges.Check(v, limits) }

// checkLimits is New's range check of the struct v: its error names prefix and the field.
func checkLimits(prefix string, v any) error {
	if field, msg := outOfRange(v); field != "" {
		return configError(prefix+field, msg)
	}
	return nil
}

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
	// One by one: a slice of the three as interfaces boxes each (3 allocations per Reconfigure).
	if err := o.retry.validate(); err != nil {
		return err
	}
	if err := o.breaker.validate(); err != nil {
		return err
	}
	if err := o.routing.validate(); err != nil {
		return err
	}
	if err := o.validateScalars(); err != nil {
		return err
	}
	if o.memory != nil {
		if err := checkLimits("MemoryPolicy.", *o.memory); err != nil {
			return err
		}
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
	case o.deadline > time.Hour:
		return configError("WithDeadline", "must be at most 1h")
	case !o.noCache && (o.cacheEntries <= 0 || o.cacheTTL <= 0):
		return configError("WithCache", "entries and ttl must be positive")
	case !o.noCache && o.cacheEntries > maxCacheEntries:
		return configError("WithCache", "entries must be at most 1e8")
	case !o.noCache && o.cacheTTL > year:
		return configError("WithCache", "ttl must be at most 8760h")
	case o.batchConcurrency <= 0 || o.batchConcurrency > 1000:
		return configError("WithBatchConcurrency", "must be within 1..1000")
	case o.clock == nil:
		return configError("WithClock", "must not be nil")
	}
	if err := checkStore(o.store); err != nil {
		return err
	}
	return o.budget.validate(o.store)
}

// StoreValidator is a Store that can tell whether it is usable at all. New and Reconfigure
// call Validate once and refuse the Store with the error it returns, which must name what
// is wrong and hold no credential. redisstore.Store implements it: a zero Store, not built
// with redisstore.New, has no Redis client to call.
type StoreValidator interface {
	Store
	Validate() error
}

// checkStore refuses a Store the Client could not call: an interface holding a nil pointer
// (a typed nil, "var st *redisstore.Store" never assigned), whose methods would panic on
// the Client's goroutines, or one whose Validate fails (StoreValidator).
func checkStore(s Store) error {
	switch {
	case s == nil:
		return nil
	case holdsNil(s):
		return configError("WithStore", fmt.Sprintf("is a nil %T", s))
	}
	if v, ok := s.(StoreValidator); ok {
		if err := v.Validate(); err != nil {
			return configError("WithStore", fmt.Sprintf("%T is not usable: %v", s, err))
		}
	}
	return nil
}

// holdsNil reports whether the interface value v, not nil itself, holds a nil pointer or
// func: a plug-in (Engine, Store) whose methods would panic when the Client calls them.
func holdsNil(v any) bool {
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Func:
		return rv.IsNil()
	}
	return false
}

// validate checks a profile; field names are prefixed with prefix ("WithEngine[0].Profile.").
func (p *Profile) validate(prefix string) error {
	if p.Class > ClassPremium {
		return configError(prefix+"Class", "unknown cost class")
	}
	for s, q := range p.SceneQuality {
		if !(q >= 0 && q <= 100) || s > SceneChat {
			return configError(prefix+"SceneQuality["+s.String()+"]", "must be within 0..100")
		}
	}
	if err := checkLimits(prefix, *p); err != nil {
		return err
	}
	if err := p.Ramp.validate(prefix + "Ramp."); err != nil {
		return err
	}
	return validatePairQuality(prefix+"PairQuality", p.PairQuality)
}

// withDefaults returns p with the defaults of its zero fields applied.
func (p Profile) withDefaults() Profile {
	p.Quality = cmp.Or(p.Quality, 80)
	p.Timeout = cmp.Or(p.Timeout, 5*time.Second)
	p.QuotaPeriod = cmp.Or(p.QuotaPeriod, 24*time.Hour)
	p.MaxTexts = cmp.Or(p.MaxTexts, 1)
	if p.RateLimit > 0 && p.Burst == 0 {
		p.Burst = max(1, int(math.Ceil(p.RateLimit)))
	}
	return p
}
