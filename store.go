package translate

import (
	"context"
	"time"

	"github.com/fanyi-go/translate/fidelity/memory"
	"github.com/fanyi-go/translate/internal/recovery"
)

// HoldStore is a Store that also shares engine outages (seed 003 §6): an engine that one
// Client finds down (its breaker opened, the vendor refused its quota or its key) is held
// out on every Client of the store within about a second, recovery probes for it run on one
// Client at a time, and one that passes ends the hold for all. Breakers stay in each
// Client: a hold takes the engine out of routing without touching them. A Client finds a
// HoldStore by type assertion on its Store; redisstore implements it.
type HoldStore interface {
	Store
	// WatchHolds calls apply with every hold in force on the engines that engines() names
	// (the running configuration's), each time it has read them, until ctx ends; the Client
	// runs it on a goroutine of its own, and Close waits for it to return. An engine missing
	// from a reading is not held. While the shared state cannot be read it calls nothing:
	// the Client then keeps what it knew until each hold ends.
	WatchHolds(ctx context.Context, engines func() []string, apply func([]EngineHold))
	// Unhold ends the engine's hold for every Client: a recovery probe passed.
	Unhold(ctx context.Context, engine string) error
	// ProbeLock takes the right to probe the engine for ttl: true for one Client of the
	// store at a time. An error means the store could not tell; the Client then probes as
	// it would alone.
	ProbeLock(ctx context.Context, engine string, ttl time.Duration) (bool, error)
}

// MemoryStore is a Store that also shares the translation memory's exact entries (see
// WithMemory) with every Client of the store: a text one replica's engine translated answers
// on every replica. A Client with WithMemory finds it by type assertion on its Store;
// redisstore implements it. The Client looks its own memory up first (exact, then fuzzy)
// and asks the store for an exact match only when its own has none; it keeps every
// translation an engine makes in both. Fuzzy matching stays in each Client: it compares a
// text with every entry of its language pair, which a shared store could only do by
// reading them all. The shared memory is an optimisation: its errors never fail a request.
type MemoryStore interface {
	Store
	// MemoryGet returns the entry kept for text from source to target: an exact match
	// only, with the languages compared case-insensitively and the text in NFC, as package
	// fidelity/memory compares them. found is false when there is none.
	MemoryGet(ctx context.Context, source, target, text string) (e memory.Entry, found bool, err error)
	// MemoryPut keeps e for every Client of the store, for a bounded time, replacing the
	// entry with the same languages and text; memory.ErrTooLarge for one it will not keep.
	MemoryPut(ctx context.Context, e memory.Entry) error
}

// CacheStore is a Store that tells whether it keeps a second-level cache. A Client hashes
// a request's content into Admission.CacheKey and Settlement.CacheKey only for a Store that
// is not a CacheStore or whose SharedCache reports true: for one without a cache that hash
// is work on every miss for nothing. redisstore implements it (true with WithCache).
type CacheStore interface {
	Store
	// SharedCache reports whether the Store keeps a second-level cache; the answer must not
	// change over the Store's life.
	SharedCache() bool
}

// sharesCache reports whether s may use a second-level cache key.
func sharesCache(s Store) bool {
	cs, ok := s.(CacheStore)
	return !ok || cs.SharedCache()
}

// EngineHold is an engine held out for every Client of a HoldStore until Until: Kind is
// KindUnavailable (a Client's breaker opened), KindQuotaExhausted or KindUnauthorized.
type EngineHold struct {
	Engine string
	Kind   Kind
	Until  time.Time
}

// Store is state that Clients on several replicas share: the daily budget, every engine's
// quota, request-id de-duplication, vendor-reported holds and, optionally, a second-level
// cache. Breakers and health stay in each Client: every replica sees its own network.
// redisstore implements it over Redis; without a Store (the default) every Client keeps its
// own state in process.
//
// A Client talks to its Store at most twice per engine call: Admit before it and Settle
// after it. Implementations must:
//
//   - be safe for concurrent use;
//   - return within ctx, which the Client bounds to a short timeout of its own, and spend
//     only what it leased ahead (redisstore's blocks) when the shared state cannot be
//     reached, never more; an error from Admit or Settle means the Store could decide
//     nothing at all, and the Client then refuses the call (it never spends blind);
//   - make Admit all-or-nothing: a refused admission reserves nothing;
//   - count a lease that is never settled (its holder died) as spent once LeaseTTL has
//     passed, because the call may have been sent;
//   - keep every key bounded: budgets and quotas expire with their period, request ids after
//     RequestWindow, cache entries after their TTL.
type Store interface {
	// Admit runs before one engine call. In one atomic step it looks the request up in the
	// second-level cache (CacheKey), checks whether the request id already reached the
	// engine (RequestID), checks the engine's holds, and reserves Credits of the daily budget
	// and Chars of the engine's quota. See Admitted for what it answers.
	Admit(ctx context.Context, a Admission) (Admitted, error)
	// Settle runs once for every granted admission, after the call: it charges what the
	// call cost (Credits and Chars, which may differ from what was reserved: the vendor's
	// own count) and frees the rest of the reservation; Sent false releases it all. It
	// remembers the Answer under the request id for RequestWindow and, when CacheKey is set
	// and the answer is a text, in the second-level cache.
	Settle(ctx context.Context, s Settlement) error
	// Hold takes an engine out for every Client of the store until until: the vendor said
	// its quota is exhausted (KindQuotaExhausted) or rejected the key (KindUnauthorized),
	// or, only on a HoldStore, the Client's breaker for the engine opened (KindUnavailable).
	Hold(ctx context.Context, engine string, kind Kind, until time.Time) error
	// Budget reports the shared daily budget on now's UTC day, for a limit of daily.
	Budget(ctx context.Context, now time.Time, daily float64) (BudgetStatus, error)
}

