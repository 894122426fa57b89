package translate_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// drillTick is the virtual time between two requests of a drill: 100 requests a second.
const drillTick = 10 * time.Millisecond

// drillRun is what a canary drill saw.
type drillRun struct {
	steps []translate.CanaryStep
	minAt time.Duration // when the canary made its MinRequests-th call at its first step; -1: never
	after int64         // canary calls for users after a rollback
	final float64       // the canary's share at the end (EngineStatus.Canary)
}

// drill sends n requests, one every drillTick of virtual time and each from a user of its
// own, to a stable engine and a canary ramping with r, breaks the canary with brk, and
// returns what happened.
func drill(t *testing.T, n int, r translate.Ramp, brk func(*fake.Engine), opts ...translate.Option) drillRun {
	t.Helper()
	clk := newClock()
	start := clk.Now()
	var served atomic.Int64 // the canary's calls for users (probes left out)
	stable := fake.New("stable")
	can := fake.New("canary", fake.WithHook(func(_ context.Context, r *translate.EngineRequest) error {
		if strings.HasPrefix(r.Texts[0], "good morning") {
			served.Add(1)
		}
		return nil
	}))
	brk(can)
	c := newClient(t, append([]translate.Option{translate.WithClock(clk),
		translate.WithEngine(stable, translate.Profile{Quality: 90}),
		translate.WithEngine(can, translate.Profile{Quality: 90, Ramp: &r})}, opts...)...)
	var run drillRun
	run.minAt = -1
	rolled := int64(-1)
	stop := c.OnCanaryStep(func(st translate.CanaryStep) { run.steps = append(run.steps, st) })
	defer stop()
	minRequests := r.MinRequests
	if minRequests == 0 {
		minRequests = 100
	}
	for i := range n {
		clk.Advance(drillTick)
		rq := req(fmt.Sprintf("good morning %d", i)) // two words: an echo of it is bad output
		rq.UserID = fmt.Sprintf("user-%d", i)
		if _, err := c.Translate(context.Background(), rq); err != nil {
			t.Fatalf("request %d: %v (the stable engine serves every request)", i, err)
		}
		if run.minAt < 0 && served.Load() >= int64(minRequests) {
			run.minAt = clk.Now().Sub(start)
		}
		if rolled < 0 && len(run.steps) > 0 && run.steps[len(run.steps)-1].To == 0 {
			rolled = served.Load() // the rollback: count the canary's calls from here
		}
	}
	if rolled >= 0 {
		run.after = served.Load() - rolled
	}
	for _, es := range c.Engines() {
		if es.Name == "canary" {
			run.final = es.Canary
		}
	}
	for _, st := range run.steps {
		t.Logf("%v -> %v (%s) held %v: canary %d calls, errors %.2f, quality %.2f, latency %v; others %d calls, errors %.2f, quality %.2f, latency %v",
			st.From, st.To, st.Reason, st.Held, st.Requests, st.ErrorRate, st.Quality, st.Latency,
			st.BaseRequests, st.BaseErrorRate, st.BaseQuality, st.BaseLatency)
	}
	return run
}

// verdict is what a test checks of a step.
type verdict struct {
	From, To float64
	Reason   string
}

func verdicts(steps []translate.CanaryStep) []verdict {
	var out []verdict
	for _, s := range steps {
		out = append(out, verdict{s.From, s.To, s.Reason})
	}
	return out
}

