package telemetry

import (
	"context"
	"reflect"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Span names.
const (
	spanRequest = "translate.Translate"
	spanAttempt = "translate.attempt"
)

// attrBuf holds a span's attributes while they are set: the SDK copies them, so the
// buffer goes back to the Recorder's pool right after.
type attrBuf [10]attribute.KeyValue

// initTracing picks the tracer: none for an explicit no-op provider, and none while the
// global provider is still the API's delegate (no SDK installed).
func (t *Recorder) initTracing(tp trace.TracerProvider) {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if rt := reflect.TypeOf(tp); rt.Kind() == reflect.Pointer && rt.Elem().PkgPath() == "go.opentelemetry.io/otel/internal/global" {
		t.unsetGlobal = tp // the API's delegate: no SDK installed yet
	}
	if _, isNoop := tp.(tracenoop.TracerProvider); !isNoop {
		t.tracer = tp.Tracer(ScopeName)
	}
	t.attStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
}

// Tracing reports whether spans are made: a provider was given, or the global one is set.
func (t *Recorder) Tracing() bool {
	return t.tracer != nil && (t.unsetGlobal == nil || otel.GetTracerProvider() != t.unsetGlobal)
}

// Recording reports whether span records what it is given. A sampled span does (in the
// SDK sampling implies recording), and asking that takes no lock, where IsRecording does.
func Recording(span trace.Span) bool {
	return span.SpanContext().IsSampled() || span.IsRecording()
}

// StartRequest starts a request's span (kind internal, the default). The span is nil when
// tracing is off. If t0 is not nil, still zero, and the span tells a start time read from
// this process's monotonic clock (the SDK's does), *t0 is set to it: the request's clock
// starts with its span, with one clock read for both. A start time without a monotonic
// reading came from some other clock (another tracer's), and the request reads its own.
func (t *Recorder) StartRequest(ctx context.Context, t0 *time.Time) (context.Context, trace.Span) {
	if !t.Tracing() {
		return ctx, nil
	}
	ctx, span := t.tracer.Start(ctx, spanRequest)
	if st, ok := span.(interface{ StartTime() time.Time }); ok && t0 != nil && t0.IsZero() {
		if start := st.StartTime(); start != start.Round(0) { // Round(0) strips the monotonic reading
			*t0 = start
		}
	}
	return ctx, span
}

// RequestSpan is what a request's span tells besides its outcome.
type RequestSpan struct {
	Outcome   int
	Answered  bool // an answer, with Hit and Degraded; else a failure (status error)
	Hit       bool
	Degraded  bool
	Attempts  int    // engine calls; negative: unknown (no attribute)
	Engine    string // the engine that answered; "": none (no attribute)
	TextLen   int    // code points
	RequestID string // "": none (no attribute)
}

// SetRequestSpan sets the attributes of a request's recording span, all in one call: the
// SDK copies them into a slice of its own, which every further call would grow (trace.
// WithAttributes at the start would copy them twice). Those that depend only on the
// outcome come ready-made from Init.
func (t *Recorder) SetRequestSpan(span trace.Span, rs *RequestSpan) {
	buf := t.attrs.Get().(*attrBuf)
	var attrs []attribute.KeyValue
	if rs.Answered {
		attrs = append(buf[:0], t.reqSpan[rs.Outcome][b2i(rs.Hit)][b2i(rs.Degraded)]...)
	} else {
		attrs = append(buf[:0], t.reqSpan[rs.Outcome][0][0]...)
		span.SetStatus(codes.Error, t.outcomes[rs.Outcome])
	}
	if rs.Attempts >= 0 {
		attrs = append(attrs, attrAttempts.Int(rs.Attempts))
	}
	if rs.Engine != "" {
		attrs = append(attrs, attrEngine.String(rs.Engine))
	}
	attrs = append(attrs, attrTextLen.Int(rs.TextLen))
	if rs.RequestID != "" {
		attrs = append(attrs, attrRequestID.String(rs.RequestID))
	}
	span.SetAttributes(attrs...)
	t.attrs.Put(buf)
}

// StartAttempt starts the span of attempt n (1-based), for every attempt but the first:
// a request's first engine call gets a span of its own only if it fails (see EndAttempt),
// because most requests make one call that succeeds, and then the request's span says all
// its span would at half the cost.
func (t *Recorder) StartAttempt(ctx context.Context, n int) (context.Context, trace.Span) {
	if n == 1 || !t.Tracing() {
		return ctx, nil
	}
	return t.tracer.Start(ctx, spanAttempt, t.attStart...)
}

// EndAttempt counts attempt n on e, which took d and had outcome oc, records its
// duration and ends its span (from StartAttempt; nil: none). A first attempt that failed
// gets its span now, dated back to its start: a sibling of the spans the engine made under
// ctx, not their parent. The duration is recorded under the attempt's span, if it has
// one, so that the SDK's exemplars point at it; without one, under no span (the request's
// duration points at the request's span). fallback: the engine is fallback-only. The call
// is counted on the stripe of the caller's key (see tally.Counter.AddAt).
func (t *Recorder) EndAttempt(ctx context.Context, span trace.Span, e *Engine, n, oc int, d time.Duration, fallback bool, stripe uint64) {
	e.count(oc, stripe)
	rctx := context.Background()
	switch {
	case span != nil:
		rctx = ctx
		t.endAttemptSpan(span, e, n, oc, fallback)
	case oc != 0 && t.Tracing():
		end := time.Now()
		rctx, span = t.tracer.Start(ctx, spanAttempt, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithTimestamp(end.Add(-d)))
		t.endAttemptSpan(span, e, n, oc, fallback, trace.WithTimestamp(end))
	}
	t.attemptDur.Record(rctx, d.Seconds(), e.engine.rec...)
}

// endAttemptSpan sets the attributes of attempt n's span on e, whose outcome is oc, and
// ends it.
func (t *Recorder) endAttemptSpan(span trace.Span, e *Engine, n, oc int, fallback bool, end ...trace.SpanEndOption) {
	if Recording(span) {
		buf := t.attrs.Get().(*attrBuf)
		attrs := append(buf[:0], e.span, attrAttempt.Int(n))
		if fallback {
			attrs = append(attrs, attrFallback.Bool(true))
		}
		attrs = append(attrs, t.outcomeSpan[oc]...)
		if oc != 0 {
			span.SetStatus(codes.Error, t.outcomes[oc])
		}
		span.SetAttributes(attrs...)
		t.attrs.Put(buf)
	}
	span.End(end...)
}
