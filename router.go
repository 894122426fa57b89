package translate

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/fanyi-go/translate/internal/lang"
	"github.com/fanyi-go/translate/internal/quota"
)

// engine is an Engine with its profile and everything the Client tracks about it.
type engine struct {
	idx     int
	name    string
	eng     Engine
	prof    Profile // defaults applied
	quality [len(sceneNames)]float64
	cost    float64 // cost score 0..100
	langs   *lang.Set
	limiter *rate.Limiter // nil: unlimited
	sem     chan struct{} // nil: unlimited concurrency
	br      breakers
	h       health
	q       *quota.Quota
	// Profile facts the router reads on every decision, kept beside its other hot fields.
	quotaLimited bool // Quota > 0
	canary       bool // Canary > 0
	fallback     bool // FallbackOnly
	nameHash     uint64

	view        atomic.Pointer[view]
	flags       atomic.Uint32 // flagSetAside, flagMaintenance
	outUntil    atomic.Int64  // quota exhausted: out until this time (unix nanos)
	coolUntil   atomic.Int64  // Retry-After: out until this time (unix nanos)
	offUntil    atomic.Int64  // the later of outUntil and coolUntil, for the router
	unsupported sync.Map      // pair (uint64) -> struct{}: pairs the engine said it does not take
	anyUnsupp   atomic.Bool
	probeFails  atomic.Int32
}

// Engine flags: reasons an engine is out until something changes.
const (
	flagSetAside    uint32 = 1 << iota // unauthorized: out until reconfigured
	flagMaintenance                    // failed probes: out until a probe passes
)

func (e *engine) has(flag uint32) bool { return e.flags.Load()&flag != 0 }

// set sets flag and reports whether it was clear.
func (e *engine) set(flag uint32) bool { return e.flags.Or(flag)&flag == 0 }

// clear clears flag and reports whether it was set.
func (e *engine) clear(flag uint32) bool { return e.flags.And(^flag)&flag != 0 }

// outFor takes the engine out until t (unix nanos) through field f (outUntil or coolUntil).
func (e *engine) outFor(f *atomic.Int64, t int64) {
	f.Store(t)
	for {
		old := e.offUntil.Load()
		if old >= t || e.offUntil.CompareAndSwap(old, t) {
			return
		}
	}
}

func pairKey(src, tgt int) uint64 { return uint64(uint32(src))<<32 | uint64(uint32(tgt)) }

func (e *engine) supports(src, tgt int) bool {
	if !e.langs.Has(tgt) || (src != 0 && !e.langs.Has(src)) {
		return false
	}
	if e.anyUnsupp.Load() {
		if _, bad := e.unsupported.Load(pairKey(src, tgt)); bad {
			return false
		}
	}
	return true
}

func (e *engine) markUnsupported(src, tgt int) {
	e.unsupported.Store(pairKey(src, tgt), struct{}{})
	e.anyUnsupp.Store(true)
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
	pinned   *engine
	userHash uint64
	key      keyFields // computed once: pinned may be dropped on failover
	id       string    // RequestID, given or generated
	t0       time.Time // when the request left the cache behind: its latency starts here
	// ignoreBudget lifts the budget rule, to tell whether it is why no engine is left.
	ignoreBudget bool
}

// budgetIsWhy reports whether the daily budget is what leaves r without candidates.
func (c *Client) budgetIsWhy(r *request, excl *set, ph phase, now int64) bool {
	if c.budget.Unlimited() {
		return false
	}
	var buf [16]candidate
	r.ignoreBudget = true
	n := len(c.filter(r, excl, ph, now, buf[:0]))
	r.ignoreBudget = false
	return n > 0
}

// set is a small bitset of engine indices.
type set struct {
	small [2]uint64
	big   []uint64
	n     int // additions; 0 means empty, the common case on a first decision
}

func (s *set) has(i int) bool {
	if s.n == 0 {
		return false
	}
	u := uint(i)
	if u < 128 {
		return s.small[u>>6]&(1<<(u&63)) != 0
	}
	j := u>>6 - 2
	return j < uint(len(s.big)) && s.big[j]&(1<<(u&63)) != 0
}

func (s *set) add(i int) {
	s.n++
	if i < 128 {
		s.small[i/64] |= 1 << (i % 64)
		return
	}
	j := i/64 - 2
	for len(s.big) <= j {
		s.big = append(s.big, 0)
	}
	s.big[j] |= 1 << (i % 64)
}

// del removes i (n stays: it only tells an empty set apart).
func (s *set) del(i int) {
	if i < 128 {
		s.small[i/64] &^= 1 << (i % 64)
		return
	}
	if j := i/64 - 2; j < len(s.big) {
		s.big[j] &^= 1 << (i % 64)
	}
}

