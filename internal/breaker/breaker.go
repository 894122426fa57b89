// Package breaker is one circuit breaker: failsafe-go's circuitbreaker as the state machine
// and permit keeper, with the count window ratio, the growing cooldown and the clock kept
// here (failsafe-go's open delay runs on the wall clock; this one runs on the caller's
// clock). The translate package keeps the policy (BreakerPolicy, per-scene breakers, what a
// transition does to routing and health); this package keeps the mechanism.
package breaker

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/failsafe-go/failsafe-go/circuitbreaker"
)

// State is a breaker's state; the values are those of translate.BreakerState.
type State uint8

// Breaker states.
const (
	Closed State = iota
	Open
	HalfOpen
)

func fromFailsafe(s circuitbreaker.State) State {
	switch s {
	case circuitbreaker.OpenState:
		return Open
	case circuitbreaker.HalfOpenState:
		return HalfOpen
	}
	return Closed
}

// Settings are a breaker's thresholds, defaults applied.
type Settings struct {
	Window, MinCalls, HalfOpenCalls int
	FailureRatio                    float64
	Cooldown, MaxCooldown           time.Duration // the first open time; the most it doubles to
}

// A Breaker is one circuit breaker. Every Acquire that returns true must be followed by
// exactly one Record. Set it up with Init; safe for concurrent use after that.
type Breaker struct {
	cb       circuitbreaker.CircuitBreaker[any]
	minCalls uint
	ratio    float64
	cooldown time.Duration
	maxCool  time.Duration
	now      func() time.Time

	state     atomic.Uint32 // State, mirrored after every operation
	openUntil atomic.Int64  // unix nanos; meaningful while open
	// clean is set while the breaker is closed and its window is full of successes:
	// recording another success then changes no count, so it is skipped, and a healthy
	// engine's calls take no lock.
	clean  atomic.Bool
	window uint

	mu      sync.Mutex // guards reopens and serialises transitions bookkeeping
	reopens int
	out     *atomic.Int32 // the owner's count of breakers not closed
}

// Init sets b up, closed, with s, the clock now and out, a count of breakers not closed
// that b keeps up to date.
func (b *Breaker) Init(s Settings, now func() time.Time, out *atomic.Int32) {
	b.cb = circuitbreaker.NewBuilder[any]().
		// Never opens by itself: the threshold exceeds the window. We open it on the ratio.
		WithFailureThresholdRatio(uint(s.Window)+1, uint(s.Window)).
		WithSuccessThresholdRatio(uint(s.HalfOpenCalls), uint(s.HalfOpenCalls)).
		// Never half-opens by itself: we do, on our clock.
		WithDelay(time.Duration(math.MaxInt64)).
		Build()
	b.minCalls, b.ratio, b.cooldown, b.maxCool = uint(s.MinCalls), s.FailureRatio, s.Cooldown, s.MaxCooldown
	b.now, b.window, b.out = now, uint(s.Window), out
}

// Allowed reports, without side effects, whether the breaker would let a call through now
// (closed, half-open, or open with its cooldown over) and whether that call is a trial.
func (b *Breaker) Allowed(nowNanos int64) (ok, trial bool) {
	switch State(b.state.Load()) {
	case Closed:
		return true, false
	case HalfOpen:
		return true, true
	}
	return nowNanos >= b.openUntil.Load(), true
}

// Acquire takes a permit. It half-opens an open breaker whose cooldown is over. A closed
// breaker's permits are free and unlimited in failsafe-go (taking one changes nothing), so
// while closed none is taken and the lock is spared; the call is still recorded once.
func (b *Breaker) Acquire() (ok bool, tr Transition) {
	switch State(b.state.Load()) {
	case Closed:
		return true, Transition{}
	case Open:
		if b.now().UnixNano() >= b.openUntil.Load() {
			b.cb.HalfOpen()
		}
	}
	ok = b.cb.TryAcquirePermit()
	return ok, b.sync()
}

// Record records the outcome of a permitted call.
func (b *Breaker) Record(success bool) Transition {
	if success {
		if b.clean.Load() {
			return Transition{}
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

// Transition describes a state change, for metrics and logs; From == To means none.
type Transition struct{ From, To State }

// sync mirrors failsafe-go's state and, on a move to open, starts the cooldown, doubling it
// for every re-open from half-open (at most MaxCooldown).
func (b *Breaker) sync() Transition {
	to := fromFailsafe(b.cb.State())
	from := State(b.state.Swap(uint32(to)))
	if from == to {
		return Transition{from, to}
	}
	// The swap orders the transitions: each leaves or reaches closed once.
	switch {
	case from == Closed:
		b.out.Add(1)
	case to == Closed:
		b.out.Add(-1)
	}
	b.clean.Store(false)
	b.mu.Lock()
	switch to {
	case Open:
		if from == HalfOpen {
			b.reopens++
		}
		d := b.cooldown
		for i := 0; i < b.reopens && d < b.maxCool; i++ {
			d *= 2
		}
		d = min(d, b.maxCool)
		b.openUntil.Store(b.now().Add(d).UnixNano())
	case Closed:
		b.reopens = 0
	}
	b.mu.Unlock()
	return Transition{from, to}
}

// OpenUntil is the end of the cooldown, in unix nanoseconds; meaningful while open.
func (b *Breaker) OpenUntil() int64 { return b.openUntil.Load() }

// Current is the breaker's state.
func (b *Breaker) Current() State { return State(b.state.Load()) }

// SetForTest sets the mirrored state and the end of the cooldown directly, for tests of
// the readers (Allowed, Current); failsafe-go's state is not changed.
func (b *Breaker) SetForTest(s State, openUntil int64) {
	b.state.Store(uint32(s))
	b.openUntil.Store(openUntil)
}
