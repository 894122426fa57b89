package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/fanyi-go/translate"
)

// telemetry holds the server's metrics: the library's (translate_*) and the server's own
// gauges of engine and budget state (translate_engine_*, translate_budget_*), which the
// alerting rules in ops/ need and the library reports only as events, plus HTTP counts.
type telemetry struct {
	registry *prometheus.Registry
	provider *sdkmetric.MeterProvider
	meter    metric.Meter
	httpReqs metric.Int64Counter
	inFlight metric.Int64UpDownCounter
	reg      metric.Registration
}

func newTelemetry() (*telemetry, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	t := &telemetry{registry: reg, provider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))}
	t.meter = t.provider.Meter("github.com/fanyi-go/translate/examples/server")
	t.httpReqs, err = t.meter.Int64Counter("translate.server.http.requests", metric.WithUnit("{request}"),
		metric.WithDescription("HTTP requests answered, by route and status code."))
	if err != nil {
		return nil, err
	}
	t.inFlight, err = t.meter.Int64UpDownCounter("translate.server.http.in_flight", metric.WithUnit("{request}"),
		metric.WithDescription("HTTP requests being served, by route."))
	if err != nil {
		return nil, err
	}
	return t, nil
}

// observeClient registers gauges read from c.Engines() and c.Budget() at every scrape.
func (t *telemetry) observeClient(c *translate.Client) error {
	state, err := t.meter.Int64ObservableGauge("translate.engine.breaker.state",
		metric.WithDescription("The engine's breaker: 0 closed, 1 open, 2 half-open (its worst scene with BreakerPolicy.PerScene)."))
	if err != nil {
		return err
	}
	usable, err := t.meter.Int64ObservableGauge("translate.engine.usable",
		metric.WithDescription("1 while the engine may serve: breaker not open, not in maintenance, not set aside."))
	if err != nil {
		return err
	}
	spent, err := t.meter.Float64ObservableGauge("translate.budget.spent", metric.WithUnit("{credit}"),
		metric.WithDescription("Credits charged today (UTC)."))
	if err != nil {
		return err
	}
	daily, err := t.meter.Float64ObservableGauge("translate.budget.daily", metric.WithUnit("{credit}"),
		metric.WithDescription("The daily budget in credits; 0 means unlimited."))
	if err != nil {
		return err
	}
	t.reg, err = t.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, s := range c.Engines() {
			set := metric.WithAttributes(attribute.String("engine", s.Name))
			o.ObserveInt64(state, int64(s.Breaker), set)
			o.ObserveInt64(usable, b2i(s.Breaker != translate.BreakerOpen && s.Pool != translate.PoolMaintenance && !s.SetAside), set)
		}
		b := c.Budget()
		o.ObserveFloat64(spent, b.Spent)
		o.ObserveFloat64(daily, b.Daily)
		return nil
	}, state, usable, spent, daily)
	return err
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (t *telemetry) handler() http.Handler {
	return promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{})
}

func (t *telemetry) close() {
	if t.reg != nil {
		_ = t.reg.Unregister()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = t.provider.Shutdown(ctx)
}

// statusWriter remembers the status and size of an answer.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += n
	return n, err
}

// accessLog logs one line per request: method, route, status, size, duration and the
// client's address. It never logs a body, a query string or a header value: customer text
// and credentials stay out of the log.
func accessLog(log *slog.Logger, t *telemetry, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		rt := route(r)
		if t != nil {
			set := metric.WithAttributes(attribute.String("route", rt))
			t.inFlight.Add(r.Context(), 1, set)
			defer t.inFlight.Add(context.Background(), -1, set)
		}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				log.Error("handler panicked", "route", route(r), "panic_type", typeName(p))
				if sw.status == 0 {
					fail(sw, codeInternal, "internal error", "")
				}
			}
			if t != nil {
				t.httpReqs.Add(r.Context(), 1, metric.WithAttributes(attribute.String("route", rt),
					attribute.String("code", strconv.Itoa(sw.status))))
			}
			log.LogAttrs(r.Context(), slog.LevelInfo, "http", slog.String("method", r.Method),
				slog.String("route", rt), slog.Int("status", sw.status), slog.Int("bytes", sw.bytes),
				slog.Float64("duration_ms", ms(time.Since(start))), slog.String("remote", r.RemoteAddr))
		}()
		next.ServeHTTP(sw, r)
	})
}

// route is the path when it is one of ours, "other" otherwise: unknown paths must not grow
// the metric's label set without bound.
func route(r *http.Request) string {
	switch r.URL.Path {
	case "/v1/translate", "/v1/translate/batch", "/v1/engines", "/healthz", "/readyz", "/metrics":
		return r.URL.Path
	}
	return "other"
}

// typeName names a panic value's type only: its message might quote customer text.
func typeName(v any) string { return fmt.Sprintf("%T", v) }
