package translate_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/fanyi-go/translate"
)

// noop is the cheapest possible engine: it returns a prepared result.
type noop struct{ res *translate.EngineResult }

func newNoop() *noop { return &noop{res: &translate.EngineResult{Texts: []string{"hola"}}} }

func (*noop) Name() string { return "noop" }
func (n *noop) Translate(context.Context, *translate.EngineRequest) (*translate.EngineResult, error) {
	return n.res, nil
}

// floorEngine is a package variable so the compiler cannot devirtualise the call.
var floorEngine translate.Engine = newNoop()

// BenchmarkFloor is a direct call of a no-op engine through the Engine interface: every
// other benchmark is read as a multiple of it.
func BenchmarkFloor(b *testing.B) {
	e := floorEngine
	ctx := context.Background()
	r := &translate.EngineRequest{Texts: []string{"hello"}}
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := e.Translate(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
}

// BenchmarkFloorParallel is BenchmarkFloor from every P: no shared state and no allocation,
// so its scaling from -cpu 1 to -cpu 2 is what the machine gives at that moment, the ceiling
// for MissParallel's. The parallel benchmarks report cpu-ns/op too: the process's CPU per
// op, which, read at -cpu 2 against -cpu 1, shows what sharing costs even on a busy machine.
func BenchmarkFloorParallel(b *testing.B) {
	e := floorEngine
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		r := &translate.EngineRequest{Texts: []string{"hello"}}
		for pb.Next() {
			if _, err := e.Translate(ctx, r); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportCPU(b, cpu0)
}

func benchClient(b *testing.B, opts ...translate.Option) *translate.Client {
	c, err := translate.New(append([]translate.Option{translate.WithSeed(1),
		translate.WithEngine(newNoop(), translate.Profile{})}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

var benchReq = translate.Request{Text: "hello world", Source: "en", Target: "es", RequestID: ""}

func BenchmarkCacheHit(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	if _, err := c.Translate(ctx, benchReq); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Translate(ctx, benchReq); err != nil {
			b.Fatal(err)
		}
	}
}

// lruKey has the shape of the Client's cache key: the text, the interned source and target
// ids, scene and style.
type lruKey struct {
	text         string
	src, tgt     int32
	scene, style int
}

// BenchmarkLRUGet is golang-lru/v2's Get (its thread-safe Cache) holding one Result: the
// yardstick for BenchmarkCacheHit. "key" is a key shaped as the Client's cache key,
// "string" the text alone (the cheapest key golang-lru can have for it).
func BenchmarkLRUGet(b *testing.B) {
	b.Run("key", func(b *testing.B) {
		benchLRUGet(b, lruKey{text: benchReq.Text, src: 1, tgt: 2, scene: 0, style: 0})
	})
	b.Run("string", func(b *testing.B) { benchLRUGet(b, benchReq.Text) })
}

func benchLRUGet[K comparable](b *testing.B, k K) {
	c, err := lru.New[K, *translate.Result](10000)
	if err != nil {
		b.Fatal(err)
	}
	c.Add(k, &translate.Result{Text: "hola"})
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.Get(k); !ok {
			b.Fatal("miss")
		}
	}
}

// BenchmarkMiss reports cpu-ns/op beside ns/op: the process's CPU per miss, GC included,
// which a busy machine moves less than the wall time.
func BenchmarkMiss(b *testing.B) {
	c := benchClient(b, translate.WithoutCache())
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := c.Translate(ctx, benchReq); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
}

// ctxNoop is noop that reads ctx.Done() before it answers, as every HTTP engine does.
type ctxNoop struct{ noop }

func (n *ctxNoop) Translate(ctx context.Context, _ *translate.EngineRequest) (*translate.EngineResult, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
		return n.res, nil
	}
}

// BenchmarkMissCtxEngine is BenchmarkMiss with an engine that reads ctx.Done().
func BenchmarkMissCtxEngine(b *testing.B) { benchMissWith(b, &ctxNoop{*newNoop()}) }

// deriveNoop derives a context from its own and reads its Done, as net/http does for every
// request of a client with a Timeout.
type deriveNoop struct{ noop }

func (n *deriveNoop) Translate(ctx context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return (&ctxNoop{n.noop}).Translate(ctx, r)
}

// BenchmarkMissDerivedCtxEngine is BenchmarkMiss with an engine that derives a context.
func BenchmarkMissDerivedCtxEngine(b *testing.B) { benchMissWith(b, &deriveNoop{*newNoop()}) }

func benchMissWith(b *testing.B, e translate.Engine) {
	c, err := translate.New(translate.WithSeed(1), translate.WithoutCache(), translate.WithEngine(e, translate.Profile{}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Translate(ctx, benchReq); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCacheHitParallel is BenchmarkCacheHit from every P: one hot entry, the common
// case of a popular string. Read at -cpu 2 against -cpu 1: every hit adds to the request
// counters, and when both cores added to one line (the text's stripe) two cores served
// fewer hits than one.
func BenchmarkCacheHitParallel(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	if _, err := c.Translate(ctx, benchReq); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Translate(ctx, benchReq); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportCPU(b, cpu0)
}

// BenchmarkMissParallel gives each goroutine its own text: identical concurrent misses
// would be coalesced into one engine call. Its draws come from the seeded sequence.
func BenchmarkMissParallel(b *testing.B) {
	benchMissParallel(b, benchClient(b, translate.WithoutCache()))
}

// BenchmarkMissParallelUnseeded is BenchmarkMissParallel without WithSeed: draws come from
// the runtime's random source.
func BenchmarkMissParallelUnseeded(b *testing.B) {
	c, err := translate.New(translate.WithEngine(newNoop(), translate.Profile{}), translate.WithoutCache())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	benchMissParallel(b, c)
}

func benchMissParallel(b *testing.B, c *translate.Client) {
	ctx := context.Background()
	var n atomic.Int64
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		r := benchReq
		r.Text = fmt.Sprint("hello world ", n.Add(1))
		for pb.Next() {
			if _, err := c.Translate(ctx, r); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportCPU(b, cpu0)
}

// named is a no-op engine with a name of its own.
type named struct {
	noop
	name string
}

func (n *named) Name() string { return n.name }

// BenchmarkMissEngines is a miss among n engines: allocations must not grow with n.
func BenchmarkMissEngines(b *testing.B) {
	for _, n := range []int{8, 32, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			opts := []translate.Option{translate.WithSeed(1), translate.WithoutCache()}
			for i := range n {
				opts = append(opts, translate.WithEngine(&named{*newNoop(), fmt.Sprint("e", i)}, translate.Profile{}))
			}
			c, err := translate.New(opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Translate(ctx, benchReq); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMissParallelHot is BenchmarkMissParallel with one text for every goroutine:
// identical concurrent misses, which the Client merges into one engine call (a flight).
func BenchmarkMissParallelHot(b *testing.B) {
	c := benchClient(b, translate.WithoutCache())
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Translate(ctx, benchReq); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportCPU(b, cpu0)
}