// TestCanaryDrillGood: a canary as good as the stable engine ramps itself 1 -> 5 -> 20 ->
// 100 with the default Ramp but StepEvery 10s: each step after 100 calls of its own and
// 10s at least, at the times the shares allow (about 10,000 requests, 100s, at 1%; 2,000,
// 20s, at 5%; 10s at 20%, where 100 calls take 5s, and the canary's next call); at 100%
// it serves every user.
func TestCanaryDrillGood(t *testing.T) {
	// Requests for the bands below at their widest: 140s at 1%, 32s at 5%, 11s at 20% (10ms
	// a request). 16,000 ran out once in CI, after 134s at 1% (users are hashed with a seed
	// of the Client's own, so which of them are in the share changes from run to run).
	run := drill(t, 19000, translate.Ramp{StepEvery: 10 * time.Second}, func(*fake.Engine) {})
	want := []verdict{{1, 5, "healthy"}, {5, 20, "healthy"}, {20, 100, "healthy"}}
	if d := cmp.Diff(want, verdicts(run.steps)); d != "" {
		t.Fatalf("steps (-want +got):\n%s", d)
	}
	// Held at each step, with the binomial spread of which users fall in (±4 sd).
	for i, band := range [][2]time.Duration{{60 * time.Second, 140 * time.Second}, {10 * time.Second, 32 * time.Second}, {10 * time.Second, 11 * time.Second}} {
		st := run.steps[i]
		if st.Held < band[0] || st.Held > band[1] {
			t.Errorf("step %v -> %v: held %v, want %v..%v", st.From, st.To, st.Held, band[0], band[1])
		}
		if st.Requests < 100 || st.BaseRequests < 100 || st.ErrorRate != 0 || st.Quality != 1 {
			t.Errorf("step %v -> %v: %+v, want 100+ clean calls on both sides", st.From, st.To, st)
		}
	}
	if run.final != 100 {
		t.Errorf("share at the end = %v, want 100", run.final)
	}
}

// TestCanaryDrillErrors: a canary failing 30% of its calls is rolled back to 0 at its first
// step before its 100th call (so within seconds of having enough requests: at once), and
// gets no call from users after (recovery probes aside). Its errors decide, or its health
// first: at 1% it makes about 10 calls a fold (10s), and a fold that finds its
// availability under MinHealth (0.8) takes it out of routing, which rolls it back too.
func TestCanaryDrillErrors(t *testing.T) {
	run := drill(t, 15000, translate.Ramp{StepEvery: 10 * time.Second}, func(e *fake.Engine) {
		e.FailRate(translate.KindUnavailable, 0.3, 7)
	})
	checkRollback(t, run, "error_rate", "health")
	if st := run.steps[0]; st.ErrorRate < 0.2 || st.BaseErrorRate != 0 {
		t.Errorf("rollback on error rate %.2f against %.2f, want about 0.3 against 0", st.ErrorRate, st.BaseErrorRate)
	}
}

// TestCanaryDrillBadOutput: a canary that answers with the source text (an echo, which the
// Client's checks turn into bad output and fail over) is rolled back on quality at once.
func TestCanaryDrillBadOutput(t *testing.T) {
	run := drill(t, 15000, translate.Ramp{StepEvery: 10 * time.Second}, func(e *fake.Engine) {
		e.SetBadOutput(fake.BadEcho)
	})
	checkRollback(t, run, "quality")
	if st := run.steps[0]; st.Quality != 0 || st.BaseQuality != 1 {
		t.Errorf("rollback on quality %.2f against %.2f, want 0 against 1", st.Quality, st.BaseQuality)
	}
}

// checkRollback: one step, 1 -> 0 for one of the reasons, taken no later than the canary's 100th call
// (within 100 calls, however they fell in virtual time), and no canary call after it.
func checkRollback(t *testing.T, run drillRun, reasons ...string) {
	t.Helper()
	got := verdicts(run.steps)
	if len(got) == 1 && slices.Contains(reasons, got[0].Reason) {
		got[0].Reason = reasons[0]
	}
	if d := cmp.Diff([]verdict{{1, 0, reasons[0]}}, got); d != "" {
		t.Fatalf("steps (-want +got; reasons %v):\n%s", reasons, d)
	}
	st := run.steps[0]
	if st.Requests > 100 {
		t.Errorf("rolled back after %d canary calls, want 100 at most", st.Requests)
	}
	if run.minAt >= 0 && st.Held > run.minAt {
		t.Errorf("rolled back at %v, after the canary's 100th call at %v", st.Held, run.minAt)
	}
	if st.Held > 3*time.Minute {
		t.Errorf("rolled back at %v, want within the time 100 canary calls take at 1%% (about 100s)", st.Held)
	}
	if run.after != 0 || run.final != 0 {
		t.Errorf("after the rollback: %d canary calls, share %v; want none at 0", run.after, run.final)
	}
}

