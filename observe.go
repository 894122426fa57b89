package translate

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/fanyi-go/translate/internal/telemetry"
)

// Degradation paths, as passed to observer.degraded and used in the "how" attribute.
const (
	howStaleCache     = telemetry.HowStaleCache
	howFallbackEngine = telemetry.HowFallbackEngine
)

// The telemetry's outcomes are "ok" and every Kind: this fails to compile when a Kind is
// added and telemetry.NumOutcomes is not.
var _ = [1]struct{}{}[telemetry.NumOutcomes-len(kindNames)-1]

// outcomeIndex maps err to 0 for success and 1+Kind for a failure.
func outcomeIndex(err error) int {
	if err == nil {
		return 0
	}
	k := KindOf(err)
	if int(k) >= len(kindNames) {
		k = KindUnknown
	}
	return int(k) + 1
}

// outcomeNames names the outcomes outcomeIndex returns.
func outcomeNames() (names [telemetry.NumOutcomes]string) {
	names[0] = "ok"
	copy(names[1:], kindNames[:])
	return names
}

// engineTel is what the observer precomputes for one engine, and its counters. It lives
// as long as the engine's name stays in the configuration (Reconfigure keeps it), so the
// counters, read by the observable instruments at each collection, stay cumulative.
type engineTel = telemetry.Engine

// observer is where the Client reports what happens: spans, metrics and logs. The
// mechanism (instruments, attribute sets, tallies) is internal/telemetry's; the observer
// translates requests, results and engines into its inputs, and logs. Every method is
// cheap when nothing listens. An observer is safe for concurrent use.
type observer struct {
	log         *slog.Logger       // nil: no logging
	hash        telemetry.TextHash // text_hash in logs; keyed at random per Client
	hitSpans    bool               // WithCacheHitSpans: a span for fresh cache hits too
	canarySteps metric.Int64Counter
	t           telemetry.Recorder // last: its tallies are written on every request
}

// newObserver builds the Client's observer: its logger, tracer and instruments, and the
// attribute sets recording needs.
func newObserver(c *Client, o options) (*observer, error) {
	ob := &observer{log: o.logger, hitSpans: o.cacheHitSpans}
	if ob.log != nil {
		ob.hash = telemetry.NewTextHash()
	}
	err := ob.t.Init(telemetry.Options{TracerProvider: o.tracerProvider, MeterProvider: o.meterProvider,
		Outcomes: outcomeNames(), Engines: c.telEngines()})
	if err != nil {
		return nil, fmt.Errorf("translate: telemetry: %w", err)
	}
	ob.canarySteps = ob.t.CanarySteps()
	return ob, nil
}

// telEngines yields, at each collection, the engines of the running configuration and
// the quota left of each (0 when its vendor said the quota is spent; negative: unlimited).
func (c *Client) telEngines() iter.Seq2[*engineTel, int64] {
	return func(yield func(*engineTel, int64) bool) {
		s := c.cfg.Load()
		if s == nil {
			return
		}
		now := c.now()
		for _, e := range s.engines {
			left := e.q.Left(now)
			if left != 0 && now < e.outUntil.Load() {
				left = 0 // the vendor said the quota is spent
			}
			if !yield(e.tel, left) {
				return
			}
		}
	}
}

// engineTel precomputes the attribute sets of the engine named name.
func (o *observer) engineTel(name string) *engineTel { return o.t.NewEngine(name) }

// hedged counts a hedge sent to e.
func (o *observer) hedged(e *engine) { o.t.Hedged(e.tel) }

