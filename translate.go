package translate

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"math/rand/v2"

	"golang.org/x/time/rate"

	"github.com/fanyi-go/translate/internal/deadline"
	"github.com/fanyi-go/translate/internal/lang"
	"github.com/fanyi-go/translate/internal/quota"
	"github.com/fanyi-go/translate/internal/segment"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/text/language"
)

// Engine is a machine-translation engine: one vendor adapter, a fake, or your own.
// The Client does everything around the call (routing, retries, failover, caching,
// quotas, tracing); an Engine does exactly one call.
//
// Implementations must follow these rules:
//
//   - Name returns a constant, non-empty name, unique among the engines of one Client.
//   - Translate is safe for concurrent use by multiple goroutines.
//   - Translate returns exactly len(req.Texts) texts, in the order of req.Texts, or an error.
//     It never returns (nil, nil) and never a partial result with a nil error.
//   - Translate honours ctx: it returns promptly once ctx is done, with an error for which
//     errors.Is(err, ctx.Err()) holds or a *Error of KindTimeout or KindCanceled.
//   - Translate never retries, caches or fails over; the Client does that.
//   - Translate does not modify req and does not keep it after returning.
//   - Errors are *Error values whose Kind classifies the failure (see the Errors section of
//     the package documentation); any other error is treated as KindUnknown. Message carries
//     the vendor's message with credentials removed.
//   - An Engine never puts a credential or the customer's text in an error.
type Engine interface {
	// Name returns the engine's name, as used in Request.Engine, Result.Engine and metrics.
	Name() string
	// Translate translates req.Texts from req.Source to req.Target.
	Translate(ctx context.Context, req *EngineRequest) (*EngineResult, error)
}

// EngineRequest is one call to an Engine. The Client builds it; engines must not modify it.
type EngineRequest struct {
	Texts     []string
	Source    language.Tag // language.Und means detect
	Target    language.Tag
	Scene     Scene
	Style     Style
	RequestID string
}

// EngineResult is what an Engine returns for one call.
type EngineResult struct {
	Texts       []string
	Source      language.Tag // detected source, if the vendor reported it
	BilledChars int64        // as the vendor reported it, 0 if unknown
	// InputTokens and OutputTokens report LLM token usage where the vendor reports it
	// (OpenAI-compatible engines); 0 if unknown.
	InputTokens  int64
	OutputTokens int64
	// Limits is what the vendor said about its rate limits in this response (OpenAI's
	// x-ratelimit-* headers, for example); nil when it said nothing. The Client slows an
	// engine whose remaining requests or tokens run low, before the vendor answers 429.
	Limits *VendorLimits
}

// VendorLimits is a vendor's report of its own rate limits, from response headers. A
// negative Remaining value means the vendor did not report it; a zero Reset means unknown.
type VendorLimits struct {
	RemainingRequests int64         // requests left in the vendor's current window
	RemainingTokens   int64         // tokens (or characters) left in the vendor's current window
	ResetRequests     time.Duration // until the request window resets
	ResetTokens       time.Duration // until the token window resets
}

// LanguagePair is a translation direction an engine supports. A Source of language.Und
// means the engine accepts any of its sources for Target (and can detect the source).
type LanguagePair struct {
	Source language.Tag
	Target language.Tag
}

// LanguageSupporter is implemented by engines that can list the pairs they translate, such as
// Apertium (/listPairs) or DeepL (/v2/languages). When an engine's Profile.Languages is empty,
// the Client asks SupportedPairs once at New (bounded by the engine's Timeout) and then routes
// only the listed pairs to the engine; when the call fails, the engine is taken to support
// every pair. Safe for concurrent use.
type LanguageSupporter interface {
	SupportedPairs(ctx context.Context) ([]LanguagePair, error)
}

// StreamEngine is implemented by engines that can stream a translation as it is produced
// (engines/openai, over server-sent events). TranslateStream yields text deltas of the
// translation of req.Texts[0] (the Client sends one text per streamed call), in order; the
// concatenation of every delta is the whole translation. It yields a non-nil error at most
// once, as its last value: a *Error with the Kind of the failure, as Translate would return.
// It honours ctx and stops when the consumer stops ranging. Safe for concurrent use.
type StreamEngine interface {
	Engine
	TranslateStream(ctx context.Context, req *EngineRequest) iter.Seq2[string, error]
}

