package translate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// telemetry captures what a Client reports: spans, metrics and logs.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	logs   *telemetryLog
}

// telemetryLog is a bytes.Buffer safe for concurrent use.
type telemetryLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *telemetryLog) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *telemetryLog) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newTelemetry returns the options that send a Client's telemetry to a span recorder, a
// manual metric reader and a JSON log at debug level.
func newTelemetry(t *testing.T) (*telemetry, []translate.Option) {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader(), logs: &telemetryLog{}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(tel.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	log := slog.New(slog.NewJSONHandler(tel.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return tel, []translate.Option{translate.WithTracerProvider(tp), translate.WithMeterProvider(mp), translate.WithLogger(log)}
}

// span is an ended span, reduced to what the tests compare.
type span struct {
	Name       string
	Parent     string // the parent's name; "" for a root span
	Kind       trace.SpanKind
	Attrs      map[string]any
	Status     codes.Code
	StatusDesc string
}

// ended returns the ended spans in the order they ended, without the request ids (which
// are random; they are checked separately).
func (tel *telemetry) ended(t *testing.T) []span {
	t.Helper()
	ro := tel.spans.Ended()
	names := map[trace.SpanID]string{}
	for _, s := range ro {
		names[s.SpanContext().SpanID()] = s.Name()
	}
	var out []span
	for _, s := range ro {
		sp := span{Name: s.Name(), Kind: s.SpanKind(), Attrs: map[string]any{}, Status: s.Status().Code, StatusDesc: s.Status().Description}
		if s.Parent().IsValid() {
			sp.Parent = names[s.Parent().SpanID()]
			if sp.Parent == "" {
				t.Errorf("span %q has a parent that did not end", s.Name())
			}
			if s.Parent().TraceID() != s.SpanContext().TraceID() {
				t.Errorf("span %q is in another trace than its parent", s.Name())
			}
		}
		for _, kv := range s.Attributes() {
			if kv.Key == "translate.request_id" {
				continue
			}
			sp.Attrs[string(kv.Key)] = kv.Value.AsInterface()
		}
		out = append(out, sp)
	}
	return out
}

// metrics collects every metric by name.
func (tel *telemetry) metrics(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != "github.com/fanyi-go/translate" {
			t.Errorf("instrumentation scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func attrKey(s attribute.Set) string { return s.Encoded(attribute.DefaultEncoder()) }

// values flattens every metric into "name{attrs}" -> value: the sum of a counter, the last
// value of a gauge, the count of a histogram.
func values(ms map[string]metricdata.Metrics) map[string]float64 {
	out := map[string]float64{}
	for name, m := range ms {
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				out[name+"{"+attrKey(p.Attributes)+"}"] = float64(p.Value)
			}
		case metricdata.Sum[float64]:
			for _, p := range d.DataPoints {
				out[name+"{"+attrKey(p.Attributes)+"}"] = p.Value
			}
		case metricdata.Gauge[int64]:
			for _, p := range d.DataPoints {
				out[name+"{"+attrKey(p.Attributes)+"}"] = float64(p.Value)
			}
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				out[name+"{"+attrKey(p.Attributes)+"}"] = float64(p.Count)
			}
		case metricdata.Histogram[int64]:
			for _, p := range d.DataPoints {
				out[name+"{"+attrKey(p.Attributes)+"}"] = float64(p.Count)
			}
		default:
			panic(fmt.Sprintf("metric %s: unexpected data %T", name, m.Data))
		}
	}
	return out
}

// records parses the JSON log, dropping the time and the latency (which vary).
func (tel *telemetry) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(tel.logs.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		delete(rec, "time")
		if _, ok := rec["latency"].(float64); ok {
			rec["latency"] = "x"
		}
		if h, ok := rec["text_hash"].(string); ok {
			if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(h) {
				t.Errorf("text_hash %q is not 8 hex digits", h)
			}
			rec["text_hash"] = "x"
		}
		if _, ok := rec["request_id"].(string); ok {
			rec["request_id"] = "x"
		}
		out = append(out, rec)
	}
	return out
}

func TestTelemetrySuccess(t *testing.T) {
	tel, opts := newTelemetry(t)
	a := fake.New("a")
	c := newClient(t, append(opts, translate.WithClock(newClock()),
		translate.WithEngine(a, translate.Profile{CostPerMillion: 20, Quota: 1000}))...)
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil {
		t.Fatal(err)
	}

	if diff := cmp.Diff(successSpans, tel.ended(t)); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
	root := tel.spans.Ended()[0]
	if id, _ := attrValue(root.Attributes(), "translate.request_id"); id != res.RequestID {
		t.Errorf("request span's request_id = %q, want %q", id, res.RequestID)
	}

	ms := tel.metrics(t)
	if diff := cmp.Diff(metricUnits, units(ms)); diff != "" {
		t.Errorf("metric units (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(successMetrics, values(ms)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if d := ms["translate.requests"].Data.(metricdata.Sum[int64]); !d.IsMonotonic {
		t.Errorf("translate.requests is not a monotonic counter")
	}
	if d := ms["translate.cost"].Data.(metricdata.Sum[float64]); !d.IsMonotonic {
		t.Errorf("translate.cost is not a monotonic counter")
	}

	if diff := cmp.Diff(successLogs, tel.records(t)); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
}

// successSpans are the spans of "hello" served by a at the first attempt: the request's
// alone, since a first attempt that succeeds has no span of its own (the request's says
// which engine answered).
var successSpans = []span{
	{Name: "translate.Translate", Kind: trace.SpanKindInternal, Attrs: map[string]any{
		"translate.outcome": "ok", "translate.text_len": int64(5), "translate.attempts": int64(1),
		"translate.engine": "a"}},
}

// metricUnits is the unit of each metric a served request reports.
var metricUnits = map[string]string{
	"translate.requests": "{request}", "translate.request.duration": "s",
	"translate.attempts": "{attempt}", "translate.attempt.duration": "s",
	"translate.cost": "{credit}", "translate.chars": "{char}",
	"translate.routing.decision.duration": "s", "translate.quota.left": "{char}",
	"translate.request.attempts": "{attempt}", "translate.request.cost": "{credit}",
}

// successMetrics are the metric values (see values) after "hello" is served by a, at 20
// credits per million characters with a quota of 1000.
var successMetrics = map[string]float64{
	"translate.requests{cache_hit=false,degraded=false,outcome=ok}":         1,
	"translate.request.duration{cache_hit=false,degraded=false,outcome=ok}": 1,
	"translate.attempts{engine=a,outcome=ok}":                               1,
	"translate.attempt.duration{engine=a}":                                  1,
	"translate.cost{engine=a}":                                              5 * 20 / 1e6,
	"translate.chars{engine=a}":                                             5,
	"translate.routing.decision.duration{}":                                 1, // the first decision is timed
	"translate.quota.left{engine=a}":                                        995,
	"translate.request.attempts{}":                                          1, // a histogram: its count
	"translate.request.cost{}":                                              1,
}

// successLogs are the log records (see records) of "hello" served by a.
var successLogs = []map[string]any{
	{"level": "DEBUG", "msg": "translate: attempt", "engine": "a", "attempt": 1.0, "latency": "x", "outcome": "ok"},
	{"level": "DEBUG", "msg": "translate: request", "request_id": "x", "text_len": 5.0, "text_hash": "x",
		"outcome": "ok", "latency": "x", "cache_hit": false, "degraded": false, "engine": "a"},
}

// units returns each metric's unit by name.
func units(ms map[string]metricdata.Metrics) map[string]string {
	out := map[string]string{}
	for name, m := range ms {
		out[name] = m.Unit
	}
	return out
}

func attrValue(kvs []attribute.KeyValue, key string) (string, bool) {
	for _, kv := range kvs {
		if string(kv.Key) == key {
			return kv.Value.Emit(), true
		}
	}
	return "", false
}

func TestTelemetryFailover(t *testing.T) {
	tel, opts := newTelemetry(t)
	a, b := fake.New("a"), fake.New("b")
	a.Script(fake.Fail(translate.KindUnavailable))
	c := newClient(t, append(opts, translate.WithClock(newClock()), sharp,
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		translate.WithEngine(a, primary), translate.WithEngine(b, secondary))...)
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil || res.Engine != "b" {
		t.Fatalf("Translate = %+v, %v; want an answer from b", res, err)
	}
	want := []span{
		{Name: "translate.attempt", Parent: "translate.Translate", Kind: trace.SpanKindClient, Attrs: map[string]any{
			"translate.engine": "a", "translate.attempt": int64(1), "translate.outcome": "unavailable", "error.type": "unavailable"},
			Status: codes.Error, StatusDesc: "unavailable"},
		{Name: "translate.attempt", Parent: "translate.Translate", Kind: trace.SpanKindClient, Attrs: map[string]any{
			"translate.engine": "b", "translate.attempt": int64(2), "translate.outcome": "ok"}},
		{Name: "translate.Translate", Kind: trace.SpanKindInternal, Attrs: map[string]any{
			"translate.outcome": "ok", "translate.text_len": int64(5), "translate.attempts": int64(2),
			"translate.engine": "b"}},
	}
	if diff := cmp.Diff(want, tel.ended(t)); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
	got := values(tel.metrics(t))
	for k, v := range map[string]float64{
		"translate.attempts{engine=a,outcome=unavailable}":              1,
		"translate.attempts{engine=b,outcome=ok}":                       1,
		"translate.attempt.duration{engine=a}":                          1,
		"translate.attempt.duration{engine=b}":                          1,
		"translate.requests{cache_hit=false,degraded=false,outcome=ok}": 1,
		"translate.chars{engine=b}":                                     5,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	for _, k := range []string{"translate.quota.left{engine=a}", "translate.quota.left{engine=b}"} {
		if v, ok := got[k]; ok {
			t.Errorf("%s = %v for an engine without a quota; want no series (a -1 breaks sums)", k, v)
		}
	}
	if _, ok := got["translate.chars{engine=a}"]; ok {
		t.Errorf("a failed call counted characters")
	}
	var attemptLogs []string
	for _, r := range tel.records(t) {
		if r["msg"] == "translate: attempt" {
			attemptLogs = append(attemptLogs, fmt.Sprint(r["engine"], " ", r["attempt"], " ", r["outcome"]))
		}
	}
	if diff := cmp.Diff([]string{"a 1 unavailable", "b 2 ok"}, attemptLogs); diff != "" {
		t.Errorf("attempt logs (-want +got):\n%s", diff)
	}
}

// TestTelemetryCacheHitSpansAreOptIn checks the default: a fresh cache hit is counted but
// makes no span, since a span costs some 20 times the hit.
func TestTelemetryCacheHitSpansAreOptIn(t *testing.T) {
	tel, opts := newTelemetry(t)
	c := newClient(t, append(opts, translate.WithClock(newClock()), translate.WithCache(100, time.Minute),
		translate.WithEngine(fake.New("a"), translate.Profile{}))...)
	for i := 0; i < 2; i++ {
		if _, err := c.Translate(context.Background(), req("hello")); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, s := range tel.ended(t) {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"translate.Translate"}, names); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
	if got := values(tel.metrics(t))["translate.requests{cache_hit=true,degraded=false,outcome=ok}"]; got != 1 {
		t.Errorf("cache hits counted = %v, want 1", got)
	}
}

func TestTelemetryCacheHit(t *testing.T) {
	tel, opts := newTelemetry(t)
	c := newClient(t, append(opts, translate.WithClock(newClock()), translate.WithCache(100, time.Minute),
		translate.WithCacheHitSpans(), translate.WithEngine(fake.New("a"), translate.Profile{}))...)
	for i := 0; i < 2; i++ {
		if _, err := c.Translate(context.Background(), req("hello")); err != nil {
			t.Fatal(err)
		}
	}
	spans := tel.ended(t)
	if len(spans) != 2 {
		t.Fatalf("got %d spans, want the miss's request span and the hit's", len(spans))
	}
	want := span{Name: "translate.Translate", Kind: trace.SpanKindInternal, Attrs: map[string]any{
		"translate.outcome": "ok", "translate.cache_hit": true, "translate.text_len": int64(5), "translate.attempts": int64(0),
		"translate.engine": "a"}}
	if diff := cmp.Diff(want, spans[1]); diff != "" {
		t.Errorf("cache hit span (-want +got):\n%s", diff)
	}
	got := values(tel.metrics(t))
	for k, v := range map[string]float64{
		"translate.cache.lookups{hit=false}":                            1,
		"translate.cache.lookups{hit=true}":                             1,
		"translate.requests{cache_hit=false,degraded=false,outcome=ok}": 1,
		"translate.requests{cache_hit=true,degraded=false,outcome=ok}":  1,
		"translate.attempts{engine=a,outcome=ok}":                       1,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if ms := tel.metrics(t); ms["translate.cache.lookups"].Unit != "{lookup}" {
		t.Errorf("translate.cache.lookups unit = %q", ms["translate.cache.lookups"].Unit)
	}
}

func TestTelemetryDegraded(t *testing.T) {
	t.Run("stale cache", testTelemetryStaleCache)
	t.Run("fallback engine", testTelemetryFallbackEngine)
}

func testTelemetryStaleCache(t *testing.T) {
	tel, opts := newTelemetry(t)
	clk := newClock()
	a := fake.New("a")
	c := newClient(t, append(opts, translate.WithClock(clk), translate.WithCache(100, time.Minute),
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1}), translate.WithEngine(a, translate.Profile{}))...)
	if _, err := c.Translate(context.Background(), req("hello")); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Minute)
	a.Down(translate.KindUnavailable)
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil || !res.Degraded || !res.FromCache {
		t.Fatalf("Translate = %+v, %v; want a stale answer", res, err)
	}
	spans := tel.ended(t)
	if diff := cmp.Diff(staleCacheSpans, spans[1:]); diff != "" {
		t.Errorf("spans of the stale answer (-want +got):\n%s", diff)
	}
	ms := tel.metrics(t)
	if u := ms["translate.degradations"].Unit; u != "{request}" {
		t.Errorf("translate.degradations unit = %q", u)
	}
	got := values(ms)
	for k, v := range map[string]float64{
		"translate.degradations{how=stale_cache}":                       1,
		"translate.requests{cache_hit=true,degraded=true,outcome=ok}":   1,
		"translate.requests{cache_hit=false,degraded=false,outcome=ok}": 1,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

// staleCacheSpans are the spans of a request a fails and a stale cache entry answers.
var staleCacheSpans = []span{
	{Name: "translate.attempt", Parent: "translate.Translate", Kind: trace.SpanKindClient, Attrs: map[string]any{
		"translate.engine": "a", "translate.attempt": int64(1), "translate.outcome": "unavailable", "error.type": "unavailable"},
		Status: codes.Error, StatusDesc: "unavailable"},
	{Name: "translate.Translate", Kind: trace.SpanKindInternal, Attrs: map[string]any{
		"translate.outcome": "ok", "translate.cache_hit": true, "translate.degraded": true,
		"translate.text_len": int64(5), "translate.attempts": int64(1),
		"translate.engine": "a"}},
}

func testTelemetryFallbackEngine(t *testing.T) {
	tel, opts := newTelemetry(t)
	a, fb := fake.New("a"), fake.New("fb")
	a.Down(translate.KindUnavailable)
	c := newClient(t, append(opts, translate.WithClock(newClock()), translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		translate.WithEngine(a, translate.Profile{}), translate.WithEngine(fb, translate.Profile{FallbackOnly: true}))...)
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil || !res.Degraded || res.Engine != "fb" {
		t.Fatalf("Translate = %+v, %v; want a degraded answer from fb", res, err)
	}
	spans := tel.ended(t)
	if len(spans) != 3 {
		t.Fatalf("got %d spans, want 3", len(spans))
	}
	if diff := cmp.Diff(map[string]any{"translate.engine": "fb", "translate.attempt": int64(2),
		"translate.fallback": true, "translate.outcome": "ok"}, spans[1].Attrs); diff != "" {
		t.Errorf("fallback attempt span (-want +got):\n%s", diff)
	}
	if spans[2].Attrs["translate.fallback"] != true || spans[2].Attrs["translate.degraded"] != true {
		t.Errorf("request span attributes %v, want degraded and fallback", spans[2].Attrs)
	}
	got := values(tel.metrics(t))
	if got["translate.degradations{how=fallback_engine}"] != 1 {
		t.Errorf("degradations = %v, want one fallback_engine", got)
	}
}

// TestTelemetryPackedFallback: a packed batch answered by a fallback-only engine counts
// one degradation per request, as Translate does.
func TestTelemetryPackedFallback(t *testing.T) {
	tel, opts := newTelemetry(t)
	a, fb := fake.New("a"), fake.New("fb")
	a.Down(translate.KindUnavailable)
	c := newClient(t, append(opts, translate.WithClock(newClock()), translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		translate.WithEngine(a, translate.Profile{MaxTexts: 50}), translate.WithEngine(fb, translate.Profile{FallbackOnly: true, MaxTexts: 50}))...)
	out := c.TranslateBatch(context.Background(), []translate.Request{req("hello"), req("good morning"), req("see you")})
	for i, br := range out {
		if br.Err != nil || !br.Result.Degraded || br.Result.Engine != "fb" {
			t.Fatalf("item %d = %+v, %v; want a degraded answer from fb", i, br.Result, br.Err)
		}
	}
	if fb.Calls() != 1 {
		t.Errorf("fb made %d calls, want 1 (packed)", fb.Calls())
	}
	if got := values(tel.metrics(t)); got["translate.degradations{how=fallback_engine}"] != 3 {
		t.Errorf("degradations = %v, want 3 fallback_engine", got)
	}
}

func TestTelemetryFailure(t *testing.T) {
	tel, opts := newTelemetry(t)
	a := fake.New("a")
	a.Down(translate.KindUnauthorized)
	c := newClient(t, append(opts, translate.WithClock(newClock()), translate.WithEngine(a, translate.Profile{}))...)
	if _, err := c.Translate(context.Background(), req("hello")); translate.KindOf(err) != translate.KindUnauthorized {
		t.Fatalf("err = %v, want unauthorized", err)
	}
	if _, err := c.Translate(context.Background(), translate.Request{Text: "hello"}); translate.KindOf(err) != translate.KindInvalidInput {
		t.Fatalf("err = %v, want invalid input", err)
	}
	spans := tel.ended(t)
	want := []span{
		{Name: "translate.attempt", Parent: "translate.Translate", Kind: trace.SpanKindClient, Attrs: map[string]any{
			"translate.engine": "a", "translate.attempt": int64(1), "translate.outcome": "unauthorized", "error.type": "unauthorized"},
			Status: codes.Error, StatusDesc: "unauthorized"},
		{Name: "translate.Translate", Kind: trace.SpanKindInternal, Attrs: map[string]any{
			"translate.outcome": "unauthorized", "error.type": "unauthorized", "translate.text_len": int64(5),
			"translate.attempts": int64(1)},
			Status: codes.Error, StatusDesc: "unauthorized"},
		{Name: "translate.Translate", Kind: trace.SpanKindInternal, Attrs: map[string]any{
			"translate.outcome": "invalid_input", "error.type": "invalid_input", "translate.text_len": int64(5),
			"translate.attempts": int64(0)},
			Status: codes.Error, StatusDesc: "invalid_input"},
	}
	if diff := cmp.Diff(want, spans); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
	got := values(tel.metrics(t))
	for k, v := range map[string]float64{
		"translate.requests{cache_hit=false,degraded=false,outcome=unauthorized}":  1,
		"translate.requests{cache_hit=false,degraded=false,outcome=invalid_input}": 1,
		"translate.attempts{engine=a,outcome=unauthorized}":                        1,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	var warns []map[string]any
	for _, r := range tel.records(t) {
		if r["level"] == "WARN" {
			warns = append(warns, r)
		}
	}
	wantWarns := []map[string]any{{"level": "WARN", "msg": "translate: engine set aside: unauthorized", "engine": "a"}}
	if diff := cmp.Diff(wantWarns, warns); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

func TestTelemetryBreakerAndPoolTransitions(t *testing.T) {
	tel, opts := newTelemetry(t)
	clk := newClock()
	a, b := fake.New("a"), fake.New("b")
	c := newClient(t, append(opts, translate.WithClock(clk), translate.WithBreaker(translate.BreakerPolicy{MinCalls: 10, Window: 10}),
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		translate.WithRouting(translate.RoutingPolicy{Temperature: 0.5, HealthEvery: 10 * time.Second}),
		translate.WithEngine(a, primary), translate.WithEngine(b, secondary))...)
	a.Down(translate.KindUnavailable)
	translateN(t, c, 10)
	if got := c.Engines()[0].Breaker; got != translate.BreakerOpen {
		t.Fatalf("breaker = %v, want open", got)
	}
	clk.Advance(10 * time.Second) // the fold sees a failing every call: fallback pool
	if got := c.Engines()[0].Pool; got != translate.PoolFallback {
		t.Fatalf("pool = %v, want fallback", got)
	}
	got := values(tel.metrics(t))
	if got["translate.breaker.transitions{engine=a,from=closed,to=open}"] != 1 {
		t.Errorf("breaker transitions: %v", got)
	}
	var warns []map[string]any
	for _, r := range tel.records(t) {
		if r["level"] == "WARN" {
			warns = append(warns, r)
		}
	}
	wantWarns := []map[string]any{
		{"level": "WARN", "msg": "translate: breaker open", "engine": "a", "from": "closed", "to": "open"},
		{"level": "WARN", "msg": "translate: pool fallback", "engine": "a", "from": "normal", "to": "fallback"},
	}
	if diff := cmp.Diff(wantWarns, warns); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestTelemetryNeverCarriesTheText sends a recognisable text through successes, failures,
// retries, a cache hit and a stale answer, and looks for it in every span, metric and log line.
func TestTelemetryNeverCarriesTheText(t *testing.T) {
	const secret = "Confidential merger memo for ACME-7731"
	tel, opts := newTelemetry(t)
	clk := newClock()
	a, b := fake.New("a"), fake.New("b")
	c := newClient(t, append(opts, translate.WithClock(clk), sharp, translate.WithCache(100, time.Minute),
		translate.WithEngine(a, primary), translate.WithEngine(b, secondary))...)
	ctx := context.Background()
	r := translate.Request{Text: secret, Source: "en", Target: "es", UserID: "u1"}
	a.Script(fake.Fail(translate.KindUnavailable), fake.Fail(translate.KindRateLimited))
	if _, err := c.Translate(ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Translate(ctx, r); err != nil { // cache hit
		t.Fatal(err)
	}
	clk.Advance(2 * time.Minute)
	a.Down(translate.KindUnavailable)
	b.Down(translate.KindBadOutput)
	if res, err := c.Translate(ctx, r); err != nil || !res.Degraded { // stale
		t.Fatalf("Translate = %+v, %v; want a stale answer", res, err)
	}
	r.NoCache = true
	if _, err := c.Translate(ctx, r); err == nil {
		t.Fatal("want an error")
	}
	r.Target = "xx-" + secret // invalid: rejected before routing
	if _, err := c.Translate(ctx, r); err == nil {
		t.Fatal("want an error")
	}

	var dump strings.Builder
	for _, s := range tel.spans.Ended() {
		fmt.Fprintln(&dump, s.Name(), s.Status(), s.Attributes(), s.Events(), s.Links())
	}
	if dump.Len() == 0 {
		t.Fatal("no spans")
	}
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&dump, "%+v\n", rm)
	logs := tel.logs.String()
	if !strings.Contains(logs, `"text_hash"`) {
		t.Fatal("no request logs")
	}
	dump.WriteString(logs)
	for _, part := range []string{secret, "merger", "ACME-7731"} {
		if strings.Contains(dump.String(), part) {
			t.Errorf("telemetry carries %q", part)
		}
	}
}

func TestTelemetryTextHashCorrelates(t *testing.T) {
	tel, opts := newTelemetry(t)
	c := newClient(t, append(opts, translate.WithClock(newClock()), translate.WithEngine(fake.New("a"), translate.Profile{}))...)
	for _, text := range []string{"hello", "hello", "good bye"} {
		if _, err := c.Translate(context.Background(), req(text)); err != nil {
			t.Fatal(err)
		}
	}
	var hashes []string
	for _, line := range strings.Split(strings.TrimSpace(tel.logs.String()), "\n") {
		var rec struct {
			Msg  string `json:"msg"`
			Hash string `json:"text_hash"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Msg == "translate: request" {
			hashes = append(hashes, rec.Hash)
		}
	}
	if len(hashes) != 3 || hashes[0] != hashes[1] || hashes[0] == hashes[2] {
		t.Errorf("text hashes %q: want equal for equal texts, different otherwise", hashes)
	}
}

func TestTelemetryDecisionTimingIsSampled(t *testing.T) {
	tel, opts := newTelemetry(t)
	c := newClient(t, append(opts, translate.WithClock(newClock()), translate.WithEngine(fake.New("a"), translate.Profile{}))...)
	translateN(t, c, 33) // decisions 1, 17 and 33 are timed
	m := tel.metrics(t)["translate.routing.decision.duration"]
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok || len(h.DataPoints) != 1 {
		t.Fatalf("decision duration = %+v", m)
	}
	if p := h.DataPoints[0]; p.Count != 3 || p.Sum <= 0 {
		t.Errorf("decision duration count %d sum %v, want 3 timed decisions", p.Count, p.Sum)
	}
}

func TestTelemetryQuotaGaugeStopsAtClose(t *testing.T) {
	tel, opts := newTelemetry(t)
	a, b := fake.New("a"), fake.New("b")
	c, err := translate.New(append(opts, translate.WithClock(newClock()), translate.WithoutCache(), sharp,
		translate.WithEngine(a, translate.Profile{Quality: 100, Quota: 100}), translate.WithEngine(b, secondary))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Translate(context.Background(), req("hello")); err != nil {
		t.Fatal(err)
	}
	a.Down(translate.KindQuotaExhausted) // the vendor says it is spent: the gauge shows 0
	if _, err := c.Translate(context.Background(), req("hello again")); err != nil {
		t.Fatal(err)
	}
	got := values(tel.metrics(t))
	if v, ok := got["translate.quota.left{engine=a}"]; !ok || v != 0 {
		t.Errorf("quota gauge a=%v (reported %v), want 0", v, ok)
	}
	if v, ok := got["translate.quota.left{engine=b}"]; ok {
		t.Errorf("quota gauge b=%v for an engine without a quota; want no series", v)
	}
	c.Close()
	if _, ok := values(tel.metrics(t))["translate.quota.left{engine=a}"]; ok {
		t.Errorf("quota gauge still reported after Close")
	}
}

func TestTelemetryNoopProviders(t *testing.T) {
	var buf telemetryLog
	c := newClient(t, translate.WithTracerProvider(tracenoop.NewTracerProvider()),
		translate.WithMeterProvider(metricnoop.NewMeterProvider()),
		translate.WithLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))),
		translate.WithEngine(fake.New("a"), translate.Profile{}))
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil || res.Text != "[es] hello" {
		t.Fatalf("Translate = %+v, %v", res, err)
	}
	if buf.String() != "" {
		t.Errorf("logged below the handler's level: %s", buf.String())
	}
}

func TestTelemetryConcurrent(t *testing.T) {
	tel, opts := newTelemetry(t)
	a, b := fake.New("a"), fake.New("b")
	a.FailRate(translate.KindUnavailable, 0.3, 1)
	c := newClient(t, append(opts, translate.WithClock(newClock()),
		translate.WithEngine(a, translate.Profile{}), translate.WithEngine(b, translate.Profile{}))...)
	reqs := make([]translate.Request, 64)
	for i := range reqs {
		reqs[i] = req(fmt.Sprintf("text %d", i))
	}
	for _, r := range c.TranslateBatch(context.Background(), reqs) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	got := values(tel.metrics(t))
	if n := got["translate.requests{cache_hit=false,degraded=false,outcome=ok}"]; n != 64 {
		t.Errorf("requests = %v, want 64", n)
	}
	var roots int
	for _, s := range tel.spans.Ended() {
		if s.Name() == "translate.Translate" {
			roots++
		}
	}
	if roots != 64 {
		t.Errorf("request spans = %d, want 64", roots)
	}
}

// TestTelemetryGlobalProviders checks the defaults, the global providers, in a child
// process, since it sets them: a Client made before the SDK is installed makes no spans,
// and starts once otel.SetTracerProvider and otel.SetMeterProvider are called.
func TestTelemetryGlobalProviders(t *testing.T) {
	const env = "TRANSLATE_TEST_GLOBAL_OTEL"
	if os.Getenv(env) != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTelemetryGlobalProviders$", "-test.count=1")
		cmd.Env = append(os.Environ(), env+"=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("child process: %v\n%s", err, out)
		}
		return
	}
	early := newClient(t, translate.WithEngine(fake.New("a"), translate.Profile{}))
	if _, err := early.Translate(context.Background(), req("hello")); err != nil {
		t.Fatal(err)
	}
	rec, reader := tracetest.NewSpanRecorder(), sdkmetric.NewManualReader()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	if n := len(rec.Ended()); n != 0 {
		t.Fatalf("%d spans before the SDK was installed", n)
	}
	late := newClient(t, translate.WithEngine(fake.New("a"), translate.Profile{}))
	for _, c := range []*translate.Client{early, late} {
		if _, err := c.Translate(context.Background(), req("hello")); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, s := range rec.Ended() {
		names = append(names, s.Name())
	}
	want := []string{"translate.Translate", "translate.Translate"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
	tel := &telemetry{reader: reader}
	// Counters are cumulative over the Client's life: the early Client's request before
	// the SDK was installed counts too, once a reader collects (observable counters).
	if got := values(tel.metrics(t))["translate.requests{cache_hit=false,degraded=false,outcome=ok}"]; got != 3 {
		t.Errorf("requests counted once the SDK was installed = %v, want 3 (the early Client's 2 and the late one's)", got)
	}
}

// TestTelemetryCountersOutliveClose checks that a closed Client's counters stay reported,
// as a synchronous SDK counter's would: a scrape after Close (a short-lived Client, a
// reload that replaced one) still shows what it counted, and a paid engine that cost
// nothing yet still has its cost series.
func TestTelemetryCountersOutliveClose(t *testing.T) {
	tel, opts := newTelemetry(t)
	c, err := translate.New(append(opts, translate.WithClock(newClock()), translate.WithoutCache(),
		translate.WithEngine(fake.New("a"), translate.Profile{}))...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Translate(context.Background(), req("hello")); err != nil {
		t.Fatal(err)
	}
	c.Close()
	got := values(tel.metrics(t))
	for k, v := range map[string]float64{
		"translate.requests{cache_hit=false,degraded=false,outcome=ok}": 1,
		"translate.attempts{engine=a,outcome=ok}":                       1,
		"translate.chars{engine=a}":                                     5,
	} {
		if got[k] != v {
			t.Errorf("after Close: %s = %v, want %v", k, got[k], v)
		}
	}
	if _, ok := got["translate.cost{engine=a}"]; !ok {
		t.Errorf("after Close: no translate.cost series for an engine that answered at no cost")
	}
}
