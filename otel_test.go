package translate_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// sdkOptions returns the options of the telemetry benchmarks: a real SDK that samples
// every span (and drops it at End, with no processor) and a manual reader.
func sdkOptions(t testing.TB) []translate.Option {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	t.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	return []translate.Option{translate.WithTracerProvider(tp), translate.WithMeterProvider(mp)}
}

// TestAllocsMissSDK holds what the real SDK adds to a miss: the request's span (the span,
// its context and the copy of its attributes) and nothing else. A first attempt that
// succeeds has no span of its own, and every attribute set is built before the request:
// one built per request (attribute.NewSet, metric.WithAttributes) allocates. A fresh hit
// makes no span by default and stays at 0.
func TestAllocsMissSDK(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops some of what it is given under the race detector: counts are not exact")
	}
	miss := allocsPerRequest(t, engineClient(t, 1, false, append(sdkOptions(t), translate.WithoutCache())...), benchReq)
	hit := allocsPerRequest(t, engineClient(t, 1, false, sdkOptions(t)...), benchReq)
	if miss > 4 || hit > 0 {
		t.Errorf("with the SDK: miss %.2f allocations, hit %.2f; want at most 4 (the Result, the request's span, its context, its attributes) and 0", miss, hit)
	}
}

// TestTelemetryFirstAttemptSpanDatedBack checks the span of a first attempt that failed:
// made when it ended, it is the request span's child and covers exactly the attempt's
// latency, as the Result reports it, inside the request's span.
func TestTelemetryFirstAttemptSpanDatedBack(t *testing.T) {
	tel, opts := newTelemetry(t)
	a, b := fake.New("a"), fake.New("b")
	a.Script(fake.Fail(translate.KindUnavailable))
	c := newClient(t, append(opts, translate.WithClock(newClock()), sharp,
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		translate.WithEngine(a, primary), translate.WithEngine(b, secondary))...)
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil || len(res.Attempts) != 2 {
		t.Fatalf("Translate = %+v, %v; want a's failure, then b's answer", res, err)
	}
	ended := tel.spans.Ended()
	if len(ended) != 3 {
		t.Fatalf("%d spans, want a's attempt, b's attempt and the request's", len(ended))
	}
	first, root := ended[0], ended[2]
	type timing struct {
		Parent   trace.SpanID
		Duration string
		Inside   bool
	}
	got := timing{first.Parent().SpanID(), first.EndTime().Sub(first.StartTime()).String(),
		!first.StartTime().Before(root.StartTime()) && !first.EndTime().After(root.EndTime())}
	want := timing{root.SpanContext().SpanID(), res.Attempts[0].Latency.String(), true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first attempt's span (-want +got):\n%s", diff)
	}
}

