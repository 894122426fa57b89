package translate

import (
	"context"
	"fmt"
	"testing"
)

type nopEngine struct{ name string }

func (e nopEngine) Name() string { return e.name }
func (nopEngine) Translate(context.Context, *EngineRequest) (*EngineResult, error) {
	return &EngineResult{Texts: []string{"x"}}, nil
}

func benchDecision(b *testing.B, n int) {
	var opts []Option
	for i := 0; i < n; i++ {
		opts = append(opts, WithEngine(nopEngine{fmt.Sprint("e", i)}, Profile{Quality: float64(50 + i%50)}))
	}
	c, err := New(opts...) // the default configuration: unseeded draws
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var r request
	if err := c.prepare(&Request{Text: "hello world", Source: "en", Target: "es"}, &r, c.now()); err != nil {
		b.Fatal(err)
	}
	now := c.clock.Now().UnixNano()
	buf := make([]candidate, 0, n)
	var excl set
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		cands := c.filter(&r, &excl, stageNormal, now, buf[:0])
		if c.pick(&r, cands, c.draw(&r)) == nil {
			b.Fatal("no pick")
		}
	}
}

// BenchmarkDecision8 is one routing decision (filter, score, pick) over 8 engines.
func BenchmarkDecision8(b *testing.B) { benchDecision(b, 8) }

// BenchmarkDecision100 is one routing decision over 100 engines.
func BenchmarkDecision100(b *testing.B) { benchDecision(b, 100) }
