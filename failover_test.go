package translate_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// Seed rule: after Unavailable the loop switches while another candidate exists, at once.
func TestUnavailableSwitchesWhileAnotherCandidateExists(t *testing.T) {
	clk := newClock()
	a, b := fake.New("a"), fake.New("b")
	a.Down(translate.KindUnavailable)
	c := newClient(t, translate.WithClock(clk), sharp,
		translate.WithEngine(a, primary), translate.WithEngine(b, secondary))
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, engineNames(res.Attempts)); diff != "" {
		t.Errorf("attempt engines (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"unavailable", "ok"}, kinds(res.Attempts)); diff != "" {
		t.Errorf("attempt kinds (-want +got):\n%s", diff)
	}
	if res.Text != "[es] hello" || res.Engine != "b" {
		t.Errorf("got %q from %q, want %q from b", res.Text, res.Engine, "[es] hello")
	}
	if slept := clk.Slept(); len(slept) != 0 {
		t.Errorf("backoff waits = %v, want none: another engine was there", slept)
	}
}

// Seed rule: the same engine is retried, after a 200ms backoff, only when it is the only
// candidate left.
func TestUnavailableRetriesSameEngineWhenAlone(t *testing.T) {
	clk := newClock()
	a := fake.New("a")
	a.Script(fake.Fail(translate.KindUnavailable))
	c := newClient(t, translate.WithClock(clk), sharp, translate.WithEngine(a, primary))
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"unavailable", "ok"}, kinds(res.Attempts)); diff != "" {
		t.Errorf("attempt kinds (-want +got):\n%s", diff)
	}
	slept := clk.Slept()
	if len(slept) != 1 || slept[0] < 160*time.Millisecond || slept[0] > 240*time.Millisecond {
		t.Errorf("backoff waits = %v, want one of 200ms +-20%%", slept)
	}
}

func TestSecondRetryBackoffIsFourTimesLonger(t *testing.T) {
	clk := newClock()
	a := fake.New("a")
	a.Script(fake.Fail(translate.KindUnavailable), fake.Fail(translate.KindUnavailable))
	c := newClient(t, translate.WithClock(clk), translate.WithRetry(translate.RetryPolicy{PerEngine: 3}),
		translate.WithEngine(a, primary))
	if _, err := c.Translate(context.Background(), req("hello")); err != nil {
		t.Fatal(err)
	}
	slept := clk.Slept()
	if len(slept) != 2 || slept[1] < 640*time.Millisecond || slept[1] > 960*time.Millisecond {
		t.Errorf("backoff waits = %v, want 200ms then 800ms, +-20%%", slept)
	}
}

func TestInvalidInputFromEngineReturnsAtOnce(t *testing.T) {
	a, b := fake.New("a"), fake.New("b")
	a.Script(fake.Fail(translate.KindInvalidInput))
	c := newClient(t, sharp, translate.WithEngine(a, primary), translate.WithEngine(b, secondary))
	_, err := c.Translate(context.Background(), req("hello"))
	if translate.KindOf(err) != translate.KindInvalidInput || !errors.Is(err, translate.ErrInvalidInput) {
		t.Fatalf("err = %v, want KindInvalidInput", err)
	}
	if a.Calls() != 1 || b.Calls() != 0 {
		t.Errorf("calls a=%d b=%d, want 1 and 0", a.Calls(), b.Calls())
	}
}

func TestCallerCancellationReturnsCallersError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	a := fake.New("a", fake.WithHook(func(hctx context.Context, _ *translate.EngineRequest) error {
		close(started)
		<-hctx.Done()
		return hctx.Err()
	}))
	b := fake.New("b")
	c := newClient(t, sharp, translate.WithEngine(a, primary), translate.WithEngine(b, secondary))
	go func() { <-started; cancel() }()
	_, err := c.Translate(ctx, req("hello"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if b.Calls() != 0 {
		t.Errorf("b called %d times after the caller canceled", b.Calls())
	}
}

func TestAttemptTimeoutFailsOver(t *testing.T) {
	a := fake.New("a", fake.WithLatency(time.Hour)) // honours ctx
	b := fake.New("b")
	p := primary
	p.Timeout = 30 * time.Millisecond
	c := newClient(t, sharp, translate.WithEngine(a, p), translate.WithEngine(b, secondary))
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"timeout", "ok"}, kinds(res.Attempts)); diff != "" {
		t.Errorf("attempt kinds (-want +got):\n%s", diff)
	}
}

