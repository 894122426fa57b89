package translate_test

import (
	"context"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
)

// sleeper answers every text with "hola" after a fixed latency, waited on a timer that
// honours ctx: a stand-in for a vendor round trip.
type sleeper struct {
	noop
	d time.Duration
}

func (s *sleeper) Translate(ctx context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	t := time.NewTimer(s.d)
	defer t.Stop()
	select {
	case <-t.C:
		return s.noop.Translate(ctx, r)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// benchEngine is the no-op engine for latency 0, a sleeper otherwise.
func benchEngine(latency time.Duration) translate.Engine {
	if latency == 0 {
		return newNoop()
	}
	return &sleeper{noop: *newNoop(), d: latency}
}

// benchDocSegments is the size of the benchmarks' document: 200 paragraphs.
const benchDocSegments = 200

// streamBench runs f once per iteration over a Client on one engine of the given latency
// (cache off, WithBatchConcurrency default: 8), and reports besides ns/op the mean time to
// the first chunk (first-ms/op), the whole (total-ms/op) and the cost of one segment
// (ns/segment).
func streamBench(b *testing.B, latency time.Duration, f func(c *translate.Client, doc string) (first time.Duration)) {
	c := benchClientOn(b, benchEngine(latency), translate.WithoutCache())
	doc := parts(benchDocSegments)
	var first, total time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		first += f(c, doc)
		total += time.Since(t0)
	}
	n := float64(b.N)
	b.ReportMetric(first.Seconds()*1e3/n, "first-ms/op")
	b.ReportMetric(total.Seconds()*1e3/n, "total-ms/op")
	b.ReportMetric(float64(total.Nanoseconds())/n/benchDocSegments, "ns/segment")
}

// benchClientOn is a Client on e alone, closed when the benchmark ends. The engine takes
// 10 code points a call (perParagraph), so that every paragraph of the document is a
// segment of its own, as before short paragraphs were merged.
func benchClientOn(b *testing.B, e translate.Engine, opts ...translate.Option) *translate.Client {
	c, err := translate.New(append([]translate.Option{translate.WithSeed(1), translate.WithEngine(e, perParagraph)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// BenchmarkStream is a 200-paragraph document through TranslateStream, with an engine that
// answers at once (the Client's own cost per segment) and one that takes 1ms (a fast
// vendor round trip): first-ms/op is the time to the first chunk, total-ms/op the whole.
func BenchmarkStream(b *testing.B) {
	for _, bc := range []struct {
		name    string
		latency time.Duration
	}{{"noop", 0}, {"1ms", time.Millisecond}} {
		b.Run(bc.name, func(b *testing.B) {
			streamBench(b, bc.latency, func(c *translate.Client, doc string) (first time.Duration) {
				t0 := time.Now()
				n := 0
				for ch, err := range c.TranslateStream(context.Background(), req(doc)) {
					if err != nil {
						b.Fatal(err)
					}
					if n == 0 {
						first = time.Since(t0)
					}
					n++
					_ = ch
				}
				if n != benchDocSegments {
					b.Fatalf("%d chunks, want %d", n, benchDocSegments)
				}
				return first
			})
		})
	}
}

// BenchmarkStreamSequential is BenchmarkStream's baseline: the same 200 paragraphs, each
// through Translate, one after another.
func BenchmarkStreamSequential(b *testing.B) {
	for _, bc := range []struct {
		name    string
		latency time.Duration
	}{{"noop", 0}, {"1ms", time.Millisecond}} {
		b.Run(bc.name, func(b *testing.B) {
			streamBench(b, bc.latency, func(c *translate.Client, _ string) (first time.Duration) {
				t0 := time.Now()
				for i := range benchDocSegments {
					if _, err := c.Translate(context.Background(), req(benchParts[i])); err != nil {
						b.Fatal(err)
					}
					if i == 0 {
						first = time.Since(t0)
					}
				}
				return first
			})
		})
	}
}

// benchParts are the paragraphs of parts(benchDocSegments).
var benchParts = func() []string {
	ps := make([]string, benchDocSegments)
	for i := range ps {
		ps[i] = partText(i)
	}
	return ps
}()
