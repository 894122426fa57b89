package translate

import (
	"cmp"
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fanyi-go/translate/internal/health"
	"github.com/fanyi-go/translate/internal/lang"
)

// Weights are the score weights of quality, availability, speed and cost. Each is at most
// 0.5, Cost at most 0.3, and they sum to 1. The zero value means Quality 0.40,
// Availability 0.25, Speed 0.20, Cost 0.15.
type Weights struct{ Quality, Availability, Speed, Cost float64 }

// DefaultWeights are the weights used when RoutingPolicy.Weights is zero.
var DefaultWeights = Weights{Quality: 0.40, Availability: 0.25, Speed: 0.20, Cost: 0.15}

func (w Weights) validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"Quality", w.Quality}, {"Availability", w.Availability}, {"Speed", w.Speed}, {"Cost", w.Cost}} {
		if f.v < 0 || f.v > 0.5 || math.IsNaN(f.v) {
			return configError("RoutingPolicy.Weights."+f.name, "must be within 0..0.5")
		}
	}
	if w.Cost > 0.3 {
		return configError("RoutingPolicy.Weights.Cost", "must be at most 0.3")
	}
	if s := w.Quality + w.Availability + w.Speed + w.Cost; math.Abs(s-1) > 1e-9 {
		return configError("RoutingPolicy.Weights", "must sum to 1")
	}
	return nil
}

// RoutingPolicy configures scoring and picking. Zero fields mean the default written beside
// them.
type RoutingPolicy struct {
	Weights Weights // zero means Quality 0.40, Availability 0.25, Speed 0.20, Cost 0.15
	// Temperature is the softmax temperature in score points, 0.2..1000 (scores are 0..100:
	// at 0.2 the best score takes nearly all traffic, at 1000 traffic is nearly even); 0
	// means 20/ln(7/3) (90 vs 70 -> 70/30).
	Temperature float64
	MinHealth   float64       // availability below this excludes an engine, 0..1; 0 means 0.8
	Sticky      bool          // same text -> same engine among the candidates (rendezvous hashing)
	HealthEvery time.Duration // health statistics fold period, 100ms..1h; 0 means 10s
	// LegalMinQuality is the quality an engine needs for SceneLegal, 0..100; 0 means 90.
	LegalMinQuality float64
	// ChatMaxLatency is the recent (EWMA) latency above which an engine is not used for
	// SceneChat, 1ns..1h; 0 means 3s.
	ChatMaxLatency time.Duration
	// PeakHours are the peak windows (UTC) during which normal-priority requests go to free
	// engines first, paid engines only when no free one can serve (as past Budget.EconomyAt);
	// at most 24 windows. nil means none.
	PeakHours []Window
	// FreeWhenBusy sends normal-priority requests to free engines first also while the
	// traffic gate of every paid engine of the normal pool is closing (its recent rate past
	// 70% of its SafeRate). false (the default) means only PeakHours and the budget do.
	FreeWhenBusy bool
}

// Window is a span of the UTC day, from From up to (not including) To; a From later than
// To wraps past midnight (22h..6h), and From equal to To is empty.
type Window struct {
	From time.Duration // time of day, 0s..24h
	To   time.Duration // time of day, 0s..24h
}

// maxPeakWindows bounds RoutingPolicy.PeakHours.
const maxPeakWindows = 24

// has reports whether the time of day d (0..24h) falls in w.
func (w Window) has(d time.Duration) bool {
	if w.From <= w.To {
		return d >= w.From && d < w.To
	}
	return d >= w.From || d < w.To
}

// peak reports whether normal-priority requests go to free engines first at now (unix
// nanos): within one of PeakHours, or, with FreeWhenBusy, while every paid engine's traffic
// gate is closing.
func (s *setup) peak(now int64) bool {
	rp := &s.routing
	day := int64(24 * time.Hour)
	tod := time.Duration((now%day + day) % day) // the UTC time of day: Unix time has no leap seconds
	for _, w := range rp.PeakHours {
		if w.has(tod) {
			return true
		}
	}
	if !rp.FreeWhenBusy {
		return false
	}
	paid := 0
	for _, e := range s.engines {
		if v := e.view.Load(); !e.free && !e.fallbackOnly(v) {
			if v.gate >= 1 {
				return false
			}
			paid++
		}
	}
	return paid > 0
}