// BudgetStore is a Store that also shares monthly budgets and tenants' budgets: its Admit
// reserves Credits of every limit the Admission gives (Daily, Monthly, TenantDaily,
// TenantMonthly), all or nothing, and refuses with KindBudgetExceeded when any of them
// cannot cover it. redisstore.Store is one. New refuses a Store that is not a BudgetStore
// when the budget has Monthly or Tenants: their limits would hold in each Client alone.
type BudgetStore interface {
	Store
	// BudgetOf reports the shared budget of tenant ("" for the Client's) on now's UTC day
	// and UTC calendar month, for limits daily and monthly (0: unlimited; the month's
	// figures are reported only with a limit).
	BudgetOf(ctx context.Context, now time.Time, tenant string, daily, monthly float64) (BudgetStatus, error)
}

// RequestWindow is how long a request id is remembered: a request id reaches each engine at
// most once within it.
const RequestWindow = 10 * time.Second

// Admission is what one engine call asks of a Store.
type Admission struct {
	Now    time.Time // the Client's clock; days are UTC days, months UTC calendar months, quota periods align on the Unix epoch
	Engine string
	// RequestID is the caller's request id bound to the request's content: the id, "#" and
	// 32 hex digits of a SHA-256 of the text, languages, scene and style, the same in every
	// process; an id reused for other content is another id. "" skips de-duplication.
	RequestID string
	CacheKey  string // "" skips the second-level cache
	Credits   float64
	Daily     float64 // the daily budget; 0 means unlimited
	Monthly   float64 // the monthly budget (UTC calendar months); 0 means unlimited
	// Tenant is the request's tenant when it has a budget of its own (Budget.Tenants), ""
	// otherwise; Credits then count against TenantDaily and TenantMonthly (0: unlimited)
	// too. Only a BudgetStore honours Monthly and the tenant's limits.
	Tenant                     string
	TenantDaily, TenantMonthly float64
	Chars                      int64
	Quota                      int64 // the engine's quota in standard characters per QuotaPeriod; 0 means unlimited
	// QuotaPeriod is the engine's quota period (Profile.QuotaPeriod).
	QuotaPeriod time.Duration
	// LeaseTTL bounds how long the reservation holds when it is never settled; then it
	// counts as spent. The Client passes the attempt's timeout plus a margin.
	LeaseTTL time.Duration
}

// Admitted is a Store's answer to an Admission. Exactly one of these holds: Cached is set
// (a second-level cache hit; nothing reserved), Prior is set (the request id already
// reached the engine within RequestWindow; nothing reserved), Refused is set (nothing
// reserved), or Lease is set (granted: settle it).
type Admitted struct {
	Lease   string
	Cached  *StoredAnswer
	Prior   *StoredAnswer // Prior.Text == "" and Prior.Kind == KindUnknown: the first call has not answered yet
	Refused Kind          // KindBudgetExceeded, KindQuotaExhausted, KindUnauthorized, or KindUnavailable (the Store cannot tell whether the request id reached the engine); KindUnknown when not refused
	Until   time.Time     // for a refusal by a hold: when the hold ends
	// Spent is the day's budget spent and reserved after this admission (for economy mode);
	// QuotaLeft the engine's quota left (-1 when unlimited).
	Spent     float64
	QuotaLeft int64
	// MonthSpent, TenantSpent and TenantMonthSpent are, like Spent, the Client's month and
	// the tenant's day and month spent and reserved, for the limits the Admission gave.
	MonthSpent, TenantSpent, TenantMonthSpent float64
}

// StoredAnswer is what a Store remembers of an engine call: a text, or the Kind of its
// failure.
type StoredAnswer struct {
	Text   string
	Source string
	Engine string
	Kind   Kind // of the failure; meaningful only when Text is ""
}

// Settlement settles one granted admission.
type Settlement struct {
	Lease    string
	Now      time.Time
	Sent     bool    // the call may have reached the vendor: charge Credits and Chars
	Credits  float64 // what the call cost; may be more or less than reserved
	Chars    int64
	Answer   *StoredAnswer // remembered under the admission's RequestID; nil: nothing to remember
	CacheKey string        // with a text Answer: store it in the second-level cache
}