// phase selects the pool the router draws from.
type phase uint8

const (
	phaseNormal phase = iota
	phaseFallback
)

// candidate is an engine that passed the filters, with its weight.
type candidate struct {
	e      *engine
	w      float64
	trial  bool // breaker half-open (or open with its cooldown over): trial calls go first
	canary bool
}

// filter appends to dst the engines that may serve r now, in pool ph, leaving out excl.
// It never blocks and allocates nothing while dst has room.
func (c *Client) filter(r *request, excl *set, ph phase, now int64, dst []candidate) []candidate {
	budgetFrac := -1.0 // no budget
	if !c.budget.Unlimited() {
		budgetFrac = c.budget.Fraction(now)
	}
	for _, e := range c.engines {
		if excl.has(e.idx) || (r.pinned != nil && r.pinned != e) {
			continue
		}
		v := e.view.Load()
		if (ph == phaseFallback) != e.fallbackOnly(v) && r.pinned == nil {
			continue
		}
		if e.flags.Load() != 0 || now < e.offUntil.Load() {
			continue
		}
		ok, trial := e.br.of(r.Scene).allowed(now)
		if !ok {
			continue
		}
		if !trial && v.avail < c.routing.MinHealth {
			continue
		}
		if e.quotaLimited && e.q.Left(now) < int64(r.chars) {
			continue
		}
		if !e.supports(r.srcID, r.tgt.ID) {
			continue
		}
		if !c.classAllowed(e, r, budgetFrac) {
			continue
		}
		if !trial && !v.sceneOK[r.Scene] {
			continue
		}
		dst = append(dst, candidate{e: e, w: v.weight[r.Scene], trial: trial, canary: e.canary})
	}
	return dst
}

// classAllowed applies the priority and budget rules: normal requests never reach premium
// engines; past EconomyAt of the daily budget only free and standard engines serve; once the
// budget is spent only free engines do. budgetFrac is the fraction spent, -1 with no budget.
func (c *Client) classAllowed(e *engine, r *request, budgetFrac float64) bool {
	class := e.prof.Class
	if class == ClassPremium && r.Priority != PriorityHigh && r.pinned == nil {
		return false
	}
	if budgetFrac < 0 || class == ClassFree || e.prof.CostPerMillion == 0 || r.ignoreBudget {
		return true
	}
	if budgetFrac >= 1 {
		return false
	}
	if budgetFrac >= c.economyAt && class == ClassPremium {
		return false
	}
	return true
}

// pick chooses one candidate: a half-open breaker's trial first, then a canary for the users
// in its share, then (sticky) rendezvous hashing or a softmax draw over the weights. Users
// outside a canary's share reach it only when nothing else is left.
func (c *Client) pick(r *request, cands []candidate) *engine {
	var canaryHit *engine
	sum, others := 0.0, 0
	for i := range cands {
		cd := &cands[i]
		switch {
		case cd.trial:
			return cd.e
		case cd.canary:
			if canaryHit == nil && r.UserID != "" && inCanary(r.userHash, cd.e) {
				canaryHit = cd.e
			}
		default:
			others++
			sum += cd.w
		}
	}
	if canaryHit != nil {
		return canaryHit
	}
	onlyCanaries := others == 0
	if onlyCanaries {
		for i := range cands {
			sum += cands[i].w
		}
	}
	eligible := func(cd *candidate) bool { return onlyCanaries || !cd.canary }
	if c.routing.Sticky {
		var best *engine
		bestV := math.Inf(-1)
		for i := range cands {
			cd := &cands[i]
			if !eligible(cd) {
				continue
			}
			// Weighted rendezvous hashing: argmax of -w/ln(u).
			if v := -cd.w / math.Log(unit(mix(r.hash^cd.e.nameHash))); v > bestV {
				best, bestV = cd.e, v
			}
		}
		return best
	}
	x := c.random() * sum
	var last *engine
	for i := range cands {
		cd := &cands[i]
		if !eligible(cd) {
			continue
		}
		if x -= cd.w; x < 0 {
			return cd.e
		}
		last = cd.e
	}
	return last
}

// inCanary reports whether the user (by hash) falls in the engine's canary share.
func inCanary(userHash uint64, e *engine) bool {
	return float64(mix(userHash^e.nameHash)%10000) < e.prof.Canary*100
}

// random returns a uniform number in [0,1) from the Client's seeded, lock-free sequence.
func (c *Client) random() float64 {
	if !c.seeded {
		return rand.Float64() // per-P runtime source: no shared state
	}
	return unit(mix(c.seed + c.rng.Add(1)*0x9e3779b97f4a7c15))
}

