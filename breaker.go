package translate

import (
	"cmp"
	"sync/atomic"
	"time"

	cb "github.com/fanyi-go/translate/internal/breaker"
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
	p.Window = cmp.Or(p.Window, 40)
	p.MinCalls = cmp.Or(p.MinCalls, 20)
	p.FailureRatio = cmp.Or(p.FailureRatio, 0.5)
	p.Cooldown = cmp.Or(p.Cooldown, 10*time.Second)
	p.HalfOpenCalls = cmp.Or(p.HalfOpenCalls, 5)
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

// breaker is one circuit breaker (mechanism in internal/breaker). Every acquire that
// returns true must be followed by exactly one record.
type breaker struct{ cb.Breaker }

func newBreaker(p BreakerPolicy, now func() time.Time, out *atomic.Int32) *breaker {
	b := new(breaker)
	b.Init(cb.Settings{Window: p.Window, MinCalls: p.MinCalls, HalfOpenCalls: p.HalfOpenCalls,
		FailureRatio: p.FailureRatio, Cooldown: p.Cooldown, MaxCooldown: maxCooldown}, now, out)
	return b
}

// allowed reports, without side effects, whether the breaker would let a call through now
// and whether that call is a trial.
func (b *breaker) allowed(nowNanos int64) (ok, trial bool) { return b.Allowed(nowNanos) }

// acquire takes a permit, half-opening an open breaker whose cooldown is over.
func (b *breaker) acquire() (bool, transition) {
	ok, t := b.Acquire()
	return ok, moved(t)
}

// record records the outcome of a permitted call.
func (b *breaker) record(success bool) transition { return moved(b.Record(success)) }

func (b *breaker) current() BreakerState { return BreakerState(b.Current()) }

// transition describes a state change, for metrics and logs; from == to means none.
type transition struct{ from, to BreakerState }

func moved(t cb.Transition) transition {
	return transition{BreakerState(t.From), BreakerState(t.To)}
}

func (t transition) changed() bool { return t.from != t.to }

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
