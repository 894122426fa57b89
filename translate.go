package translate

import (
	"context"
	"errors"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/fanyi-go/translate/internal/clock"
	"github.com/fanyi-go/translate/internal/deadline"
	"github.com/fanyi-go/translate/internal/gate"
	"github.com/fanyi-go/translate/internal/lang"
	"github.com/fanyi-go/translate/internal/quota"
	"github.com/fanyi-go/translate/internal/reqid"
	"github.com/fanyi-go/translate/internal/runes"
)

// Request is one text to translate. Only Text and Target are required.
type Request struct {
	Text     string
	Source   string   // BCP 47 tag; "" means detect
	Target   string   // BCP 47 tag; required
	Scene    Scene    // SceneGeneral (default), SceneTech, SceneLegal, SceneEcommerce, SceneChat
	Style    Style    // StyleDefault, StyleFormal, StyleCasual
	Priority Priority // PriorityNormal (default), PriorityHigh
	UserID   string   // stable routing for canaries and sticky routing; at most 512 bytes
	// RequestID is an idempotency key; generated when empty. Within 10s (RequestWindow) a
	// request with the same id and the same text, languages, scene and style gets its first
	// answer, or its first failure when that may have been billed (a timeout, bad output, a
	// canceled call), and never reaches an engine that may have billed it; a failure that
	// certainly cost nothing (such as a 429 or 503) is retried. An id reused with another
	// text, language, scene or style is a new request: it never gets the first one's answer.
	// Nor does one reused pinned to another engine or limited to regions the first answer
	// was not made in: it goes to the engines the id has not reached. At most 512 bytes.
	RequestID     string
	Engine        string // pin one engine by name; "" lets the router choose
	AllowFallback bool   // with Engine set: may other engines be used if it fails
	NoCache       bool   // neither read nor write the cache
	// Regions lists the processing regions allowed for this text (Profile.Region values).
	// Empty means any. It is a hard filter: no engine outside them serves the request,
	// fallback engines included.
	Regions []string
	// Tenant names whose budget the request spends (Budget.Tenants): "" is the default
	// tenant, and a tenant without a budget of its own spends the Client's only. At most 64
	// ASCII letters, digits and - _ . : @ /; anything else is KindInvalidInput.
	Tenant string
	// Format is what Text is: FormatText (default), FormatHTML or FormatXML. Markup is
	// kept: an engine that takes the format natively (Profile.Native) gets it as is, any
	// other gets the tags masked; either way the structure is checked on the way back
	// (package fidelity says what is protected). Placeholders (WithPlaceholders) are
	// protected in every format.
	Format Format
	// Glossary names the glossary (WithGlossaries, Config.Glossaries) for the request's
	// pair; "" means the pair's default glossary, if one is set, and NoGlossary ("-")
	// none. Its terms are enforced and checked: an answer that misses one fails over. A
	// named glossary needs a Source; a request that detects its source gets no default.
	Glossary string
}

// Result is a translation and how it was made. Treat it as read-only: a fresh cache hit
// returns the cache entry's Result, shared by every caller that hits it.
type Result struct {
	Text   string
	Engine string // engine that produced the text, for cache hits too ("a+b": segments from several)
	Source string // detected or given source tag
	// Latency is end to end, as seen by Translate. It is 0 for a fresh cache hit, which takes
	// a fraction of a microsecond and reads no clock.
	Latency   time.Duration
	Cost      float64 // credits charged for this request
	FromCache bool
	Degraded  bool // served by a degradation path: stale cache, a fallback-only engine or a fuzzy memory match
	// FromMemory: the text came from the translation memory (WithMemory); for a document,
	// every segment did.
	FromMemory bool
	// RequestID is the request's RequestID, or one generated when the request had none. A
	// fresh cache hit without a RequestID of its own gets the cache entry's id, generated when
	// the entry was stored and shared by every such hit.
	RequestID string
	Attempts  []Attempt // every engine call, and every chosen engine skipped at call time, in order
	// Glossary is the revision (glossary.Glossary.Revision) of the glossary whose terms
	// the text holds: the pinned terminology revision, part of the cache key. "" for none.
	Glossary string
	// MemoryScore is, with FromMemory, the match's similarity: 1 for exact, the lowest of its
	// segments' for a document.
	MemoryScore float64
	// Segments says where each segment of a document came from (WithMemory); nil for a
	// text translated as one.
	Segments []Segment
}