// Chunk is one piece of a streamed translation (Client.TranslateStream).
type Chunk struct {
	Segment int    // index of the segment, in source order
	Text    string // the segment's translation so far
	Partial bool   // more of this segment follows; a later Chunk for the same Segment supersedes it
	Engine  string
}

// Scene is the kind of content being translated. It selects per-scene quality, scene rules
// and, for LLM engines, the prompt. The zero value is SceneGeneral.
type Scene uint8

// Scenes.
const (
	SceneGeneral Scene = iota
	SceneTech
	SceneLegal
	SceneEcommerce
	SceneChat
)

var sceneNames = [...]string{"general", "tech", "legal", "ecommerce", "chat"}

// String returns the scene's lower-case name, such as "legal".
func (s Scene) String() string {
	if int(s) < len(sceneNames) {
		return sceneNames[s]
	}
	return "scene(" + itoa(int(s)) + ")"
}

// Style is the register of the translation. The zero value is StyleDefault.
type Style uint8

// Styles.
const (
	StyleDefault Style = iota
	StyleFormal
	StyleCasual
)

// String returns "default", "formal" or "casual".
func (s Style) String() string {
	switch s {
	case StyleDefault:
		return "default"
	case StyleFormal:
		return "formal"
	case StyleCasual:
		return "casual"
	}
	return "style(" + itoa(int(s)) + ")"
}

// Priority decides which cost classes may serve a request. The zero value is PriorityNormal:
// normal requests never reach premium engines.
type Priority uint8

// Priorities.
const (
	PriorityNormal Priority = iota
	PriorityHigh
)

// String returns "normal" or "high".
func (p Priority) String() string {
	if p == PriorityHigh {
		return "high"
	}
	if p == PriorityNormal {
		return "normal"
	}
	return "priority(" + itoa(int(p)) + ")"
}

// CostClass groups engines by price for the budget and priority rules. The zero value is
// ClassStandard.
type CostClass uint8

// Cost classes.
const (
	ClassStandard CostClass = iota // the default
	ClassFree
	ClassPremium
)

// String returns "standard", "free" or "premium".
func (c CostClass) String() string {
	switch c {
	case ClassStandard:
		return "standard"
	case ClassFree:
		return "free"
	case ClassPremium:
		return "premium"
	}
	return "class(" + itoa(int(c)) + ")"
}

// rank orders classes by price: free 0, standard 1, premium 2.
func (c CostClass) rank() int {
	switch c {
	case ClassFree:
		return 0
	case ClassPremium:
		return 2
	}
	return 1
}

// Profile describes an engine to the router. Zero values mean the documented defaults.
type Profile struct {
	Quality        float64           // 0..100 offline evaluation score; default 80
	SceneQuality   map[Scene]float64 // per-scene overrides of Quality
	Class          CostClass         // ClassFree, ClassStandard (default), ClassPremium
	CostPerMillion float64           // credits per million standard characters
	Languages      []string          // BCP 47 tags it translates between; empty means any
	Timeout        time.Duration     // per attempt; default 5s
	RateLimit      float64           // requests per second; 0 means unlimited
	Burst          int               // rate limiter burst; 0 means max(1, ceil(RateLimit))
	MaxConcurrency int               // in-flight calls; 0 means unlimited
	Quota          int64             // standard characters per QuotaPeriod; 0 means unlimited
	QuotaPeriod    time.Duration     // default 24h
	MaxChars       int               // per call; longer text is segmented; 0 means unlimited
	MaxTexts       int               // texts per call; default 1
	FallbackOnly   bool              // last resort: used only when the normal pool has failed
	// Canary is the percentage (0..100) of UserIDs this engine serves as a canary: a stable
	// share of users, chosen by hashing the UserID, is routed to it whenever it is a
	// candidate; everybody else never reaches it. 0 means the engine is not a canary.
	Canary float64
	// SafeRate is the request rate (per second) the engine can take safely; as its recent
	// rate nears it, its routing weight falls (the traffic gate). 0 means RateLimit, and no
	// gate when both are 0.
	SafeRate float64
	// Region is where the vendor processes the data: "eu", "us", "cn", ... ("" = global,
	// unknown). Request.Regions filters on it.
	Region string
}