// DefaultTemperature splits traffic about 70/30 between scores 90 and 70.
var DefaultTemperature = 20 / math.Log(7.0/3.0)

func (p RoutingPolicy) withDefaults() RoutingPolicy {
	if p.Weights == (Weights{}) {
		p.Weights = DefaultWeights
	}
	p.Temperature = cmp.Or(p.Temperature, DefaultTemperature)
	p.MinHealth = cmp.Or(p.MinHealth, 0.8)
	p.HealthEvery = cmp.Or(p.HealthEvery, 10*time.Second)
	p.LegalMinQuality = cmp.Or(p.LegalMinQuality, 90)
	p.ChatMaxLatency = cmp.Or(p.ChatMaxLatency, 3*time.Second)
	return p
}

func (p RoutingPolicy) validate() error {
	if p.Weights != (Weights{}) {
		if err := p.Weights.validate(); err != nil {
			return err
		}
	}
	if len(p.PeakHours) > maxPeakWindows {
		return configError("RoutingPolicy.PeakHours", "must have at most 24 windows")
	}
	for i, w := range p.PeakHours {
		if err := checkLimits("RoutingPolicy.PeakHours["+strconv.Itoa(i)+"].", w); err != nil {
			return err
		}
	}
	return checkLimits("RoutingPolicy.", p)
}

// Score computes the routing score 0..100 from its four parts, each 0..100, with w:
// quality*w.Quality + availability*w.Availability + speed*w.Speed + cost*w.Cost.
func Score(w Weights, quality, availability, speed, cost float64) float64 {
	return quality*w.Quality + availability*w.Availability + speed*w.Speed + cost*w.Cost
}

// SpeedScore maps a latency to 0..100: 100 at 100ms or less, 0 at 10s or more, logarithmic
// between. It is absolute, so microsecond differences never move traffic.
func SpeedScore(latency time.Duration) float64 {
	const lo, hi = 100 * time.Millisecond, 10 * time.Second
	switch {
	case latency <= lo:
		return 100
	case latency >= hi:
		return 0
	}
	return 100 * math.Log(float64(hi)/float64(latency)) / math.Log(float64(hi)/float64(lo))
}

// maxCostPerMillion is the price that scores 0 on cost; cost is linear in price below it.
const maxCostPerMillion = 50.0

// CostScore maps a price in credits per million characters to 0..100: 100 for free, 0 at
// 50 or more, linear between.
func CostScore(perMillion float64) float64 {
	if perMillion <= 0 {
		return 100
	}
	return math.Max(0, 100*(1-perMillion/maxCostPerMillion))
}

// Pool is where an engine stands in routing. The zero value is PoolNormal.
type Pool uint8

// Pools.
const (
	PoolNormal      Pool = iota // routed by score
	PoolFallback                // used only when the normal pool has failed
	PoolMaintenance             // not used until a probe passes
)

// String returns "normal", "fallback" or "maintenance".
func (p Pool) String() string {
	switch p {
	case PoolNormal:
		return "normal"
	case PoolFallback:
		return "fallback"
	case PoolMaintenance:
		return "maintenance"
	}
	return "pool(" + itoa(int(p)) + ")"
}

// healthFolds is how many folds the recent error rate spans (one minute at 10s); the
// success rate and latency of availability span five minutes (quality.go).
const healthFolds = 6

// minFoldCalls is how many calls a fold needs to move an engine's standing.
const minFoldCalls = 5

// initialLatency is the EWMA latency assumed before an engine has been observed; the first
// fold with successful calls replaces it with their mean.
const initialLatency = 300 * time.Millisecond

// ewmaAlpha weights the newest fold's mean latency in the EWMA.
const ewmaAlpha = 0.3

// quotaLow is the share of its quota below which an engine's weight falls (seed 000 §2.2).
const quotaLow = 0.2

// quotaWeight is what the weight of an engine with a quota is multiplied by: 1 while more
// than 20% of quota is left, then left/(0.2 x quota), so traffic moves to the others before
// the quota runs out (at 15% left 0.75, at 5% 0.25).
func quotaWeight(left, quota int64) float64 {
	if quota <= 0 || left < 0 {
		return 1
	}
	return min(1, float64(left)/(quotaLow*float64(quota)))
}

// styleBonus is the score, in points, a Formal or Casual request adds to an engine that
// restyles (Profile.Restyles): at the default temperature such an engine takes about 60% of
// the traffic of an otherwise equal one.
const styleBonus = 10.0