// Attempt is one engine call made for a request, or one chosen engine skipped at call time
// (rate limited or saturated), in which case Latency is 0 and Err says why.
type Attempt struct {
	Engine  string
	Latency time.Duration
	Err     error // nil for the successful attempt
}

// Client translates through its engines. It is safe for concurrent use; create it with New
// and Close it when done.
type Client struct {
	cfg       atomic.Pointer[setup] // the running configuration
	mu        sync.Mutex            // serialises a configuration swap and folds
	reconf    sync.Mutex            // serialises Reconfigure
	reload    reloadOptions         // New's options around its WithConfig, for Reconfigure
	clock     Clock
	seed      uint64
	seeded    bool // WithSeed given: draws come from the seeded sequence
	rng       [rngStripes]rngStripe
	coarse    *clock.Coarse // the system clock, coarse; nil with an injected Clock
	born      time.Time     // time.Now at New: the origin of startTime's readings
	hashSeed  maphash.Seed
	langs     *lang.Cache
	budget    *quota.Tenants
	cache     *cache // nil: off
	flights   flights
	seen      seen
	nextFold  atomic.Int64
	lastFold  atomic.Int64
	obs       *observer
	scratch   sync.Pool     // *scratch
	spreads   atomic.Uint64 // scratches made: the last one's spread (the first's is 1)
	batchConc int
	probing   atomic.Bool   // the probe loop runs
	wake      chan struct{} // a recovery probe is due (probe.go); made in New
	hedge     hedgeTokens
	runner    *deadline.Runner // runs engine calls, so that requests keep their deadline
	gate      *gate.Gate       // closed while Reconfigure works: new requests wait (reconfigure.go)
	store     Store
	mem       *tmem // the translation memory; nil: off (memory.go)
	// sharedSpent is the shared budget's spend as the Store last reported it (float64 bits).
	sharedSpent atomic.Uint64
	ramps       rampState // canary analysis: the baseline and the OnCanaryStep listeners (ramp.go)

	closed    atomic.Bool
	closeOnce sync.Once
	stop      chan struct{}
	wg        sync.WaitGroup
	repace    chan struct{} // the probe interval may have changed (probe.go); made in New
}

// New returns a Client over the engines given with WithEngine. It returns an error naming the
// field for a bad configuration: no engines, two engines with one name, a Profile value out
// of range, weights outside their bounds, a breaker FailureRatio outside 0.2..0.9.
func New(opts ...Option) (*Client, error) {
	o, reload := applyOptions(opts)
	if err := o.validate(); err != nil {
		return nil, err
	}
	c := &Client{
		clock: o.clock, seed: o.seed, seeded: o.seeded, reload: reload,
		hashSeed: maphash.MakeSeed(), langs: lang.NewCache(), budget: quota.NewTenants(budgetLimits(o.budget)),
		batchConc: o.batchConcurrency, store: o.store, stop: make(chan struct{}), seen: newSeen(),
		born: time.Now(),
	}
	c.runner = deadline.NewRunner(c.stop)
	c.gate = gate.New(reconfigureHold)
	if !o.noCache {
		c.cache = newCache(o.cacheEntries, int64(o.cacheTTL))
	}
	if o.memory != nil {
		m, err := newMemory(o.memory)
		if err != nil {
			return nil, err
		}
		c.mem = m
	}
	obs, err := newObserver(c, o)
	if err != nil {
		return nil, err
	}
	c.obs = obs
	s, err := c.buildSetup(o, nil)
	if err != nil {
		obs.close(nil)
		return nil, err
	}
	if _, sys := o.clock.(systemClock); sys {
		c.coarse = clock.NewCoarse(clock.DefaultTick)
	}
	start := c.clock.Now().UnixNano()
	c.nextFold.Store(start + int64(s.routing.HealthEvery))
	c.lastFold.Store(start)
	c.discoverLanguages(s)
	c.cfg.Store(s)
	c.startProbes()
	return c, nil
}

