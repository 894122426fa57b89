package translate_test

import (
	"context"
	"testing"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/fanyi-go/translate"
)

func benchMiss(b *testing.B, opts ...translate.Option) {
	c := benchClient(b, append([]translate.Option{translate.WithoutCache()}, opts...)...)
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

// reportCPU reports the process's CPU time (user and system, GC included) per iteration
// since cpu0: on a shared machine it varies less than ns/op, which counts the time the
// benchmark waited for a core.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkMissSDK is BenchmarkMiss with a real SDK: every span sampled (and dropped at
// End, with no processor), every measurement aggregated by a manual reader.
func BenchmarkMissSDK(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	benchMiss(b, translate.WithTracerProvider(tp), translate.WithMeterProvider(mp))
}

// BenchmarkMissNoProvider is BenchmarkMiss with explicit no-op providers.
func BenchmarkMissNoProvider(b *testing.B) {
	benchMiss(b, translate.WithTracerProvider(tracenoop.NewTracerProvider()),
		translate.WithMeterProvider(metricnoop.NewMeterProvider()))
}

// BenchmarkMissSDKMeter is BenchmarkMiss with the SDK's meter of BenchmarkMissSDK and no
// tracer (an explicit no-op one): what the four histogram records of a miss cost by
// themselves.
func BenchmarkMissSDKMeter(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { mp.Shutdown(context.Background()) })
	benchMiss(b, translate.WithTracerProvider(tracenoop.NewTracerProvider()), translate.WithMeterProvider(mp))
}

// BenchmarkMissSDKSampled is BenchmarkMissSDK with the sampler a production service
// usually runs: one trace in 100 sampled (parent-based), so that nearly every request span
// is started and not recorded.
func BenchmarkMissSDKSampled(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01))))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	benchMiss(b, translate.WithTracerProvider(tp), translate.WithMeterProvider(mp))
}

func benchHit(b *testing.B, opts ...translate.Option) {
	c := benchClient(b, opts...)
	ctx := context.Background()
	if _, err := c.Translate(ctx, benchReq); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := c.Translate(ctx, benchReq); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
}

// BenchmarkCacheHitSDK is BenchmarkCacheHit with the real SDK of BenchmarkMissSDK.
func BenchmarkCacheHitSDK(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	benchHit(b, translate.WithTracerProvider(tp), translate.WithMeterProvider(mp))
}

// BenchmarkCacheHitNoProvider is BenchmarkCacheHit with explicit no-op providers.
func BenchmarkCacheHitNoProvider(b *testing.B) {
	benchHit(b, translate.WithTracerProvider(tracenoop.NewTracerProvider()),
		translate.WithMeterProvider(metricnoop.NewMeterProvider()))
}

// BenchmarkSpanSDK is the floor under BenchmarkMissSDK's request span: the SDK of
// BenchmarkMissSDK (every span sampled, no processor) starting and ending one span with no
// attribute, as a request does before its attributes and records. Read against
// BenchmarkMissNoProvider, it says how much of the 2x the SDK's span takes by itself.
func BenchmarkSpanSDK(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	b.Cleanup(func() { tp.Shutdown(context.Background()) })
	tr := tp.Tracer("github.com/fanyi-go/translate")
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		_, span := tr.Start(ctx, "translate.Translate")
		span.End()
	}
	reportCPU(b, cpu0)
}