// mix is the splitmix64 finaliser.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// unit maps x to (0,1).
func unit(x uint64) float64 { return (float64(x>>11) + 0.5) / (1 << 53) }

// fold folds every engine's statistics into its view when HealthEvery has passed. It runs on
// the request path in whichever goroutine first sees the fold due; others go on at once.
func (c *Client) maybeFold(now int64) {
	next := c.nextFold.Load()
	if now < next || !c.nextFold.CompareAndSwap(next, now+int64(c.routing.HealthEvery)) {
		return
	}
	secs := float64(c.routing.HealthEvery) / float64(time.Second)
	if last := c.lastFold.Swap(now); last != 0 && now > last {
		secs = float64(now-last) / float64(time.Second)
	}
	for _, e := range c.engines {
		if ev := c.foldEngine(e, secs); ev != nil {
			c.obs.poolChanged(e.name, ev.from, ev.to)
		}
	}
}

type poolMove struct{ from, to Pool }

// foldEngine folds one engine's window and rebuilds its view.
func (c *Client) foldEngine(e *engine, secs float64) *poolMove {
	h := &e.h
	calls, fails, okCalls, lat := h.take()
	old := e.view.Load()

	h.mu.Lock()
	h.pos = (h.pos + 1) % healthFolds
	h.winCalls[h.pos], h.winFails[h.pos] = calls, fails
	var wc, wf int64
	for i := range h.winCalls {
		wc += h.winCalls[i]
		wf += h.winFails[i]
	}
	h.lastRate = float64(calls) / math.Max(secs, 1e-9)
	nv := *old
	if calls >= minFoldCalls && wc > 0 {
		nv.avail = 1 - float64(wf)/float64(wc)
		if old.avail > 0 && (old.avail-nv.avail)/old.avail > 0.15 {
			h.drops++
		} else {
			h.drops = 0
		}
		bad := h.drops >= 2 || nv.avail < c.routing.MinHealth
		switch {
		case bad:
			h.demoted, h.good = true, 0
		case h.demoted:
			h.good++
			if h.good >= 2 {
				h.demoted, h.good = false, 0
			}
		}
	}
	if okCalls > 0 {
		mean := time.Duration(lat / okCalls)
		nv.ewma = time.Duration(ewmaAlpha*float64(mean) + (1-ewmaAlpha)*float64(old.ewma))
	}
	if h.demoted {
		nv.pool = PoolFallback
	} else {
		nv.pool = PoolNormal
	}
	nv.gate = trafficGate(h.lastRate, e.safeRate())
	h.mu.Unlock()

	c.rebuildView(e, &nv)
	e.view.Store(&nv)
	if nv.pool != old.pool {
		return &poolMove{old.pool, nv.pool}
	}
	return nil
}

// resetHealth clears an engine's window after its breaker closed again: five good trial
// calls are fresher evidence than the failures that opened it.
func (c *Client) resetHealth(e *engine) {
	h := &e.h
	h.mu.Lock()
	h.winCalls, h.winFails = [healthFolds]int64{}, [healthFolds]int64{}
	h.drops, h.good, h.demoted = 0, 0, false
	h.mu.Unlock()
	old := e.view.Load()
	nv := *old
	nv.avail, nv.pool = 1, PoolNormal
	c.rebuildView(e, &nv)
	e.view.Store(&nv)
}

// safeRate is the request rate the traffic gate protects: SafeRate, else RateLimit.
func (e *engine) safeRate() float64 {
	if e.prof.SafeRate > 0 {
		return e.prof.SafeRate
	}
	return e.prof.RateLimit
}

// trafficGate lowers an engine's weight as its recent rate nears its safe rate: 1 below 70%
// of it, falling linearly to 0.1 at 100% and beyond.
func trafficGate(rate, safe float64) float64 {
	if safe <= 0 {
		return 1
	}
	u := rate / safe
	switch {
	case u <= 0.7:
		return 1
	case u >= 1:
		return 0.1
	}
	return 1 - 0.9*(u-0.7)/0.3
}

// rebuildView recomputes the scores, weights and scene rules of v.
func (c *Client) rebuildView(e *engine, v *view) {
	v.speed = SpeedScore(v.ewma)
	if v.gate == 0 {
		v.gate = 1
	}
	w := c.routing.Weights
	for s := range sceneNames {
		v.score[s] = Score(w, e.quality[s], 100*v.avail, v.speed, e.cost)
		v.weight[s] = math.Exp(v.score[s]/c.routing.Temperature) * v.gate
		v.sceneOK[s] = true
	}
	v.sceneOK[SceneLegal] = e.quality[SceneLegal] >= c.routing.LegalMinQuality
	v.sceneOK[SceneChat] = v.ewma <= c.routing.ChatMaxLatency
}