// configRejectedOne counts a rejected configuration and warns.
func (o *observer) configRejectedOne(err error) {
	o.t.ConfigRejected()
	if o.log != nil {
		o.log.Warn("translate: configuration rejected; the running one is kept", slog.String("error", err.Error()))
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// requestStart starts the request's span (see telemetry.Recorder.StartRequest): nil when
// tracing is off; *t0, if still zero, set to the span's start. Kept out of line: inlined
// into doAvoiding it reshuffles that function's frame, and the cache hit, which returns
// before reaching it, measured 3-6% more CPU (BenchmarkCacheHitSDK, 14 rounds A/B).
//
//go:noinline
func (o *observer) requestStart(ctx context.Context, t0 *time.Time) (context.Context, trace.Span) {
	return o.t.StartRequest(ctx, t0)
}

// freshHit records a request answered by a fresh cache entry, and its cache lookup (the
// Client's peek leaves it uncounted): its span only when asked for (WithCacheHitSpans).
// Without a span or a debug log that is one atomic add.
func (o *observer) freshHit(ctx context.Context, r *request, res *Result) {
	if !o.hitSpans && (o.log == nil || !o.log.Enabled(ctx, slog.LevelDebug)) {
		o.t.FreshHit(res.Degraded)
		return
	}
	o.cacheLookup(true)
	var span trace.Span
	if o.hitSpans {
		ctx, span = o.requestStart(ctx, nil)
	}
	o.requestEnd(ctx, span, r, res, nil, 0)
}

// requestEnd records a finished request: res is nil when err is not.
func (o *observer) requestEnd(ctx context.Context, span trace.Span, r *request, res *Result, err error, d time.Duration) {
	oc := outcomeIndex(err)
	var hit, degraded bool
	if res != nil {
		hit, degraded = res.FromCache, res.Degraded
	}
	o.t.Request(ctx, oc, hit, degraded, r.spread, d) // 0 without a scratch: the processor's
	o.calls(ctx, r, res, err)
	if span != nil {
		if telemetry.Recording(span) {
			o.setRequestAttrs(span, r, res, err, oc)
		}
		span.End()
	}
	if o.log != nil && o.log.Enabled(ctx, slog.LevelDebug) {
		attrs := []slog.Attr{slog.String("request_id", requestIDOf(r, res)),
			slog.Int("text_len", textLen(r)), slog.String("text_hash", o.hash.Sum(r.Text)),
			slog.String("outcome", o.t.OutcomeName(oc)), slog.Duration("latency", d),
			slog.Bool("cache_hit", hit), slog.Bool("degraded", degraded)}
		if res != nil && res.Engine != "" {
			attrs = append(attrs, slog.String("engine", res.Engine))
		}
		o.log.LogAttrs(ctx, slog.LevelDebug, "translate: request", attrs...)
	}
}

// setRequestAttrs sets the attributes of the request's span.
func (o *observer) setRequestAttrs(span trace.Span, r *request, res *Result, err error, oc int) {
	rs := telemetry.RequestSpan{Outcome: oc, Attempts: -1, TextLen: textLen(r), RequestID: requestIDOf(r, res)}
	if res != nil {
		rs.Answered, rs.Hit, rs.Degraded = true, res.FromCache, res.Degraded
		rs.Attempts, rs.Engine = len(res.Attempts), res.Engine
	} else if ae := (*Error)(nil); errors.As(err, &ae) {
		rs.Attempts = len(ae.Attempts)
	}
	o.t.SetRequestSpan(span, &rs)
}

// calls records the engine calls of a request not answered by the cache: how many, what
// they cost (when an engine answered), and each switch from one engine to the next.
func (o *observer) calls(ctx context.Context, r *request, res *Result, err error) {
	var atts []Attempt
	if res != nil && res.FromCache {
		return
	}
	if res != nil {
		atts = res.Attempts
	} else if ae := (*Error)(nil); errors.As(err, &ae) {
		atts = ae.Attempts
	}
	o.t.Calls(len(atts), resCost(res), res != nil)
	for i := 1; i < len(atts); i++ {
		if from := atts[i-1].Engine; atts[i].Engine != from {
			var et *engineTel
			if r.s != nil {
				if e := r.s.byName[from]; e != nil {
					et = e.tel
				}
			}
			o.t.Switch(ctx, et)
		}
	}
}

func resCost(res *Result) float64 {
	if res == nil {
		return 0
	}
	return res.Cost
}

// textLen is the length of the request's text in code points.
func textLen(r *request) int {
	if r.chars > 0 || r.Text == "" {
		return r.chars
	}
	return runeCount(r.Text) // the request failed validation before it was counted
}

func requestIDOf(r *request, res *Result) string {
	if res != nil {
		return res.RequestID
	}
	if r.id != "" {
		return r.id
	}
	return r.RequestID
}

// attemptStart starts the span of attempt n (1-based, as in Result.Attempts) on e, for
// every attempt but the first (see telemetry.Recorder.StartAttempt).
func (o *observer) attemptStart(ctx context.Context, e *engine, n int) (context.Context, trace.Span) {
	return o.t.StartAttempt(ctx, n)
}

// attemptEnd records attempt n on e, which took d and failed with err (nil: success), on
// the stripe of the walk's key; see telemetry.Recorder.EndAttempt.
func (o *observer) attemptEnd(ctx context.Context, span trace.Span, e *engine, n int, d time.Duration, err error, stripe uint64) {
	oc := outcomeIndex(err)
	o.t.EndAttempt(ctx, span, e.tel, n, oc, d, (span != nil || oc != 0) && e.fallbackOnly(e.view.Load()), stripe)
	if o.log != nil && o.log.Enabled(ctx, slog.LevelDebug) {
		o.log.LogAttrs(ctx, slog.LevelDebug, "translate: attempt", slog.String("engine", e.name),
			slog.Int("attempt", n), slog.Duration("latency", d), slog.String("outcome", o.t.OutcomeName(oc)))
	}
}

// timeDecision reports whether the caller should time the next routing decision and pass
// the duration to decision: one decision in 16, when anyone records it.
func (o *observer) timeDecision() bool { return o.t.TimeDecision() }

// decision records the duration of a routing decision timed after timeDecision said so.
func (o *observer) decision(d time.Duration) { o.t.Decision(d) }

// cacheLookup counts a cache lookup.
func (o *observer) cacheLookup(hit bool) { o.t.CacheLookup(hit) }

// degraded records an answer served by a degradation path: howStaleCache or
// howFallbackEngine.
func (o *observer) degraded(how string) { o.t.Degraded(how) }

// cost records a successful engine call on e: the credits it cost and the standard
// characters it translated, on the stripe of the walk's key.
func (o *observer) cost(e *engine, stripe uint64, credits float64, chars int) {
	e.tel.Cost(stripe, credits, chars)
}

func (o *observer) breakerChanged(engine string, from, to BreakerState) {
	o.t.BreakerMove(engine, from.String(), to.String())
	if o.log != nil {
		o.log.LogAttrs(context.Background(), slog.LevelWarn, "translate: breaker "+to.String(),
			slog.String("engine", engine), slog.String("from", from.String()), slog.String("to", to.String()))
	}
}

func (o *observer) poolChanged(engine string, from, to Pool) {
	if o.log != nil {
		o.log.LogAttrs(context.Background(), slog.LevelWarn, "translate: pool "+to.String(),
			slog.String("engine", engine), slog.String("from", from.String()), slog.String("to", to.String()))
	}
}

func (o *observer) warn(msg, engine string) {
	if o.log != nil {
		o.log.LogAttrs(context.Background(), slog.LevelWarn, "translate: "+msg, slog.String("engine", engine))
	}
}

// close ends the callback that reads the Client; the counters are reported frozen at
// their last values from then on (see telemetry.Recorder.Close). s is the running
// configuration (nil when New failed before it had one).
func (o *observer) close(s *setup) {
	o.t.Close(func(yield func(*engineTel) bool) {
		if s == nil {
			return
		}
		for _, e := range s.engines {
			if !yield(e.tel) {
				return
			}
		}
	})
}
