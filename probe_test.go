package translate_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/text/language"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// probeClient builds a Client with probes whose rounds the test runs by hand
// (ProbeRoundForTest) on the manual clock clk.
func probeClient(t *testing.T, clk *clock, p translate.ProbePolicy, opts ...translate.Option) *translate.Client {
	t.Helper()
	base := []translate.Option{translate.WithClock(translate.ManualProbesForTest(clk)), translate.WithProbes(p)}
	return newClient(t, append(base, opts...)...)
}

// pools returns each engine's pool by name.
func pools(c *translate.Client) map[string]translate.Pool {
	out := map[string]translate.Pool{}
	for _, s := range c.Engines() {
		out[s.Name] = s.Pool
	}
	return out
}

// syncBuffer is a log sink the probes may write to concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestProbeMaintenanceAfterFailuresAndBackAfterOnePass: 3 failed probes in a row move an
// engine to maintenance, where it gets no traffic; one passing probe brings it back and
// restarts the count.
func TestProbeMaintenanceAfterFailuresAndBackAfterOnePass(t *testing.T) {
	a, b := fake.New("a"), fake.New("b")
	var logs syncBuffer
	c := probeClient(t, newClock(), translate.ProbePolicy{}, sharp, // a wins whatever the draw
		translate.WithEngine(a, primary), translate.WithEngine(b, secondary),
		translate.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))

	a.Down(translate.KindUnavailable)
	threeFailedProbes(t, c, a, &logs)

	// In maintenance, a gets no traffic, however much the router prefers it.
	a.Reset()
	for i := range 20 {
		res, err := c.Translate(context.Background(), req(fmt.Sprint("text ", i)))
		if err != nil {
			t.Fatal(err)
		}
		if res.Engine != "b" {
			t.Fatalf("request %d served by %q while a is in maintenance", i, res.Engine)
		}
	}
	if a.Calls() != 0 {
		t.Fatalf("a got %d calls in maintenance", a.Calls())
	}

	// One passing probe brings it back, and restarts the count of failures.
	a.Up()
	translate.ProbeRoundForTest(c)
	wantPool(t, c, "a", translate.PoolNormal, "after a passing probe")
	if !strings.Contains(logs.String(), "translate: pool normal") {
		t.Errorf("no move back to normal logged:\n%s", logs.String())
	}
	res, err := c.Translate(context.Background(), req("back again"))
	if err != nil || res.Engine != "a" {
		t.Fatalf("after maintenance: engine %v, err %v; want a", res, err)
	}
	a.Down(translate.KindTimeout)
	translate.ProbeRoundForTest(c)
	translate.ProbeRoundForTest(c)
	wantPool(t, c, "a", translate.PoolNormal, "two failures after a pass")
	translate.ProbeRoundForTest(c)
	wantPool(t, c, "a", translate.PoolMaintenance, "three failures after a pass")
}

// threeFailedProbes runs 3 probe rounds with a down: a stays normal after 1 and 2 and is
// in maintenance after 3, b stays normal, a got the 3 probe calls, and the move is logged.
func threeFailedProbes(t *testing.T, c *translate.Client, a *fake.Engine, logs *syncBuffer) {
	t.Helper()
	for round := 1; round <= 3; round++ {
		translate.ProbeRoundForTest(c)
		want := translate.PoolNormal
		if round == 3 {
			want = translate.PoolMaintenance
		}
		if got := pools(c); got["a"] != want || got["b"] != translate.PoolNormal {
			t.Fatalf("after failed probe %d: pools %v, want a %v, b normal", round, got, want)
		}
	}
	if got := a.Calls(); got != 3 {
		t.Errorf("a got %d probe calls, want 3", got)
	}
	if !strings.Contains(logs.String(), "translate: pool maintenance") || !strings.Contains(logs.String(), "engine=a") {
		t.Errorf("no pool move logged for a:\n%s", logs.String())
	}
}

// wantPool fails the test unless c's engine name is in pool want; when says when.
func wantPool(t *testing.T, c *translate.Client, name string, want translate.Pool, when string) {
	t.Helper()
	if got := pools(c)[name]; got != want {
		t.Fatalf("%s: %s is %v, want %v", when, name, got, want)
	}
}