// itoa avoids strconv in String methods of tiny enums.
func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// Request is one text to translate. Only Text and Target are required.
type Request struct {
	Text          string
	Source        string   // BCP 47 tag; "" means detect
	Target        string   // BCP 47 tag; required
	Scene         Scene    // SceneGeneral (default), SceneTech, SceneLegal, SceneEcommerce, SceneChat
	Style         Style    // StyleDefault, StyleFormal, StyleCasual
	Priority      Priority // PriorityNormal (default), PriorityHigh
	UserID        string   // stable routing for canaries and sticky routing
	RequestID     string   // idempotency key; generated when empty
	Engine        string   // pin one engine by name; "" lets the router choose
	AllowFallback bool     // with Engine set: may other engines be used if it fails
	NoCache       bool     // neither read nor write the cache
	// Regions lists the processing regions allowed for this text (Profile.Region values).
	// Empty means any. It is a hard filter: no engine outside them serves the request,
	// fallback engines included.
	Regions []string
}

// Result is a translation and how it was made. Treat it as read-only: a fresh cache hit
// returns the cache entry's Result, shared by every caller that hits it.
type Result struct {
	Text   string
	Engine string // engine that produced the text ("" only if every part came from cache)
	Source string // detected or given source tag
	// Latency is end to end, as seen by Translate. It is 0 for a fresh cache hit, which takes
	// a fraction of a microsecond and reads no clock.
	Latency   time.Duration
	Cost      float64 // credits charged for this request
	FromCache bool
	Degraded  bool // served by a degradation path: stale cache or a fallback-only engine
	// RequestID is the request's RequestID, or one generated when the request had none. A
	// fresh cache hit without a RequestID of its own gets the cache entry's id, generated when
	// the entry was stored and shared by every such hit.
	RequestID string
	Attempts  []Attempt // every engine call, and every chosen engine skipped at call time, in order
}

// Attempt is one engine call made for a request, or one chosen engine skipped at call time
// (rate limited or saturated), in which case Latency is 0 and Err says why.
type Attempt struct {
	Engine  string
	Latency time.Duration
	Err     error // nil for the successful attempt
}

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
	// after it; the first good answer wins and the other call is canceled. 0: no hedging.
	HedgeAfter time.Duration
	// HedgeBudget is the most extra calls hedging may add, as a share of calls (a token
	// bucket, like gRPC's hedging throttle); 0 means 0.05.
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

// Client translates through its engines. It is safe for concurrent use; create it with New
// and Close it when done.
type Client struct {
	engines   []*engine
	byName    map[string]*engine
	routing   RoutingPolicy
	retry     RetryPolicy
	deadline  time.Duration
	clock     Clock
	seed      uint64
	seeded    bool // WithSeed given: draws come from the seeded sequence
	rng       atomic.Uint64
	sysClock  bool         // the clock is the system clock: read it through coarse
	coarse    atomic.Int64 // the system clock in unix nanos, refreshed every coarseTick
	hashSeed  maphash.Seed
	langs     *lang.Cache
	budget    *quota.Budget
	economyAt float64
	cache     *cache // nil: off
	flights   flights
	dedup     dedup
	nextFold  atomic.Int64
	lastFold  atomic.Int64
	obs       *observer
	scratch   sync.Pool // *scratch
	batchConc int
	probes    *ProbePolicy

	closed    atomic.Bool
	closeOnce sync.Once
	stop      chan struct{}
	wg        sync.WaitGroup
}

