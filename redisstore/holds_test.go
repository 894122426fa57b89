package redisstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/internal/clock"
	"github.com/fanyi-go/translate/redisstore"
)

// These tests run Clients sharing a Store on a real redis-server: an engine that one
// replica finds down is held out on every replica (seed 003 §6), probed by one replica at a
// time, and back everywhere once a probe passes; breakers stay local.

// vendor is one vendor's service as every replica reaches it: down or not, slow or not,
// with the calls in flight counted across replicas.
type vendor struct {
	down     atomic.Bool
	kind     translate.Kind // of the failure while down; KindUnknown: KindUnavailable
	delay    time.Duration
	inflight atomic.Int32
	most     atomic.Int32 // the most calls in flight at once
	probes   atomic.Int32 // calls with the probes' text ("hello")
}

// vendorEngine is one replica's adapter for the vendor: it counts its own calls.
type vendorEngine struct {
	name  string
	v     *vendor
	calls atomic.Int32
	last  atomic.Int64 // unix nanos of its last call
}

func (e *vendorEngine) Name() string { return e.name }

func (e *vendorEngine) Translate(ctx context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	e.calls.Add(1)
	e.last.Store(time.Now().UnixNano())
	if r.Texts[0] == "hello" {
		e.v.probes.Add(1)
	}
	n := e.v.inflight.Add(1)
	defer e.v.inflight.Add(-1)
	for {
		m := e.v.most.Load()
		if n <= m || e.v.most.CompareAndSwap(m, n) {
			break
		}
	}
	if e.v.delay > 0 {
		select {
		case <-time.After(e.v.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if e.v.down.Load() {
		kind := e.v.kind
		if kind == translate.KindUnknown {
			kind = translate.KindUnavailable
		}
		return nil, &translate.Error{Kind: kind, Engine: e.name, Message: "vendor refused"}
	}
	out := make([]string, len(r.Texts))
	for i, t := range r.Texts {
		out[i] = "[es] " + reverse(t)
	}
	return &translate.EngineResult{Texts: out}, nil
}

// fakeClock is the Clients' clock: Now moves only when the test says; Sleep waits in real
// time.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	return clock.System{}.Sleep(ctx, d)
}

// holdReplica is one Client over the vendor's engine "x" (preferred) and a healthy "y",
// sharing a Store under prefix that reads the holds every 20ms.
type holdReplica struct {
	c *translate.Client
	x *vendorEngine
}

func newHoldReplica(t *testing.T, addr, prefix string, v *vendor, clk translate.Clock, br translate.BreakerPolicy) *holdReplica {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, DisableIdentity: true})
	t.Cleanup(func() { _ = rdb.Close() })
	st, err := redisstore.New(rdb, redisstore.WithPrefix(prefix), redisstore.WithTimeout(2*time.Second),
		redisstore.WithHoldPoll(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	x := &vendorEngine{name: "x", v: v}
	y := &vendorEngine{name: "y", v: &vendor{}}
	opts := []translate.Option{translate.WithSeed(1), translate.WithStore(st), translate.WithBreaker(br),
		translate.WithEngine(x, translate.Profile{Quality: 95, Timeout: 2 * time.Second}),
		translate.WithEngine(y, translate.Profile{Quality: 60, Timeout: 2 * time.Second})}
	if clk != nil {
		opts = append(opts, translate.WithClock(clk))
	}
	c, err := translate.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	t.Cleanup(func() { _ = st.Flush(context.Background()) })
	return &holdReplica{c: c, x: x}
}

// touchy opens after two calls of which one failed, and stays open a minute.
var touchy = translate.BreakerPolicy{Window: 4, MinCalls: 2, Cooldown: time.Minute}

// stubborn takes 10,000 calls to open: it never opens within a test.
var stubborn = translate.BreakerPolicy{Window: 10000, MinCalls: 10000}

var nreq atomic.Int64

// ask sends one request pinned to x with fallback (a new text each time: no cache hit) and
// returns the engine that answered.
func (r *holdReplica) ask(t *testing.T) string {
	t.Helper()
	n := nreq.Add(1)
	res, err := r.c.Translate(context.Background(), translate.Request{Text: fmt.Sprintf("hold text %06d", n),
		Source: "en", Target: "es", Engine: "x", AllowFallback: true})
	if err != nil {
		t.Fatalf("Translate: %v (a hold must never fail a request that another engine can serve)", err)
	}
	return res.Engine
}

func breakerOf(c *translate.Client, name string) translate.BreakerState {
	for _, s := range c.Engines() {
		if s.Name == name {
			return s.Breaker
		}
	}
	return translate.BreakerClosed
}

// openOn sends requests through r until its breaker for x opens.
func openOn(t *testing.T, r *holdReplica) {
	t.Helper()
	for i := 0; breakerOf(r.c, "x") != translate.BreakerOpen; i++ {
		if i == 20 {
			t.Fatal("x's breaker never opened on the failing replica")
		}
		r.ask(t)
	}
}

// An engine that replica A finds down (its breaker opens), out of quota or unauthorized is
// out of routing on replica B within 1 s, although B never saw it fail enough to open its
// own breaker (B's stays closed).
func TestEngineDownOnOneReplicaIsHeldOnAll(t *testing.T) {
	for _, kind := range []translate.Kind{translate.KindUnavailable, translate.KindQuotaExhausted, translate.KindUnauthorized} {
		t.Run(kind.String(), func(t *testing.T) { heldOnAll(t, kind) })
	}
}

func heldOnAll(t *testing.T, kind translate.Kind) {
	srv := needRedis(t)
	v := &vendor{kind: kind}
	prefix := fmt.Sprintf("holds1-%d:", time.Now().UnixNano())
	a := newHoldReplica(t, srv.Addr, prefix, v, nil, touchy)
	b := newHoldReplica(t, srv.Addr, prefix, v, nil, stubborn)
	if got := b.ask(t); got != "x" {
		t.Fatalf("before the outage B's request went to %q, want x", got)
	}
	v.down.Store(true)
	if kind == translate.KindUnavailable {
		openOn(t, a)
	} else {
		a.ask(t) // one refusal holds it
	}
	opened := time.Now()
	for time.Since(opened) < 1500*time.Millisecond {
		if got := b.ask(t); got != "y" && time.Since(opened) > time.Second {
			t.Fatalf("%v after A found x down B's request went to %q, want y", time.Since(opened), got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if last := time.Unix(0, b.x.last.Load()); last.Sub(opened) > time.Second {
		t.Errorf("B called x %v after A found it down, want none after 1s", last.Sub(opened))
	}
	if st := breakerOf(b.c, "x"); st != translate.BreakerClosed {
		t.Errorf("B's breaker for x is %v, want closed: a shared hold leaves breakers alone", st)
	}
	t.Logf("B called x %d times in all, the last %v after A found it down", b.x.calls.Load(),
		time.Unix(0, b.x.last.Load()).Sub(opened))
}

// With x held on 4 replicas, the recovery probes all fall due at once: one replica probes
// (the others find the probe lock taken), the engine sees one probe in flight at most, and
// once it passes x is back on every replica but the one whose own breaker is still open.
func TestHeldEngineIsProbedByOneReplicaAndComesBackEverywhere(t *testing.T) {
	srv := needRedis(t)
	v := &vendor{delay: 300 * time.Millisecond}
	clk := &fakeClock{}
	clk.ns.Store(time.Now().UnixNano())
	prefix := fmt.Sprintf("holds2-%d:", time.Now().UnixNano())
	rs := []*holdReplica{newHoldReplica(t, srv.Addr, prefix, v, clk, touchy)}
	for range 3 {
		rs = append(rs, newHoldReplica(t, srv.Addr, prefix, v, clk, translate.BreakerPolicy{}))
	}
	v.down.Store(true)
	openOn(t, rs[0])
	time.Sleep(time.Second) // every replica reads the hold (every 20ms) and starts its probe period
	v.down.Store(false)
	v.most.Store(0)
	clk.advance(6 * time.Second) // past holdProbeEvery: every replica's probe is due
	deadline := time.Now().Add(10 * time.Second)
	for v.probes.Load() == 0 || v.inflight.Load() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no probe of x within 10s (%d probes, %d in flight)", v.probes.Load(), v.inflight.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // a replica that probes without the lock would have started by now
	if most, probes := v.most.Load(), v.probes.Load(); most != 1 || probes != 1 {
		t.Errorf("x saw %d probes, at most %d at once; want one probe across the 4 replicas", probes, most)
	}
	for i, r := range rs[1:] {
		back := false
		for end := time.Now().Add(time.Second); !back && time.Now().Before(end); {
			back = r.ask(t) == "x"
		}
		if !back {
			t.Errorf("replica %d: x not back within 1s of the passing probe", i+1)
		}
	}
	if st := breakerOf(rs[0].c, "x"); st != translate.BreakerOpen {
		t.Errorf("A's breaker for x is %v, want still open: breakers stay local", st)
	}
	if got := rs[0].ask(t); got != "y" {
		t.Errorf("A (its breaker open) sent a request to %q, want y", got)
	}
}

// With Redis gone, holds stay local: the replica whose breaker opens keeps x out by its
// breaker alone, no request fails for the hold or the probe lock, and the other replica
// goes on with its own view (it still calls x).
func TestHoldsWithoutRedisStayLocal(t *testing.T) {
	srv := needRedis(t)
	v := &vendor{}
	prefix := fmt.Sprintf("holds3-%d:", time.Now().UnixNano())
	a := newHoldReplica(t, srv.Addr, prefix, v, nil, touchy)
	b := newHoldReplica(t, srv.Addr, prefix, v, nil, stubborn)
	a.ask(t)
	b.ask(t)
	srv.Stop()
	v.down.Store(true)
	openOn(t, a) // ask fails the test on any error
	before := b.x.calls.Load()
	for range 5 {
		if got := a.ask(t); got != "y" {
			t.Errorf("A (breaker open) answered from %q, want y", got)
		}
		b.ask(t)
	}
	if b.x.calls.Load() == before {
		t.Error("B stopped calling x without Redis: it cannot know of A's breaker")
	}
}