func TestWholeRequestDeadline(t *testing.T) {
	a := fake.New("a", fake.WithLatency(time.Hour))
	c := newClient(t, translate.WithDeadline(60*time.Millisecond), translate.WithEngine(a, primary))
	t0 := time.Now()
	_, err := c.Translate(context.Background(), req("hello"))
	if translate.KindOf(err) != translate.KindTimeout {
		t.Fatalf("err = %v, want KindTimeout", err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("took %v with a 60ms deadline", d)
	}
}

func TestRetryAfterHonouredWhenItFits(t *testing.T) {
	clk := newClock()
	a := fake.New("a")
	a.Script(fake.RateLimited(1500 * time.Millisecond))
	c := newClient(t, translate.WithClock(clk), translate.WithEngine(a, primary))
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{1500 * time.Millisecond}, clk.Slept()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"rate_limited", "ok"}, kinds(res.Attempts)); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
}

func TestRetryAfterBeyondDeadlineSwitches(t *testing.T) {
	clk := newClock()
	a, b := fake.New("a"), fake.New("b")
	a.Script(fake.RateLimited(30 * time.Second))
	c := newClient(t, translate.WithClock(clk), sharp, translate.WithEngine(a, primary), translate.WithEngine(b, secondary))
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, engineNames(res.Attempts)); diff != "" {
		t.Errorf("engines (-want +got):\n%s", diff)
	}
	if len(clk.Slept()) != 0 {
		t.Errorf("waited %v; a Retry-After past the deadline must not be waited", clk.Slept())
	}
	// a cools down for its Retry-After: the next request goes straight to b.
	a.Reset()
	if _, err := c.Translate(context.Background(), req("again")); err != nil {
		t.Fatal(err)
	}
	if a.Calls() != 0 {
		t.Errorf("a called during its Retry-After")
	}
}

func TestKindTable(t *testing.T) {
	// For each Kind the engine answers: how many calls it gets and whether the request then
	// fails over to b. With b there, nothing is retried on a (seed rule: switch while
	// another candidate exists); TestKindTableAlone covers the retries.
	cases := []struct {
		kind     translate.Kind
		calls    int
		failover bool
	}{
		{translate.KindUnknown, 1, true},
		{translate.KindUnavailable, 1, true},
		{translate.KindRateLimited, 1, true},
		{translate.KindTimeout, 1, true},
		{translate.KindUnsupported, 1, true},
		{translate.KindUnauthorized, 1, true},
		{translate.KindQuotaExhausted, 1, true},
		{translate.KindBadOutput, 1, true},
		{translate.KindInvalidInput, 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.kind.String(), func(t *testing.T) {
			a, b := fake.New("a"), fake.New("b")
			a.Down(tc.kind)
			c := newClient(t, translate.WithClock(newClock()), sharp,
				translate.WithEngine(a, primary), translate.WithEngine(b, secondary))
			_, err := c.Translate(context.Background(), req("hello"))
			if a.Calls() != tc.calls {
				t.Errorf("a calls = %d, want %d", a.Calls(), tc.calls)
			}
			if got := b.Calls() == 1; got != tc.failover {
				t.Errorf("failed over = %v, want %v (err %v)", got, tc.failover, err)
			}
		})
	}
}

func TestKindTableAlone(t *testing.T) {
	// For each Kind the only engine answers: how many calls it gets (retried once or not).
	cases := []struct {
		kind  translate.Kind
		calls int
	}{
		{translate.KindUnknown, 2},
		{translate.KindUnavailable, 2},
		{translate.KindRateLimited, 2},
		{translate.KindTimeout, 2},
		{translate.KindUnsupported, 1},
		{translate.KindUnauthorized, 1},
		{translate.KindQuotaExhausted, 1},
		{translate.KindBadOutput, 1},
		{translate.KindInvalidInput, 1},
	}
	for _, tc := range cases {
		t.Run(tc.kind.String(), func(t *testing.T) {
			a := fake.New("a")
			a.Down(tc.kind)
			c := newClient(t, translate.WithClock(newClock()), sharp, translate.WithEngine(a, primary))
			_, err := c.Translate(context.Background(), req("hello"))
			if a.Calls() != tc.calls {
				t.Errorf("a calls = %d, want %d", a.Calls(), tc.calls)
			}
			if translate.KindOf(err) != tc.kind {
				t.Errorf("err = %v, want kind %v", err, tc.kind)
			}
		})
	}
}

