package translate

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/failsafe-go/failsafe-go/circuitbreaker"
)

// BreakerPolicy configures the circuit breakers. Zero fields mean the default written beside
// them.
type BreakerPolicy struct {
	Window        int           // calls in the sliding count window, 1..10000; 0 means 40
	MinCalls      int           // calls in the window before the ratio counts, 1..10000 and at most Window; 0 means 20
	FailureRatio  float64       // opens at or above, 0.2..0.9; 0 means 0.5
	Cooldown      time.Duration // open time before half-open, 1ns..5m; 0 means 10s; doubles per re-open, max 5m
	HalfOpenCalls int           // trial calls while half-open, 1..100; 0 means 5
	PerScene      bool          // one breaker per engine x scene instead of per engine
}

const maxCooldown = 5 * time.Minute

func (p BreakerPolicy) withDefaults() BreakerPolicy {
	if p.Window == 0 {
		p.Window = 40
	}
	if p.MinCalls == 0 {
		p.MinCalls = 20
	}
	if p.FailureRatio == 0 {
		p.FailureRatio = 0.5
	}
	if p.Cooldown == 0 {
		p.Cooldown = 10 * time.Second
	}
	if p.HalfOpenCalls == 0 {
		p.HalfOpenCalls = 5
	}
	return p
}

func (p BreakerPolicy) validate() error {
	if err := checkLimits("BreakerPolicy.", p); err != nil {
		return err
	}
	if d := p.withDefaults(); d.MinCalls > d.Window {
		return configError("BreakerPolicy.MinCalls", "must not exceed Window")
	}
	return nil
}

// BreakerState is the state of a circuit breaker. The zero value is BreakerClosed.
type BreakerState uint8

// Breaker states.
const (
	BreakerClosed BreakerState = iota
	BreakerOpen
	BreakerHalfOpen
)

// String returns "closed", "open" or "half-open".
func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerOpen:
		return "open"
	case BreakerHalfOpen:
		return "half-open"
	}
	return "breaker(" + itoa(int(s)) + ")"
}

func fromFailsafe(s circuitbreaker.State) BreakerState {
	switch s {
	case circuitbreaker.OpenState:
		return BreakerOpen
	case circuitbreaker.HalfOpenState:
		return BreakerHalfOpen
	}
	return BreakerClosed
}

// breaker is one circuit breaker: failsafe-go's circuitbreaker as the state machine and
// permit keeper, with the count window ratio, the growing cooldown and the clock kept here
// (failsafe-go's open delay runs on the wall clock; ours runs on the Client's Clock).
//
// Every acquire that returns true must be followed by exactly one record.
type breaker struct {
	cb       circuitbreaker.CircuitBreaker[any]
	minCalls uint
	ratio    float64
	cooldown time.Duration
	now      func() time.Time

	state     atomic.Uint32 // BreakerState, mirrored after every operation
	openUntil atomic.Int64  // unix nanos; meaningful while open
	// clean is set while the breaker is closed and its window is full of successes:
	// recording another success then changes no count, so it is skipped, and a healthy
	// engine's calls take no lock.
	clean  atomic.Bool
	window uint

	mu      sync.Mutex // guards reopens and serialises transitions bookkeeping
	reopens int
	out     *atomic.Int32 // the engine's count of breakers not closed (engineLive.brOut)
}

func newBreaker(p BreakerPolicy, now func() time.Time, out *atomic.Int32) *breaker {
	cb := circuitbreaker.NewBuilder[any]().
		// Never opens by itself: the threshold exceeds the window. We open it on the ratio.
		WithFailureThresholdRatio(uint(p.Window)+1, uint(p.Window)).
		WithSuccessThresholdRatio(uint(p.HalfOpenCalls), uint(p.HalfOpenCalls)).
		// Never half-opens by itself: we do, on our clock.
		WithDelay(time.Duration(math.MaxInt64)).
		Build()
	return &breaker{cb: cb, minCalls: uint(p.MinCalls), ratio: p.FailureRatio, cooldown: p.Cooldown, now: now, window: uint(p.Window), out: out}
}

