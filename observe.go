package translate

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// observer is where the Client reports what happens: spans, metrics and logs. Every method
// is cheap when nothing listens.
type observer struct {
	log *slog.Logger // nil: no logging
}

func newObserver(c *Client, o options) (*observer, error) {
	return &observer{log: o.logger}, nil
}

func (o *observer) requestStart(ctx context.Context) (context.Context, trace.Span) {
	return ctx, nil
}

func (o *observer) requestEnd(ctx context.Context, span trace.Span, res *Result, err error, d time.Duration) {
}

func (o *observer) attemptStart(ctx context.Context, engine string, n int) (context.Context, trace.Span) {
	return ctx, nil
}

func (o *observer) attemptEnd(ctx context.Context, span trace.Span, engine string, d time.Duration, err error) {
	if o.log != nil && o.log.Enabled(ctx, slog.LevelDebug) {
		o.log.LogAttrs(ctx, slog.LevelDebug, "translate: attempt", slog.String("engine", engine),
			slog.Duration("latency", d), slog.String("outcome", outcome(err)))
	}
}

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return KindOf(err).String()
}

func (o *observer) decision(d time.Duration) {}

func (o *observer) cacheLookup(hit bool) {}

func (o *observer) degraded(how string) {}

func (o *observer) cost(engine string, credits float64, chars int) {}

func (o *observer) breakerChanged(engine string, from, to BreakerState) {
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

func (o *observer) close() {}