// BudgetStatus is a budget as a Client sees it (Client.Budget, Client.TenantBudget): the
// day's figures, and the month's when it has a monthly limit.
type BudgetStatus struct {
	Tenant   string  // "" for the Client's budget; else the tenant's own
	Daily    float64 // the limit; 0 means unlimited
	Spent    float64 // charged today
	Reserved float64 // held by calls in flight
	// Monthly is the monthly limit, 0 when unlimited; MonthSpent and MonthReserved are the
	// UTC calendar month's figures, reported only with a limit.
	Monthly       float64
	MonthSpent    float64
	MonthReserved float64
	Economy       bool // past Budget.EconomyAt of a limit: normal requests go to free engines first
}

// WithStore shares budget, quotas, request-id de-duplication, holds and (if the store has
// one) a second-level cache with every Client that uses the same store; a HoldStore shares
// engine outages too. Default: none; every Client keeps its state in process.
func WithStore(s Store) Option { return func(o *options) { o.store = s } }

// Budget reports the Client's budget, every tenant's spend included: the day's figures
// and the month's, the shared ones when the Client has a Store. See TenantBudget for a
// tenant's own.
func (c *Client) Budget() BudgetStatus { return c.budgetStatus(nil) }

// maxHold bounds how long a hold read from a Store keeps an engine out.
const maxHold = 400 * 24 * time.Hour

// holdStore is the Client's Store when it shares engine outages; nil otherwise.
func (c *Client) holdStore() HoldStore {
	hs, _ := c.store.(HoldStore)
	return hs
}

// startHoldWatch runs the HoldStore's watch until Close (in New).
func (c *Client) startHoldWatch() {
	hs := c.holdStore()
	if hs == nil {
		return
	}
	c.untilClose(func(ctx context.Context) { hs.WatchHolds(ctx, c.engineNames, c.applyHolds) })
}

// engineNames names the running configuration's engines, for the hold watch.
func (c *Client) engineNames() []string {
	s := c.cfg.Load()
	names := make([]string, len(s.engines))
	for i, e := range s.engines {
		names[i] = e.name
	}
	return names
}

// applyHolds takes what a HoldStore read as the engines' holds: each configured engine in
// it is out until its hold ends (the router sees it through offUntil, its breaker is left
// alone), any other is not held. An engine held down wakes the recovery prober.
func (c *Client) applyHolds(holds []EngineHold) {
	s := c.cfg.Load()
	now := c.now()
	down := false
	at := time.Unix(0, now)
	for _, e := range s.engines {
		until := int64(0)
		for _, h := range holds {
			if h.Engine == e.name && h.Kind != KindUnknown && h.Until.After(at) {
				until = now + int64(min(h.Until.Sub(at), maxHold))
				e.heldKind.Store(int32(h.Kind))
				down = down || h.Kind == KindUnavailable
			}
		}
		switch was := e.heldUntil.Load() > now; {
		case until > 0 && !was:
			c.obs.warn("engine held out for every replica of the store", e.name)
		case until == 0 && was:
			c.obs.warn("engine's shared hold ended", e.name)
		}
		e.setHeld(until)
	}
	if down {
		c.wakeRecovery()
	}
}

// setHeld sets when the engine's shared hold ends (0: none), keeping offUntil the later of
// outUntil, coolUntil and heldUntil.
func (e *engine) setHeld(until int64) {
	if e.heldUntil.Swap(until) == until {
		return
	}
	recovery.SetLatest(&e.offUntil, &e.outUntil, &e.coolUntil, &e.heldUntil)
}

// heldDown reports whether the engine is held out for every replica because a replica
// found it down: recovery probes bring it back (probe.go).
func (e *engine) heldDown(now int64) bool {
	return now < e.heldUntil.Load() && Kind(e.heldKind.Load()) == KindUnavailable
}

// shareDown holds e out on every replica while its breaker is open here, when the Store is
// a HoldStore and the breaker is the engine's (a scene's breaker speaks for its scene only).
func (c *Client) shareDown(e *engine) {
	if e.br.one == nil || c.holdStore() == nil {
		return
	}
	c.storeHold(e, KindUnavailable, e.br.one.OpenUntil())
}

// mayProbe reports whether this Client may probe e now: always, unless e is held for every
// replica and another Client of the HoldStore holds its probe lock.
func (c *Client) mayProbe(e *engine, now int64) bool {
	hs := c.holdStore()
	if hs == nil || now >= e.heldUntil.Load() {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	ok, err := hs.ProbeLock(ctx, e.name, max(recovery.HoldProbeEvery, e.prof.Timeout+leaseMargin))
	return ok || err != nil
}

// probePassedShared ends e's shared hold for every Client: a probe of it passed here.
func (c *Client) probePassedShared(e *engine) {
	hs := c.holdStore()
	if hs == nil || c.now() >= e.heldUntil.Load() {
		return
	}
	e.setHeld(0)
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	if err := hs.Unhold(ctx, e.name); err != nil {
		c.obs.warn("store unreachable: hold ended here only", e.name)
	}
}
