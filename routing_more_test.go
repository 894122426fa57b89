package translate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/text/language"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// lister is a fake engine that lists its pairs.
type lister struct {
	*fake.Engine
	pairs []translate.LanguagePair
	err   error
}

func (l lister) SupportedPairs(context.Context) ([]translate.LanguagePair, error) {
	return l.pairs, l.err
}

func TestLanguageSupporterListsPairsWhenProfileHasNone(t *testing.T) {
	es := lister{Engine: fake.New("es-only"), pairs: []translate.LanguagePair{{Source: language.English, Target: language.Spanish}}}
	broken := lister{Engine: fake.New("broken"), err: fmt.Errorf("listing failed")}
	c := newClient(t, translate.WithClock(newClock()),
		translate.WithEngine(es, translate.Profile{Quality: 100}),
		translate.WithEngine(broken, translate.Profile{Quality: 1}))
	for i := 0; i < 10; i++ {
		res, err := c.Translate(context.Background(), translate.Request{Text: fmt.Sprint("hi ", i), Source: "en", Target: "de"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Engine != "broken" {
			t.Fatalf("en->de went to %s, which lists only en->es", res.Engine)
		}
	}
	if es.Calls() != 0 {
		t.Errorf("es-only called %d times for a pair it does not list", es.Calls())
	}
}

func TestChatSceneAvoidsSlowEngines(t *testing.T) {
	// Latency is measured on real time. Before any call an engine is assumed at 300ms; the
	// first fold with calls sets its EWMA to their mean: two 600ms calls give 600ms, two
	// instant calls about 0.
	clk := newClock()
	slow := fake.New("slow", fake.WithLatency(600*time.Millisecond))
	quick := fake.New("quick")
	c := newClient(t, translate.WithClock(clk),
		translate.WithRouting(translate.RoutingPolicy{Temperature: 0.5, ChatMaxLatency: 250 * time.Millisecond}),
		translate.WithEngine(slow, translate.Profile{Quality: 100}), translate.WithEngine(quick, translate.Profile{Quality: 1}))
	for i, name := range []string{"slow", "slow", "quick", "quick"} {
		r := req(fmt.Sprint("warm ", i))
		r.Engine = name
		if _, err := c.Translate(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(10 * time.Second)
	if got := c.Engines()[0].LatencyEWMA; got < 250*time.Millisecond {
		t.Fatalf("slow's EWMA latency = %v after a fold of 600ms calls", got)
	}
	for i := 0; i < 5; i++ {
		r := req(fmt.Sprint("chat ", i))
		r.Scene = translate.SceneChat
		res, err := c.Translate(context.Background(), r)
		if err != nil || res.Engine != "quick" {
			t.Fatalf("chat request went to %v (%v), want quick", res, err)
		}
	}
	// Other scenes still use the slow, better engine.
	res, err := c.Translate(context.Background(), req("general"))
	if err != nil || res.Engine != "slow" {
		t.Fatalf("general request went to %v (%v), want slow", res, err)
	}
}

func TestPoolMovesOnTwoDropsAndBackAfterTwoGoodFolds(t *testing.T) {
	clk := newClock()
	a := fake.New("a")
	fb := fake.New("fb")
	// Probes run by hand (never here): folds alone move a, no recovery probe.
	c := newClient(t, translate.WithClock(translate.ManualProbesForTest(clk)), translate.WithProbes(translate.ProbePolicy{}),
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		translate.WithBreaker(translate.BreakerPolicy{FailureRatio: 0.9, MinCalls: 40}),
		translate.WithRouting(translate.RoutingPolicy{MinHealth: 0.1}),
		translate.WithEngine(a, translate.Profile{}),
		translate.WithEngine(fb, translate.Profile{FallbackOnly: true}))
	fold := func(failures int) translate.EngineStatus {
		t.Helper()
		outcomes := make([]fake.Outcome, 0, 20)
		for i := 0; i < 20; i++ {
			if i < failures {
				outcomes = append(outcomes, fake.Fail(translate.KindUnavailable))
			} else {
				outcomes = append(outcomes, fake.OK())
			}
		}
		a.Script(outcomes...)
		for i := 0; i < 20; i++ {
			_, _ = c.Translate(context.Background(), req(fmt.Sprint("t", i)))
		}
		clk.Advance(10 * time.Second)
		return c.Engines()[0]
	}
	// Availability over the window: 1 -> 0.8 (a drop of 20%) stays; a second drop moves it.
	if st := fold(4); st.Pool != translate.PoolNormal {
		t.Fatalf("after one drop: %+v", st)
	}
	if st := fold(12); st.Pool != translate.PoolFallback {
		t.Fatalf("after a second drop of over 15%%: %+v, want the fallback pool", st)
	}
	// In the fallback pool a only gets traffic when the normal pool fails, so feed it
	// successful calls pinned to it: two good folds bring it back.
	pinned := func() {
		a.Reset()
		for i := 0; i < 20; i++ {
			r := req(fmt.Sprint("p", i))
			r.Engine = "a"
			if _, err := c.Translate(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(10 * time.Second)
	}
	pinned()
	if st := c.Engines()[0]; st.Pool != translate.PoolFallback {
		t.Fatalf("after one good fold: %+v, want still fallback", st)
	}
	pinned()
	if st := c.Engines()[0]; st.Pool != translate.PoolNormal {
		t.Fatalf("after two good folds: %+v, want normal", st)
	}
}
