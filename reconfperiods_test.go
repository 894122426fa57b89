package translate_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
	"github.com/fanyi-go/translate/engines/fake"
)

// healthCfg has an engine a that is down and an engine b that answers, with breakers that
// never open: only health folds can move a out of the normal pool.
func healthCfg(every time.Duration) *translate.Config {
	return &translate.Config{
		Engines: []translate.EngineConfig{
			{Name: "a", Type: "fake", Settings: map[string]string{"down": "unavailable"}},
			{Name: "b", Type: "fake"},
		},
		Breaker: translate.BreakerPolicy{Window: 10000, MinCalls: 10000},
		Routing: translate.RoutingPolicy{HealthEvery: every},
	}
}

// poolAfterTraffic sends 20 requests a second on clk for n seconds, and returns the pool of
// the engine a after them.
func poolAfterTraffic(c *translate.Client, clk *clock, n int) translate.Pool {
	for i := range n {
		clk.Advance(time.Second)
		for j := range 20 {
			c.Translate(context.Background(), translate.Request{Text: fmt.Sprint("hello ", i, " ", j), Source: "en", Target: "es"})
		}
	}
	return c.Engines()[0].Pool
}

// TestReconfigureLowerHealthEveryFoldsAtOnce: a Client built with HealthEvery 1h and
// reconfigured to 100ms folds at the new period, as one built with 100ms does: the engine
// that fails every call is demoted within a minute of traffic, not after the old hour.
func TestReconfigureLowerHealthEveryFoldsAtOnce(t *testing.T) {
	all.Register()
	for _, tc := range []struct {
		name         string
		built, after time.Duration
	}{
		{"built with 100ms", 100 * time.Millisecond, 0},
		{"built with 1h, reconfigured to 100ms", time.Hour, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			c := newClient(t, translate.WithConfig(healthCfg(tc.built)), translate.WithClock(clk))
			if tc.after > 0 {
				if err := c.Reconfigure(healthCfg(tc.after)); err != nil {
					t.Fatal(err)
				}
			}
			if p := poolAfterTraffic(c, clk, 60); p != translate.PoolFallback {
				t.Errorf("after 60s of failing traffic the engine is in pool %v, want fallback", p)
			}
		})
	}
}

// TestReconfigureLowerProbeIntervalProbesAtOnce: a Client built with probes every 24h and
// reconfigured to every 1s probes within 3s (virtual time), not after the old 24h; one
// reconfigured to 12h still waits.
func TestReconfigureLowerProbeIntervalProbesAtOnce(t *testing.T) {
	all.Register()
	cfg := func(every time.Duration) *translate.Config {
		return &translate.Config{Engines: []translate.EngineConfig{{Name: "a", Type: "fake"}}, Probes: &translate.ProbePolicy{Interval: every}}
	}
	for _, tc := range []struct {
		after time.Duration
		probe bool
	}{{time.Second, true}, {12 * time.Hour, false}} {
		t.Run(tc.after.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := fake.New("b") // given after the Config: Reconfigure keeps it
				c, err := translate.New(translate.WithConfig(cfg(24*time.Hour)), translate.WithEngine(b, translate.Profile{}))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				time.Sleep(time.Minute)
				if err := c.Reconfigure(cfg(tc.after)); err != nil {
					t.Fatal(err)
				}
				time.Sleep(3 * time.Second)
				if got := b.Calls() > 0; got != tc.probe {
					t.Errorf("after Reconfigure to Interval %v: %d probe calls in 3s, want some: %v", tc.after, b.Calls(), tc.probe)
				}
			})
		})
	}
}