// stopClock stops the coarse clock, if the Client runs one.
func (c *Client) stopClock() {
	if c.coarse != nil {
		c.coarse.Stop()
	}
}

// startTime returns the time a request starts at, for its latency and deadlines: the
// monotonic clock now (one read, against time.Now's two, which with kvm-clock cost 58 ns
// against 31 on the machines we measure on), and as its wall clock the Client's start plus
// the monotonic time elapsed since, like the coarse clock's: it does not follow steps of
// the wall clock made since New. Latencies, and deadlines compared with time.Now or with a
// context's (which carry a monotonic reading), are exact.
func (c *Client) startTime() time.Time { return c.born.Add(time.Since(c.born)) }

// now returns the Client's clock reading in unix nanos: the coarse clock for the system
// clock, the injected Clock otherwise.
func (c *Client) now() int64 {
	if c.coarse != nil {
		return c.coarse.Now()
	}
	return c.clock.Now().UnixNano()
}

// Translate translates one text. It validates the request (KindInvalidInput at once for a
// bad one), answers from the cache when it can, and otherwise routes it through the engines
// with retries and failover inside one deadline. It never returns the source text as a
// translation: when the normal engines fail it tries the last-resort engines, then a stale
// cache entry (both Degraded), then returns a *Error listing every attempt. When ctx ends
// the request it returns ctx's error, as a *Error listing the attempts: KindTimeout wrapping
// context.DeadlineExceeded when ctx's deadline passed, KindCanceled wrapping context.Canceled
// when ctx was canceled. It returns by the deadline (or ctx's) plus 20ms whatever the
// engines do.
func (c *Client) Translate(ctx context.Context, req Request) (*Result, error) {
	if c.mem != nil {
		if res, err, ok := c.translateDocument(ctx, &req); ok {
			return res, err
		}
	}
	return c.do(ctx, &req, nil)
}

// do is Translate with an optional sink that receives a streaming engine's partial text
// (TranslateStream). The request is prepared on the stack: a fresh cache hit takes nothing
// from the scratch pool and allocates nothing. Only a request that goes on to the engines
// takes a pooled scratch, where the request and its walk live.
func (c *Client) do(ctx context.Context, req *Request, sink *streamSink) (*Result, error) {
	return c.doAvoiding(ctx, req, sink, "")
}

// doAvoiding is do for a request that must not go to the engine named avoid (a packed text
// that came back bad from it); "" avoids none.
func (c *Client) doAvoiding(ctx context.Context, req *Request, sink *streamSink, avoid string) (*Result, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	now := c.now()
	var head request
	if c.gate.Closed() { // a Reconfigure under way: wait for its configuration, on the clock
		head.t0 = c.startTime()
		c.gate.Wait(ctx)
	}
	c.maybeFold(now)
	if err := c.prepareKey(req, &head); err != nil {
		return nil, c.refuse(ctx, &head, err)
	}
	var stale *cacheEntry
	if head.RequestID == "" { // a request with an id of its own looks at its id first
		var hit *Result
		var looked bool
		if stale, hit, looked = c.peek(&head, now); hit != nil {
			c.obs.freshHit(ctx, &head, hit) // counts the lookup too
			return hit, nil
		} else if looked {
			c.obs.cacheLookup(false)
		}
	}
	if err := c.finish(&head, now); err != nil {
		return nil, c.refuse(ctx, &head, err)
	}
	ctx, span := c.obs.requestStart(ctx, &head.t0)
	sc := c.getScratch(len(head.s.engines))
	defer c.putScratch(sc)
	r := &sc.r
	*r = head
	r.sink, r.avoid, r.spread = sink, avoid, sc.spread
	res, err := c.translate(ctx, r, now, sc, stale)
	var d time.Duration
	switch {
	case res != nil:
		d = res.Latency
	case !r.t0.IsZero():
		d = time.Since(r.t0)
	}
	c.obs.requestEnd(ctx, span, r, res, err, d)
	return res, err
}