func TestEnginesSetAsideAfterUnauthorizedAndUnsupportedRemembered(t *testing.T) {
	a, b, u := fake.New("a"), fake.New("b"), fake.New("u")
	a.Down(translate.KindUnauthorized)
	u.Down(translate.KindUnsupported)
	c := newClient(t, translate.WithClock(newClock()), translate.WithRouting(translate.RoutingPolicy{Temperature: 0.5}),
		translate.WithEngine(a, translate.Profile{Quality: 100}), translate.WithEngine(u, translate.Profile{Quality: 90}),
		translate.WithEngine(b, translate.Profile{Quality: 1}))
	for i := 0; i < 5; i++ {
		if _, err := c.Translate(context.Background(), req("hello "+strings.Repeat("x", i))); err != nil {
			t.Fatal(err)
		}
	}
	if a.Calls() != 1 || u.Calls() != 1 || b.Calls() != 5 {
		t.Errorf("calls a=%d u=%d b=%d, want 1, 1, 5", a.Calls(), u.Calls(), b.Calls())
	}
	st := c.Engines()
	if !st[0].SetAside {
		t.Errorf("a not set aside after Unauthorized: %+v", st[0])
	}
	// The pair is remembered, not the engine: u still gets other pairs.
	if _, err := c.Translate(context.Background(), translate.Request{Text: "hello", Source: "en", Target: "fr"}); err != nil {
		t.Fatal(err)
	}
	if u.Calls() != 2 {
		t.Errorf("u calls = %d after another pair, want 2", u.Calls())
	}
}

func TestQuotaExhaustedOutUntilPeriodResets(t *testing.T) {
	clk := newClock()
	a, b := fake.New("a"), fake.New("b")
	a.Script(fake.Fail(translate.KindQuotaExhausted))
	pa := primary
	pa.Quota, pa.QuotaPeriod = 1000, time.Hour
	c := newClient(t, translate.WithClock(clk), sharp, translate.WithEngine(a, pa), translate.WithEngine(b, secondary))
	for i := 0; i < 3; i++ {
		if _, err := c.Translate(context.Background(), req("hello")); err != nil {
			t.Fatal(err)
		}
	}
	if a.Calls() != 1 {
		t.Errorf("a calls = %d, want 1: it is out after its quota error", a.Calls())
	}
	if got := c.Engines()[0].QuotaLeft; got != 0 {
		t.Errorf("QuotaLeft = %d, want 0", got)
	}
	clk.Advance(time.Hour)
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil || res.Engine != "a" {
		t.Fatalf("after the period: %v from %q, want a", err, res.Engine)
	}
	if got := c.Engines()[0].QuotaLeft; got != 1000-5 {
		t.Errorf("QuotaLeft = %d, want %d", got, 1000-5)
	}
}

func TestAttemptAndSwitchLimits(t *testing.T) {
	var opts []translate.Option
	var es []*fake.Engine
	for _, n := range []string{"a", "b", "c", "d"} {
		e := fake.New(n)
		e.Down(translate.KindTimeout)
		es = append(es, e)
		opts = append(opts, translate.WithEngine(e, translate.Profile{}))
	}
	c := newClient(t, append(opts, translate.WithClock(newClock()))...)
	_, err := c.Translate(context.Background(), req("hello"))
	var te *translate.Error
	if !errors.As(err, &te) || te.Kind != translate.KindTimeout {
		t.Fatalf("err = %v, want a *Error of KindTimeout", err)
	}
	total := 0
	for _, e := range es {
		total += e.Calls()
	}
	if total != 3 || len(te.Attempts) != 3 {
		t.Errorf("calls = %d, attempts = %d, want 3 and 3", total, len(te.Attempts))
	}
	for _, a := range te.Attempts {
		if !strings.Contains(err.Error(), a.Engine) {
			t.Errorf("error %q does not name engine %s", err, a.Engine)
		}
	}
	// MaxAttempts binds even when switches are plenty: 3 calls on 3 of the 4 engines.
	for _, e := range es {
		e.Reset()
	}
	c3 := newClient(t, append(opts, translate.WithClock(newClock()),
		translate.WithRetry(translate.RetryPolicy{MaxSwitches: 10}))...)
	_, err = c3.Translate(context.Background(), req("hello"))
	if !errors.As(err, &te) || len(te.Attempts) != 3 {
		t.Fatalf("with MaxSwitches 10: %v, want 3 attempts", err)
	}
	// MaxSwitches 1: two engines at most.
	for _, e := range es {
		e.Reset()
	}
	c2 := newClient(t, append(opts, translate.WithClock(newClock()),
		translate.WithRetry(translate.RetryPolicy{MaxAttempts: 10, MaxSwitches: 1}))...)
	_, err = c2.Translate(context.Background(), req("hello"))
	if !errors.As(err, &te) || len(te.Attempts) != 2 {
		t.Fatalf("with MaxSwitches 1: %v, want 2 attempts", err)
	}
}

