package translate_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

func TestScoreWorkedExample(t *testing.T) {
	// The design's worked example: 34 + 23 + 19 + 14.25.
	got := translate.Score(translate.DefaultWeights, 85, 92, 95, 95)
	if math.Abs(got-90.25) > 1e-9 {
		t.Fatalf("Score = %v, want 90.25", got)
	}
}

func TestSpeedAndCostScores(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"speed 50ms", translate.SpeedScore(50e6), 100},
		{"speed 100ms", translate.SpeedScore(100e6), 100},
		{"speed 1s", translate.SpeedScore(1e9), 50}, // log midpoint of 100ms..10s
		{"speed 10s", translate.SpeedScore(10e9), 0},
		{"speed 20s", translate.SpeedScore(20e9), 0},
		{"cost free", translate.CostScore(0), 100},
		{"cost 25", translate.CostScore(25), 50},
		{"cost 80", translate.CostScore(80), 0},
	} {
		if math.Abs(tc.got-tc.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// shares routes n distinct texts and returns each engine's share of the answers.
func shares(t *testing.T, c *translate.Client, n int, mk func(i int) translate.Request) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	for i := 0; i < n; i++ {
		res, err := c.Translate(context.Background(), mk(i))
		if err != nil {
			t.Fatal(err)
		}
		got[res.Engine] += 1 / float64(n)
	}
	return got
}

func TestSoftmaxSplitsSeventyThirty(t *testing.T) {
	// Quality and availability only: scores 0.5*q + 0.5*100 are 90 (q 80) and 70 (q 40).
	w := translate.Weights{Quality: 0.5, Availability: 0.5}
	c := newClient(t, translate.WithClock(newClock()), translate.WithRouting(translate.RoutingPolicy{Weights: w}),
		translate.WithEngine(fake.New("hi"), translate.Profile{Quality: 80}),
		translate.WithEngine(fake.New("lo"), translate.Profile{Quality: 40}))
	st := c.Engines()
	if st[0].Score != 90 || st[1].Score != 70 {
		t.Fatalf("scores %v and %v, want 90 and 70", st[0].Score, st[1].Score)
	}
	got := shares(t, c, 4000, func(i int) translate.Request { return req(fmt.Sprint("t", i)) })
	if math.Abs(got["hi"]-0.70) > 0.03 {
		t.Errorf("share of the 90-point engine = %.3f, want about 0.70", got["hi"])
	}
}

func TestSeedMakesRoutingReproducible(t *testing.T) {
	run := func(seed uint64) []string {
		c, err := translate.New(translate.WithSeed(seed), translate.WithoutCache(), translate.WithClock(newClock()),
			translate.WithEngine(fake.New("a"), translate.Profile{}), translate.WithEngine(fake.New("b"), translate.Profile{}),
			translate.WithEngine(fake.New("c"), translate.Profile{}))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var out []string
		for i := 0; i < 50; i++ {
			res, err := c.Translate(context.Background(), req("x"))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, res.Engine)
		}
		return out
	}
	if diff := cmp.Diff(run(7), run(7)); diff != "" {
		t.Errorf("same seed, different routes:\n%s", diff)
	}
	if cmp.Equal(run(7), run(8)) {
		t.Errorf("seeds 7 and 8 routed 50 requests identically")
	}
}

func TestStickyRouting(t *testing.T) {
	c := newClient(t, translate.WithClock(newClock()), translate.WithRouting(translate.RoutingPolicy{Sticky: true}),
		translate.WithEngine(fake.New("a"), translate.Profile{}), translate.WithEngine(fake.New("b"), translate.Profile{}),
		translate.WithEngine(fake.New("c"), translate.Profile{}))
	seen := map[string]bool{}
	for i := 0; i < 60; i++ {
		text := fmt.Sprint("sentence ", i)
		first := ""
		for k := 0; k < 5; k++ {
			res, err := c.Translate(context.Background(), req(text))
			if err != nil {
				t.Fatal(err)
			}
			if first == "" {
				first = res.Engine
			} else if res.Engine != first {
				t.Fatalf("text %q went to %s then %s", text, first, res.Engine)
			}
		}
		seen[first] = true
	}
	if len(seen) != 3 {
		t.Errorf("60 texts used engines %v, want all three", seen)
	}
}