// New returns a Client over the engines given with WithEngine. It returns an error naming the
// field for a bad configuration: no engines, two engines with one name, a Profile value out
// of range, weights outside their bounds, a breaker FailureRatio outside 0.2..0.9.
func New(opts ...Option) (*Client, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if len(o.engines) == 0 {
		return nil, configError("WithEngine", "at least one engine is required")
	}
	if err := o.retry.validate(); err != nil {
		return nil, err
	}
	if err := o.breaker.validate(); err != nil {
		return nil, err
	}
	if err := o.routing.validate(); err != nil {
		return nil, err
	}
	switch {
	case o.deadline <= 0:
		return nil, configError("WithDeadline", "must be positive")
	case !o.noCache && (o.cacheEntries <= 0 || o.cacheTTL <= 0):
		return nil, configError("WithCache", "entries and ttl must be positive")
	case o.budget.Daily < 0 || math.IsNaN(o.budget.Daily):
		return nil, configError("Budget.Daily", "must not be negative")
	case o.budget.EconomyAt < 0 || o.budget.EconomyAt > 1:
		return nil, configError("Budget.EconomyAt", "must be within 0..1")
	case o.batchConcurrency <= 0:
		return nil, configError("WithBatchConcurrency", "must be positive")
	case o.clock == nil:
		return nil, configError("WithClock", "must not be nil")
	}
	if o.probes != nil {
		if err := o.probes.validate(); err != nil {
			return nil, err
		}
	}
	c := &Client{
		byName:    map[string]*engine{},
		routing:   o.routing.withDefaults(),
		retry:     o.retry.withDefaults(),
		deadline:  o.deadline,
		clock:     o.clock,
		seed:      o.seed,
		seeded:    o.seeded,
		hashSeed:  maphash.MakeSeed(),
		langs:     lang.NewCache(),
		budget:    quota.NewBudget(o.budget.Daily),
		economyAt: o.budget.EconomyAt,
		batchConc: o.batchConcurrency,
		probes:    o.probes,
		stop:      make(chan struct{}),
	}
	_, c.sysClock = o.clock.(systemClock)
	if c.economyAt == 0 {
		c.economyAt = 0.8
	}
	if !o.noCache {
		c.cache = newCache(o.cacheEntries, int64(o.cacheTTL))
	}
	start := c.clock.Now()
	bp := o.breaker.withDefaults()
	for i, spec := range o.engines {
		e, err := c.newEngine(i, spec, bp, start)
		if err != nil {
			return nil, err
		}
		if _, dup := c.byName[e.name]; dup {
			return nil, configError(fmt.Sprintf("WithEngine[%d]", i), fmt.Sprintf("duplicate engine name %q", e.name))
		}
		c.byName[e.name] = e
		c.engines = append(c.engines, e)
	}
	if c.sysClock {
		c.startCoarseClock()
	}
	c.nextFold.Store(start.UnixNano() + int64(c.routing.HealthEvery))
	c.lastFold.Store(start.UnixNano())
	obs, err := newObserver(c, o)
	if err != nil {
		return nil, err
	}
	c.obs = obs
	c.discoverLanguages()
	c.startProbes()
	return c, nil
}