// refuse records a request refused before it reached the cache or the engines, and
// returns err.
func (c *Client) refuse(ctx context.Context, r *request, err error) error {
	ctx, span := c.obs.requestStart(ctx, nil)
	c.obs.requestEnd(ctx, span, r, nil, err, 0)
	return err
}

// translate answers a validated request that was no fresh cache hit (stale is the cache's
// stale entry for it, if any): from the request id's first answer, the cache, an identical
// request in flight, or the engines. A request with a RequestID of its own is looked up
// here, after its id.
func (c *Client) translate(ctx context.Context, r *request, now int64, sc *scratch, stale *cacheEntry) (*Result, error) {
	if r.t0.IsZero() { // set when the request waited for a Reconfigure
		r.t0 = c.startTime()
	}
	if r.RequestID != "" {
		if p, ok := c.seen.lookup(r.RequestID, r.hash, now); ok {
			if p.res != nil && r.replayable(p.res) {
				return c.reuse(p.res, r.RequestID, r.t0), nil
			}
			r.prior = &p
		}
		var hit *Result
		if stale, hit = c.lookup(r, now); hit != nil {
			return hit, nil
		}
	}
	if hit := c.memoryHit(ctx, r, r.t0); hit != nil {
		return hit, nil
	}
	b, led, g := c.joinFlight(r)
	if g != nil {
		if res, err, done := c.follow(ctx, r, g); done {
			return res, err
		}
		b = c.newResult(r.RequestID) // the leader's caller gave up; this caller runs alone
	}
	res, err := c.run(ctx, r, b, stale, now, sc)
	if led != nil {
		c.flights.land(r, led, res, err)
	}
	c.remember(r, res, err, sc.j.by, now)
	return res, err
}

// joinFlight returns the buffer of r's Result and, when r leads a flight that identical
// requests may join, that flight (led, in the same allocation as the Result, which its
// followers read after r returned); or, when r is to wait for the identical request in
// flight, that one's flight (follow) and no buffer. A request that makes its own call even
// if it meets an identical one (see instant) leads no flight: with at most instantScan
// engines to read (or one pinned engine) it knows before joining, leaves the flights' table
// alone, whose slot every identical request would write, and allocates its Result without
// a flight (a third fewer bytes); otherwise only a request that met another reads its
// engines.
func (c *Client) joinFlight(r *request) (b *resultBuf, led, follow *flight) {
	few := len(r.s.engines) <= instantScan || (r.pinned != nil && !r.AllowFallback)
	if r.tgt.FullID == 0 || few && c.instant(r) { // see flightKey
		return c.newResult(r.RequestID), nil, nil
	}
	fb := c.newFlightResult(r.RequestID)
	f, lead := c.flights.join(r, &fb.fl)
	switch {
	case lead:
		return &fb.resultBuf, f, nil
	case !few && c.instant(r):
		return &fb.resultBuf, nil, nil // fb.fl is not in the table: nobody reads it
	}
	return nil, nil, f
}

// instantScan is how many engines' trust a request reads before joining a flight: about what
// the Join and Land it may save cost (BenchmarkFlightsJoinLand, 35 ns with no contention;
// with two cores on one hot text, each request writes the same table slot twice).
const instantScan = 4

// instant reports whether r, which may meet an identical request in flight, makes its own
// engine call rather than wait for that one's answer. It does when r has no RequestID of its own (an
// id reaches an engine once: see Request.RequestID) and every engine it may go to (the
// pinned one without fallback, else every engine of the configuration) runs its calls
// inline, having earned it: deadline.Trust, its last 64 calls each returned within 500 µs
// and one within the last 10 ms, and it honours its context. Such an engine computes its
// answer in process: a call of it costs less than parking a goroutine and waking it, and
// bills no vendor. Any other engine (an HTTP engine's calls take milliseconds and may be
// billed) keeps identical requests to one call. It reads engines' trust until one is not
// instant: one read when the first engine calls over the network.
func (c *Client) instant(r *request) bool {
	if r.RequestID != "" {
		return false
	}
	at := deadline.At(r.t0)
	if r.pinned != nil && !r.AllowFallback {
		return r.pinned.instant(at)
	}
	for _, e := range r.s.engines {
		if !e.instant(at) {
			return false
		}
	}
	return true
}

