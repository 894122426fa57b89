package breaker

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestCooldownDoublesPerReopen: a breaker opens at the failure ratio after MinCalls, stays
// open for Cooldown, and each re-open from half-open doubles the cooldown up to
// MaxCooldown; a close resets it. out counts the breaker while it is not closed.
func TestCooldownDoublesPerReopen(t *testing.T) {
	var ns atomic.Int64
	now := func() time.Time { return time.Unix(0, ns.Load()) }
	var out atomic.Int32
	var b Breaker
	b.Init(Settings{Window: 4, MinCalls: 2, HalfOpenCalls: 1, FailureRatio: 0.5, Cooldown: time.Second, MaxCooldown: 3 * time.Second}, now, &out)
	fail := func() Transition {
		ok, _ := b.Acquire()
		if !ok {
			t.Fatalf("no permit at %v in state %d", time.Duration(ns.Load()), b.Current())
		}
		return b.Record(false)
	}
	fail()
	if tr := fail(); tr != (Transition{Closed, Open}) || out.Load() != 1 {
		t.Fatalf("second failure: %+v, out %d; want closed->open, 1", tr, out.Load())
	}
	for _, want := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second} {
		if got := time.Duration(b.OpenUntil() - ns.Load()); got != want {
			t.Fatalf("cooldown %v, want %v", got, want)
		}
		if ok, _ := b.Allowed(ns.Load() + int64(want) - 1); ok {
			t.Fatal("allowed before the cooldown ended")
		}
		ns.Add(int64(want))
		if tr := fail(); tr != (Transition{HalfOpen, Open}) {
			t.Fatalf("failed trial: %+v, want half-open->open", tr)
		}
	}
	ns.Add(int64(3 * time.Second))
	ok, _ := b.Acquire()
	if tr := b.Record(true); !ok || tr != (Transition{HalfOpen, Closed}) || out.Load() != 0 {
		t.Fatalf("good trial: %v %+v, out %d; want half-open->closed, 0", ok, tr, out.Load())
	}
}