// allowed reports, without side effects, whether the breaker would let a call through now
// (closed, half-open, or open with its cooldown over) and whether that call is a trial.
func (b *breaker) allowed(nowNanos int64) (ok, trial bool) {
	switch BreakerState(b.state.Load()) {
	case BreakerClosed:
		return true, false
	case BreakerHalfOpen:
		return true, true
	}
	return nowNanos >= b.openUntil.Load(), true
}

// acquire takes a permit. It half-opens an open breaker whose cooldown is over. A closed
// breaker's permits are free and unlimited in failsafe-go (taking one changes nothing), so
// while closed none is taken and the lock is spared; the call is still recorded once.
func (b *breaker) acquire() (ok bool, tr transition) {
	switch BreakerState(b.state.Load()) {
	case BreakerClosed:
		return true, transition{}
	case BreakerOpen:
		if b.now().UnixNano() >= b.openUntil.Load() {
			b.cb.HalfOpen()
		}
	}
	ok = b.cb.TryAcquirePermit()
	return ok, b.sync()
}

// record records the outcome of a permitted call.
func (b *breaker) record(success bool) transition {
	if success {
		if b.clean.Load() {
			return transition{}
		}
		b.cb.RecordSuccess()
		if b.cb.IsClosed() {
			if m := b.cb.Metrics(); m.Executions() >= b.window && m.Failures() == 0 {
				b.clean.Store(true)
			}
		}
	} else {
		b.clean.Store(false)
		b.cb.RecordFailure()
		if b.cb.IsClosed() {
			m := b.cb.Metrics()
			if m.Executions() >= b.minCalls && m.FailureRate() >= b.ratio {
				b.cb.Open()
			}
		}
	}
	return b.sync()
}

// transition describes a state change, for metrics and logs; from == to means none.
type transition struct{ from, to BreakerState }

func (t transition) changed() bool { return t.from != t.to }

// sync mirrors failsafe-go's state and, on a move to open, starts the cooldown, doubling it
// for every re-open from half-open (at most 5 minutes).
func (b *breaker) sync() transition {
	to := fromFailsafe(b.cb.State())
	from := BreakerState(b.state.Swap(uint32(to)))
	if from == to {
		return transition{from, to}
	}
	// The swap orders the transitions: each leaves or reaches closed once.
	switch {
	case from == BreakerClosed:
		b.out.Add(1)
	case to == BreakerClosed:
		b.out.Add(-1)
	}
	b.clean.Store(false)
	b.mu.Lock()
	switch to {
	case BreakerOpen:
		if from == BreakerHalfOpen {
			b.reopens++
		}
		d := b.cooldown
		for i := 0; i < b.reopens && d < maxCooldown; i++ {
			d *= 2
		}
		d = min(d, maxCooldown)
		b.openUntil.Store(b.now().Add(d).UnixNano())
	case BreakerClosed:
		b.reopens = 0
	}
	b.mu.Unlock()
	return transition{from, to}
}

func (b *breaker) current() BreakerState { return BreakerState(b.state.Load()) }

// breakers holds an engine's breaker, or one per scene.
type breakers struct {
	one *breaker // the engine's breaker; nil when per scene
	bs  []*breaker
}

func newBreakers(p BreakerPolicy, now func() time.Time, out *atomic.Int32) breakers {
	n := 1
	if p.PerScene {
		n = len(sceneNames)
	}
	s := breakers{bs: make([]*breaker, n)}
	for i := range s.bs {
		s.bs[i] = newBreaker(p, now, out)
	}
	if !p.PerScene {
		s.one = s.bs[0]
	}
	return s
}

func (s *breakers) of(scene Scene) *breaker {
	if s.one != nil {
		return s.one
	}
	return s.bs[scene] // scenes are validated
}

// worst returns the most restrictive state over the scenes, for status snapshots.
func (s *breakers) worst() BreakerState {
	w := BreakerClosed
	for _, b := range s.bs {
		switch st := b.current(); {
		case st == BreakerOpen:
			return BreakerOpen
		case st == BreakerHalfOpen:
			w = BreakerHalfOpen
		}
	}
	return w
}