// instant reports whether e's calls starting at at (see deadline.Now) run inline because
// they compute in process (deadline.Trust.Instant): an engine that earned inline calls by
// heeding its context waits on a network and keeps identical requests to one call.
func (e *engine) instant(at int64) bool {
	return e.trust.Instant(at) && !e.has(flagIsolate)
}

// lookup returns a fresh cache hit, or the stale entry to fall back on, and counts the
// lookup.
func (c *Client) lookup(r *request, now int64) (stale *cacheEntry, hit *Result) {
	stale, hit, looked := c.peek(r, now)
	if looked {
		c.obs.cacheLookup(hit != nil)
	}
	return stale, hit
}

// peek is lookup without counting: looked reports whether r could read the cache.
func (c *Client) peek(r *request, now int64) (stale *cacheEntry, hit *Result, looked bool) {
	if !c.cacheable(r) {
		return nil, nil, false
	}
	e, fresh := c.cache.get(r, now)
	switch {
	case e == nil:
	case r.pinned != nil && !r.AllowFallback && e.engine != r.pinned.name:
		e = nil // a no-fallback pin takes only its own engine's text
	case len(r.Regions) > 0 && !e.allows(r.Regions):
		e = nil // nor does a request limited to regions take text made outside them
	}
	if e != nil && fresh {
		return nil, e.hit(r.RequestID), true
	}
	return e, nil, true
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

// run walks a request through the engines and builds its Result.
func (c *Client) run(ctx context.Context, r *request, b *resultBuf, stale *cacheEntry, now int64, sc *scratch) (*Result, error) {
	res := &b.Result
	r.id = res.RequestID
	start, end := deadline.Span(ctx, r.t0, r.s.deadline) // r.s.deadline: at most an hour (options.validate)
	w := walk{c: c, ctx: ctx, r: r, stale: stale, plan: planFor(r), attempts: res.Attempts,
		deadline: end, now: now, start: start, ended: start, sc: sc}
	if p := r.prior; p != nil {
		w.tried, w.skipErr = p.sentTo(), p.err
	}
	sc.part[0] = r.Text
	j := &sc.j // zero (getScratch): set field by field, not built on the stack and copied over
	j.split.Parts, j.split.Seps = sc.part[:], sc.sep[:]
	j.out, j.by = sc.out[:0], sc.eng[:0]
	w.j = j
	if r.fid != nil {
		sc.j.fid = &contentJob{c: r.fid, src: r.Text}
		res.Glossary = r.revision()
	}
	if res, err, long := w.runLong(res); long {
		return res, err
	}
	err := w.run()
	res.Attempts = w.attempts
	if err != nil {
		return c.memoryDegrade(ctx, r, res, err, r.t0)
	}
	return w.result(res)
}

// result fills res from a finished walk: the stitched text of the engines, or the stale
// entry.
func (w *walk) result(res *Result) (*Result, error) {
	if a := w.stored; a != nil {
		res.Text, res.Source, res.Engine, res.FromCache = a.Text, a.Source, a.Engine, true
		res.Latency = time.Duration(deadline.Now() - w.start)
		return res, nil
	}
	if w.stage == stageStale {
		return w.serveStale(res, w.stale), nil
	}
	text, err := w.j.text()
	if err != nil {
		return nil, &Error{Kind: KindBadOutput, Message: "stitching segments: " + err.Error(), Attempts: w.attempts}
	}
	res.Text, res.Engine, res.Cost = text, w.j.by[0], w.j.cost
	if len(w.j.by) > 1 {
		res.Engine = strings.Join(w.j.by, "+")
	}
	res.Degraded = w.degraded()
	res.Source = w.sourceOf(w.r)
	res.Latency = time.Duration(w.ended - w.start) // the last action was the successful call
	return res, nil
}

// serveStale fills res from the stale entry st: the answer when every engine failed.
func (w *walk) serveStale(res *Result, st *cacheEntry) *Result {
	res.Text, res.Source, res.Engine = st.res.Text, st.res.Source, st.engine
	res.FromCache, res.Degraded = true, true
	res.Latency = time.Duration(deadline.Now() - w.start)
	w.c.obs.degraded(howStaleCache)
	return res
}

// degraded reports whether the walk's answer came from a degradation stage (a fallback or
// last-resort engine), and counts it.
func (w *walk) degraded() bool {
	d := w.stage.degraded()
	if d {
		w.c.obs.degraded(howFallbackEngine)
	}
	return d
}

// sourceOf is the source language of r's answer: r's own when it names one, else the one
// the engine detected.
func (w *walk) sourceOf(r *request) string {
	switch {
	case r.src != nil:
		return r.src.Canon
	case w.j.srcTag != "":
		return w.j.srcTag
	}
	return r.Source
}

// EngineStatus is a snapshot of one engine's standing.
type EngineStatus struct {
	Name    string
	Breaker BreakerState // BreakerClosed, BreakerOpen, BreakerHalfOpen
	Pool    Pool         // PoolNormal, PoolFallback, PoolMaintenance
	// Health is the engine's availability 0..1 over the recent window, including the calls
	// since the last fold: failures show at once (routing moves only at folds).
	Health    float64
	Score     float64 // current routing score 0..100 (SceneGeneral)
	QuotaLeft int64   // standard characters left this period; -1 when unlimited
	// SetAside is true once the engine answered Unauthorized: it gets no traffic until a key
	// check passes (one probe a minute while requests flow: a key function that now returns
	// a key the vendor accepts brings it back within 70s) or Reconfigure replaces it.
	SetAside bool
	// LatencyEWMA is the engine's recent latency as the router sees it: 300ms before any
	// successful call, the mean of the first fold's (HealthEvery) successful calls after it,
	// then moved 30% of the way to each later fold's mean.
	LatencyEWMA time.Duration
	// Canary is the share of UserIDs, in percent, the engine serves as a canary now: its
	// ramp's (Profile.Ramp) or its profile's Canary; 0 for an engine that is not a canary.
	Canary float64
}

// Engines returns a snapshot of every engine's standing, in the order they were given.
func (c *Client) Engines() []EngineStatus {
	now := c.now()
	c.maybeFold(now)
	engines := c.cfg.Load().engines
	out := make([]EngineStatus, len(engines))
	for i, e := range engines {
		v := e.view.Load()
		left := e.q.Left(now)
		if now < e.outUntil.Load() && left != 0 {
			left = 0
		}
		out[i] = EngineStatus{Name: e.name, Breaker: e.br.worst(), Pool: e.pool(), Health: liveHealth(e, now),
			Score: v.score[SceneGeneral], QuotaLeft: left, SetAside: e.has(flagSetAside), LatencyEWMA: v.ewma}
		if e.canary {
			out[i].Canary = e.canaryShare()
		}
	}
	return out
}

// pool is the pool an engine stands in.
func (e *engine) pool() Pool {
	switch {
	case e.has(flagMaintenance):
		return PoolMaintenance
	case e.prof.FallbackOnly:
		return PoolFallback
	}
	return e.view.Load().pool
}

// Close stops background work (probes, the coarse clock), cancels probes in flight and
// waits for the Client's goroutines; engine calls that ignore their context are left to
// finish on their own. Later calls return ErrClosed. Close is idempotent and returns nil.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		close(c.stop)
		c.wg.Wait()
		c.stopClock()
		c.obs.close(c.cfg.Load())
	})
	return nil
}

