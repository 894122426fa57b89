package translate_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
	"github.com/fanyi-go/translate/fidelity/glossary"
)

// TestCachedKeyStillRefused holds that a request is refused whether or not its cache key
// is cached: the fresh-hit path computes only the key before it looks, so every check that
// refuses a request must run before the lookup. Each variant shares its cache key with a
// cached request (or differs from it only in the field that makes it invalid) and must get
// the error a Client with an empty cache gives.
func TestCachedKeyStillRefused(t *testing.T) {
	g, err := glossary.New("brands", "en", "es", []glossary.Term{{Source: "Acme", Target: "Acme"}})
	if err != nil {
		t.Fatal(err)
	}
	opts := []translate.Option{translate.WithClock(newClock()), translate.WithCache(100, time.Minute),
		translate.WithGlossaries(g), translate.WithEngine(fake.New("a"), translate.Profile{})}
	warm, cold := newClient(t, opts...), newClient(t, opts...)
	ok := req("hello")
	for i := range 2 { // the second is a fresh hit
		res, err := warm.Translate(context.Background(), ok)
		if err != nil || res.FromCache != (i == 1) {
			t.Fatalf("warming Translate %d = %+v, %v", i, res, err)
		}
	}
	with := func(f func(*translate.Request)) translate.Request {
		r := ok
		f(&r)
		return r
	}
	for name, bad := range map[string]translate.Request{
		"tenant":         with(func(r *translate.Request) { r.Tenant = "no spaces" }),
		"scene":          with(func(r *translate.Request) { r.Scene = 99 }),
		"style":          with(func(r *translate.Request) { r.Style = 99 }),
		"priority":       with(func(r *translate.Request) { r.Priority = 99 }),
		"engine":         with(func(r *translate.Request) { r.Engine = "nope" }),
		"format":         with(func(r *translate.Request) { r.Format = 99 }),
		"glossary":       with(func(r *translate.Request) { r.Glossary = "nope" }),
		"glossary, auto": with(func(r *translate.Request) { r.Glossary, r.Source = "brands", "" }),
		"same language":  with(func(r *translate.Request) { r.Source = "es" }),
		"target":         with(func(r *translate.Request) { r.Target = "not a tag!" }),
	} {
		_, want := cold.Translate(context.Background(), bad)
		_, got := warm.Translate(context.Background(), bad)
		if want == nil || got == nil || translate.KindOf(got) != translate.KindOf(want) || got.Error() != want.Error() {
			t.Errorf("%s: cached key gives %v, empty cache %v; want the same error", name, got, want)
		}
	}
	warm.Close()
	if _, err := warm.Translate(context.Background(), ok); !errors.Is(err, translate.ErrClosed) {
		t.Errorf("closed Client, cached key: %v, want ErrClosed", err)
	}
}

// TestFreshHitCounts holds the request and cache-lookup counters on every path a fresh hit
// takes: counted once, by one atomic add, without a span or a debug log (the default),
// and through the request's full record with them; degraded entries by their flag; hits
// after a RequestID's own lookup; and still reported after Close.
func TestFreshHitCounts(t *testing.T) {
	info := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	for name, extra := range map[string][]translate.Option{
		"no log":     nil,
		"info log":   {translate.WithLogger(info)},
		"debug log":  nil, // newTelemetry's own logger
		"hit spans":  {translate.WithCacheHitSpans(), translate.WithLogger(info)},
		"spans, log": {translate.WithCacheHitSpans()},
	} {
		t.Run(name, func(t *testing.T) {
			tel, opts := newTelemetry(t)
			if name == "no log" {
				opts = opts[:2] // the tracer and meter providers, no logger
			}
			a, fb := fake.New("a"), fake.New("fb")
			c := newClient(t, append(opts, append([]translate.Option{translate.WithClock(newClock()),
				translate.WithCache(100, time.Minute), translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
				translate.WithEngine(a, translate.Profile{}), translate.WithEngine(fb, translate.Profile{FallbackOnly: true})},
				extra...)...)...)
			ask := func(r translate.Request, fromCache, degraded bool) {
				t.Helper()
				res, err := c.Translate(context.Background(), r)
				if err != nil || res.FromCache != fromCache || res.Degraded != degraded {
					t.Fatalf("Translate(%q) = %+v, %v; want FromCache %v, Degraded %v", r.Text, res, err, fromCache, degraded)
				}
			}
			ask(req("hello"), false, false)
			ask(req("hello"), true, false)
			ask(req("hello"), true, false)
			withID := req("hello")
			withID.RequestID = "id-1"
			ask(withID, true, false)
			a.Down(translate.KindUnavailable)
			ask(req("world"), false, true) // the fallback engine's answer: cached, degraded
			ask(req("world"), true, true)
			noCache := req("hello")
			noCache.NoCache = true
			ask(noCache, false, true) // no lookup: the cache is not read
			c.Close()
			want := map[string]float64{
				"translate.cache.lookups{hit=false}":                            2,
				"translate.cache.lookups{hit=true}":                             4,
				"translate.requests{cache_hit=false,degraded=false,outcome=ok}": 1,
				"translate.requests{cache_hit=false,degraded=true,outcome=ok}":  2,
				"translate.requests{cache_hit=true,degraded=false,outcome=ok}":  3,
				"translate.requests{cache_hit=true,degraded=true,outcome=ok}":   1,
			}
			got := map[string]float64{}
			for k, v := range values(tel.metrics(t)) {
				if strings.HasPrefix(k, "translate.cache.lookups{") || strings.HasPrefix(k, "translate.requests{") {
					got[k] = v
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("counters after Close (-want +got):\n%s", diff)
			}
		})
	}
}
