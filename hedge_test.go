package translate_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// tail runs 1000 requests in a synctest bubble (virtual time: latencies are exact and the
// machine's load cannot move them) against a top engine that takes 100ms on 98% of calls
// and 3s on 2%, beside a second engine at 150ms. It returns the p99 latency and the calls
// made beyond one per request.
func tail(t *testing.T, rp translate.RetryPolicy, opts ...translate.Option) (p99 time.Duration, extra int) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int64
		a := fake.New("a", fake.WithLatencyFunc(func() time.Duration {
			if n.Add(1)%50 == 0 {
				return 3 * time.Second
			}
			return 100 * time.Millisecond
		}))
		b := fake.New("b", fake.WithLatency(150*time.Millisecond))
		base := []translate.Option{translate.WithSeed(1), translate.WithoutCache(), sharp,
			translate.WithEngine(a, translate.Profile{Quality: 100, Timeout: 5 * time.Second}),
			translate.WithEngine(b, translate.Profile{Quality: 1}), translate.WithRetry(rp)}
		c, err := translate.New(append(base, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		const requests = 1000
		lat := make([]time.Duration, 0, requests)
		for i := range requests {
			t0 := time.Now()
			if _, err := c.Translate(context.Background(), req(fmt.Sprintf("text %d", i))); err != nil {
				t.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		synctest.Wait() // abandoned hedges settle
		slices.Sort(lat)
		p99 = lat[requests*99/100-1]
		extra = a.Calls() + b.Calls() - requests
	})
	return p99, extra
}

// TestHedgingCutsTheTail: the target: with HedgeAfter 300ms, p99 at most 600ms
// (about 3s without), extra calls at most 5%.
func TestHedgingCutsTheTail(t *testing.T) {
	p99, extra := tail(t, translate.RetryPolicy{})
	t.Logf("without hedging: p99 %v, %d extra calls in 1000 requests", p99, extra)
	if p99 < 3*time.Second {
		t.Fatalf("without hedging p99 %v: the scenario has no tail", p99)
	}
	p99, extra = tail(t, translate.RetryPolicy{HedgeAfter: 300 * time.Millisecond})
	t.Logf("HedgeAfter 300ms: p99 %v, %d extra calls in 1000 requests", p99, extra)
	if p99 > 600*time.Millisecond || extra > 50 {
		t.Errorf("hedged: p99 %v (want <= 600ms), %d extra calls (want <= 50)", p99, extra)
	}
	if extra == 0 {
		t.Errorf("no hedge was sent")
	}
}

// TestHedgeBudgetBoundsExtraCalls: when every call of the top engine is slow, hedges stop
// at HedgeBudget of the calls (plus the tokens a bucket may hold).
func TestHedgeBudgetBoundsExtraCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var canceled atomic.Int64 // a's calls canceled because the hedge answered first
		a := fake.New("a", fake.WithLatency(time.Second), fake.WithWait(func(ctx context.Context, d time.Duration) error {
			select {
			case <-time.After(d):
				return nil
			case <-ctx.Done():
				canceled.Add(1)
				return ctx.Err()
			}
		}))
		b := fake.New("b", fake.WithLatency(10*time.Millisecond))
		c := newClient(t, sharp, translate.WithEngine(a, translate.Profile{Quality: 100, Timeout: 5 * time.Second}),
			translate.WithEngine(b, translate.Profile{Quality: 1}),
			translate.WithRetry(translate.RetryPolicy{HedgeAfter: 100 * time.Millisecond, HedgeBudget: 0.1}))
		for i := range 200 {
			if _, err := c.Translate(context.Background(), req(fmt.Sprintf("text %d", i))); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if hedges := b.Calls(); hedges > 20 || hedges < 15 {
			t.Errorf("%d hedges for 200 requests with HedgeBudget 0.1, want 15..20", hedges)
		}
		if got := canceled.Load(); got != int64(b.Calls()) {
			t.Errorf("%d of a's calls canceled, want one per hedge (%d)", got, b.Calls())
		}
		c.Close()
	})
}

// TestHedgeNeverPastEconomy: past the economy threshold no hedge is sent, and a hedge
// is charged when sent: the canceled call's cost counts.
func TestHedgeNeverPastEconomy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := fake.New("a", fake.WithLatency(time.Second))
		b := fake.New("b", fake.WithLatency(10*time.Millisecond))
		c := newClient(t, sharp,
			translate.WithEngine(a, translate.Profile{Quality: 100, Timeout: 5 * time.Second, CostPerMillion: 1000}),
			translate.WithEngine(b, translate.Profile{Quality: 1, CostPerMillion: 1000}),
			translate.WithBudget(translate.Budget{Daily: 1, EconomyAt: 0.5}),
			translate.WithRetry(translate.RetryPolicy{HedgeAfter: 100 * time.Millisecond, HedgeBudget: 1}))
		// Each call reserves 0.006 credits (6 characters): run until the budget passes 50%.
		var hedgedCost bool
		for i := 0; c.Budget().Spent < 0.55; i++ {
			res, err := c.Translate(context.Background(), req(fmt.Sprintf("text%02d", i%100)))
			if err != nil {
				t.Fatal(err)
			}
			if res.Engine == "b" && len(res.Attempts) == 2 && res.Cost > 0.007 {
				hedgedCost = true // a's canceled call and b's answer
			}
			synctest.Wait()
		}
		if !hedgedCost {
			t.Errorf("no hedged result carried the canceled call's cost")
		}
		before := b.Calls()
		for i := range 20 {
			if _, err := c.Translate(context.Background(), req(fmt.Sprintf("late%02d", i))); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if got := b.Calls() - before; got != 0 {
			t.Errorf("%d hedges past the economy threshold", got)
		}
		c.Close()
	})
}