// untilClose runs run on a goroutine of its own, under a context that ends when the Client
// closes; Close waits for it to return.
func (c *Client) untilClose(run func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		<-c.stop
		cancel()
	}()
	go func() {
		defer c.wg.Done()
		defer c.contain() // a Store's WatchHolds, say, must not end the process (probe.go)
		run(ctx)
	}()
}

// maxTextBytes bounds one request's text.
const maxTextBytes = 1 << 20

// prepare validates and normalises a request (step 1 of the design): KindInvalidInput at
// once for a bad one.
func (c *Client) prepare(req *Request, r *request, now int64) error {
	if err := c.prepareKey(req, r); err != nil {
		return err
	}
	return c.finish(r, now)
}

// prepareKey validates a request and computes its cache key: every check that refuses a
// request runs here, before the cache is looked at, so a request is refused whether or
// not its key is cached. What only a request that goes on to the engines needs is left to
// finish.
func (c *Client) prepareKey(req *Request, r *request) error {
	r.Request = *req
	r.s = c.cfg.Load()
	if err := checkFields(req); err != nil {
		return err
	}
	chars, blank, valid := runes.Scan(req.Text)
	switch {
	case blank:
		return invalid("Text is empty")
	case len(req.Text) > maxTextBytes:
		return &Error{Kind: KindTextTooLong, Message: "Text exceeds 1 MiB"}
	case !valid:
		return invalid("Text is not valid UTF-8")
	}
	if err := c.prepareLangs(req, r); err != nil {
		return err
	}
	if req.Engine != "" {
		e, ok := r.s.byName[req.Engine]
		if !ok {
			return invalid("unknown Engine " + quoted(req.Engine))
		}
		r.pinned = e
	}
	r.chars = chars
	r.key = r.keyFields()
	if err := c.contentKey(req, r); err != nil {
		return err
	}
	r.hash = r.key.hash(maphash.String(c.hashSeed, req.Text))
	if r.tgt.FullID == 0 { // no id for the full target (lang.MaxFullIDs): its key says nothing of it
		r.hash = mix(r.hash ^ maphash.String(c.hashSeed, r.tgt.Full))
	}
	return nil
}

