package translate_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// gate is the traffic gate as the design states it: an engine's weight is multiplied by 1
// while its recent rate is below 70% of its safe rate, by a factor falling linearly to 0.1
// at 100%, and by 0.1 beyond.
func gate(rate, safe float64) float64 {
	u := rate / safe
	switch {
	case u <= 0.7:
		return 1
	case u >= 1:
		return 0.1
	}
	return 1 - 0.9*(u-0.7)/0.3
}

// TestTrafficGate sends n requests to two equal engines within one fold period, folds, and
// measures how the next requests split. A takes about half of the first requests, so its
// rate over the fold is about n/2 per 10s; its weight then falls by gate(rate, A's safe
// rate) while B (safe rate 1000, far above what it gets) keeps its own. Nothing fails.
func TestTrafficGate(t *testing.T) {
	const (
		fold  = 10 * time.Second // RoutingPolicy.HealthEvery's default
		after = 2000             // requests measured after the fold
	)
	for _, tc := range []struct {
		name  string
		safeA float64
		n     int
		lowA  bool // A's share must fall well below B's
	}{
		{"A at its safe rate", 10, 200, true},           // ~10 rps: gate ~0.1
		{"A in the ramp", 10, 170, true},                // ~8.5 rps: gate ~0.55
		{"A far below its safe rate", 1000, 200, false}, // ~10 rps of 1000: unaffected
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			a, b := fake.New("a"), fake.New("b")
			c := newClient(t, translate.WithClock(clk),
				translate.WithEngine(a, translate.Profile{SafeRate: tc.safeA}),
				translate.WithEngine(b, translate.Profile{SafeRate: 1000}))
			send := func(n int, tag string) {
				t.Helper()
				for i := range n {
					if _, err := c.Translate(context.Background(), req(fmt.Sprint(tag, i))); err != nil {
						t.Fatalf("request %s%d: %v", tag, i, err)
					}
				}
			}

			send(tc.n, "before ")
			callsA, callsB := a.Calls(), b.Calls()
			if share := float64(callsA) / float64(tc.n); math.Abs(share-0.5) > 0.1 {
				t.Fatalf("before the fold A took %.2f of the traffic, want about half", share)
			}
			clk.Advance(fold) // the next request folds: A ran at callsA/10s
			send(after, "after ")

			rateA, rateB := float64(callsA)/fold.Seconds(), float64(callsB)/fold.Seconds()
			gA, gB := gate(rateA, tc.safeA), gate(rateB, 1000)
			if gB != 1 {
				t.Fatalf("B's gate %v: the test wants B far below its safe rate", gB)
			}
			want := gA / (gA + gB) // equal scores: shares follow the gates
			got := float64(a.Calls()-callsA) / after
			t.Logf("A: %.1f rps of %v safe, gate %.3f: share %.3f, want %.3f", rateA, tc.safeA, gA, got, want)
			if math.Abs(got-want) > 0.03 {
				t.Errorf("A's share after the fold %.3f, want %.3f ± 0.03 (gate %.3f)", got, want, gA)
			}
			if tc.lowA && got > 0.75*(1-got) {
				t.Errorf("A's share %.3f is not well below B's %.3f", got, 1-got)
			}
			for _, s := range c.Engines() {
				if s.Health < 0.999 || s.Pool != translate.PoolNormal { // below 1 only by its latency factor
					t.Errorf("%s: health %v, pool %v; the gate must act before anything fails", s.Name, s.Health, s.Pool)
				}
			}
		})
	}
}