func TestBadOutputFailsOver(t *testing.T) {
	for _, m := range []fake.BadOutput{fake.BadEmpty, fake.BadDropPlaceholders, fake.BadWrongCount, fake.BadEcho} {
		t.Run(m.String(), func(t *testing.T) {
			a, b := fake.New("a"), fake.New("b")
			a.SetBadOutput(m)
			c := newClient(t, sharp, translate.WithEngine(a, primary), translate.WithEngine(b, secondary))
			src := "Dear {name}, your <b>order</b> of %d items has shipped today."
			res, err := c.Translate(context.Background(), req(src))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"bad_output", "ok"}, kinds(res.Attempts)); diff != "" {
				t.Errorf("kinds (-want +got):\n%s", diff)
			}
			if res.Text != "[es] "+src {
				t.Errorf("text = %q", res.Text)
			}
		})
	}
}

func TestNeverReturnsSourceText(t *testing.T) {
	a, b := fake.New("a"), fake.New("b")
	a.SetBadOutput(fake.BadEcho)
	b.SetBadOutput(fake.BadEcho)
	c := newClient(t, translate.WithEngine(a, primary), translate.WithEngine(b, secondary))
	src := "The quick brown fox jumps over the lazy dog."
	res, err := c.Translate(context.Background(), req(src))
	if err == nil {
		t.Fatalf("got %q, want an error: every engine echoed the source", res.Text)
	}
	if translate.KindOf(err) != translate.KindBadOutput {
		t.Errorf("kind = %v, want bad_output", translate.KindOf(err))
	}
}

type nilEngine struct{}

func (nilEngine) Name() string { return "nil" }
func (nilEngine) Translate(context.Context, *translate.EngineRequest) (*translate.EngineResult, error) {
	return nil, nil
}

type panicEngine struct{}

func (panicEngine) Name() string { return "panic" }
func (panicEngine) Translate(context.Context, *translate.EngineRequest) (*translate.EngineResult, error) {
	panic("boom")
}

func TestMisbehavingEnginesAreContained(t *testing.T) {
	for _, e := range []translate.Engine{nilEngine{}, panicEngine{}} {
		t.Run(e.Name(), func(t *testing.T) {
			b := fake.New("b")
			c := newClient(t, translate.WithClock(newClock()), sharp, translate.WithEngine(e, primary), translate.WithEngine(b, secondary))
			res, err := c.Translate(context.Background(), req("hello"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Engine != "b" || res.Attempts[0].Err == nil {
				t.Fatalf("res = %+v", res)
			}
			if !strings.Contains(res.Attempts[0].Err.Error(), "translate_test.") {
				t.Errorf("error %q does not name the offending type", res.Attempts[0].Err)
			}
		})
	}
}

func TestFallbackOnlyEngineServesLastAndMarksDegraded(t *testing.T) {
	a, fb := fake.New("a"), fake.New("fb")
	c := newClient(t, translate.WithClock(newClock()),
		translate.WithEngine(a, translate.Profile{Quality: 10}),
		translate.WithEngine(fb, translate.Profile{Quality: 100, FallbackOnly: true}))
	for i := 0; i < 20; i++ {
		res, err := c.Translate(context.Background(), req("hello"))
		if err != nil || res.Engine != "a" || res.Degraded {
			t.Fatalf("healthy: %v %+v", err, res)
		}
	}
	a.Down(translate.KindUnavailable)
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Engine != "fb" || !res.Degraded {
		t.Errorf("engine %q degraded %v, want fb and true", res.Engine, res.Degraded)
	}
}

func TestPinnedEngine(t *testing.T) {
	a, b := fake.New("a"), fake.New("b")
	c := newClient(t, translate.WithClock(newClock()), sharp, translate.WithEngine(a, primary), translate.WithEngine(b, secondary))
	r := req("hello")
	r.Engine = "b"
	res, err := c.Translate(context.Background(), r)
	if err != nil || res.Engine != "b" {
		t.Fatalf("pinned b: %v %+v", err, res)
	}
	b.Down(translate.KindUnavailable)
	if _, err := c.Translate(context.Background(), r); translate.KindOf(err) != translate.KindUnavailable {
		t.Fatalf("pinned, no fallback: err = %v, want unavailable", err)
	}
	r.AllowFallback = true
	res, err = c.Translate(context.Background(), r)
	if err != nil || res.Engine != "a" {
		t.Fatalf("pinned with fallback: %v %+v", err, res)
	}
	r.Engine = "nope"
	if _, err := c.Translate(context.Background(), r); translate.KindOf(err) != translate.KindInvalidInput {
		t.Errorf("unknown engine: err = %v", err)
	}
}