// TestTelemetryExemplars checks where the SDK's exemplars (trace-based, its default) point:
// request durations at the request's span, attempt durations at the attempt's own span
// when it has one, and nowhere for a first attempt that succeeded (it has no span), nor for
// the attempts and cost per request. The histograms themselves are exact.
func TestTelemetryExemplars(t *testing.T) {
	tel, opts := newTelemetry(t)
	a, b := fake.New("a"), fake.New("b")
	a.Script(fake.Fail(translate.KindUnavailable)) // "hello": a fails, b answers
	c := newClient(t, append(opts, translate.WithClock(newClock()), sharp,
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		translate.WithEngine(a, translate.Profile{Quality: 100, CostPerMillion: 20}),
		translate.WithEngine(b, translate.Profile{Quality: 1, CostPerMillion: 20}))...)
	for _, text := range []string{"hello", "good morning"} { // "good morning": a answers
		if _, err := c.Translate(context.Background(), req(text)); err != nil {
			t.Fatal(err)
		}
	}
	names := map[trace.SpanID]string{}
	for _, s := range tel.spans.Ended() {
		name := s.Name()
		if v, ok := attrValue(s.Attributes(), "translate.attempt"); ok {
			e, _ := attrValue(s.Attributes(), "translate.engine")
			name += " " + e + " " + v
		}
		names[s.SpanContext().SpanID()] = name
	}
	got := map[string][]string{}
	for _, m := range tel.metrics(t) {
		forEachPoint(m, func(key string, exemplars []trace.SpanID) {
			var at []string
			for _, id := range exemplars {
				at = append(at, names[id])
			}
			slices.Sort(at)
			got[key] = slices.Compact(at)
		})
	}
	want := map[string][]string{
		"translate.request.duration{cache_hit=false,degraded=false,outcome=ok}": {"translate.Translate"},
		"translate.attempt.duration{engine=a}":                                  {"translate.attempt a 1"},
		"translate.attempt.duration{engine=b}":                                  {"translate.attempt b 2"},
		"translate.request.attempts{}":                                          nil,
		"translate.request.cost{}":                                              nil,
		"translate.routing.decision.duration{}":                                 nil,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exemplars of each histogram, by the span they point at (-want +got):\n%s", diff)
	}
	attempts := tel.metrics(t)["translate.request.attempts"].Data.(metricdata.Histogram[int64]).DataPoints[0]
	type point struct {
		Count    uint64
		Sum      int64
		Buckets  []uint64
		Min, Max int64
	}
	mn, _ := attempts.Min.Value()
	mx, _ := attempts.Max.Value()
	if diff := cmp.Diff(point{2, 3, []uint64{1, 1, 0, 0, 0, 0, 0, 0, 0}, 1, 2},
		point{attempts.Count, attempts.Sum, attempts.BucketCounts, mn, mx}); diff != "" {
		t.Errorf("translate.request.attempts (-want +got):\n%s", diff)
	}
}

// forEachPoint calls f with the "name{attrs}" key and the exemplars' span ids of every
// data point of the histogram m.
func forEachPoint(m metricdata.Metrics, f func(key string, exemplars []trace.SpanID)) {
	switch d := m.Data.(type) {
	case metricdata.Histogram[float64]:
		eachPoint(m.Name, d.DataPoints, f)
	case metricdata.Histogram[int64]:
		eachPoint(m.Name, d.DataPoints, f)
	}
}

func eachPoint[N int64 | float64](name string, dps []metricdata.HistogramDataPoint[N], f func(string, []trace.SpanID)) {
	for _, p := range dps {
		var ids []trace.SpanID
		for _, e := range p.Exemplars {
			ids = append(ids, trace.SpanID(e.SpanID))
		}
		f(fmt.Sprintf("%s{%s}", name, attrKey(p.Attributes)), ids)
	}
}

// wallClockProvider is a tracer provider (not the SDK) whose spans tell a start time read
// from some other clock: a fixed wall time, with no monotonic reading.
type wallClockProvider struct{ embedded.TracerProvider }

func (wallClockProvider) Tracer(string, ...trace.TracerOption) trace.Tracer { return wallClockTracer{} }

type wallClockTracer struct{ embedded.Tracer }

func (wallClockTracer) Start(ctx context.Context, _ string, _ ...trace.SpanStartOption) (context.Context, trace.Span) {
	s := wallClockSpan{tracenoop.Span{}}
	return trace.ContextWithSpan(ctx, s), s
}

type wallClockSpan struct{ tracenoop.Span }

func (wallClockSpan) StartTime() time.Time { return time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC) }

// TestLatencyIgnoresAForeignSpanClock: the request's clock starts with its span's only when
// that start was read from this process's monotonic clock (the SDK's is); a span that tells
// a start time from another clock leaves the request to read its own.
func TestLatencyIgnoresAForeignSpanClock(t *testing.T) {
	c := newClient(t, translate.WithTracerProvider(wallClockProvider{}), translate.WithoutCache(),
		translate.WithEngine(fake.New("a"), translate.Profile{}))
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Latency < 0 || res.Latency > time.Minute {
		t.Errorf("Latency = %v, want the call's own (under a minute)", res.Latency)
	}
}
