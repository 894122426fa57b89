package translate_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
)

// packer answers a call of n texts with n prepared texts after a fixed latency (none when
// 0), and counts its calls.
type packer struct {
	d     time.Duration
	out   []string
	calls atomic.Int64
}

func newPacker(d time.Duration) *packer {
	out := make([]string, 1000)
	for i := range out {
		out[i] = "hola"
	}
	return &packer{d: d, out: out}
}

func (*packer) Name() string { return "packer" }

func (p *packer) Translate(ctx context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	p.calls.Add(1)
	if p.d > 0 {
		t := time.NewTimer(p.d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &translate.EngineResult{Texts: p.out[:len(r.Texts)]}, nil
}

// benchBatchItems is the size of the benchmarks' batch: 1,000 short texts.
const benchBatchItems = 1000

// benchShortTexts returns n distinct requests of 20 to 60 characters.
func benchShortTexts(n int) []translate.Request {
	reqs := make([]translate.Request, n)
	for i := range reqs {
		reqs[i] = req(fmt.Sprintf("item %04d of the catalogue ", i) + strings.Repeat("x", i%33))
	}
	return reqs
}

// BenchmarkBatch is 1,000 short texts (20-60 characters) through TranslateBatch, cache off,
// to an engine that takes 50 texts per call (packed, like DeepL) or one (unpacked, as
// before packing), answering at once (noop: the Client's own cost) or after 1ms (a fast
// vendor round trip). It reports engine calls per batch (calls/op) and the cost of one
// item (ns/item).
func BenchmarkBatch(b *testing.B) {
	for _, bc := range []struct {
		name     string
		maxTexts int
		latency  time.Duration
	}{
		{"packed/noop", 50, 0},
		{"unpacked/noop", 1, 0},
		{"packed/1ms", 50, time.Millisecond},
		{"unpacked/1ms", 1, time.Millisecond},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := newPacker(bc.latency)
			c, err := translate.New(translate.WithSeed(1), translate.WithoutCache(),
				translate.WithEngine(p, translate.Profile{MaxTexts: bc.maxTexts, MaxChars: 5000}))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			reqs := benchShortTexts(benchBatchItems)
			b.ReportAllocs()
			for b.Loop() {
				for i, br := range c.TranslateBatch(context.Background(), reqs) {
					if br.Err != nil {
						b.Fatalf("item %d: %v", i, br.Err)
					}
				}
			}
			b.ReportMetric(float64(p.calls.Load())/float64(b.N), "calls/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchBatchItems, "ns/item")
		})
	}
}
