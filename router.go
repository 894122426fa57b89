package translate

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/fanyi-go/translate/internal/canary"
	"github.com/fanyi-go/translate/internal/deadline"
	"github.com/fanyi-go/translate/internal/health"
	"github.com/fanyi-go/translate/internal/lang"
	"github.com/fanyi-go/translate/internal/quota"
	"github.com/fanyi-go/translate/internal/score"
)

// engine is an Engine as one configuration (setup) has it: its profile and what follows
// from it, and the state the Client tracks about the engine, which it shares with the same
// engine in the configurations before and after (engineState).
type engine struct {
	*engineState
	s       *setup // the configuration the engine belongs to
	eng     Engine
	prof    Profile // defaults applied
	quality [len(sceneNames)]float64
	pairQ   *pairQuality // nil: no Profile.PairQuality
	cost    float64      // cost score 0..100
	langs   *lang.Set
	limiter *rate.Limiter // nil: unlimited; shared across configurations while RateLimit and Burst stay
	sem     chan struct{} // nil: unlimited; shared across configurations while MaxConcurrency stays
	br      breakers      // shared across configurations while the breaker policy stays
	q       *quota.Quota  // shared across configurations while QuotaPeriod stays
	// Profile facts the router reads on every decision, kept beside its other hot fields.
	quotaLimited bool // Quota > 0
	canary       bool // Canary > 0, Staged or Ramp
	fallback     bool // FallbackOnly
	free         bool // ClassFree or no price: costs no budget

	view *atomic.Pointer[view] // &s.hot[i].view: the router reads it beside the engine's other hot facts

	ramp *canary.Analysis // nil: no Profile.Ramp, or a staged engine at 0 (ramp.go)
}

// engineState is what the Client knows of an engine whatever its configuration: it lives as
// long as the engine stays in the Client's configurations (Reconfigure keeps it).
type engineState struct {
	*engineLive     // flags, offUntil and what filter reads of the live state, packed (hotEngine)
	idx         int // stable while the engine stays; the smallest free number when it came
	name        string
	nameHash    uint64
	tel         *engineTel
	h           health.Counters
	fold        foldState

	outUntil    atomic.Int64 // quota exhausted: out until this time (unix nanos)
	coolUntil   atomic.Int64 // Retry-After or vendor limits: out until this time (unix nanos)
	heldUntil   atomic.Int64 // held out for every replica by a HoldStore until (unix nanos; store.go)
	heldKind    atomic.Int32 // the Kind of that hold
	unsupported pairMemory   // pairs the engine said it does not take
	probeFails  atomic.Int32
	recoveryAt  atomic.Int64   // the last recovery probe (unix nanos; probe.go)
	abandoned   atomic.Int32   // isolated calls still running after their deadline
	trust       deadline.Trust // whether its calls may run inline (attempt.go)
	// pairs is the bad-output rate per language pair (quality.go); last, so that its 5KB
	// keep no hot field of the router away from the others.
	pairs health.Pairs
}

// engineLive is the part of an engine's live state that filter reads on every decision:
// small, and allocated in one slice for the engines a configuration brings, so that a miss
// among many engines reads it off a few cache lines instead of one pointer chase each. It
// is shared, like engineState, by every configuration the engine is in.
type engineLive struct {
	offUntil atomic.Int64  // the later of outUntil, coolUntil and heldUntil, for the router
	flags    atomic.Uint32 // flagSetAside, flagMaintenance, flagIsolate, flagLive
	// brOut counts the engine's breakers, in any configuration, that are not closed
	// (breaker.sync keeps it). It errs only towards more: a breaker a reconfiguration
	// dropped while it was open counts on, and filter then asks exclude, which knows.
	brOut atomic.Int32
	unsup atomic.Bool // set with the first of the engine's unsupported pairs (pairMemory.add)
}

// calm reports whether the engine is in service, every breaker of it closed, and no pair
// remembered as refused: nothing in its live state for exclude to weigh.
func (l *engineLive) calm(now int64) bool {
	return l.flags.Load()&flagsOut == 0 && now >= l.offUntil.Load() && l.brOut.Load() == 0 && !l.unsup.Load()
}