// TestCanaryRampRestartsOnNewProfile: a Reconfigure that keeps the canary's profile keeps
// its analysis where it stands (rolled back stays at 0); one that changes it starts again
// at the first step.
func TestCanaryRampRestartsOnNewProfile(t *testing.T) {
	rcType()
	vendor := rcVendorFor(t, &rcVendor{})
	cfg := func(q int) *translate.Config {
		return rcParse(t, `{"cache": {"disabled": true}, "engines": [
		    {"name": "stable", "type": "rc", "settings": {"vendor": %q}, "profile": {"quality": 90}},
		    {"name": "canary", "type": "rc", "settings": {"vendor": %q},
		     "profile": {"quality": %d, "canary": 1, "ramp": {"min_requests": 1, "step_every": "1s", "steps": [1, 50]}}}
		  ]}`, vendor, vendor, q)
	}
	clk := newClock()
	c := newClient(t, translate.WithConfig(cfg(90)), translate.WithClock(clk))
	share := func() float64 {
		for _, es := range c.Engines() {
			if es.Name == "canary" {
				return es.Canary
			}
		}
		return -1
	}
	if got := share(); got != 1 {
		t.Fatalf("start: share %v, want 1", got)
	}
	// Serve users until the canary takes a call, a second later: it advances to 50.
	for i := 0; share() == 1 && i < 5000; i++ {
		clk.Advance(time.Second)
		r := req(fmt.Sprintf("t %d", i))
		r.UserID = fmt.Sprintf("u%d", i)
		if _, err := c.Translate(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if got := share(); got != 50 {
		t.Fatalf("after a good call: share %v, want 50", got)
	}
	if err := c.Reconfigure(cfg(90)); err != nil {
		t.Fatal(err)
	}
	if got := share(); got != 50 {
		t.Errorf("after a Reconfigure with the same profile: share %v, want 50 (kept)", got)
	}
	if err := c.Reconfigure(cfg(91)); err != nil {
		t.Fatal(err)
	}
	if got := share(); got != 1 {
		t.Errorf("after a Reconfigure with a new profile: share %v, want 1 (started again)", got)
	}
}

// TestCanaryStepTelemetry: every step is counted in translate.canary.step by engine,
// shares and reason, and logged (info for an advance, warn for a rollback) with the
// figures compared and nothing of the customer's text.
func TestCanaryStepTelemetry(t *testing.T) {
	tel, opts := newTelemetry(t)
	quick := translate.Ramp{MinRequests: 5, StepEvery: time.Second, Steps: []float64{10, 100}}
	drill(t, 2000, quick, func(*fake.Engine) {}, opts...)
	got := values(tel.metrics(t))
	if n := got["translate.canary.step{engine=canary,from=10,reason=healthy,to=100}"]; n != 1 {
		t.Errorf("translate.canary.step for 10 -> 100 = %v, want 1 (metrics: %v)", n, got)
	}
	var advanced map[string]any
	for _, rec := range tel.records(t) {
		if rec["msg"] == "translate: canary advanced" {
			advanced = rec
		}
	}
	want := map[string]any{"level": "INFO", "msg": "translate: canary advanced", "engine": "canary", "from": 10.0, "to": 100.0,
		"reason": "healthy", "error_rate": 0.0, "base_error_rate": 0.0, "quality": 1.0, "base_quality": 1.0}
	for k, v := range want {
		if advanced[k] != v {
			t.Errorf("log %q = %v, want %v (record %v)", k, advanced[k], v, advanced)
		}
	}
	if strings.Contains(tel.logs.String(), "good morning") {
		t.Error("the log holds the customer's text")
	}

	tel2, opts2 := newTelemetry(t)
	drill(t, 2000, quick, func(e *fake.Engine) { e.SetBadOutput(fake.BadEcho) }, opts2...)
	if n := values(tel2.metrics(t))["translate.canary.step{engine=canary,from=10,reason=quality,to=0}"]; n != 1 {
		t.Errorf("translate.canary.step for the rollback = %v, want 1", n)
	}
	if !strings.Contains(tel2.logs.String(), `"level":"WARN","msg":"translate: canary rolled back"`) {
		t.Errorf("no warning for the rollback in the log:\n%s", tel2.logs.String())
	}
}

// TestCanaryListenerPanics: a listener that panics neither fails the request nor stops
// the other listeners; a stopped listener hears nothing more.
func TestCanaryListenerPanics(t *testing.T) {
	clk := newClock()
	r := translate.Ramp{MinRequests: 1, StepEvery: time.Nanosecond, Steps: []float64{50, 60, 70}}
	c := newClient(t, translate.WithClock(clk), translate.WithEngine(fake.New("stable"), translate.Profile{}),
		translate.WithEngine(fake.New("canary"), translate.Profile{Ramp: &r}))
	c.OnCanaryStep(func(translate.CanaryStep) { panic("listener") })
	var heard, stopped []float64
	c.OnCanaryStep(func(st translate.CanaryStep) { heard = append(heard, st.To) })
	stop := c.OnCanaryStep(func(st translate.CanaryStep) { stopped = append(stopped, st.To) })
	for i := 0; len(heard) < 2 && i < 1000; i++ {
		clk.Advance(time.Second)
		rq := req(fmt.Sprintf("good morning %d", i))
		rq.UserID = fmt.Sprintf("u%d", i)
		if _, err := c.Translate(context.Background(), rq); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if len(heard) == 1 {
			stop()
		}
	}
	if d := cmp.Diff([]float64{60, 70}, heard); d != "" {
		t.Errorf("heard (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]float64{60}, stopped); d != "" {
		t.Errorf("the stopped listener heard (-want +got):\n%s", d)
	}
}

// TestCanaryHealthRollback: a canary its health takes out of routing is rolled back at
// that fold, even when its analysis would need far more calls to judge it (MinRequests
// 1e6): demoted to the fallback pool it gets no traffic to be judged by.
func TestCanaryHealthRollback(t *testing.T) {
	run := drill(t, 6000, translate.Ramp{MinRequests: 1e6, Steps: []float64{5, 100}}, func(e *fake.Engine) {
		e.Down(translate.KindUnavailable)
	})
	got := verdicts(run.steps)
	if d := cmp.Diff([]verdict{{5, 0, "health"}}, got); d != "" {
		t.Fatalf("steps (-want +got):\n%s", d)
	}
	// The first fold with enough calls: 10s (HealthEvery) or the next.
	if st := run.steps[0]; st.Held > 20*time.Second || st.ErrorRate != 1 {
		t.Errorf("rolled back after %v at error rate %v, want by the second fold (20s) at 1", st.Held, st.ErrorRate)
	}
	if run.after != 0 || run.final != 0 {
		t.Errorf("after the rollback: %d canary calls, share %v; want none at 0", run.after, run.final)
	}
}

// TestCanaryDefaultRamp: "ramp": {} as shipped (steps 1, 5, 20, 100; 100 calls and a
// minute at each step) promotes a good canary in under five minutes of 100 requests a
// second, each step held a minute at least.
func TestCanaryDefaultRamp(t *testing.T) {
	run := drill(t, 30000, translate.Ramp{}, func(*fake.Engine) {})
	want := []verdict{{1, 5, "healthy"}, {5, 20, "healthy"}, {20, 100, "healthy"}}
	if d := cmp.Diff(want, verdicts(run.steps)); d != "" {
		t.Fatalf("steps (-want +got):\n%s", d)
	}
	var total time.Duration
	for _, st := range run.steps {
		total += st.Held
		if st.Held < time.Minute {
			t.Errorf("step %v -> %v held %v, want a minute at least", st.From, st.To, st.Held)
		}
	}
	if total > 5*time.Minute || run.final != 100 {
		t.Errorf("promoted after %v at share %v, want 100 within 5m", total, run.final)
	}
}
