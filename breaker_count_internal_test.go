package translate

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

// TestBreakerCountFollowsStates holds engineLive.brOut, which filter reads instead of each
// breaker's state, to the breakers: through random calls, failures and cooldowns over
// per-scene breakers, the count is always the number of breakers not closed.
func TestBreakerCountFollowsStates(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var ns atomic.Int64
	now := func() time.Time { return time.Unix(0, ns.Load()) }
	var out atomic.Int32
	p := BreakerPolicy{Window: 4, MinCalls: 2, Cooldown: time.Second, HalfOpenCalls: 2, PerScene: true}.withDefaults()
	bs := newBreakers(p, now, &out)
	moves := 0
	for step := range 5000 {
		b := bs.bs[rng.IntN(len(bs.bs))]
		if rng.IntN(10) == 0 {
			ns.Add(int64(600 * time.Millisecond))
		}
		if ok, tr := b.acquire(); ok {
			moves += b2i(tr.changed())
			moves += b2i(b.record(rng.IntN(3) > 0).changed())
		}
		want := int32(0)
		for _, x := range bs.bs {
			want += int32(b2i(x.current() != BreakerClosed))
		}
		if got := out.Load(); got != want {
			t.Fatalf("step %d: brOut %d, breakers not closed %d", step, got, want)
		}
	}
	if moves < 100 {
		t.Fatalf("only %d transitions: the walk proves little", moves)
	}
}

// TestFilterSeesBreakerOpenedByCalls: a breaker opened by recorded failures, not set by
// hand, makes filter agree with exclude; the Client wires its breakers to the engine's count.
func TestFilterSeesBreakerOpenedByCalls(t *testing.T) {
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c, err := New(WithClock(fixedClock{start}), WithoutCache(), WithEngine(nopEngine{"a"}, Profile{}),
		WithEngine(nopEngine{"b"}, Profile{}), WithBreaker(BreakerPolicy{Window: 4, MinCalls: 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	e := c.cfg.Load().byName["a"]
	for range 2 {
		if ok, _ := e.br.one.acquire(); ok {
			e.br.one.record(false)
		}
	}
	if st := e.br.one.current(); st != BreakerOpen || e.brOut.Load() != 1 {
		t.Fatalf("after two failures: breaker %v, count %d; want open, 1", st, e.brOut.Load())
	}
	var r request
	now := start.UnixNano()
	if err := c.prepare(&Request{Text: "hi", Target: "de"}, &r, now); err != nil {
		t.Fatal(err)
	}
	var tried set
	got := filterAgrees(t, c, &r, &tried, stageNormal, now, 0)
	if len(got) != 1 || r.s.engines[got[0].i].name != "b" {
		t.Fatalf("candidates %+v; want b alone", got)
	}
}