// newEngine validates a profile, applies its defaults and builds the engine's state.
func (c *Client) newEngine(i int, spec engineSpec, bp BreakerPolicy, start time.Time) (*engine, error) {
	field := func(f string) string { return fmt.Sprintf("WithEngine[%d].Profile.%s", i, f) }
	if spec.e == nil {
		return nil, configError(fmt.Sprintf("WithEngine[%d]", i), "engine is nil")
	}
	name := spec.e.Name()
	if name == "" {
		return nil, configError(fmt.Sprintf("WithEngine[%d]", i), fmt.Sprintf("%T has an empty name", spec.e))
	}
	p := spec.p
	bad := func(v float64) bool { return v < 0 || math.IsNaN(v) || math.IsInf(v, 0) }
	switch {
	case p.Quality < 0 || p.Quality > 100 || math.IsNaN(p.Quality):
		return nil, configError(field("Quality"), "must be within 0..100")
	case bad(p.CostPerMillion):
		return nil, configError(field("CostPerMillion"), "must not be negative")
	case p.Class > ClassPremium:
		return nil, configError(field("Class"), "unknown cost class")
	case p.Timeout < 0:
		return nil, configError(field("Timeout"), "must not be negative")
	case bad(p.RateLimit):
		return nil, configError(field("RateLimit"), "must not be negative")
	case p.Burst < 0:
		return nil, configError(field("Burst"), "must not be negative")
	case p.MaxConcurrency < 0:
		return nil, configError(field("MaxConcurrency"), "must not be negative")
	case p.Quota < 0:
		return nil, configError(field("Quota"), "must not be negative")
	case p.QuotaPeriod < 0:
		return nil, configError(field("QuotaPeriod"), "must not be negative")
	case p.MaxChars < 0:
		return nil, configError(field("MaxChars"), "must not be negative")
	case p.MaxTexts < 0:
		return nil, configError(field("MaxTexts"), "must not be negative")
	case p.Canary < 0 || p.Canary > 100 || math.IsNaN(p.Canary):
		return nil, configError(field("Canary"), "must be within 0..100")
	case bad(p.SafeRate):
		return nil, configError(field("SafeRate"), "must not be negative")
	}
	for s, q := range p.SceneQuality {
		if q < 0 || q > 100 || math.IsNaN(q) {
			return nil, configError(field("SceneQuality["+s.String()+"]"), "must be within 0..100")
		}
	}
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
	langs, err := lang.NewSet(c.langs, p.Languages)
	if err != nil {
		return nil, configError(field("Languages"), err.Error())
	}
	e := &engine{idx: i, name: name, eng: spec.e, prof: p, langs: langs, quotaLimited: p.Quota > 0, canary: p.Canary > 0, fallback: p.FallbackOnly,
		br: newBreakers(bp, c.clock.Now), q: quota.New(p.Quota, p.QuotaPeriod, start),
		nameHash: maphash.String(c.hashSeed, name), cost: CostScore(p.CostPerMillion)}
	for s := range sceneNames {
		e.quality[s] = p.Quality
		if q, ok := p.SceneQuality[Scene(s)]; ok {
			e.quality[s] = q
		}
	}
	if p.RateLimit > 0 {
		burst := p.Burst
		if burst == 0 {
			burst = max(1, int(math.Ceil(p.RateLimit)))
		}
		e.limiter = rate.NewLimiter(rate.Limit(p.RateLimit), burst)
		e.limiter.AllowN(start, 0) // anchor the limiter on the Client's clock
	}
	if p.MaxConcurrency > 0 {
		e.sem = make(chan struct{}, p.MaxConcurrency)
	}
	v := &view{avail: 1, ewma: initialLatency, pool: PoolNormal, gate: 1}
	c.rebuildView(e, v)
	e.view.Store(v)
	return e, nil
}

// coarseTick is how often the coarse clock is refreshed. Reading the system clock costs
// 60-100ns on common cloud machines, more than a whole cache hit; cache expiry, health folds,
// breaker cooldowns, quota periods, the budget day and the RequestID window are measured in
// seconds, so they read the coarse clock instead. Latencies and deadlines use real readings.
const coarseTick = 5 * time.Millisecond

// startCoarseClock starts the goroutine that refreshes c.coarse until Close.
func (c *Client) startCoarseClock() {
	c.coarse.Store(time.Now().UnixNano())
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		t := time.NewTicker(coarseTick)
		defer t.Stop()
		for {
			select {
			case now := <-t.C:
				c.coarse.Store(now.UnixNano())
			case <-c.stop:
				return
			}
		}
	}()
}

// now returns the Client's clock reading in unix nanos: the coarse clock for the system
// clock, the injected Clock otherwise.
func (c *Client) now() int64 {
	if c.sysClock {
		return c.coarse.Load()
	}
	return c.clock.Now().UnixNano()
}

// discoverLanguages asks engines that list their pairs (LanguageSupporter) and have no
// Profile.Languages which languages they take. A failing call leaves the engine open to any
// pair.
func (c *Client) discoverLanguages() {
	for _, e := range c.engines {
		ls, ok := e.eng.(LanguageSupporter)
		if !ok || e.langs != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), e.prof.Timeout)
		pairs, err := ls.SupportedPairs(ctx)
		cancel()
		if err != nil || len(pairs) == 0 {
			continue
		}
		tags := make([]language.Tag, 0, 2*len(pairs))
		for _, p := range pairs {
			tags = append(tags, p.Source, p.Target)
		}
		e.langs = lang.NewSetOfTags(c.langs, tags)
	}
}

// maxTextBytes bounds one request's text.
const maxTextBytes = 1 << 20