// hotEngine is what filter reads of one engine of a configuration (setup.hot, in the
// engines' order): its view, its live state and the profile facts a decision needs, in 32
// bytes, so that the engine itself is not touched while it has nothing to weigh.
type hotEngine struct {
	view  atomic.Pointer[view] // the engine's standing (engine.view points here)
	live  *engineLive
	langs *lang.Set // engine.langs
	idx   int32     // engineState.idx
	// plainW: the weight is the view's alone (no PairQuality, no quota); flagLive aside.
	plainW, canary, free bool
}

// fillHot copies e's facts into its hotEngine h (the view aside, which e stores there).
func (e *engine) fillHot(h *hotEngine) {
	h.live, h.langs, h.idx = e.engineLive, e.langs, int32(e.idx)
	h.plainW, h.canary, h.free = e.pairQ == nil && !e.quotaLimited, e.canary, e.free
}

// Engine flags: reasons an engine is out, or treated apart, until something changes.
const (
	flagSetAside    uint32 = 1 << iota // unauthorized: out until a key check passes or a reconfiguration
	flagMaintenance                    // failed probes: out until a probe passes
	flagIsolate                        // overran a deadline once: calls run apart (failover.go)
	flagLive                           // some pair's live standing is not clean (quality.go)
)

// flagsOut are the flags that keep an engine out of routing.
const flagsOut = flagSetAside | flagMaintenance

func (e *engine) has(flag uint32) bool { return e.flags.Load()&flag != 0 }

// set sets flag and reports whether it was clear.
func (e *engine) set(flag uint32) bool { return e.flags.Or(flag)&flag == 0 }

// clear clears flag and reports whether it was set.
func (e *engine) clear(flag uint32) bool { return e.flags.And(^flag)&flag != 0 }

// outFor takes the engine out until t (unix nanos) through field f (outUntil or coolUntil).
func (e *engine) outFor(f *atomic.Int64, t int64) {
	f.Store(t)
	score.RaiseTo(&e.offUntil, t)
}

// maxUnsupportedPairs bounds the pairs an engine's refusals are remembered for: the pairs
// come from user input, and past the bound the oldest memory is dropped.
const maxUnsupportedPairs = lang.MaxRemembered

// pairMemory remembers language pairs an engine refused, up to maxUnsupportedPairs; when
// full it starts over (the engine is asked again, and refuses again).
type pairMemory struct {
	lang.PairMemory
	mark *atomic.Bool // set with every pair remembered, for filter (engineLive.unsup); nil: none
}

func (p *pairMemory) add(src, tgt int) {
	p.Add(src, tgt)
	if p.mark != nil {
		p.mark.Store(true)
	}
}

func (e *engine) supports(src, tgt int) bool {
	if !e.langs.Has(tgt) || (src != 0 && !e.langs.Has(src)) {
		return false
	}
	return !e.unsupported.Has(src, tgt)
}

// fallbackOnly reports whether the engine serves only when the normal pool has failed.
func (e *engine) fallbackOnly(v *view) bool { return e.fallback || v.pool == PoolFallback }

// request is a validated, normalised Request.
type request struct {
	Request
	chars    int // code points of Text
	src, tgt *lang.Info
	srcID    int // 0: detect
	hash     uint64
	spread   uint64 // the scratch's spread, 0 before one (the observer then keys by processor)
	pinned   *engine
	userHash uint64
	regions  uint64 // hash of Regions, 0 for none (flightKey)
	key      keyFields
	id       string        // RequestID, given or generated
	t0       time.Time     // when the request left the cache behind: its latency starts here
	economy  bool          // past Budget.EconomyAt, normal priority: free engines first
	prior    *prior        // what is known of the caller's RequestID, when it was seen before
	s        *setup        // the configuration the request is served under
	avoid    string        // TranslateBatch: the engine a packed text came back bad from
	sink     *streamSink   // TranslateStream: where a streaming engine's partial text goes; nil otherwise
	tenant   *quota.Tenant // Tenant's own budget; nil when it has none
	digest   storeDigest   // with a Store: the content's digest, computed once (storecall.go)
	fid      *content      // content.go: the request's fidelity pipeline; nil on the plain path
}

