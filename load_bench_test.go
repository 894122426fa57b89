package translate_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/fanyi-go/translate"
)

// loadEngine is a remote engine's stand-in: it answers after the delay its request asks for
// (encoded in the text's first byte: 20 + b%61 ms), on a timer, and reads ctx.Done() as an
// HTTP engine does.
type loadEngine struct{ res *translate.EngineResult }

func (*loadEngine) Name() string { return "loadEngine" }

func (s *loadEngine) Translate(ctx context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	t := time.NewTimer(loadDelay(r.Texts[0]))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return s.res, nil
	}
}

func loadDelay(text string) time.Duration {
	return time.Duration(20+int(text[0])%61) * time.Millisecond
}

// loadTexts are the texts of the load benchmarks: distinct, so that none is coalesced.
var loadTexts = func() []string {
	t := make([]string, 8192)
	for i := range t {
		t[i] = fmt.Sprintf("%c load text %d", rune('a'+i%61), i)
	}
	return t
}()

// BenchmarkLoad is 2,000 goroutines translating for 3 s through an engine that takes 20 to
// 80 ms, the way a busy service does: "direct" calls the engine itself under a
// context.WithTimeout, "client" goes through a Client (cache off, so every request reaches
// the engine), "client-sdk" adds the OpenTelemetry SDK (every span sampled, a manual
// reader). It reports CPU time (user + system) per request, allocations per request, and
// the p99 of the time a request took beyond its engine's delay. Run it alone with
// -benchtime 1x: it ignores b.N.
func BenchmarkLoad(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		e := &loadEngine{res: &translate.EngineResult{Texts: []string{"hola"}}}
		runLoad(b, func(ctx context.Context, text string) error {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			_, err := e.Translate(ctx, &translate.EngineRequest{Texts: []string{text}})
			return err
		})
	})
	b.Run("client", func(b *testing.B) { runLoad(b, loadClient(b)) })
	b.Run("client-sdk", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() {
			tp.Shutdown(context.Background())
			mp.Shutdown(context.Background())
		})
		runLoad(b, loadClient(b, translate.WithTracerProvider(tp), translate.WithMeterProvider(mp)))
	})
}

func loadClient(b *testing.B, opts ...translate.Option) func(context.Context, string) error {
	c, err := translate.New(append([]translate.Option{translate.WithoutCache(),
		translate.WithEngine(&loadEngine{res: &translate.EngineResult{Texts: []string{"hola"}}}, translate.Profile{})}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return func(ctx context.Context, text string) error {
		_, err := c.Translate(ctx, translate.Request{Text: text, Source: "en", Target: "es"})
		return err
	}
}

const (
	loadGoroutines = 2000
	loadFor        = 3 * time.Second
)

// runLoad runs call from loadGoroutines goroutines for loadFor and reports the figures.
func runLoad(b *testing.B, call func(context.Context, string) error) {
	ctx := context.Background()
	var n, failed atomic.Int64
	added := make([][]time.Duration, loadGoroutines)
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuTime()
	stop := time.Now().Add(loadFor)
	var wg sync.WaitGroup
	for g := range loadGoroutines {
		wg.Go(func() {
			for i := g; time.Now().Before(stop); i += loadGoroutines {
				text := loadTexts[i%len(loadTexts)]
				t0 := time.Now()
				if err := call(ctx, text); err != nil {
					failed.Add(1)
				}
				added[g] = append(added[g], time.Since(t0)-loadDelay(text))
				n.Add(1)
			}
		})
	}
	wg.Wait()
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&ms1)
	all := slices.Concat(added...)
	slices.Sort(all)
	reqs := float64(n.Load())
	b.ReportMetric(float64(cpu.Microseconds())/reqs, "cpu-us/req")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/reqs, "allocs/req")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/reqs, "B/req")
	b.ReportMetric(float64(all[len(all)*99/100])/1e6, "p99-added-ms")
	b.ReportMetric(reqs/loadFor.Seconds(), "req/s")
	if failed.Load() > 0 {
		b.Errorf("%d of %.0f requests failed", failed.Load(), reqs)
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// parkEngine answers when its gate closes (or its ctx ends), and counts the calls that
// reached it and those of them the Client made on its runner's goroutines (pooled) rather
// than inline, on the caller's. A text starting with "warm" is answered at once and not
// counted: parkedGC sends such calls to keep the engine's inline calls earned (a Client
// calls an engine inline only while one of its calls returned within the last
// deadline.Stall, 10 ms, and parking 2,000 calls takes longer than that).
type parkEngine struct {
	in     chan struct{} // a call reached the engine
	gate   chan struct{}
	pooled atomic.Int64
}

func (*parkEngine) Name() string { return "parkEngine" }

func (p *parkEngine) Translate(ctx context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	if strings.HasPrefix(r.Texts[0], "warm") {
		return &translate.EngineResult{Texts: []string{"hola"}}, nil
	}
	if onRunner() {
		p.pooled.Add(1)
	}
	p.in <- struct{}{}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.gate:
		return &translate.EngineResult{Texts: []string{"hola"}}, nil
	}
}