// view is an engine's routing standing, rebuilt at each fold and read lock-free.
type view struct {
	avail   float64 // 0..1 over the last healthFolds folds
	speed   float64 // 0..100
	ewma    time.Duration
	latSeen bool // ewma comes from measured calls, not initialLatency
	pool    Pool
	score   [len(sceneNames)]float64 // 0..100 per scene
	weight  [len(sceneNames)]float64 // exp(score/T) x traffic gate
	sceneOK [len(sceneNames)]bool    // scene rules
	// plain: the engine's standing and profile leave nothing for exclude to weigh in the
	// scene (healthy enough or a last resort, the scene's rules met, no quota, not premium);
	// the request and the engine's live state may still (plainly).
	plain   [len(sceneNames)]bool
	stages  uint8   // bit s set: the engine belongs to stage s (stage.in; stagePinned aside)
	gate    float64 // traffic gate factor 0..1
	restyle float64 // weight factor for Formal and Casual requests: exp(styleBonus/T), or 1
}

// foldState is an engine's availability window and pool standing between folds.
type foldState struct {
	mu       sync.Mutex
	winCalls [healthFolds]int64
	winFails [healthFolds]int64
	pos      int
	win      health.Window // the last five minutes' calls (availability)
	drops    int           // consecutive folds with an availability drop over 15%
	good     int           // consecutive good folds (or passing probes) while demoted
	demoted  bool
	lastRate float64 // requests per second over the last fold
}

// window returns the calls and failures in the window.
func (f *foldState) window() (calls, fails int64) {
	for i := range f.winCalls {
		calls += f.winCalls[i]
		fails += f.winFails[i]
	}
	return calls, fails
}

// maybeFold folds every engine's statistics into its view when HealthEvery has passed. It
// runs on the request path in whichever goroutine first sees the fold due; others go on.
func (c *Client) maybeFold(now int64) {
	next := c.nextFold.Load()
	s := c.cfg.Load()
	if now < next || !c.nextFold.CompareAndSwap(next, now+int64(s.routing.HealthEvery)) {
		return
	}
	// Ramping canaries the fold demotes are rolled back after the unlock (ramp.go).
	var demoted []*engine
	defer func() { c.rampDemoted(demoted, now) }()
	c.mu.Lock() // a Reconfigure copies views: not while they are being folded
	defer c.mu.Unlock()
	s = c.cfg.Load()
	secs := float64(s.routing.HealthEvery) / float64(time.Second)
	if last := c.lastFold.Swap(now); last != 0 && now > last {
		secs = float64(now-last) / float64(time.Second)
	}
	out := false // an engine only recovery probes can bring back (probe.go)
	for _, e := range s.engines {
		if from, to, moved := c.foldEngine(e, now, secs); moved {
			c.obs.poolChanged(e.name, from, to)
			demoted = rampDemotion(demoted, e, to)
		}
		out = out || (e.demoted() && s.probes == nil) || e.has(flagSetAside)
	}
	if out {
		c.wakeRecovery()
	}
}

// foldEngine folds one engine's counters into its window and rebuilds its view: an
// availability drop over 15% two folds in a row, or availability under MinHealth, demotes
// it to the fallback pool; two good folds bring it back. A fold with fewer than
// minFoldCalls calls keeps its standing.
func (c *Client) foldEngine(e *engine, now int64, secs float64) (from, to Pool, moved bool) {
	s := e.h.Take()
	e.foldPairs() // quality.go
	old := e.view.Load()
	f := &e.fold
	f.mu.Lock()
	f.pos = (f.pos + 1) % healthFolds
	f.winCalls[f.pos], f.winFails[f.pos] = s.Calls, s.Fails
	f.win.Add(now, s)
	f.lastRate = float64(s.Calls) / math.Max(secs, 1e-9)
	nv := *old
	if avail, ok := f.availability(now, e.prof.Timeout, health.Sample{}); ok && s.Calls >= minFoldCalls {
		nv.avail = avail
		c.judgeFold(f, old.avail, nv.avail, e.s.routing.MinHealth)
	}
	if s.OKCalls > 0 {
		nv.ewma = time.Duration(ewmaAlpha*float64(s.MeanLatency()) + (1-ewmaAlpha)*float64(old.ewma))
		if !old.latSeen { // seeded from the first measured calls, not blended with the prior
			nv.ewma, nv.latSeen = s.MeanLatency(), true
		}
	}
	nv.pool = poolOf(f.demoted)
	nv.gate = trafficGate(f.lastRate, e.safeRate())
	f.mu.Unlock()
	c.rebuildView(e, &nv)
	e.view.Store(&nv)
	return old.pool, nv.pool, nv.pool != old.pool
}