// set is a small bitset of engine indices.
type set struct{ score.Set }

func (s *set) has(i int) bool { return s.Set.Has(i) }

func (s *set) del(i int) { s.Set.Del(i) }

func (s *set) add(i int) { s.Set.Add(i) }

// stage is one step of a request's plan: which engines it may draw from.
type stage uint8

const (
	stagePinned   stage = iota // the pinned engine alone
	stageNormal                // the normal pool
	stageFree                  // economy: free engines of either pool
	stageLast                  // last resort: the fallback-only pool
	stagePaid                  // economy: paid engines of the normal pool
	stagePaidLast              // economy: paid engines of the fallback-only pool
	stageStale                 // a stale cache entry
)

// in reports whether e belongs to stage s (apart from every other filter).
func (s stage) in(e *engine, v *view, r *request) bool {
	switch s {
	case stagePinned:
		return e == r.pinned
	case stageNormal:
		return !e.fallbackOnly(v)
	case stageFree:
		return e.free
	case stageLast:
		return e.fallbackOnly(v)
	case stagePaid:
		return !e.free && !e.fallbackOnly(v)
	case stagePaidLast:
		return !e.free && e.fallbackOnly(v)
	}
	return false
}

// degraded reports whether an answer from stage s is a degradation.
func (s stage) degraded() bool { return s == stageLast || s == stagePaidLast }

// plan is the order of stages a request walks through (seed 000 §4.4, §6.3): the pinned
// engine; then the normal pool, the last-resort pool and a stale cache entry; or, past the
// economy threshold, free engines, a stale entry, and paid engines only then.
type plan struct {
	stages [6]stage
	n      int
}

func (p *plan) add(s ...stage) {
	for _, x := range s {
		p.stages[p.n] = x
		p.n++
	}
}

// planFor returns r's plan.
func planFor(r *request) plan {
	var p plan
	if r.pinned != nil {
		p.add(stagePinned)
		if !r.AllowFallback {
			p.add(stageStale) // a stale entry the pinned engine made
			return p
		}
	}
	if r.economy {
		p.add(stageFree, stageStale, stagePaid, stagePaidLast)
		return p
	}
	p.add(stageNormal, stageLast, stageStale)
	return p
}

// reason says why an engine cannot serve a request now; reasonNone when it can.
type reason uint8

const (
	reasonNone reason = iota
	reasonSetAside
	reasonMaintenance
	reasonOff
	reasonBreaker
	reasonHealth
	reasonQuota
	reasonPair
	reasonRegion
	reasonPremium
	reasonBudget
	reasonLegal
	reasonChat
	reasonQuotaOut // out until its quota period ends: the vendor's or the Store's refusal
	reasonFormat   // cannot serve the request's format, natively or masked (content.go)
)

var reasonText = [...]string{"", "set aside (unauthorized)", "in maintenance (failed probes)",
	"out (Retry-After or vendor rate limits)", "breaker open", "health below MinHealth",
	"quota left smaller than the text", "pair not supported", "region not allowed",
	"premium engine, normal priority", "budget", "legal scene needs quality >= LegalMinQuality",
	"chat scene needs recent latency <= ChatMaxLatency", "out (quota exhausted)", "format not served"}

// reasonKind is the Kind of a pinned engine's skip for a reason.
func reasonKind(why reason) Kind {
	switch why {
	case reasonSetAside:
		return KindUnauthorized
	case reasonQuota, reasonQuotaOut:
		return KindQuotaExhausted
	case reasonPair, reasonRegion, reasonFormat:
		return KindUnsupported
	case reasonBudget:
		return KindBudgetExceeded
	case reasonPremium:
		return KindNoEngine
	}
	return KindUnavailable
}

