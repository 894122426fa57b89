package translate_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// setupEngines are the fake engines a "setup-fake" config engine is built from, by name.
var setupEngines = struct {
	sync.Mutex
	m map[string]*fake.Engine
}{m: map[string]*fake.Engine{}}

func init() {
	translate.RegisterEngineType("setup-fake", func(ec translate.EngineConfig) (translate.Engine, error) {
		setupEngines.Lock()
		defer setupEngines.Unlock()
		return setupEngines.m[ec.Name], nil
	})
}

func setupConfig(t *testing.T, names ...string) *translate.Config {
	t.Helper()
	cfg := &translate.Config{Breaker: translate.BreakerPolicy{Window: 10, MinCalls: 4}}
	for _, n := range names {
		cfg.Engines = append(cfg.Engines, translate.EngineConfig{Name: n, Type: "setup-fake",
			Profile: translate.Profile{Quality: 50, Quota: 1000}})
	}
	return cfg
}

// TestReconfigureKeepsStateOfEnginesThatStay: an open breaker and the quota used survive a
// reconfiguration; an engine new by name starts fresh; a removed one gets no calls.
func TestReconfigureKeepsStateOfEnginesThatStay(t *testing.T) {
	a, b, n := fake.New("ra"), fake.New("rb"), fake.New("rn")
	setupEngines.Lock()
	setupEngines.m["ra"], setupEngines.m["rb"], setupEngines.m["rn"] = a, b, n
	setupEngines.Unlock()
	c := newClient(t, translate.WithConfig(setupConfig(t, "ra", "rb")), translate.WithClock(newClock()))
	a.Down(translate.KindUnavailable)
	for i := range 8 {
		r := req("text " + string(rune('a'+i)))
		r.Engine = "ra"
		_, _ = c.Translate(context.Background(), r)
	}
	r := req("hello")
	r.Engine = "rb"
	if _, err := c.Translate(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	before := status(c)
	if before["ra"].Breaker != translate.BreakerOpen {
		t.Fatalf("ra's breaker %v before, want open", before["ra"].Breaker)
	}
	if err := c.Reconfigure(setupConfig(t, "ra", "rb", "rn")); err != nil {
		t.Fatal(err)
	}
	after := status(c)
	got := map[string]any{"ra breaker": after["ra"].Breaker, "rb quota": after["rb"].QuotaLeft,
		"rn breaker": after["rn"].Breaker, "rn quota": after["rn"].QuotaLeft}
	want := map[string]any{"ra breaker": translate.BreakerOpen, "rb quota": before["rb"].QuotaLeft,
		"rn breaker": translate.BreakerClosed, "rn quota": int64(1000)}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("after Reconfigure (-want +got):\n%s", d)
	}
	if before["rb"].QuotaLeft != 995 {
		t.Errorf("rb quota before %d, want 995", before["rb"].QuotaLeft)
	}
	if err := c.Reconfigure(setupConfig(t, "rn")); err != nil {
		t.Fatal(err)
	}
	calls := b.Calls()
	for i := range 5 {
		res, err := c.Translate(context.Background(), req("more "+string(rune('a'+i))))
		if err != nil || res.Engine != "rn" {
			t.Fatalf("after removing rb: %v, %v", res, err)
		}
	}
	if b.Calls() != calls {
		t.Errorf("a removed engine got %d new calls", b.Calls()-calls)
	}
	r.Engine = "rb"
	if _, err := c.Translate(context.Background(), r); translate.KindOf(err) != translate.KindInvalidInput {
		t.Errorf("pinning a removed engine: %v, want invalid_input", err)
	}
}

// TestReconfigureRejectsAndKeeps: an invalid config (the seed's breaker ratio 0.1) or nil
// changes nothing; a closed Client says so.
func TestReconfigureRejectsAndKeeps(t *testing.T) {
	a := fake.New("rk")
	setupEngines.Lock()
	setupEngines.m["rk"] = a
	setupEngines.Unlock()
	c, err := translate.New(translate.WithConfig(setupConfig(t, "rk")))
	if err != nil {
		t.Fatal(err)
	}
	bad := setupConfig(t, "rk")
	bad.Breaker.FailureRatio = 0.1
	if err := c.Reconfigure(bad); translate.KindOf(err) != translate.KindInvalidInput {
		t.Errorf("ratio 0.1: %v, want invalid_input", err)
	}
	if err := c.Reconfigure(nil); translate.KindOf(err) != translate.KindInvalidInput {
		t.Errorf("nil: %v, want invalid_input", err)
	}
	if _, err := c.Translate(context.Background(), req("hello")); err != nil {
		t.Errorf("after a rejected config: %v", err)
	}
	c.Close()
	if err := c.Reconfigure(setupConfig(t, "rk")); translate.KindOf(err) != translate.KindClosed {
		t.Errorf("closed: %v, want closed", err)
	}
}

func status(c *translate.Client) map[string]translate.EngineStatus {
	m := map[string]translate.EngineStatus{}
	for _, s := range c.Engines() {
		m[s.Name] = s
	}
	return m
}
