package translate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// breakerClient has one engine a that the router always prefers, b behind it, no retries.
func breakerClient(t *testing.T, clk *clock, bp translate.BreakerPolicy) (*translate.Client, *fake.Engine, *fake.Engine) {
	a, b := fake.New("a"), fake.New("b")
	c := newClient(t, translate.WithClock(clk), sharp, translate.WithBreaker(bp),
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		// Health moves only at folds; keep folds out of the way of breaker behaviour.
		translate.WithRouting(translate.RoutingPolicy{Temperature: 0.5, HealthEvery: time.Hour}),
		translate.WithEngine(a, primary), translate.WithEngine(b, secondary))
	return c, a, b
}

func translateN(t *testing.T, c *translate.Client, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := c.Translate(context.Background(), req(fmt.Sprintf("text %d", i))); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
}

func TestBreakerOpensAtRatioAfterMinCalls(t *testing.T) {
	clk := newClock()
	c, a, _ := breakerClient(t, clk, translate.BreakerPolicy{})
	// 10 successes, then failures: opens when failures/calls >= 0.5 with >= 20 calls,
	// that is at the 10th failure (20 calls, ratio 0.5).
	translateN(t, c, 10)
	a.Down(translate.KindUnavailable)
	translateN(t, c, 9)
	if got := c.Engines()[0].Breaker; got != translate.BreakerClosed {
		t.Fatalf("after 19 calls breaker = %v, want closed", got)
	}
	translateN(t, c, 1)
	if got := c.Engines()[0].Breaker; got != translate.BreakerOpen {
		t.Fatalf("after 20 calls at 50%% breaker = %v, want open", got)
	}
	before := a.Calls()
	translateN(t, c, 10)
	if a.Calls() != before {
		t.Errorf("open breaker let %d calls through", a.Calls()-before)
	}

	// MinCalls: failing from the first call, the ratio is 1 at once, yet the breaker waits
	// for 20 calls.
	c, a, _ = breakerClient(t, newClock(), translate.BreakerPolicy{})
	a.Down(translate.KindUnavailable)
	translateN(t, c, 19)
	if got := c.Engines()[0].Breaker; got != translate.BreakerClosed {
		t.Fatalf("after 19 failed calls breaker = %v, want closed (MinCalls 20)", got)
	}
	translateN(t, c, 1)
	if got := c.Engines()[0].Breaker; got != translate.BreakerOpen {
		t.Fatalf("after 20 failed calls breaker = %v, want open", got)
	}
}

func TestBreakerHalfOpenTrialsCloseIt(t *testing.T) {
	clk := newClock()
	c, a, _ := breakerClient(t, clk, translate.BreakerPolicy{MinCalls: 4, Window: 4})
	a.Down(translate.KindUnavailable)
	translateN(t, c, 4)
	if got := c.Engines()[0].Breaker; got != translate.BreakerOpen {
		t.Fatalf("breaker = %v, want open", got)
	}
	clk.Advance(9 * time.Second)
	before := a.Calls()
	translateN(t, c, 3)
	if a.Calls() != before {
		t.Fatalf("called during the cooldown")
	}
	clk.Advance(time.Second)
	a.Up()
	// Five trial calls go to a, whatever its score; then it closes, not before.
	translateN(t, c, 4)
	if got := c.Engines()[0].Breaker; got != translate.BreakerHalfOpen {
		t.Errorf("after 4 good trials breaker = %v, want half-open", got)
	}
	translateN(t, c, 1)
	if got := a.Calls() - before; got != 5 {
		t.Errorf("trial calls = %d, want 5", got)
	}
	if got := c.Engines()[0].Breaker; got != translate.BreakerClosed {
		t.Errorf("after 5 good trials breaker = %v, want closed", got)
	}
}

func TestBreakerCooldownDoublesOnReopen(t *testing.T) {
	clk := newClock()
	c, a, _ := breakerClient(t, clk, translate.BreakerPolicy{MinCalls: 4, Window: 4})
	a.Down(translate.KindUnavailable)
	translateN(t, c, 4)
	clk.Advance(10 * time.Second)
	translateN(t, c, 1) // the trial fails: open again, for 20s
	if got := c.Engines()[0].Breaker; got != translate.BreakerOpen {
		t.Fatalf("after a failed trial breaker = %v, want open", got)
	}
	before := a.Calls()
	clk.Advance(19 * time.Second)
	translateN(t, c, 1)
	if a.Calls() != before {
		t.Fatalf("called 19s into a 20s cooldown")
	}
	clk.Advance(time.Second)
	translateN(t, c, 1)
	if a.Calls() != before+1 {
		t.Fatalf("not tried after the doubled cooldown")
	}
}

func TestBreakerPerScene(t *testing.T) {
	clk := newClock()
	c, a, _ := breakerClient(t, clk, translate.BreakerPolicy{MinCalls: 4, Window: 4, PerScene: true})
	a.Down(translate.KindUnavailable)
	for i := 0; i < 4; i++ {
		r := req(fmt.Sprintf("legal %d", i))
		r.Scene = translate.SceneTech
		if _, err := c.Translate(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	a.Up()
	before := a.Calls()
	translateN(t, c, 1) // SceneGeneral: its own breaker is closed
	if a.Calls() != before+1 {
		t.Errorf("general scene blocked by the tech scene's breaker")
	}
	r := req("tech again")
	r.Scene = translate.SceneTech
	if _, err := c.Translate(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if a.Calls() != before+1 {
		t.Errorf("tech scene's open breaker let a call through")
	}
}

func TestNonFailureKindsDoNotOpenBreaker(t *testing.T) {
	clk := newClock()
	c, a, _ := breakerClient(t, clk, translate.BreakerPolicy{MinCalls: 4, Window: 4})
	a.Down(translate.KindTextTooLong)
	translateN(t, c, 8)
	if got := c.Engines()[0].Breaker; got != translate.BreakerClosed {
		t.Errorf("breaker = %v after TextTooLong answers, want closed", got)
	}
}