// judgeFold updates the demotion state after a fold with enough calls. f.mu is held.
func (c *Client) judgeFold(f *foldState, was, now, minHealth float64) {
	if was > 0 && (was-now)/was > 0.15 {
		f.drops++
	} else {
		f.drops = 0
	}
	switch {
	case f.drops >= 2 || now < minHealth:
		f.demoted, f.good = true, 0
	case f.demoted:
		f.promote()
	}
}

// promote counts one good fold or passing probe of a demoted engine; two bring it back.
func (f *foldState) promote() {
	if f.good++; f.good >= 2 {
		f.demoted, f.good, f.drops = false, 0, 0
	}
}

func poolOf(demoted bool) Pool {
	if demoted {
		return PoolFallback
	}
	return PoolNormal
}

// probePassed lets probes alone bring back an engine demoted by health: an engine in the
// fallback pool gets no ordinary traffic to show it has recovered, so two passing probes
// count as two good folds (its window restarts from them).
func (c *Client) probePassed(e *engine) {
	f := &e.fold
	f.mu.Lock()
	if !f.demoted {
		f.mu.Unlock()
		return
	}
	f.promote()
	back := !f.demoted
	if back {
		f.winCalls, f.winFails = [healthFolds]int64{}, [healthFolds]int64{}
		f.win.Reset()
	}
	f.mu.Unlock()
	if back {
		c.setStanding(e, 1, PoolNormal)
		c.obs.poolChanged(e.name, PoolFallback, PoolNormal)
	}
}

// resetHealth clears an engine's window after its breaker closed again: five good trial
// calls are fresher evidence than the failures that opened it.
func (c *Client) resetHealth(e *engine) {
	f := &e.fold
	f.mu.Lock()
	f.winCalls, f.winFails = [healthFolds]int64{}, [healthFolds]int64{}
	f.win.Reset()
	f.drops, f.good, f.demoted = 0, 0, false
	f.mu.Unlock()
	c.setStanding(e, 1, PoolNormal)
}

// setStanding replaces an engine's availability and pool and rebuilds its view.
func (c *Client) setStanding(e *engine, avail float64, pool Pool) {
	nv := *e.view.Load()
	nv.avail, nv.pool = avail, pool
	c.rebuildView(e, &nv)
	e.view.Store(&nv)
}

// liveHealth is an engine's availability at now including the calls since the last fold,
// for Engines(): what has happened shows at once, while routing moves only at folds.
func liveHealth(e *engine, now int64) float64 {
	f := &e.fold
	f.mu.Lock()
	avail, ok := f.availability(now, e.prof.Timeout, e.h.Peek())
	f.mu.Unlock()
	if !ok {
		return e.view.Load().avail
	}
	return avail
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
	v.gate = cmp.Or(v.gate, 1)
	rp := &e.s.routing
	for s := range sceneNames {
		v.score[s] = Score(rp.Weights, e.quality[s], 100*v.avail, v.speed, e.cost)
		v.weight[s] = math.Exp(v.score[s]/rp.Temperature) * v.gate
		v.sceneOK[s] = true
	}
	v.restyle = 1
	if e.prof.Restyles {
		v.restyle = math.Exp(styleBonus / rp.Temperature)
	}
	v.sceneOK[SceneLegal] = e.quality[SceneLegal] >= rp.LegalMinQuality
	v.sceneOK[SceneChat] = v.ewma <= rp.ChatMaxLatency
	plain := !e.quotaLimited && e.prof.Class != ClassPremium && (v.avail >= rp.MinHealth || e.fallbackOnly(v))
	for s := range sceneNames {
		v.plain[s] = plain && v.sceneOK[s]
	}
	v.plain[SceneLegal] = v.plain[SceneLegal] && (e.pairQ == nil || !e.pairQ.legal) // legalOK judges per pair
	v.stages = 0
	for s := stageNormal; s <= stagePaidLast; s++ {
		if s.in(e, v, nil) {
			v.stages |= 1 << s
		}
	}
}