func TestCanaryTakesStableShareOfUsers(t *testing.T) {
	c := newClient(t, translate.WithClock(newClock()),
		translate.WithEngine(fake.New("main"), translate.Profile{}),
		translate.WithEngine(fake.New("canary"), translate.Profile{Canary: 10}))
	users := 2000
	inCanary := 0
	for u := 0; u < users; u++ {
		r := req("hello")
		r.UserID = fmt.Sprint("user-", u)
		first := ""
		for k := 0; k < 3; k++ {
			res, err := c.Translate(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if first != "" && res.Engine != first {
				t.Fatalf("user %d moved from %s to %s", u, first, res.Engine)
			}
			first = res.Engine
		}
		if first == "canary" {
			inCanary++
		}
	}
	if share := float64(inCanary) / float64(users); math.Abs(share-0.10) > 0.02 {
		t.Errorf("canary share = %.3f, want about 0.10", share)
	}
	// No UserID: never the canary while the main engine serves.
	for i := 0; i < 50; i++ {
		res, err := c.Translate(context.Background(), req(fmt.Sprint("anon ", i)))
		if err != nil || res.Engine != "main" {
			t.Fatalf("anonymous request: %v %v", err, res)
		}
	}
}

func TestChineseTagsLandOnTheRightEngine(t *testing.T) {
	hans, hant := fake.New("hans"), fake.New("hant")
	c := newClient(t, translate.WithClock(newClock()),
		translate.WithEngine(hans, translate.Profile{Languages: []string{"en", "zh-Hans"}}),
		translate.WithEngine(hant, translate.Profile{Languages: []string{"en", "zh-Hant"}}))
	for target, want := range map[string]string{
		"zh": "hans", "zh-CN": "hans", "zh-Hans": "hans", "zh-SG": "hans",
		"zh-TW": "hant", "zh-Hant": "hant", "zh-Hant-HK": "hant", "zh-HK": "hant",
	} {
		for i := 0; i < 5; i++ {
			res, err := c.Translate(context.Background(), translate.Request{Text: fmt.Sprint("hi ", i), Source: "en", Target: target})
			if err != nil {
				t.Fatalf("%s: %v", target, err)
			}
			if res.Engine != want {
				t.Errorf("target %s went to %s, want %s", target, res.Engine, want)
			}
		}
	}
	_, err := c.Translate(context.Background(), translate.Request{Text: "hi", Source: "en", Target: "fr"})
	if translate.KindOf(err) != translate.KindNoEngine {
		t.Errorf("unsupported pair: err = %v, want no_engine", err)
	}
}

func TestPriorityAndCostClass(t *testing.T) {
	prem := fake.New("prem")
	c := newClient(t, translate.WithClock(newClock()),
		translate.WithEngine(prem, translate.Profile{Class: translate.ClassPremium, Quality: 100}))
	if _, err := c.Translate(context.Background(), req("hello")); translate.KindOf(err) != translate.KindNoEngine {
		t.Fatalf("normal priority on a premium-only client: err = %v, want no_engine", err)
	}
	r := req("hello")
	r.Priority = translate.PriorityHigh
	if res, err := c.Translate(context.Background(), r); err != nil || res.Engine != "prem" {
		t.Fatalf("high priority: %v %+v", err, res)
	}
}

func TestSceneRules(t *testing.T) {
	good, plain := fake.New("good"), fake.New("plain")
	c := newClient(t, translate.WithClock(newClock()),
		translate.WithEngine(good, translate.Profile{Quality: 70, SceneQuality: map[translate.Scene]float64{translate.SceneLegal: 95}}),
		translate.WithEngine(plain, translate.Profile{Quality: 89}))
	for i := 0; i < 20; i++ {
		r := req(fmt.Sprint("clause ", i))
		r.Scene = translate.SceneLegal
		res, err := c.Translate(context.Background(), r)
		if err != nil || res.Engine != "good" {
			t.Fatalf("legal request went to %v (%v), want good", res, err)
		}
	}
}

func TestRateLimitedEngineSpillsOverAtOnce(t *testing.T) {
	clk := newClock()
	a, b := fake.New("a"), fake.New("b")
	pa := primary
	pa.RateLimit, pa.Burst = 1, 1
	c := newClient(t, translate.WithClock(clk), sharp, translate.WithEngine(a, pa), translate.WithEngine(b, secondary))
	translateN(t, c, 1)
	res, err := c.Translate(context.Background(), req("second"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, engineNames(res.Attempts)); diff != "" {
		t.Errorf("engines (-want +got):\n%s", diff)
	}
	if res.Attempts[0].Err == nil || translate.KindOf(res.Attempts[0].Err) != translate.KindRateLimited || res.Attempts[0].Latency != 0 {
		t.Errorf("skipped attempt = %+v, want a rate_limited skip", res.Attempts[0])
	}
	if len(clk.Slept()) != 0 {
		t.Errorf("waited %v although b was free", clk.Slept())
	}
}

func TestLastCandidateWaitsForItsToken(t *testing.T) {
	clk := newClock()
	a := fake.New("a")
	pa := primary
	pa.RateLimit, pa.Burst = 2, 1
	c := newClient(t, translate.WithClock(clk), translate.WithEngine(a, pa))
	translateN(t, c, 2)
	if a.Calls() != 2 {
		t.Fatalf("calls = %d", a.Calls())
	}
	if slept := clk.Slept(); len(slept) != 1 || slept[0] != 500e6 {
		t.Errorf("waits = %v, want one of 500ms", slept)
	}
}

func TestConcurrencyGateSpillsOver(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	a := fake.New("a", fake.WithHook(func(ctx context.Context, r *translate.EngineRequest) error {
		if r.Texts[0] == "slow" {
			entered <- struct{}{}
			<-release
		}
		return nil
	}))
	b := fake.New("b")
	pa := primary
	pa.MaxConcurrency = 1
	c := newClient(t, translate.WithClock(newClock()), sharp, translate.WithEngine(a, pa), translate.WithEngine(b, secondary))
	done := make(chan error, 1)
	go func() {
		_, err := c.Translate(context.Background(), req("slow"))
		done <- err
	}()
	<-entered
	res, err := c.Translate(context.Background(), req("fast"))
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	if res.Engine != "b" {
		t.Errorf("second request went to %s while a was saturated", res.Engine)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