// joinReasons writes "a: why; b: why" in engine name order.
func joinReasons(m map[string]string) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(n + ": " + m[n])
	}
	return b.String()
}

// exclude returns why e cannot serve r now (reasonNone if it can), and whether its call
// would be a half-open breaker's trial. budgetFrac is the day's budget fraction spent, -1
// with no budget. It never blocks and allocates nothing.
func (c *Client) exclude(e *engine, v *view, r *request, now int64, budgetFrac float64) (reason, bool) {
	if why := outOfService(e, now); why != reasonNone {
		return why, false
	}
	ok, trial := e.br.of(r.Scene).allowed(now)
	switch {
	case !ok:
		return reasonBreaker, false
	case !trial && !e.fallbackOnly(v) && v.avail < e.s.routing.MinHealth: // the last resort is judged by its breaker
		return reasonHealth, false
	case e.quotaLimited && e.q.Left(now) < int64(r.chars):
		return reasonQuota, false
	case !e.supports(r.srcID, r.tgt.ID):
		return reasonPair, false
	}
	if why := placeRule(e, r); why != reasonNone {
		return why, false
	}
	if why := c.classRule(e, r, budgetFrac); why != reasonNone {
		return why, false
	}
	if !trial && !e.sceneOK(v, r) {
		if r.Scene == SceneLegal {
			return reasonLegal, false
		}
		return reasonChat, false
	}
	return reasonNone, trial
}

// outOfService returns why e is out for everybody: set aside, in maintenance, or out until
// a time (quota exhausted, Retry-After).
func outOfService(e *engine, now int64) reason {
	switch f := e.flags.Load() & flagsOut; {
	case f&flagSetAside != 0:
		return reasonSetAside
	case f != 0:
		return reasonMaintenance
	case now < e.offUntil.Load():
		if now < e.outUntil.Load() {
			return reasonQuotaOut
		}
		return reasonOff
	}
	return reasonNone
}

// placeRule returns why r may not go to e whatever its state: a region it does not allow,
// a format e cannot serve (content.go); reasonNone if it may.
func placeRule(e *engine, r *request) reason {
	switch {
	case len(r.Regions) > 0 && !regionAllowed(e.prof.Region, r.Regions):
		return reasonRegion
	case r.fid != nil && !r.fid.p.Serves(e.prof.Native):
		return reasonFormat
	}
	return reasonNone
}

func regionAllowed(region string, allowed []string) bool { return slices.Contains(allowed, region) }

// classRule applies the priority and budget rules: normal requests never reach premium
// engines unless pinned; past EconomyAt of the daily budget premium engines serve nobody;
// once the budget is spent only free engines serve. budgetFrac is -1 with no budget.
func (c *Client) classRule(e *engine, r *request, budgetFrac float64) reason {
	class := e.prof.Class
	if class == ClassPremium && r.Priority != PriorityHigh && r.pinned != e {
		return reasonPremium
	}
	if budgetFrac < 0 || e.free {
		return reasonNone
	}
	if budgetFrac >= 1 || (budgetFrac >= r.s.economyAt && class == ClassPremium) {
		return reasonBudget
	}
	return reasonNone
}

// candidate is an engine that passed the filters, with its weight.
// It names the engine by its place in the request's configuration (setup.engines): a
// candidate holds no pointer, so a buffer of them costs the garbage collector nothing.
type candidate struct {
	w      float64
	i      int32 // r.s.engines[i]
	trial  bool  // breaker half-open (or open with its cooldown over): trial calls go first
	canary bool
	doubt  bool // within filter: exclude has yet to judge it
}

