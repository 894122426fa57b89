package telemetry

import (
	"context"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/fanyi-go/translate/internal/tally"
)

// testOutcomes names outcome k "k<k>", and 0 "ok".
func testOutcomes() (o [NumOutcomes]string) {
	for k := range o {
		o[k] = fmt.Sprintf("k%d", k)
	}
	o[0] = "ok"
	return o
}

type quota struct {
	e    *Engine
	left int64
}

// harness is a Recorder under a real SDK: a manual reader and a span recorder.
type harness struct {
	r       *Recorder
	reader  *sdkmetric.ManualReader
	spans   *tracetest.SpanRecorder
	engines []quota // what Options.Engines yields
	walks   int     // how often it was walked
}

func newHarness(t *testing.T) *harness {
	h := &harness{r: new(Recorder), reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	t.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	var engines iter.Seq2[*Engine, int64] = func(yield func(*Engine, int64) bool) {
		h.walks++
		for _, q := range h.engines {
			if !yield(q.e, q.left) {
				return
			}
		}
	}
	if err := h.r.Init(Options{TracerProvider: tp, MeterProvider: mp, Outcomes: testOutcomes(), Engines: engines}); err != nil {
		t.Fatal(err)
	}
	return h
}

// collect returns every data point as name{attributes}: the value of a sum or a gauge,
// the count of a histogram.
func (h *harness) collect(t *testing.T) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			points(out, m)
		}
	}
	return out
}

func points(out map[string]float64, m metricdata.Metrics) {
	key := func(s attribute.Set) string { return m.Name + "{" + s.Encoded(attribute.DefaultEncoder()) + "}" }
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out[key(p.Attributes)] = float64(p.Value)
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			out[key(p.Attributes)] = p.Value
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			out[key(p.Attributes)] = float64(p.Value)
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			out[key(p.Attributes)] = float64(p.Count)
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			out[key(p.Attributes)] = float64(p.Count)
		}
	}
}

