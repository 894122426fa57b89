package translate_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
	"github.com/fanyi-go/translate/engines/fake"
)

// Issue 16, items 1-5: values ParseConfig and New used to accept and that then crashed,
// hung or disabled the Client are refused by both, with the JSON path (ParseConfig) or the
// Go field (New) and the documented range; the edge of each range still serves.

// refused checks that ParseConfig refuses section (a top-level member of a file with one
// fake engine) with wantPath, and that New refuses opt with wantNew.
func refused(t *testing.T, section, wantPath string, opt translate.Option, wantNew string) {
	t.Helper()
	all.Register()
	doc := `{"engines":[{"name":"a","type":"fake"}],` + section + `}`
	cfg, err := translate.ParseConfig([]byte(doc))
	if translate.KindOf(err) != translate.KindInvalidInput || !strings.Contains(err.Error(), wantPath) {
		t.Errorf("ParseConfig(%s) = %v, %v; want KindInvalidInput %q", doc, cfg != nil, err, wantPath)
	}
	c, err := translate.New(translate.WithEngine(fake.New("a"), translate.Profile{}), opt)
	if c != nil {
		c.Close()
	}
	if translate.KindOf(err) != translate.KindInvalidInput || !strings.Contains(err.Error(), wantNew) {
		t.Errorf("New = %v; want KindInvalidInput %q", err, wantNew)
	}
}

// Item 1: half_open_calls 2^53 made Translate panic (an integer divide by zero in the
// breaker's statistics). At the top of its range a half-open breaker runs its trials and
// closes.
func TestHalfOpenCallsRange(t *testing.T) {
	refused(t, `"breaker":{"half_open_calls":9007199254740992}`, "breaker.half_open_calls: must be within 1..100",
		translate.WithBreaker(translate.BreakerPolicy{HalfOpenCalls: 1 << 53}), "BreakerPolicy.HalfOpenCalls must be within 1..100")

	clk := newClock()
	c, a, _ := breakerClient(t, clk, translate.BreakerPolicy{Window: 10000, MinCalls: 4, HalfOpenCalls: 100})
	a.Down(translate.KindUnavailable)
	translateN(t, c, 4)
	if got := c.Engines()[0].Breaker; got != translate.BreakerOpen {
		t.Fatalf("after 4 failed calls breaker = %v, want open", got)
	}
	a.Up()
	clk.Advance(time.Minute)
	translateN(t, c, 100)
	if got := c.Engines()[0].Breaker; got != translate.BreakerClosed {
		t.Errorf("after 100 good trial calls breaker = %v, want closed", got)
	}
}

// Item 2: cache.entries 2^40 ran New out of memory, 2^61+1 never returned, 1e8 took 2 GB
// at New. The range is 1..1e8, and the cache grows with use: New of the largest takes
// what a small one takes.
func TestCacheEntriesRange(t *testing.T) {
	for _, n := range []string{"1099511627776", "2305843009213693953"} {
		refused(t, `"cache":{"entries":`+n+`}`, "cache.entries: must be within 1..1e8",
			translate.WithCache(1<<40, time.Hour), "WithCache entries must be at most 1e8")
	}
	translate.WithCache(1<<61+1, time.Hour) // the Option alone does nothing
	c, err := translate.New(translate.WithEngine(fake.New("a"), translate.Profile{}), translate.WithCache(1<<61+1, time.Hour))
	if err == nil {
		c.Close()
		t.Errorf("New(WithCache(2^61+1)) accepted")
	}

	const maxNew = 16 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c = newClient(t, translate.WithEngine(fake.New("a"), translate.Profile{}), translate.WithCache(1e8, time.Hour))
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > maxNew {
		t.Errorf("New with a cache of 1e8 entries allocated %d MB, want under %d MB", n>>20, maxNew>>20)
	}
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil || res.FromCache {
		t.Fatalf("first Translate = %+v, %v", res, err)
	}
	if res, err := c.Translate(context.Background(), req("hello")); err != nil || !res.FromCache {
		t.Errorf("second Translate = %+v, %v; want a cache hit", res, err)
	}
}

// Item 3: breaker.window 2^53 opened the breaker after one successful call (and 2^36 took
// 8.2 GB for one breaker). At the top of its range a healthy engine keeps all its traffic.
func TestBreakerWindowRange(t *testing.T) {
	refused(t, `"breaker":{"window":9007199254740992}`, "breaker.window: must be within 1..10000",
		translate.WithBreaker(translate.BreakerPolicy{Window: 1 << 53}), "BreakerPolicy.Window must be within 1..10000")
	refused(t, `"breaker":{"window":68719476736}`, "breaker.window: must be within 1..10000",
		translate.WithBreaker(translate.BreakerPolicy{Window: 1 << 36}), "BreakerPolicy.Window must be within 1..10000")

	c, a, b := breakerClient(t, newClock(), translate.BreakerPolicy{Window: 10000, MinCalls: 10000})
	translateN(t, c, 300)
	if diff := cmp.Diff([]int{300, 0}, []int{a.Calls(), b.Calls()}); diff != "" {
		t.Errorf("calls to a, b (-want +got):\n%s", diff)
	}
	if got := c.Engines()[0].Breaker; got != translate.BreakerClosed {
		t.Errorf("breaker = %v, want closed", got)
	}
}

// Item 4: probes.interval "1ns" burned a core (956 ms of CPU per idle second).
func TestProbeIntervalRange(t *testing.T) {
	refused(t, `"probes":{"interval":"1ns"}`, "probes.interval: must be within 1s..24h",
		translate.WithProbes(translate.ProbePolicy{Interval: time.Nanosecond}), "ProbePolicy.Interval must be within 1s..24h")
	refused(t, `"probes":{"interval":"999ms"}`, "probes.interval: must be within 1s..24h",
		translate.WithProbes(translate.ProbePolicy{Interval: 999 * time.Millisecond}), "ProbePolicy.Interval must be within 1s..24h")
}

// Item 5: routing.temperature 1e-300 overflowed exp(score/T) and sent all traffic to the
// quality-70 engine instead of the quality-90 one. At the bottom of its range the better
// engine takes all of it.
func TestTemperatureRange(t *testing.T) {
	refused(t, `"routing":{"temperature":1e-300}`, "routing.temperature: must be within 0.2..1000",
		translate.WithRouting(translate.RoutingPolicy{Temperature: 1e-300}), "RoutingPolicy.Temperature must be within 0.2..1000")
	refused(t, `"routing":{"temperature":1e300}`, "routing.temperature: must be within 0.2..1000",
		translate.WithRouting(translate.RoutingPolicy{Temperature: 1e300}), "RoutingPolicy.Temperature must be within 0.2..1000")

	hi, lo := fake.New("hi"), fake.New("lo")
	c := newClient(t, translate.WithClock(newClock()), translate.WithRouting(translate.RoutingPolicy{Temperature: 0.2}),
		translate.WithEngine(lo, translate.Profile{Quality: 70}), translate.WithEngine(hi, translate.Profile{Quality: 90}))
	for i := range 500 {
		if _, err := c.Translate(context.Background(), req(fmt.Sprint("text ", i))); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]int{500, 0}, []int{hi.Calls(), lo.Calls()}); diff != "" {
		t.Errorf("calls to quality 90, quality 70 (-want +got):\n%s", diff)
	}
}

// LoadConfigContext returns ctx's error, as is, when ctx is done before it reads.
func TestLoadConfigContextCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := translate.LoadConfigContext(ctx, "testdata/none.json"); !errors.Is(err, context.Canceled) {
		t.Errorf("LoadConfigContext(canceled) = %v, want context.Canceled", err)
	}
}