// prepare validates and normalises a request.
func (c *Client) prepare(req *Request, r *request) error {
	r.Request = *req
	chars, blank, valid := scanText(req.Text)
	switch {
	case blank:
		return invalid("Text is empty")
	case len(req.Text) > maxTextBytes:
		return &Error{Kind: KindTextTooLong, Message: "Text exceeds 1 MiB"}
	case !valid:
		return invalid("Text is not valid UTF-8")
	case req.Target == "":
		return invalid("Target is required")
	case req.Scene > SceneChat:
		return invalid("unknown Scene")
	case req.Style > StyleCasual:
		return invalid("unknown Style")
	case req.Priority > PriorityHigh:
		return invalid("unknown Priority")
	}
	src, tgt, err := c.langs.LookupPair(req.Source, req.Target)
	switch {
	case tgt == nil:
		return invalid("Target is not a valid BCP 47 tag")
	case err != nil:
		return invalid("Source is not a valid BCP 47 tag")
	}
	r.tgt = tgt
	if src != nil {
		if src.ID == tgt.ID { // same base language and script
			return invalid("Source and Target are the same language")
		}
		r.src, r.srcID = src, src.ID
	}
	if req.Engine != "" {
		e, ok := c.byName[req.Engine]
		if !ok {
			return invalid("unknown Engine " + strconv.Quote(req.Engine))
		}
		r.pinned = e
	}
	r.chars = chars
	h := maphash.String(c.hashSeed, req.Text)
	r.hash = mix(h ^ uint64(r.srcID)<<40 ^ uint64(tgt.ID)<<20 ^ uint64(req.Scene)<<8 ^ uint64(req.Style)<<4)
	if r.pinned != nil {
		r.hash = mix(r.hash ^ r.pinned.nameHash)
	}
	r.key = r.keyFields()
	if req.UserID != "" {
		r.userHash = maphash.String(c.hashSeed, req.UserID)
	}
	return nil
}

func invalid(msg string) error { return &Error{Kind: KindInvalidInput, Message: msg} }

// scanText counts the code points of s and reports whether it is blank (empty or white
// space only) and valid UTF-8, in one pass for ASCII text.
func scanText(s string) (chars int, blank, valid bool) {
	i := 0
	for ; i+8 <= len(s); i += 8 { // eight bytes at a time while they are ASCII
		if binary.LittleEndian.Uint64([]byte(s[i:i+8]))&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.RuneCountInString(s), strings.TrimSpace(s) == "", utf8.ValidString(s)
		}
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; b != ' ' && (b < '\t' || b > '\r') {
			return len(s), false, true
		}
	}
	return len(s), true, true
}

// runeCount counts code points: the standard characters quotas and costs are counted in.
func runeCount(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.RuneCountInString(s)
		}
	}
	return len(s)
}

// resultBuf is a Result allocated together with its first attempts, its request id and the
// flight identical requests share, so a request costs one allocation for its answer.
type resultBuf struct {
	Result
	att [1]Attempt
	id  [32]byte
	fl  flight
}

// scratch is what a request needs only while it runs: the first attempt's engine request
// and context, and the text as one part. It is pooled.
type scratch struct {
	req                 EngineRequest
	dctx                deadline.Context
	part, sep, out, eng [1]string
}

// getScratch returns a scratch from the Client's pool.
func (c *Client) getScratch() *scratch {
	if s, ok := c.scratch.Get().(*scratch); ok {
		return s
	}
	return new(scratch)
}

// putScratch returns s to the pool when reusable: no engine may still hold part of it (an
// engine that armed its context may have waited on it past its timeout).
func (c *Client) putScratch(s *scratch, reusable bool) {
	if !reusable {
		return
	}
	s.req = EngineRequest{}
	s.part[0], s.out[0], s.eng[0] = "", "", ""
	c.scratch.Put(s)
}

func (c *Client) newResult(reqID string) *resultBuf {
	b := &resultBuf{}
	b.Attempts = b.att[:0]
	b.RequestID = requestID(reqID, &b.id)
	return b
}

// requestID returns id, or a new random 128-bit id written in hex into buf.
func requestID(id string, buf *[32]byte) string {
	if id != "" {
		return id
	}
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], rand.Uint64())
	binary.BigEndian.PutUint64(raw[8:], rand.Uint64())
	hex.Encode(buf[:], raw[:])
	return unsafe.String(&buf[0], len(buf))
}