// finish completes a request prepareKey accepted, for the engines: its content pipeline,
// the hashes routing and flights use, its tenant's budget and economy mode. A fresh cache
// hit needs none of it.
func (c *Client) finish(r *request, now int64) error {
	if err := c.prepareContent(r); err != nil {
		return err
	}
	if r.UserID != "" {
		r.userHash = maphash.String(c.hashSeed, r.UserID)
	}
	r.regions = regionsHash(c.hashSeed, r.Regions)
	r.tenant = c.budget.Tenant(r.Tenant)
	if r.Priority != PriorityHigh {
		r.economy = c.budgetFraction(r, now) >= r.s.economyAt || r.s.peak(now)
	}
	return nil
}

// checkFields checks the fields that need no parsing.
func checkFields(req *Request) error {
	switch {
	case req.Target == "":
		return invalid("Target is required")
	case req.Scene > SceneChat:
		return invalid("unknown Scene")
	case req.Style > StyleCasual:
		return invalid("unknown Style")
	case req.Priority > PriorityHigh:
		return invalid("unknown Priority")
	case !validTenant(req.Tenant):
		return invalid("Tenant " + tenantRule)
	case len(req.RequestID) > maxIDBytes:
		return invalid("RequestID is longer than 512 bytes")
	case len(req.UserID) > maxIDBytes:
		return invalid("UserID is longer than 512 bytes")
	}
	return nil
}