// filter appends to dst the engines of stage s that may serve r now, leaving out tried.
//
// The router's cost is per engine, so the loop makes no call: an engine with nothing to
// weigh (calm, the request fitting its standing, the pair taken: exclude's common case) is
// taken at once, any other is taken in doubt and judged by exclude afterwards, in place,
// keeping the engines' order. TestFilterAgreesWithExclude holds the two together.
func (c *Client) filter(r *request, tried *set, s stage, now int64, dst []candidate) []candidate {
	frac := c.budgetFraction(r, now)
	d := plainRules{frac: frac, src: r.srcID, tgt: r.tgt.ID, scene: r.Scene, on: len(r.Regions) == 0}
	engines, hot := r.s.engines, r.s.hot
	dst = slices.Grow(dst, len(engines))
	start := len(dst)
	out := dst[start : start+len(engines)]
	n, doubts := 0, 0
	pinned, mask := s == stagePinned, uint8(1)<<s
	for i := range hot {
		h := &hot[i]
		if tried.has(int(h.idx)) {
			continue
		}
		v := h.view.Load()
		if pinned && engines[i] != r.pinned || !pinned && v.stages&mask == 0 {
			continue
		}
		// Plainly in: calm, fitting, taking the pair. Written out: a call here costs more
		// than all the checks.
		doubt := !h.live.calm(now) || !d.fits(h, v) || !h.langs.Has(d.tgt) || !h.langs.Has(d.src)
		doubts += b2i(doubt)
		w := v.weight[d.scene]
		switch {
		case !h.plainW || h.live.flags.Load()&flagLive != 0:
			w = engines[i].weightFor(v, r, now)
		case r.Style != StyleDefault:
			w *= v.restyle
		}
		out[n] = candidate{w: w, i: int32(i), canary: h.canary, doubt: doubt}
		n++
	}
	if doubts > 0 {
		n = c.judge(r, out[:n], now, frac)
	}
	return dst[:start+n]
}

// weightFor is e's weight for r: its scene's weight, times its pair's factor, times
// exp(styleBonus/T) for a Formal or Casual request when it restyles, times quotaWeight.
// filter computes it inline for an engine whose weight is its view's alone (hotEngine.plainW).
func (e *engine) weightFor(v *view, r *request, now int64) float64 {
	w := v.weight[r.Scene] * e.pairFactor(r.srcID, r.tgt.ID, r.Scene)
	if e.has(flagLive) { // live quality signals (quality.go)
		w *= e.liveFactor(r)
	}
	if r.Style != StyleDefault {
		w *= v.restyle
	}
	if e.quotaLimited {
		w *= score.QuotaWeight(e.q.Left(now), e.prof.Quota)
	}
	return w
}

// judge asks exclude about the candidates taken in doubt: it drops those left out, marks
// half-open breakers' trials, and returns how many candidates remain (at the front of cands,
// in order).
func (c *Client) judge(r *request, cands []candidate, now int64, frac float64) int {
	n := 0
	for _, cd := range cands {
		if cd.doubt {
			e := r.s.engines[cd.i]
			why, trial := c.exclude(e, e.view.Load(), r, now, frac)
			if why != reasonNone {
				continue
			}
			cd.doubt, cd.trial = false, trial
		}
		cands[n] = cd
		n++
	}
	return n
}

// plainRules are the facts of one routing decision that filter checks engines against
// before it asks exclude.
type plainRules struct {
	frac     float64 // budgetFraction
	src, tgt int
	scene    Scene
	on       bool // the request has no rule left to exclude alone (Regions)
}

// fits reports whether the request plainly fits e's standing v: no region rule, the scene's
// rules met, no quota, not premium (view.plain), and the budget not spent.
func (d *plainRules) fits(h *hotEngine, v *view) bool {
	return d.on && v.plain[d.scene] && (h.free || d.frac < 1)
}

// excluded explains, for a KindNoEngine error, why every engine not tried was left out.
func (c *Client) excluded(r *request, tried *set, now int64) map[string]string {
	frac := c.budgetFraction(r, now)
	m := make(map[string]string, len(r.s.engines))
	for _, e := range r.s.engines {
		if tried.has(e.idx) {
			continue
		}
		why, _ := c.exclude(e, e.view.Load(), r, now, frac)
		switch {
		case why == reasonPair:
			m[e.name] = "pair " + langOf(r.src) + "->" + r.tgt.Canon + " not supported"
		case why != reasonNone:
			m[e.name] = reasonText[why]
		case r.pinned != nil && !r.AllowFallback && e != r.pinned:
			m[e.name] = "not the pinned engine"
		default:
			m[e.name] = "not reached (attempt or switch limit)"
		}
	}
	return m
}