// Translate translates one text. It validates the request (KindInvalidInput at once for a
// bad one), answers from the cache when it can, and otherwise routes it through the engines
// with retries and failover inside one deadline. It never returns the source text as a
// translation: when nothing works it returns a stale cache entry (Degraded), then tries the
// fallback-only engines (Degraded), then returns a *Error listing every attempt. When ctx is
// canceled it returns ctx's error.
func (c *Client) Translate(ctx context.Context, req Request) (*Result, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	now := c.now()
	c.maybeFold(now)
	ctx, span := c.obs.requestStart(ctx)
	var r request
	if err := c.prepare(&req, &r); err != nil {
		c.obs.requestEnd(ctx, span, &r, nil, err, 0)
		return nil, err
	}
	res, err := c.translate(ctx, &r, now)
	var d time.Duration
	switch {
	case res != nil:
		d = res.Latency
	case !r.t0.IsZero():
		d = time.Since(r.t0)
	}
	c.obs.requestEnd(ctx, span, &r, res, err, d)
	return res, err
}

// translate answers a validated request. A fresh cache hit reads no clock and allocates
// nothing (it returns the entry's shared Result) unless the request brings its own RequestID.
func (c *Client) translate(ctx context.Context, r *request, now int64) (*Result, error) {
	var dk dedupKey
	if r.RequestID != "" {
		r.t0 = time.Now()
		dk = dedupKey{r.RequestID, r.hash}
		if prev := c.dedup.get(dk, now); prev != nil {
			return c.reuse(prev, r.RequestID, r.t0), nil
		}
	}
	useCache := c.cache != nil && !r.NoCache
	var stale *cacheEntry
	if useCache {
		if e, fresh := c.cache.get(r, now); e != nil {
			if fresh {
				c.obs.cacheLookup(true)
				return e.hit(r.RequestID), nil
			}
			stale = e
		}
		c.obs.cacheLookup(false)
	}
	if r.t0.IsZero() {
		r.t0 = time.Now()
	}
	t0 := r.t0
	b := c.newResult(r.RequestID)
	f, lead := c.flights.join(r, &b.fl)
	if !lead {
		if err := c.flights.wait(ctx, f); err != nil {
			return nil, err
		}
		if f.err == nil {
			return c.reuse(f.res, r.RequestID, t0), nil
		}
		if KindOf(f.err) != KindCanceled {
			return nil, f.err
		}
		// The leader's caller gave up; this caller still wants an answer.
		f = &b.fl
	}
	res, err := c.run(ctx, r, b, stale, t0, now)
	c.flights.land(r, f, res, err)
	if err != nil {
		return nil, err
	}
	if useCache && !res.FromCache && res.Engine != "" {
		c.cache.put(r, res.Text, res.Source, now)
	}
	if r.RequestID != "" {
		c.dedup.put(dk, res, now)
	}
	return res, nil
}

// reuse copies a shared answer (coalesced flight or repeated RequestID) for another caller:
// same text and engine, nothing billed again.
func (c *Client) reuse(prev *Result, reqID string, t0 time.Time) *Result {
	h := &resultID{}
	res := &h.Result
	*res = *prev
	res.Attempts = append([]Attempt(nil), prev.Attempts...)
	res.RequestID = requestID(reqID, &h.id)
	res.Cost, res.FromCache = 0, true
	res.Latency = time.Since(t0)
	return res
}

