package translate_test

import (
	"context"
	"testing"

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
	for b.Loop() {
		if _, err := c.Translate(ctx, benchReq); err != nil {
			b.Fatal(err)
		}
	}
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

func benchHit(b *testing.B, opts ...translate.Option) {
	c := benchClient(b, opts...)
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
