package translate

import (
	"fmt"
	"testing"
)

// BenchmarkDecision8PairQuality is BenchmarkDecision8 with PairQuality on every engine,
// one key of which names the request's pair: the lookup's cost per decision.
func BenchmarkDecision8PairQuality(b *testing.B) {
	var opts []Option
	for i := range 8 {
		p := Profile{Quality: float64(50 + i), PairQuality: map[string]float64{"en-es": float64(60 + i), "*-ja": 90, "en-de/legal": 95}}
		opts = append(opts, WithEngine(nopEngine{fmt.Sprint("e", i)}, p))
	}
	c, err := New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var r request
	if err := c.prepare(&Request{Text: "hello world", Source: "en", Target: "es"}, &r, c.now()); err != nil {
		b.Fatal(err)
	}
	now := c.clock.Now().UnixNano()
	buf := make([]candidate, 0, 8)
	var excl set
	b.ReportAllocs()
	for b.Loop() {
		cands := c.filter(&r, &excl, stageNormal, now, buf[:0])
		if c.pick(&r, cands, c.draw(&r)) == nil {
			b.Fatal("no pick")
		}
	}
}