func langOf(in *lang.Info) string {
	if in == nil {
		return "auto"
	}
	return in.Canon
}

// pick chooses one candidate: a half-open breaker's trial first, then a canary for the users
// in its share, then (sticky) rendezvous hashing or a softmax draw over the weights. Users
// outside a canary's share reach it only when nothing else is left.
func (c *Client) pick(r *request, cands []candidate, draw uint64) *engine {
	engines := r.s.engines
	var canaryHit *engine
	sum, others := 0.0, 0
	for i := range cands {
		cd := &cands[i]
		switch {
		case cd.trial:
			return engines[cd.i]
		case cd.canary:
			if canaryHit == nil && r.UserID != "" && inCanary(r.userHash, engines[cd.i]) {
				canaryHit = engines[cd.i]
			}
		default:
			others++
			sum += cd.w
		}
	}
	if canaryHit != nil {
		return canaryHit
	}
	if others == 0 { // only canaries: everybody may use them
		for i := range cands {
			cands[i].canary = false
			sum += cands[i].w
		}
	}
	if r.s.routing.Sticky {
		return sticky(r.hash, engines, cands)
	}
	x := unit(draw) * sum
	var last *engine
	for i := range cands {
		if cd := &cands[i]; !cd.canary {
			if x -= cd.w; x < 0 {
				return engines[cd.i]
			}
			last = engines[cd.i]
		}
	}
	return last
}

// choose picks one of cands for r (pick), and draws from the random sequence only when
// there is a choice: a lone candidate is pick's answer whatever the draw, and a draw costs a
// seeded request an atomic add on its text's stripe of the sequence, which every core
// serving that text shares (TestLoneCandidateDrawsNothing).
func (c *Client) choose(r *request, cands []candidate) *engine {
	var draw uint64
	if len(cands) > 1 {
		draw = c.draw(r)
	}
	return c.pick(r, cands, draw)
}

// sticky picks by weighted rendezvous hashing: the same text goes to the same engine among
// the same candidates.
func sticky(h uint64, engines []*engine, cands []candidate) *engine {
	var best *engine
	bestV := math.Inf(-1)
	for i := range cands {
		cd := &cands[i]
		if cd.canary {
			continue
		}
		e := engines[cd.i]
		if v := score.Rendezvous(h, e.nameHash, cd.w); v > bestV {
			best, bestV = e, v
		}
	}
	return best
}

// inCanary reports whether the user (by hash) falls in the engine's canary share. The share
// is a threshold on a stable per-user number, so raising it keeps every user who was in.
func inCanary(userHash uint64, e *engine) bool {
	return float64(mix(userHash^e.nameHash)%10000) < e.canaryShare()*100
}

// rngStripes spreads the seeded random sequence over independent counters, so parallel
// requests seldom share one (the draw is still a pure function of the seed and the request
// sequence per stripe).
const rngStripes = score.Stripes

// rngStripe is one counter of the seeded sequence, alone on its cache line (score.Stripe).
// The Client's hot read-only fields (its configuration, clock and seed) sit just before the
// stripes: a counter sharing their line made every seeded draw slow down every request
// on the other cores.
type rngStripe = score.Stripe

// draw returns a uniform 64-bit number for r: from the runtime's per-P source, or with
// WithSeed from the seeded sequence of r's stripe (score.StripeOf its text, worked out here:
// most requests never draw).
func (c *Client) draw(r *request) uint64 {
	if !c.seeded {
		return rand.Uint64()
	}
	stripe := score.StripeOf(r.Text)
	return c.rng[stripe%rngStripes].Next(c.seed, stripe)
}

// mix is the splitmix64 finaliser.
func mix(x uint64) uint64 { return score.Mix(x) }

// unit maps x to (0,1] (score.Unit).
func unit(x uint64) float64 { return score.Unit(x) }