// prepareLangs normalises the request's language tags.
func (c *Client) prepareLangs(req *Request, r *request) error {
	src, tgt, err := c.langs.LookupPair(req.Source, req.Target)
	switch {
	case err != nil && errors.Is(err, lang.ErrTooManyLanguages):
		return invalid("the Client has seen " + err.Error()) // each is remembered for good
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
	return nil
}

func invalid(msg string) error { return &Error{Kind: KindInvalidInput, Message: msg} }

// maxIDBytes bounds Request.RequestID and Request.UserID: ids a request carries into span
// attributes, logs and the request-id store.
const maxIDBytes = 512

// quoted is a caller's name quoted for an error, cut to its first 64 bytes: a name is no
// longer checked than that, and a 1 MiB name would make a 1 MiB error.
func quoted(name string) string {
	if len(name) <= 64 {
		return strconv.Quote(name)
	}
	cut := 64
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return strconv.Quote(name[:cut]) + "…"
}

// runeCount counts code points: the standard characters quotas and costs are counted in.
func runeCount(s string) int { return runes.Count(s) }

// resultBuf is a Result allocated together with its first attempts and its request id, so
// a request costs one allocation for its answer (240 bytes).
type resultBuf struct {
	Result
	att [1]Attempt
	id  [32]byte
}

// flightBuf is a resultBuf with the flight identical requests share, for a request that
// leads one (352 bytes).
type flightBuf struct {
	resultBuf
	fl flight
}

func (c *Client) newResult(reqID string) *resultBuf {
	b := &resultBuf{}
	b.init(reqID)
	return b
}

func (c *Client) newFlightResult(reqID string) *flightBuf {
	b := &flightBuf{}
	b.init(reqID)
	return b
}

func (b *resultBuf) init(reqID string) {
	b.Attempts = b.att[:0]
	b.RequestID = requestID(reqID, &b.id)
}

// requestID returns id, or a new random 128-bit id written in hex into buf.
func requestID(id string, buf *[32]byte) string { return reqid.Or(id, buf) }

// scratch is what a request needs only while it runs: the first attempt's engine request,
// call and context, the text as one part, and the candidate buffer. It is pooled.
type scratch struct {
	req       EngineRequest
	call      deadline.Call // the first attempt's, with its context
	job       engineCall
	wait      deadline.Waiter
	fresh     bool // req, call and job are free for the next attempt
	reusable  bool // no engine may still hold req or dctx
	part, sep [1]string
	out, eng  [1]string
	cands     []candidate
	callStart int64 // when the walk's last call started, on deadline.Now's clock
	r         request
	j         job
	// spread picks the stripe of the counters a request adds to (health, pair quality, the
	// canary baseline): fixed per scratch, and so per processor (sync.Pool keeps a scratch
	// on the P that put it back), consecutive over the scratches a Client makes. Two cores
	// serving one hot text add to different stripes; keyed by the text's hash, they would
	// share one line (TestOneTextSpreadsOverStripes).
	spread uint64
}

// getScratch returns a scratch from the Client's pool, with room for a decision over n
// engines: its candidate buffer never grows during a request. Its r, j, req and job are
// zero (putScratch clears them).
func (c *Client) getScratch(n int) *scratch {
	s, ok := c.scratch.Get().(*scratch)
	if !ok {
		s = &scratch{spread: c.spreads.Add(1)} // not 0: a request's spread 0 is none
	}
	if cap(s.cands) < n {
		s.cands = make([]candidate, 0, max(n, 8))
	}
	s.fresh, s.reusable = true, true
	return s
}

// take returns the preallocated engine request, call and job for the first attempt; later
// attempts get new ones (nil).
func (s *scratch) take() (*EngineRequest, *deadline.Call, *engineCall) {
	if !s.fresh {
		return nil, nil, nil
	}
	s.fresh = false
	return &s.req, &s.call, &s.job
}

// giveBack releases an attempt's context; the scratch stays reusable only if the first
// attempt's context can hold nothing that runs on (see deadline.Context.Release; an
// abandoned call makes it not reusable in invoke).
func (s *scratch) giveBack(dc *deadline.Call) {
	if reusable := dc.Ctx.Release(); dc == &s.call && !reusable {
		s.reusable = false
	}
}

// putScratch returns s to the pool when no engine may still hold part of it.
func (c *Client) putScratch(s *scratch) {
	if !s.reusable {
		return
	}
	// One clear a statement: a tuple assignment of zero values builds them on the stack and
	// copies them over (four times the instructions).
	s.req = EngineRequest{}
	s.job = engineCall{}
	s.r = request{}
	s.j = job{}
	s.part[0], s.out[0], s.eng[0] = "", "", "" // candidates hold no pointers: nothing to clear
	c.scratch.Put(s)
}