func TestRequestsAndLookupsCounted(t *testing.T) {
	type call struct {
		oc            int
		hit, degraded bool
		d             time.Duration
		fresh         bool // FreshHit instead of Request
		lookup        int  // CacheLookup: 1 miss, 2 hit
	}
	for _, tc := range []struct {
		name  string
		calls []call
		want  map[string]float64
	}{
		{"nothing", nil, map[string]float64{}},
		{"miss answered", []call{{lookup: 1}, {d: time.Millisecond}}, map[string]float64{
			"translate.cache.lookups{hit=false}":                                    1,
			"translate.requests{cache_hit=false,degraded=false,outcome=ok}":         1,
			"translate.request.duration{cache_hit=false,degraded=false,outcome=ok}": 1,
		}},
		{"failure", []call{{oc: 3, d: time.Millisecond}, {oc: 3}}, map[string]float64{
			"translate.requests{cache_hit=false,degraded=false,outcome=k3}":         2,
			"translate.request.duration{cache_hit=false,degraded=false,outcome=k3}": 2,
		}},
		{"fresh hits: lookups and requests, no duration", []call{{fresh: true}, {fresh: true, degraded: true}, {hit: true}}, map[string]float64{
			"translate.cache.lookups{hit=true}":                            2,
			"translate.requests{cache_hit=true,degraded=false,outcome=ok}": 2,
			"translate.requests{cache_hit=true,degraded=true,outcome=ok}":  1,
		}},
		{"stale hit with a duration", []call{{lookup: 2}, {hit: true, degraded: true, d: time.Second}}, map[string]float64{
			"translate.cache.lookups{hit=true}":                                   1,
			"translate.requests{cache_hit=true,degraded=true,outcome=ok}":         1,
			"translate.request.duration{cache_hit=true,degraded=true,outcome=ok}": 1,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			for i, c := range tc.calls {
				switch {
				case c.fresh:
					h.r.FreshHit(c.degraded)
				case c.lookup > 0:
					h.r.CacheLookup(c.lookup == 2)
				default:
					h.r.Request(context.Background(), c.oc, c.hit, c.degraded, uint64(i), c.d)
				}
			}
			if diff := cmp.Diff(tc.want, h.collect(t)); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEngineCountsOnTheCallersStripe: an engine's calls, characters and credits go to the
// stripe of the key the caller passes (its scratch's, which stays with a core), not to a
// random one.
func TestEngineCountsOnTheCallersStripe(t *testing.T) {
	h := newHarness(t)
	e := h.r.NewEngine("a")
	for _, key := range []uint64{5, 5, 6} {
		h.r.EndAttempt(context.Background(), nil, e, 1, 0, time.Millisecond, false, key)
		e.Cost(key, 0.25, 3)
	}
	type stripe struct {
		OK, Chars uint64
		Credits   float64
	}
	var got [tally.Stripes]stripe
	for i := range got {
		got[i].OK, got[i].Chars, got[i].Credits = e.Stripe(i)
	}
	var want [tally.Stripes]stripe
	want[5%tally.Stripes] = stripe{2, 6, 0.5}
	want[6%tally.Stripes] = stripe{1, 3, 0.25}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stripes (-want +got):\n%s", diff)
	}
}

func TestEnginesObservedAndFrozenAtClose(t *testing.T) {
	h := newHarness(t)
	a, b, c := h.r.NewEngine("a"), h.r.NewEngine("b"), h.r.NewEngine("c")
	h.engines = []quota{{a, 100}, {b, -1}, {c, 0}}
	ctx := context.Background()
	h.r.EndAttempt(ctx, nil, a, 1, 0, time.Millisecond, false, 0)
	a.Cost(0, 0.5, 7)
	h.r.EndAttempt(ctx, nil, b, 1, 4, time.Millisecond, false, 1) // failed: no cost series
	h.r.Request(ctx, 0, false, false, 0, time.Millisecond)
	want := map[string]float64{
		"translate.attempts{engine=a,outcome=ok}":                               1,
		"translate.attempts{engine=b,outcome=k4}":                               1,
		"translate.attempt.duration{engine=a}":                                  1,
		"translate.attempt.duration{engine=b}":                                  1,
		"translate.cost{engine=a}":                                              0.5,
		"translate.chars{engine=a}":                                             7,
		"translate.quota.left{engine=a}":                                        100,
		"translate.quota.left{engine=c}":                                        0,
		"translate.requests{cache_hit=false,degraded=false,outcome=ok}":         1,
		"translate.request.duration{cache_hit=false,degraded=false,outcome=ok}": 1,
	}
	if diff := cmp.Diff(want, h.collect(t)); diff != "" {
		t.Errorf("before Close (-want +got):\n%s", diff)
	}
	h.r.Close(func(yield func(*Engine) bool) {
		for _, q := range h.engines {
			if !yield(q.e) {
				return
			}
		}
	})
	walks := h.walks
	a.Cost(0, 1, 1) // after Close: not seen
	delete(want, "translate.quota.left{engine=a}")
	delete(want, "translate.quota.left{engine=c}")
	for range 2 {
		if diff := cmp.Diff(want, h.collect(t)); diff != "" {
			t.Errorf("after Close (-want +got):\n%s", diff)
		}
	}
	if h.walks != walks {
		t.Errorf("the engines were walked %d times after Close, want 0", h.walks-walks)
	}
}

func TestEventsCounted(t *testing.T) {
	h := newHarness(t)
	a := h.r.NewEngine("a")
	h.r.Degraded(HowStaleCache)
	h.r.Degraded(HowFallbackEngine)
	h.r.Degraded(HowFallbackEngine)
	h.r.Degraded("other")
	h.r.Hedged(a)
	h.r.ConfigRejected()
	h.r.BreakerMove("a", "closed", "open")
	h.r.Switch(context.Background(), a)
	h.r.Switch(context.Background(), nil)
	h.r.Calls(2, 0.25, true)
	h.r.Calls(3, 0, false)
	h.r.CanarySteps().Add(context.Background(), 1)
	want := map[string]float64{
		"translate.degradations{how=stale_cache}":                     1,
		"translate.degradations{how=fallback_engine}":                 2,
		"translate.degradations{how=other}":                           1,
		"translate.hedges{engine=a}":                                  1,
		"translate.config.rejected{}":                                 1,
		"translate.breaker.transitions{engine=a,from=closed,to=open}": 1,
		"translate.switches{engine=a}":                                1,
		"translate.switches{}":                                        1,
		"translate.request.cost{}":                                    1,
		"translate.request.attempts{}":                                2,
		"translate.canary.step{}":                                     1,
	}
	if diff := cmp.Diff(want, h.collect(t)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

func TestTimeDecisionOneInSixteen(t *testing.T) {
	h := newHarness(t)
	n := 0
	for range 3 * decisionEvery {
		if h.r.TimeDecision() {
			n++
			h.r.Decision(time.Microsecond)
		}
	}
	off := new(Recorder)
	if err := off.Init(Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider(),
		Outcomes: testOutcomes()}); err != nil {
		t.Fatal(err)
	}
	offN := 0
	for range 3 * decisionEvery {
		if off.TimeDecision() {
			offN++
		}
	}
	got := []float64{float64(n), h.collect(t)["translate.routing.decision.duration{}"], float64(offN)}
	if diff := cmp.Diff([]float64{3, 3, 0}, got); diff != "" {
		t.Errorf("timed, recorded, timed with no meter (-want +got):\n%s", diff)
	}
}

// spanView is what a test compares of an ended span.
type spanView struct {
	Name   string
	Attrs  map[string]string
	Status codes.Code
}

func viewSpans(h *harness) []spanView {
	var out []spanView
	for _, s := range h.spans.Ended() {
		v := spanView{Name: s.Name(), Attrs: map[string]string{}, Status: s.Status().Code}
		for _, kv := range s.Attributes() {
			v.Attrs[string(kv.Key)] = kv.Value.Emit()
		}
		out = append(out, v)
	}
	return out
}

func TestRequestSpanAttributes(t *testing.T) {
	for _, tc := range []struct {
		name string
		rs   RequestSpan
		want spanView
	}{
		{"miss answered", RequestSpan{Answered: true, Attempts: 1, Engine: "a", TextLen: 5, RequestID: "r1"},
			spanView{spanRequest, map[string]string{"translate.outcome": "ok", "translate.attempts": "1",
				"translate.engine": "a", "translate.text_len": "5", "translate.request_id": "r1"}, codes.Unset}},
		{"stale hit: only the true flags", RequestSpan{Answered: true, Hit: true, Degraded: true, TextLen: 2},
			spanView{spanRequest, map[string]string{"translate.outcome": "ok", "translate.cache_hit": "true",
				"translate.degraded": "true", "translate.attempts": "0", "translate.text_len": "2"}, codes.Unset}},
		{"fallback", RequestSpan{Answered: true, Degraded: true, Attempts: 2, Engine: "b"},
			spanView{spanRequest, map[string]string{"translate.outcome": "ok", "translate.degraded": "true",
				"translate.fallback": "true", "translate.attempts": "2", "translate.engine": "b", "translate.text_len": "0"}, codes.Unset}},
		{"failure without attempts", RequestSpan{Outcome: 2, Hit: true, Attempts: -1, TextLen: 3},
			spanView{spanRequest, map[string]string{"translate.outcome": "k2", "error.type": "k2", "translate.text_len": "3"}, codes.Error}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			_, span := h.r.StartRequest(context.Background(), nil)
			if !Recording(span) {
				t.Fatal("the SDK's span is not recording")
			}
			h.r.SetRequestSpan(span, &tc.rs)
			span.End()
			if diff := cmp.Diff([]spanView{tc.want}, viewSpans(h)); diff != "" {
				t.Errorf("spans (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAttemptSpans(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n, oc    int
		fallback bool
		want     []spanView
	}{
		{"first attempt answered: no span", 1, 0, false, nil},
		{"first attempt failed: a span after the fact", 1, 5, false, []spanView{{spanAttempt,
			map[string]string{"translate.engine": "a", "translate.attempt": "1", "translate.outcome": "k5", "error.type": "k5"}, codes.Error}}},
		{"second attempt on a fallback engine", 2, 0, true, []spanView{{spanAttempt,
			map[string]string{"translate.engine": "a", "translate.attempt": "2", "translate.outcome": "ok", "translate.fallback": "true"}, codes.Unset}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			a := h.r.NewEngine("a")
			ctx, span := h.r.StartAttempt(context.Background(), tc.n)
			h.r.EndAttempt(ctx, span, a, tc.n, tc.oc, 3*time.Millisecond, tc.fallback, 0)
			got := viewSpans(h)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("spans (-want +got):\n%s", diff)
			}
			if ended := h.spans.Ended(); len(ended) == 1 && tc.n == 1 { // dated back
				if d := ended[0].EndTime().Sub(ended[0].StartTime()); d != 3*time.Millisecond {
					t.Errorf("the attempt's span lasts %v, want its duration 3ms", d)
				}
			}
		})
	}
}

func TestNoSpansWithANoopProvider(t *testing.T) {
	r := new(Recorder)
	if err := r.Init(Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider(),
		Outcomes: testOutcomes()}); err != nil {
		t.Fatal(err)
	}
	_, req := r.StartRequest(context.Background(), nil)
	_, att := r.StartAttempt(context.Background(), 2)
	if req != nil || att != nil || r.Tracing() {
		t.Errorf("noop provider: request span %v, attempt span %v, tracing %v; want none", req, att, r.Tracing())
	}
}

func TestStartRequestSetsTheClock(t *testing.T) {
	h := newHarness(t)
	var t0 time.Time
	_, span := h.r.StartRequest(context.Background(), &t0)
	span.End()
	set := time.Unix(1, 0)
	t1 := set
	_, span = h.r.StartRequest(context.Background(), &t1)
	span.End()
	if t0.IsZero() || t0 == t0.Round(0) || t1 != set {
		t.Errorf("t0 = %v (want the span's monotonic start), t1 = %v (want kept: %v)", t0, t1, set)
	}
}

func TestTextHash(t *testing.T) {
	h1, h2 := NewTextHash(), NewTextHash()
	var zero TextHash
	got := []bool{
		len(h1.Sum("hello")) == 8,
		h1.Sum("hello") == h1.Sum("hello"),
		h1.Sum("hello") != h1.Sum("hellp"),
		h1.Sum("hello") != h2.Sum("hello"),
		zero.Sum("hello") == "4352b26e", // HMAC-SHA256 under the empty key
	}
	if diff := cmp.Diff([]bool{true, true, true, true, true}, got); diff != "" {
		t.Errorf("8 digits, stable, text-keyed, key-keyed, known value (-want +got):\n%s", diff)
	}
}
