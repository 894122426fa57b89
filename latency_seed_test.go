package translate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// TestLatencyEWMASeededFromFirstCalls: before any call an engine's recent latency is the 300ms
// prior; the first fold with successful calls replaces it with their mean (a 5ms engine used
// to show 0.3*5 + 0.7*300 = 211ms after one fold, in Engines() and /v1/engines); later folds
// blend 30% of the new mean into it. Latency is measured on real time, so the bounds are loose.
func TestLatencyEWMASeededFromFirstCalls(t *testing.T) {
	clk := newClock()
	e := fake.New("e", fake.WithLatency(5*time.Millisecond))
	c := newClient(t, translate.WithClock(clk), translate.WithEngine(e, translate.Profile{}))
	if got := c.Engines()[0].LatencyEWMA; got != 300*time.Millisecond {
		t.Fatalf("LatencyEWMA before any call = %v, want the 300ms prior", got)
	}
	calls := func(phase string) {
		for i := range 5 {
			if _, err := c.Translate(context.Background(), req(fmt.Sprint(phase, i))); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(10 * time.Second) // the next Engines() folds
	}
	calls("first ")
	first := c.Engines()[0].LatencyEWMA
	if first < 5*time.Millisecond || first >= 150*time.Millisecond {
		t.Fatalf("LatencyEWMA after one fold of 5ms calls = %v, want their mean (at least 5ms, far under the prior)", first)
	}
	e.SetLatency(0)
	calls("second ")
	// Blended: 0.7*first + 0.3*(a mean >= 0). Seeded again, it would be the instant calls' mean.
	if second := c.Engines()[0].LatencyEWMA; second < first*69/100 {
		t.Errorf("LatencyEWMA after a second fold of instant calls = %v, want at least 0.7 x %v (blended)", second, first)
	}
}
