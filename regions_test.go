package translate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
	"github.com/fanyi-go/translate/engines/fake"
)

// regionEngines are engines in several processing regions: cn is the one the router
// prefers, eu a standard engine, global has no region, and the last resorts (fallback only)
// stand in us and eu.
type regionEngines struct {
	cn, eu, global, lastUS, lastEU *fake.Engine
}

func newRegionEngines() *regionEngines {
	return &regionEngines{cn: fake.New("cn"), eu: fake.New("eu"), global: fake.New("global"),
		lastUS: fake.New("last-us"), lastEU: fake.New("last-eu")}
}

func (r *regionEngines) options() []translate.Option {
	return []translate.Option{sharp,
		translate.WithEngine(r.cn, translate.Profile{Quality: 100, Region: "cn"}),
		translate.WithEngine(r.eu, translate.Profile{Quality: 40, Region: "eu"}),
		translate.WithEngine(r.global, translate.Profile{Quality: 90}),
		translate.WithEngine(r.lastUS, translate.Profile{Quality: 100, Region: "us", FallbackOnly: true}),
		translate.WithEngine(r.lastEU, translate.Profile{Quality: 10, Region: "eu", FallbackOnly: true}),
	}
}

// calls counts each engine's calls.
func (r *regionEngines) calls() map[string]int {
	return map[string]int{"cn": r.cn.Calls(), "eu": r.eu.Calls(), "global": r.global.Calls(),
		"last-us": r.lastUS.Calls(), "last-eu": r.lastEU.Calls()}
}

func regionReq(text string, regions ...string) translate.Request {
	r := req(text)
	r.Regions = regions
	return r
}

// TestRegionsHardFilter: no engine outside the request's regions serves it, however much
// the router prefers it, the last resorts included; engines of an allowed region serve,
// a last resort of an allowed region when the others fail.
func TestRegionsHardFilter(t *testing.T) {
	ctx := context.Background()
	en := newRegionEngines()
	c := newClient(t, append(en.options(), translate.WithClock(newClock()))...)

	wantServedBy(t, c, regionReq("a", "eu"), "eu", "Regions eu")
	wantServedBy(t, c, regionReq("b", "us", "cn"), "cn", "Regions us, cn")
	wantServedBy(t, c, req("c"), "cn", "no Regions (cn is the preferred engine)")

	// The eu engine fails: the eu last resort serves, never cn, global or the us last resort.
	en.eu.Down(translate.KindUnavailable)
	before := en.calls()
	res, err := c.Translate(ctx, regionReq("d", "eu"))
	if err != nil || res.Engine != "last-eu" || !res.Degraded {
		t.Fatalf("eu down, Regions eu: %v, %+v; want last-eu, Degraded", err, res)
	}
	// Every eu engine fails: the request fails, and nothing outside eu was called.
	en.lastEU.Down(translate.KindUnavailable)
	if res, err := c.Translate(ctx, regionReq("e", "eu")); err == nil {
		t.Fatalf("every eu engine down, Regions eu: served by %s", res.Engine)
	}
	onlyEUEnginesCalled(t, before, en.calls())

	// The global engine ("" region) serves a request that allows "".
	if res, err := c.Translate(ctx, regionReq("f", "")); err != nil || res.Engine != "global" {
		t.Errorf(`Regions "": %v, %+v; want global`, err, res)
	}
}

// wantServedBy fails the test unless r is served by engine; what names the request.
func wantServedBy(t *testing.T, c *translate.Client, r translate.Request, engine, what string) {
	t.Helper()
	if res, err := c.Translate(context.Background(), r); err != nil || res.Engine != engine {
		t.Fatalf("%s: %v, %+v; want %s", what, err, res, engine)
	}
}