func TestProbeWrongAnswerIsAFailure(t *testing.T) {
	answer := func(s string) fake.Option {
		return fake.WithTranslator(func(string, language.Tag, language.Tag) string { return s })
	}
	right := fake.New("right", answer(" Hola "))     // listed, up to case and spaces
	wrong := fake.New("wrong", answer("adiós"))      // answers, but not what Expect lists
	anyAns := fake.New("any", answer("buenos días")) // no Expect entry: any answer passes
	c := probeClient(t, newClock(), translate.ProbePolicy{
		Expect: map[string][]string{"right": {"¡hola!", "hola"}, "wrong": {"hola"}},
	}, translate.WithEngine(right, translate.Profile{}), translate.WithEngine(wrong, translate.Profile{}),
		translate.WithEngine(anyAns, translate.Profile{}))

	for range 3 {
		translate.ProbeRoundForTest(c)
	}
	want := map[string]translate.Pool{"right": translate.PoolNormal, "wrong": translate.PoolMaintenance, "any": translate.PoolNormal}
	if got := pools(c); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pools %v, want %v", got, want)
	}
}

func TestProbeSkipsEnginesWithRealTraffic(t *testing.T) {
	a, b := fake.New("a"), fake.New("b")
	c := probeClient(t, newClock(), translate.ProbePolicy{},
		translate.WithEngine(a, translate.Profile{}), translate.WithEngine(b, translate.Profile{}))
	pinned := func(engine string, n int) {
		t.Helper()
		for i := range n {
			r := req(fmt.Sprint("real ", engine, i))
			r.Engine = engine
			if _, err := c.Translate(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
	}

	pinned("a", 5) // enough: spared
	pinned("b", 4) // not enough: probed
	a.Reset()
	b.Reset()
	translate.ProbeRoundForTest(c)
	if a.Calls() != 0 || b.Calls() != 1 {
		t.Fatalf("probe calls a=%d b=%d, want 0 and 1", a.Calls(), b.Calls())
	}
	// The count restarts at each round: no real traffic since, so a is probed now.
	translate.ProbeRoundForTest(c)
	if a.Calls() != 1 || b.Calls() != 2 {
		t.Fatalf("probe calls a=%d b=%d, want 1 and 2", a.Calls(), b.Calls())
	}
}

func TestProbeCostCountsInBudgetAndQuota(t *testing.T) {
	// "hello" is 5 characters; at a million credits per million characters a probe costs 5.
	a := fake.New("a")
	prof := translate.Profile{CostPerMillion: 1e6, Quota: 100}
	c := probeClient(t, newClock(), translate.ProbePolicy{},
		translate.WithEngine(a, prof), translate.WithBudget(translate.Budget{Daily: 12}))
	quotaLeft := func() int64 { return c.Engines()[0].QuotaLeft }

	// Failed probes are refunded.
	a.Down(translate.KindUnavailable)
	translate.ProbeRoundForTest(c)
	translate.ProbeRoundForTest(c)
	if got := quotaLeft(); got != 100 {
		t.Fatalf("quota left after failed probes: %d, want 100", got)
	}
	a.Up()

	translate.ProbeRoundForTest(c) // spends 5
	translate.ProbeRoundForTest(c) // spends 5: 10 of 12
	if got := quotaLeft(); got != 90 {
		t.Fatalf("quota left after two probes: %d, want 90", got)
	}
	translate.ProbeRoundForTest(c) // 5 more do not fit: skipped, and not a failure
	if got := a.Calls(); got != 4 {
		t.Fatalf("a got %d calls, want 4 (the probe over budget skipped)", got)
	}
	if got := pools(c)["a"]; got != translate.PoolNormal {
		t.Fatalf("a is %v after a skipped probe, want normal", got)
	}

	// What the probes spent is gone from the day's budget: exactly 2 credits are left.
	if _, err := c.Translate(context.Background(), req("abc")); translate.KindOf(err) != translate.KindBudgetExceeded {
		t.Fatalf("3 credits with 2 left: err %v, want budget exceeded", err)
	}
	if _, err := c.Translate(context.Background(), req("hi")); err != nil {
		t.Fatalf("2 credits with 2 left: %v", err)
	}
}

func TestProbeRequestUsesPolicy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		p        translate.ProbePolicy
		text     string
		src, tgt language.Tag
	}{
		{"defaults", translate.ProbePolicy{}, "hello", language.English, language.Spanish},
		{"configured", translate.ProbePolicy{Text: "Guten Morgen", Source: "de", Target: "fr"},
			"Guten Morgen", language.German, language.French},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := fake.New("a")
			c := probeClient(t, newClock(), tc.p, translate.WithEngine(a, translate.Profile{}))
			translate.ProbeRoundForTest(c)
			rs := a.Requests()
			if len(rs) != 1 {
				t.Fatalf("%d probe requests, want 1", len(rs))
			}
			r := rs[0]
			if len(r.Texts) != 1 || r.Texts[0] != tc.text || r.Source != tc.src || r.Target != tc.tgt {
				t.Fatalf("probe request %q %v -> %v, want %q %v -> %v", r.Texts, r.Source, r.Target, tc.text, tc.src, tc.tgt)
			}
		})
	}
}