// onRunner reports whether the caller runs on a goroutine of a Client's call runner
// (internal/deadline.Runner) rather than on the goroutine that called Translate.
func onRunner() bool {
	pc := make([]uintptr, 32)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "deadline.(*Runner)") {
			return true
		}
		if !more {
			return false
		}
	}
}

// BenchmarkLoadGC is what BenchmarkLoad's tail is made of: the work of one garbage
// collection while 2,000 requests wait inside their engine call, per request in flight.
// Under load every request that allocates while a collection marks waits for it (mark
// assists), so the Client's added p99 follows how long a mark takes, and a mark's work
// grows with what each waiting request keeps: its goroutine's stack (frames to unwind,
// pointers to follow) and the heap it holds. It reports, per request in flight, the mark
// CPU (runtime/metrics' estimate, over b.N forced collections) and the stack and heap
// bytes a mark scanned; "direct" waits under context.WithTimeout, as BenchmarkLoad's does.
func BenchmarkLoadGC(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		p := &parkEngine{}
		parkedGC(b, p, func(ctx context.Context, text string) error {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			_, err := p.Translate(ctx, &translate.EngineRequest{Texts: []string{text}})
			return err
		})
	})
	b.Run("client", func(b *testing.B) {
		p := &parkEngine{}
		c, err := translate.New(translate.WithoutCache(), translate.WithEngine(p, translate.Profile{}))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		parkedGC(b, p, func(ctx context.Context, text string) error {
			_, err := c.Translate(ctx, translate.Request{Text: text, Source: "en", Target: "es"})
			return err
		})
	})
}

// parkedGC parks loadGoroutines calls in p, one after the other (after a first round of
// 100, which earns a Client's engine its inline calls), collects b.N times and reports the
// figures, and the share of the parked calls that a Client made on its runner's
// goroutines: 0 when they all run inline, as under BenchmarkLoad's steady traffic (each
// pooled call adds a goroutine and its stack to what a collection scans). Parked all at
// once, without the calls that keep inline calls earned, 5% to 70% of them were pooled,
// a different share each run.
func parkedGC(b *testing.B, p *parkEngine, call func(context.Context, string) error) {
	mark := []metrics.Sample{{Name: "/cpu/classes/gc/mark/assist:cpu-seconds"},
		{Name: "/cpu/classes/gc/mark/dedicated:cpu-seconds"}, {Name: "/cpu/classes/gc/mark/idle:cpu-seconds"}}
	markCPU := func() float64 {
		metrics.Read(mark)
		return mark[0].Value.Float64() + mark[1].Value.Float64() + mark[2].Value.Float64()
	}
	for round, n := range []int{100, loadGoroutines} {
		p.gate, p.in = make(chan struct{}), make(chan struct{}, 1)
		p.pooled.Store(0)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if err := call(context.Background(), loadTexts[i]); err != nil {
					b.Error(err)
				}
			})
			<-p.in
			if i%64 == 63 {
				call(context.Background(), fmt.Sprint("warm ", i))
			}
		}
		if round == 1 {
			runtime.GC()
			cpu0 := markCPU()
			b.ResetTimer()
			for b.Loop() {
				runtime.GC()
			}
			b.StopTimer()
			scan := []metrics.Sample{{Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/heap:bytes"}}
			metrics.Read(scan)
			b.ReportMetric((markCPU()-cpu0)*1e6/float64(b.N)/float64(n), "mark-us/inflight")
			b.ReportMetric(float64(scan[0].Value.Uint64())/float64(n), "stack-B/inflight")
			b.ReportMetric(float64(scan[1].Value.Uint64())/float64(n), "heap-B/inflight")
			b.ReportMetric(float64(p.pooled.Load())/float64(n), "pooled/inflight")
		}
		close(p.gate)
		wg.Wait()
	}
}