// pairQuality is a profile's PairQuality compiled for the router: per pair of language ids
// the quality per scene it sets (Q), and the factor that takes the engine's weight from its
// scene quality to it (Fac). The table's lookup is mechanism (internal/lang).
type pairQuality struct {
	*lang.PairTable
	legal bool // some entry sets SceneLegal's quality: the legal rule depends on the pair
}

// pairFactor is what e's weight in scene is multiplied by for the pair src->tgt: 1 unless
// PairQuality names the pair.
func (e *engine) pairFactor(src, tgt int, scene Scene) float64 {
	if e.pairQ == nil {
		return 1 // inlined: engines without PairQuality pay a nil check
	}
	return e.pairQ.factor(src, tgt, scene)
}

// factor is the weight factor of the most specific entry for the pair and scene, 1 when none.
func (q *pairQuality) factor(src, tgt int, scene Scene) float64 {
	if p, ok := q.Find(src, tgt, int(scene)); ok {
		return p.Fac[scene]
	}
	return 1
}

// sceneOK applies r's scene rules to e: the legal rule for r's pair (quality at least
// LegalMinQuality, PairQuality included), the others as v has them.
func (e *engine) sceneOK(v *view, r *request) bool {
	if r.Scene != SceneLegal || e.pairQ == nil || !e.pairQ.legal {
		return v.sceneOK[r.Scene]
	}
	q := e.quality[SceneLegal]
	if p, ok := e.pairQ.Find(r.srcID, r.tgt.ID, int(SceneLegal)); ok {
		q = p.Q[SceneLegal]
	}
	return q >= e.s.routing.LegalMinQuality
}

// compilePairQuality builds e.pairQ from its profile (validated) once e.quality is set.
func (c *Client) compilePairQuality(e *engine) {
	if len(e.prof.PairQuality) == 0 {
		return
	}
	rp := &e.s.routing
	pq := &pairQuality{PairTable: lang.NewPairTable(len(e.prof.PairQuality))}
	// Keys without a scene first, so that a key with one overrides them for its scene.
	keys := slices.SortedFunc(maps.Keys(e.prof.PairQuality), func(a, b string) int {
		return cmp.Compare(strings.Count(a, "/"), strings.Count(b, "/"))
	})
	for _, key := range keys {
		src, tgt, scene, _ := parsePairKey(key)
		p := pq.Entry(c.langID(src), c.langID(tgt), len(sceneNames))
		for s := range sceneNames {
			if scene < 0 || s == scene {
				p.Has |= 1 << s
				p.Q[s] = e.prof.PairQuality[key]
				p.Fac[s] = math.Exp((p.Q[s] - e.quality[s]) * rp.Weights.Quality / rp.Temperature)
			}
		}
		pq.legal = pq.legal || p.Has&(1<<SceneLegal) != 0
	}
	e.pairQ = pq
}

// langID is the router's id of a language ("*" is 0).
func (c *Client) langID(tag string) int {
	if tag == "*" {
		return 0
	}
	in, _ := c.langs.Lookup(tag) // validated
	return in.ID
}

// parsePairKey splits a PairQuality key, "en-de", "*-ja", "zh-Hant-en" or "en-de/legal",
// into its source, target ("*" for any) and scene (-1 for none).
func parsePairKey(key string) (src, tgt string, scene int, err error) {
	pair, sc, hasScene := strings.Cut(key, "/")
	scene = -1
	if hasScene {
		if scene = slices.Index(sceneNames[:], sc); scene < 0 {
			return "", "", 0, errors.New("unknown scene (known: " + strings.Join(sceneNames[:], ", ") + ")")
		}
	}
	src, tgt, err = lang.SplitPair(pair)
	return src, tgt, scene, err
}

// validatePairQuality checks PairQuality's keys and values (0..100).
func validatePairQuality(field string, m map[string]float64) error {
	if len(m) == 0 {
		return nil // sorting no keys allocates 3 times, twice per engine at each Reconfigure
	}
	for _, key := range slices.Sorted(maps.Keys(m)) {
		name := strconv.Quote(key)
		if len(key) > 40 {
			name = strconv.Quote(key[:40] + "…")
		}
		if _, _, _, err := parsePairKey(key); err != nil {
			return configError(field, name+": "+err.Error())
		}
		if q := m[key]; !(q >= 0 && q <= 100) {
			return configError(field, name+": must be within 0..100")
		}
	}
	return nil
}