func TestProbeSkipsEngineWithoutProbeLanguages(t *testing.T) {
	a := fake.New("a")
	c := probeClient(t, newClock(), translate.ProbePolicy{},
		translate.WithEngine(a, translate.Profile{Languages: []string{"de", "fr"}}))
	translate.ProbeRoundForTest(c)
	if a.Calls() != 0 {
		t.Fatalf("an engine without en and es got %d probes", a.Calls())
	}
}

func TestProbePolicyValidation(t *testing.T) {
	for _, p := range []translate.ProbePolicy{
		{Interval: -time.Second},
		{Failures: -1},
		{Text: "   "},
		{Source: "not a tag!"},
		{Target: "en"},
		{Source: "zh-CN", Target: "zh-Hans"},
	} {
		_, err := translate.New(translate.WithEngine(fake.New("a"), translate.Profile{}), translate.WithProbes(p))
		if translate.KindOf(err) != translate.KindInvalidInput || !strings.Contains(err.Error(), "ProbePolicy.") {
			t.Errorf("New with %+v: err %v, want a config error naming the field", p, err)
		}
	}
}

// tickClock is a manual clock whose Sleep blocks until the test ticks it (or ctx is done),
// and announces each Sleep first: it drives the real probe loop one round at a time.
type tickClock struct {
	*clock
	sleeping chan time.Duration
	tick     chan struct{}
}

func (c *tickClock) Sleep(ctx context.Context, d time.Duration) error {
	select {
	case c.sleeping <- d:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-c.tick:
		c.Advance(d)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// within fails the test when ch yields nothing in real time; a guard, not a wait.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func TestProbeLoopRunsOnClockAndCloseStopsIt(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	clk := &tickClock{clock: newClock(), sleeping: make(chan time.Duration), tick: make(chan struct{})}
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	a := fake.New("a", fake.WithHook(func(ctx context.Context, _ *translate.EngineRequest) error {
		entered <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}))
	c, err := translate.New(translate.WithEngine(a, translate.Profile{}), translate.WithClock(clk),
		translate.WithProbes(translate.ProbePolicy{Interval: 7 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}

	// New does not probe; the loop waits Interval on the Client's clock.
	if d := within(t, clk.sleeping, "the first wait"); d != 7*time.Second {
		t.Fatalf("prober waits %v, want the Interval 7s", d)
	}
	if a.Calls() != 0 {
		t.Fatalf("probed before the first Interval: %d calls", a.Calls())
	}
	clk.tick <- struct{}{}
	within(t, entered, "the first probe")
	release <- struct{}{}
	within(t, clk.sleeping, "the second wait")
	if a.Calls() != 1 {
		t.Fatalf("%d probe calls after one round, want 1", a.Calls())
	}

	// Close while the next probe is in flight (nothing releases it): Close cancels it and
	// waits for the prober; VerifyNone checks that nothing is left.
	clk.tick <- struct{}{}
	within(t, entered, "the second probe")
	c.Close()
}