// run routes a request: the normal pool, then a stale cache entry, then the fallback pool.
func (c *Client) run(ctx context.Context, r *request, b *resultBuf, stale *cacheEntry, t0 time.Time, now int64) (*Result, error) {
	res := &b.Result
	r.id = res.RequestID
	s := c.getScratch()
	st := loopState{attempts: res.Attempts, deadline: t0.Add(c.deadline), now: now, req: &s.req, ctx: &s.dctx, first: &s.dctx, start: t0}
	defer func() { c.putScratch(s, st.ctx != nil || st.firstReusable) }()
	if d, ok := ctx.Deadline(); ok && d.Before(st.deadline) {
		st.deadline = d
	}
	s.part[0] = r.Text
	j := job{split: segment.Segments{Parts: s.part[:], Seps: s.sep[:]}, out: s.out[:0], by: s.eng[:0]}
	err := c.attemptLoop(ctx, r, &j, phaseNormal, &st, res)
	degraded := false
	if err != nil && ctx.Err() == nil && KindOf(err) != KindInvalidInput && (r.pinned == nil || r.AllowFallback) {
		if stale != nil {
			res.Text, res.Source, res.FromCache, res.Degraded = stale.res.Text, stale.res.Source, true, true
			res.Attempts = st.attempts
			res.Latency = time.Since(t0)
			c.obs.degraded("stale_cache")
			return res, nil
		}
		pinned := r.pinned
		r.pinned = nil
		// A failed fallback keeps the normal pool's error; its attempts are added below.
		if c.attemptLoop(ctx, r, &j, phaseFallback, &st, res) == nil {
			err, degraded = nil, true
			c.obs.degraded("fallback_engine")
		}
		r.pinned = pinned
	}
	res.Attempts = st.attempts
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ae *Error
		if errors.As(err, &ae) {
			ae.Attempts = st.attempts
		}
		return nil, err
	}
	text, jerr := j.text()
	if jerr != nil {
		return nil, &Error{Kind: KindBadOutput, Message: "stitching segments: " + jerr.Error(), Attempts: st.attempts}
	}
	res.Text = text
	res.Engine = j.by[0]
	if len(j.by) > 1 {
		res.Engine = strings.Join(j.by, "+")
	}
	res.Cost = j.cost
	res.Degraded = degraded
	res.Source = r.Source
	if r.src != nil {
		res.Source = r.src.Canon
	} else if j.srcTag != "" {
		res.Source = j.srcTag
	}
	res.Latency = st.end.Sub(t0) // the last action was the successful call
	return res, nil
}

// BatchResult is one answer of TranslateBatch: a Result or an error.
type BatchResult struct {
	Result *Result
	Err    error
}

// TranslateBatch translates every request, at most WithBatchConcurrency at a time, and
// returns the answers in the order of reqs, each with its own error.
func (c *Client) TranslateBatch(ctx context.Context, reqs []Request) []BatchResult {
	out := make([]BatchResult, len(reqs))
	if c.closed.Load() {
		for i := range out {
			out[i].Err = ErrClosed
		}
		return out
	}
	sem := make(chan struct{}, c.batchConc)
	var wg sync.WaitGroup
	for i := range reqs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			for k := i; k < len(reqs); k++ {
				out[k].Err = ctx.Err()
			}
			wg.Wait()
			return out
		}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			out[i].Result, out[i].Err = c.Translate(ctx, reqs[i])
		}(i)
	}
	wg.Wait()
	return out
}

// EngineStatus is a snapshot of one engine's standing.
type EngineStatus struct {
	Name      string
	Breaker   BreakerState // BreakerClosed, BreakerOpen, BreakerHalfOpen
	Pool      Pool         // PoolNormal, PoolFallback, PoolMaintenance
	Health    float64      // availability 0..1 over the recent window
	Score     float64      // current routing score 0..100 (SceneGeneral)
	QuotaLeft int64        // standard characters left this period; -1 when unlimited
	// SetAside is true once the engine answered Unauthorized: it is not used again by this
	// Client.
	SetAside bool
	// LatencyEWMA is the engine's recent latency as the router sees it.
	LatencyEWMA time.Duration
}

// Engines returns a snapshot of every engine's standing, in the order they were given.
func (c *Client) Engines() []EngineStatus {
	now := c.now()
	c.maybeFold(now)
	out := make([]EngineStatus, len(c.engines))
	for i, e := range c.engines {
		v := e.view.Load()
		pool := v.pool
		if e.prof.FallbackOnly {
			pool = PoolFallback
		}
		if e.has(flagMaintenance) {
			pool = PoolMaintenance
		}
		left := e.q.Left(now)
		if now < e.outUntil.Load() && left != 0 {
			left = 0
		}
		out[i] = EngineStatus{Name: e.name, Breaker: e.br.worst(), Pool: pool, Health: v.avail,
			Score: v.score[SceneGeneral], QuotaLeft: left, SetAside: e.has(flagSetAside), LatencyEWMA: v.ewma}
	}
	return out
}

// Close stops background work (probes) and waits for it. Later calls return ErrClosed.
// Close is idempotent and always returns nil.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		close(c.stop)
		c.wg.Wait()
		c.obs.close()
	})
	return nil
}
