package translate

import (
	"cmp"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fanyi-go/translate/internal/health"
	"github.com/fanyi-go/translate/internal/lang"
	"github.com/fanyi-go/translate/internal/score"
)

// Weights are the score weights of quality, availability, speed and cost. Each is at most
// 0.5, Cost at most 0.3, and they sum to 1. The zero value means Quality 0.40,
// Availability 0.25, Speed 0.20, Cost 0.15.
type Weights struct{ Quality, Availability, Speed, Cost float64 }

// DefaultWeights are the weights used when RoutingPolicy.Weights is zero.
var DefaultWeights = Weights{Quality: 0.40, Availability: 0.25, Speed: 0.20, Cost: 0.15}

func (w Weights) validate() error {
	if name, problem, ok := score.CheckWeights(w.Quality, w.Availability, w.Speed, w.Cost); !ok {
		return configError(strings.TrimSuffix("RoutingPolicy.Weights."+name, "."), problem)
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
func (w Window) has(d time.Duration) bool { return score.InWindow(w.From, w.To, d) }

// peak reports whether normal-priority requests go to free engines first at now (unix
// nanos): within one of PeakHours, or, with FreeWhenBusy, while every paid engine's traffic
// gate is closing.
func (s *setup) peak(now int64) bool {
	rp := &s.routing
	tod := score.TimeOfDay(now)
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
func SpeedScore(latency time.Duration) float64 { return score.Speed(latency) }

// CostScore maps a price in credits per million characters to 0..100: 100 for free, 0 at
// 50 or more, linear between.
func CostScore(perMillion float64) float64 { return score.Cost(perMillion) }

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

// minFoldCalls is how many calls a fold needs to move an engine's standing.
const minFoldCalls = 5

// initialLatency is the EWMA latency assumed before an engine has been observed; the first
// fold with successful calls replaces it with their mean.
const initialLatency = 300 * time.Millisecond

// styleBonus is the score, in points, a Formal or Casual request adds to an engine that
// restyles (Profile.Restyles): at the default temperature such an engine takes about 60% of
// the traffic of an otherwise equal one.
const styleBonus = 10.0

// view is an engine's routing standing, rebuilt at each fold and read lock-free.
type view struct {
	avail   float64 // 0..1 over the last health.Folds folds
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
	mu              sync.Mutex
	health.Standing               // calls of the last health.Folds folds (a minute at 10s); demotion
	win             health.Window // the last five minutes' calls (availability)
	lastRate        float64       // requests per second over the last fold
}

// window returns the calls and failures in the window.
func (f *foldState) window() (calls, fails int64) { return f.Window() }

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

// foldWithin brings the next health fold to within every of now when it is due later: a
// Reconfigure that lowers HealthEvery takes effect at once, not after the old period (up
// to an hour). A later fold is never pushed back.
func (c *Client) foldWithin(every time.Duration) {
	want := c.now() + int64(every)
	for {
		next := c.nextFold.Load()
		if next <= want || c.nextFold.CompareAndSwap(next, want) {
			return
		}
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
	f.Push(s.Calls, s.Fails)
	f.win.Add(now, s)
	f.lastRate = float64(s.Calls) / math.Max(secs, 1e-9)
	nv := *old
	if avail, ok := f.availability(now, e.prof.Timeout, health.Sample{}); ok && s.Calls >= minFoldCalls {
		nv.avail = avail
		f.Judge(old.avail, nv.avail, e.s.routing.MinHealth)
	}
	if s.OKCalls > 0 { // the first measured calls seed the EWMA: not blended with the prior
		nv.ewma, nv.latSeen = health.EWMA(old.ewma, s.MeanLatency(), old.latSeen), true
	}
	nv.pool = poolOf(f.Demoted())
	nv.gate = score.TrafficGate(f.lastRate, e.safeRate())
	f.mu.Unlock()
	c.rebuildView(e, &nv)
	e.view.Store(&nv)
	return old.pool, nv.pool, nv.pool != old.pool
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
	back := f.Promote()
	if back {
		f.ClearWindow()
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
	f.Reset()
	f.win.Reset()
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
	return e.pairQ.Factor(src, tgt, int(scene))
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
	t, has := lang.BuildPairTable(e.prof.PairQuality, sceneNames[:], c.langID, func(s int, q float64) float64 {
		return math.Exp((q - e.quality[s]) * rp.Weights.Quality / rp.Temperature)
	})
	e.pairQ = &pairQuality{PairTable: t, legal: has&(1<<SceneLegal) != 0}
}

// langID is the router's id of a language ("*" is 0).
func (c *Client) langID(tag string) int {
	if tag == "*" {
		return 0
	}
	in, _ := c.langs.Lookup(tag) // validated
	return in.ID
}

// validatePairQuality checks PairQuality's keys (lang.ParseKey: "en-de", "*-ja",
// "zh-Hant-en", "en-de/legal") and values (0..100).
func validatePairQuality(field string, m map[string]float64) error {
	if name, problem := lang.CheckKeys(m, sceneNames[:]); problem != "" {
		return configError(field, name+": "+problem)
	}
	return nil
}