// onlyEUEnginesCalled: between the call counts before and after, no engine outside eu was
// called, and both eu engines were.
func onlyEUEnginesCalled(t *testing.T, before, after map[string]int) {
	t.Helper()
	for _, name := range []string{"cn", "global", "last-us"} {
		if after[name] != before[name] {
			t.Errorf("%s (outside eu) called %d times for eu-only requests", name, after[name]-before[name])
		}
	}
	if after["eu"] == before["eu"] || after["last-eu"] == before["last-eu"] {
		t.Errorf("calls %v -> %v: the eu engines were not tried", before, after)
	}
}

// TestRegionsNoEngine: a request no engine of its regions can serve gets KindNoEngine, at
// once, with every engine excluded by the region rule.
func TestRegionsNoEngine(t *testing.T) {
	en := newRegionEngines()
	c := newClient(t, append(en.options(), translate.WithClock(newClock()))...)
	_, err := c.Translate(context.Background(), regionReq("a", "jp"))
	var e *translate.Error
	if !errors.As(err, &e) || e.Kind != translate.KindNoEngine {
		t.Fatalf("Regions jp: %v, want KindNoEngine", err)
	}
	want := map[string]string{}
	for name := range en.calls() {
		want[name] = "region not allowed"
	}
	if diff := cmp.Diff(want, e.Excluded); diff != "" {
		t.Errorf("Excluded (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"cn": 0, "eu": 0, "global": 0, "last-us": 0, "last-eu": 0}, en.calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestRegionsPinned: a pinned engine outside the request's regions is not called; with
// AllowFallback an engine of the regions serves instead.
func TestRegionsPinned(t *testing.T) {
	en := newRegionEngines()
	c := newClient(t, append(en.options(), translate.WithClock(newClock()))...)
	r := regionReq("a", "eu")
	r.Engine = "cn"
	if res, err := c.Translate(context.Background(), r); err == nil {
		t.Errorf("pinned cn, Regions eu, no fallback: served by %s", res.Engine)
	}
	r.AllowFallback = true
	if res, err := c.Translate(context.Background(), r); err != nil || res.Engine != "eu" {
		t.Errorf("pinned cn, Regions eu, fallback allowed: %v, %+v; want eu", err, res)
	}
	if n := en.cn.Calls(); n != 0 {
		t.Errorf("cn called %d times", n)
	}
}

// TestRegionsCache: a text an engine outside the request's regions made is never served to
// it, neither fresh from the cache, nor stale when the engines of its regions fail, nor
// through an identical request in flight.
func TestRegionsCache(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*translate.Client, *regionEngines, *clock) {
		en, clk := newRegionEngines(), newClock()
		c := newClient(t, append(en.options(), translate.WithClock(clk), translate.WithCache(100, time.Minute))...)
		if res, err := c.Translate(ctx, req("cached")); err != nil || res.Engine != "cn" {
			t.Fatalf("first request: %v, %+v; want cn", err, res)
		}
		return c, en, clk
	}
	t.Run("fresh", func(t *testing.T) {
		c, _, _ := setup(t)
		res, err := c.Translate(ctx, regionReq("cached", "eu"))
		if err != nil {
			t.Fatal(err)
		}
		if res.FromCache || res.Engine != "eu" {
			t.Fatalf("FIX cache.go (Client.lookup): a fresh cache entry made by cn was served to a request " +
				"with Regions [eu]; the entry must record its engine's region and lookup must skip it " +
				"(fresh and stale) when the region is not allowed")
		}
	})
	t.Run("stale", func(t *testing.T) {
		c, en, clk := setup(t)
		clk.Advance(2 * time.Minute) // the entry is stale
		en.eu.Down(translate.KindUnavailable)
		en.lastEU.Down(translate.KindUnavailable)
		res, err := c.Translate(ctx, regionReq("cached", "eu"))
		if err == nil && res.FromCache {
			t.Fatalf("FIX cache.go/failover.go (lookup or staleServes): a stale cache entry made by cn was " +
				"served to a request with Regions [eu] when the eu engines failed")
		}
		if err == nil {
			t.Fatalf("Regions eu with every eu engine down: served by %s", res.Engine)
		}
	})
}

// TestRegionsFlight: a request does not take the answer of an identical request in flight
// served by an engine outside its regions.
func TestRegionsFlight(t *testing.T) {
	ctx := context.Background()
	entered, release := make(chan struct{}), make(chan struct{})
	cn := fake.New("cn", fake.WithHook(func(ctx context.Context, _ *translate.EngineRequest) error {
		close(entered)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}))
	eu := fake.New("eu")
	c := newClient(t, translate.WithClock(newClock()), translate.WithDeadline(time.Minute),
		translate.WithEngine(cn, translate.Profile{Region: "cn", Timeout: time.Minute}),
		translate.WithEngine(eu, translate.Profile{Region: "eu"}))

	first := make(chan error, 1)
	go func() {
		_, err := c.Translate(ctx, regionReq("same text", "cn"))
		first <- err
	}()
	<-entered // the cn call is in flight
	second := make(chan *translate.Result, 1)
	go func() {
		res, _ := c.Translate(ctx, regionReq("same text", "eu"))
		second <- res
	}()
	select {
	case res := <-second:
		if res == nil || res.Engine != "eu" {
			t.Errorf("Regions eu: %+v, want the eu engine's answer", res)
		}
		close(release)
	case <-time.After(5 * time.Second): // reached only when the bug is there
		close(release)
		res := <-second
		t.Errorf("FIX cache.go (flightKey): a request with Regions [eu] waited for an identical request "+
			"in flight on cn and got its answer (%+v); requests of different regions must not share a flight", res)
	}
	if err := <-first; err != nil {
		t.Errorf("Regions cn: %v", err)
	}
}

// TestBundledRegions: the bundled adapters, as configuration files name them, say where the
// vendor processes the text: DeepL in the EU, Baidu in China, the global endpoints nowhere
// in particular; Microsoft's geography and Google v3's location pick theirs (a v3 location
// outside the EU and the US is served by the global endpoint: no region).
func TestBundledRegions(t *testing.T) {
	all.Register()
	for _, tc := range []struct {
		typ      string
		settings map[string]string
		want     string
	}{
		{"deepl", map[string]string{"auth_key": "k"}, "eu"},
		{"baidu", map[string]string{"appid": "a", "secret": "s"}, "cn"},
		{"google", map[string]string{"api_key": "k"}, ""},
		{"google-v3", map[string]string{"project": "p", "access_token": "t"}, ""},
		{"google-v3", map[string]string{"project": "p", "access_token": "t", "location": "europe-west4"}, "eu"},
		{"google-v3", map[string]string{"project": "p", "access_token": "t", "location": "us-central1"}, "us"},
		{"google-v3", map[string]string{"project": "p", "access_token": "t", "location": "asia-northeast1"}, ""}, // the global endpoint serves it
		{"microsoft", map[string]string{"key": "k"}, ""},
		{"microsoft", map[string]string{"key": "k", "region": "westeurope", "geography": "eu"}, "eu"},
		{"microsoft", map[string]string{"key": "k", "region": "eastus", "geography": "us"}, "us"},
		{"microsoft", map[string]string{"key": "k", "region": "japaneast", "geography": "apac"}, "apac"},
		{"openai", map[string]string{"model": "m", "api_key": "k"}, ""},
		{"libretranslate", map[string]string{"base_url": "http://127.0.0.1:5000"}, ""},
		{"apertium", map[string]string{"base_url": "http://127.0.0.1:2737"}, ""},
	} {
		e, p, err := translate.EngineConfig{Type: tc.typ, Settings: tc.settings}.Build()
		if err != nil {
			t.Errorf("%s %v: %v", tc.typ, tc.settings, err)
			continue
		}
		if c, ok := e.(interface{ Close() error }); ok {
			c.Close()
		}
		if p.Region != tc.want {
			t.Errorf("%s %v: Region %q, want %q", tc.typ, tc.settings, p.Region, tc.want)
		}
	}
}
