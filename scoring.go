package translate

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
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
	Weights     Weights       // zero means Quality 0.40, Availability 0.25, Speed 0.20, Cost 0.15
	Temperature float64       // softmax temperature in score points; 0 means 20/ln(7/3) (90 vs 70 -> 70/30)
	MinHealth   float64       // availability below this excludes an engine; 0 means 0.8
	Sticky      bool          // same text -> same engine among the candidates (rendezvous hashing)
	HealthEvery time.Duration // health statistics fold period; 0 means 10s
	// LegalMinQuality is the quality an engine needs for SceneLegal; 0 means 90.
	LegalMinQuality float64
	// ChatMaxLatency is the recent (EWMA) latency above which an engine is not used for
	// SceneChat; 0 means 3s.
	ChatMaxLatency time.Duration
}

// DefaultTemperature splits traffic about 70/30 between scores 90 and 70.
var DefaultTemperature = 20 / math.Log(7.0/3.0)

func (p RoutingPolicy) withDefaults() RoutingPolicy {
	if p.Weights == (Weights{}) {
		p.Weights = DefaultWeights
	}
	if p.Temperature == 0 {
		p.Temperature = DefaultTemperature
	}
	if p.MinHealth == 0 {
		p.MinHealth = 0.8
	}
	if p.HealthEvery == 0 {
		p.HealthEvery = 10 * time.Second
	}
	if p.LegalMinQuality == 0 {
		p.LegalMinQuality = 90
	}
	if p.ChatMaxLatency == 0 {
		p.ChatMaxLatency = 3 * time.Second
	}
	return p
}

func (p RoutingPolicy) validate() error {
	if p.Weights != (Weights{}) {
		if err := p.Weights.validate(); err != nil {
			return err
		}
	}
	switch {
	case p.Temperature < 0 || math.IsNaN(p.Temperature):
		return configError("RoutingPolicy.Temperature", "must not be negative")
	case p.MinHealth < 0 || p.MinHealth > 1:
		return configError("RoutingPolicy.MinHealth", "must be within 0..1")
	case p.HealthEvery < 0:
		return configError("RoutingPolicy.HealthEvery", "must not be negative")
	case p.LegalMinQuality < 0 || p.LegalMinQuality > 100:
		return configError("RoutingPolicy.LegalMinQuality", "must be within 0..100")
	case p.ChatMaxLatency < 0:
		return configError("RoutingPolicy.ChatMaxLatency", "must not be negative")
	}
	return nil
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

// healthFolds is how many folds the availability window spans (one minute at 10s).
const healthFolds = 6

// minFoldCalls is how many calls a fold needs to move an engine's standing.
const minFoldCalls = 5

// initialLatency is the EWMA latency assumed before an engine has been observed.
const initialLatency = 300 * time.Millisecond

// ewmaAlpha weights the newest fold's mean latency in the EWMA.
const ewmaAlpha = 0.3

// view is an engine's routing standing, rebuilt at each fold and read lock-free.
type view struct {
	avail   float64 // 0..1 over the last healthFolds folds
	speed   float64 // 0..100
	ewma    time.Duration
	pool    Pool
	score   [len(sceneNames)]float64 // 0..100 per scene
	weight  [len(sceneNames)]float64 // exp(score/T) x traffic gate
	sceneOK [len(sceneNames)]bool    // scene rules
	gate    float64                  // traffic gate factor 0..1
}

// healthStripes is how many stripes the call counters are spread over, so that requests on
// different cores seldom write the same cache line.
const healthStripes = 8

// healthStripe is one stripe of counters, padded to two cache lines: Go does not align
// structs to cache lines, and a stripe must share no line with another or with the fields
// the router reads on every request.
type healthStripe struct {
	calls, fails, okCalls atomic.Int64
	latNanos              atomic.Int64 // sum of successful calls' latencies
	served                atomic.Int64 // successful real calls since the last probe round
	_                     [88]byte
}

// health collects an engine's call statistics between folds. Recording is lock-free.
type health struct {
	_       [128]byte // keeps the stripes off the lines of the fields before them
	stripes [healthStripes]healthStripe

	mu       sync.Mutex // guards the fold state below
	winCalls [healthFolds]int64
	winFails [healthFolds]int64
	pos      int
	drops    int // consecutive folds with an availability drop over 15%
	good     int // consecutive good folds while in the fallback pool
	demoted  bool
	lastRate float64 // requests per second over the last fold
}

// record records one call, in the stripe chosen by key (any well-mixed number, such as the
// request's hash).
func (h *health) record(key uint64, ok bool, latency time.Duration) {
	s := &h.stripes[key%healthStripes]
	s.calls.Add(1)
	if !ok {
		s.fails.Add(1)
		return
	}
	s.okCalls.Add(1)
	s.latNanos.Add(int64(latency))
}

// served counts a successful real call, for the prober.
func (h *health) served(key uint64) { h.stripes[key%healthStripes].served.Add(1) }

// takeServed returns and resets the successful real calls since the last call.
func (h *health) takeServed() int64 {
	var n int64
	for i := range h.stripes {
		n += h.stripes[i].served.Swap(0)
	}
	return n
}

// take returns and resets the counters of the fold.
func (h *health) take() (calls, fails, okCalls, latNanos int64) {
	for i := range h.stripes {
		s := &h.stripes[i]
		calls += s.calls.Swap(0)
		fails += s.fails.Swap(0)
		okCalls += s.okCalls.Swap(0)
		latNanos += s.latNanos.Swap(0)
	}
	return
}
