package translate

import (
	"context"
	"fmt"
	cb "github.com/fanyi-go/translate/internal/breaker"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fixedClock is a Clock that stands still: filter and exclude are given the time.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

func (fixedClock) Sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
		return nil
	}
}

var fastLangs = []string{"en", "es", "fr", "de", "zh"}

// randomFastClient builds a Client over n engines with random profiles: every class, quotas,
// last resorts, canaries, language lists, regions and legal qualities, with or without a
// daily budget and per-scene breakers.
func randomFastClient(t *testing.T, rng *rand.Rand, n int, start time.Time) *Client {
	t.Helper()
	opts := []Option{WithClock(fixedClock{start}), WithSeed(rng.Uint64()), WithoutCache(),
		WithBreaker(BreakerPolicy{PerScene: rng.IntN(2) == 0})}
	if rng.IntN(2) == 0 {
		opts = append(opts, WithBudget(Budget{Daily: 100}))
	}
	for i := range n {
		p := Profile{
			Class:        []CostClass{ClassFree, ClassStandard, ClassPremium}[rng.IntN(3)],
			FallbackOnly: rng.IntN(4) == 0,
			Region:       []string{"", "eu", "us"}[rng.IntN(3)],
			Quality:      float64(70 + rng.IntN(30)),
		}
		if p.Class != ClassFree && rng.IntN(3) > 0 {
			p.CostPerMillion = 10
		}
		if rng.IntN(3) == 0 {
			p.Quota = int64(5 + rng.IntN(40))
		}
		if rng.IntN(5) == 0 {
			p.Canary = 30
		}
		if rng.IntN(2) == 0 {
			perm := rng.Perm(len(fastLangs))[:2+rng.IntN(len(fastLangs)-1)]
			for _, j := range perm {
				p.Languages = append(p.Languages, fastLangs[j])
			}
		}
		opts = append(opts, WithEngine(nopEngine{fmt.Sprint("e", i)}, p))
	}
	c, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// shuffleState gives every engine of c a random live state and standing, and the budget a
// random spend: the states exclude tells apart, each often enough to be met.
func shuffleState(c *Client, rng *rand.Rand, now int64) {
	for _, e := range c.cfg.Load().engines {
		e.flags.Store(0)
		switch rng.IntN(12) {
		case 0:
			e.set(flagSetAside)
		case 1:
			e.set(flagMaintenance)
		case 2:
			e.set(flagIsolate) // not a reason to leave it out
		}
		e.offUntil.Store(0)
		if rng.IntN(8) == 0 {
			e.offUntil.Store(now + int64(rng.IntN(3)-1)*int64(time.Second)) // past, now or ahead
		}
		e.brOut.Store(0)
		for _, b := range e.br.bs {
			b.SetForTest(cb.Closed, 0)
			if k := rng.IntN(8); k < 2 {
				b.SetForTest([]cb.State{cb.Open, cb.HalfOpen}[k], now+int64(rng.IntN(3)-1)*int64(time.Second))
				e.brOut.Add(1) // as breaker.sync counts a move away from closed
			}
		}
		e.unsupported.Forget()
		e.unsup.Store(false)
		if rng.IntN(6) == 0 {
			src, _ := c.langs.Lookup(fastLangs[rng.IntN(len(fastLangs))])
			tgt, _ := c.langs.Lookup(fastLangs[rng.IntN(len(fastLangs))])
			e.unsupported.add(src.ID, tgt.ID)
		}
		if e.quotaLimited && rng.IntN(2) == 0 {
			e.q.Reserve(int64(rng.IntN(int(e.prof.Quota))), now)
		}
		nv := *e.view.Load()
		nv.avail = []float64{1, 0.9, 0.8, 0.79, 0.3}[rng.IntN(5)]
		nv.pool = []Pool{PoolNormal, PoolNormal, PoolFallback}[rng.IntN(3)]
		nv.ewma = []time.Duration{100 * time.Millisecond, 3 * time.Second, 4 * time.Second}[rng.IntN(3)]
		c.rebuildView(e, &nv)
		e.view.Store(&nv)
	}
	if day := c.budget.All.Day; !day.Unlimited() {
		day.Charge(day.Reserved(now), 0, now)
		day.Reserve([]float64{0, 50, 85, 99.5, 100}[rng.IntN(5)], now)
	}
}

// randomFastRequest returns a prepared random request: detected or given source, any
// target, scene, priority, region rule, pin and length.
func randomFastRequest(t *testing.T, c *Client, rng *rand.Rand, now int64) *request {
	t.Helper()
	req := Request{Text: strings.Repeat("x", 1+rng.IntN(30)), Target: fastLangs[rng.IntN(len(fastLangs))],
		Scene: Scene(rng.IntN(len(sceneNames))), Priority: Priority(rng.IntN(int(PriorityHigh) + 1))}
	if src := fastLangs[rng.IntN(len(fastLangs))]; src != req.Target && rng.IntN(4) > 0 {
		req.Source = src
	}
	switch rng.IntN(4) {
	case 0:
		req.Regions = []string{"eu"}
	case 1:
		req.Regions = []string{"us", ""}
	}
	engines := c.cfg.Load().engines
	if rng.IntN(4) == 0 {
		req.Engine = engines[rng.IntN(len(engines))].name
		req.AllowFallback = rng.IntN(2) == 0
	}
	var r request
	if err := c.prepare(&req, &r, now); err != nil {
		t.Fatal(err)
	}
	return &r
}

// filterByExclude is what filter must return: the engines of stage s, not tried, that
// exclude admits, in order, with exclude's trial marks.
func filterByExclude(c *Client, r *request, tried *set, s stage, now int64) []candidate {
	frac := c.budgetFraction(r, now)
	var out []candidate
	for i, e := range r.s.engines {
		if tried.has(e.idx) {
			continue
		}
		v := e.view.Load()
		if !s.in(e, v, r) {
			continue
		}
		if why, trial := c.exclude(e, v, r, now, frac); why == reasonNone {
			out = append(out, candidate{w: e.weightFor(v, r, now), i: int32(i), trial: trial, canary: e.canary})
		}
	}
	return out
}

// TestFilterAgreesWithExclude holds filter's fast path to exclude: over random engines,
// states and requests, filter returns exactly the candidates exclude alone admits, in the
// engines' order, with the same trial marks and weights, appended after what dst held.
func TestFilterAgreesWithExclude(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	now := start.Add(time.Hour).UnixNano()
	var seen filterCoverage
	for round := range 40 {
		n := 1 + rng.IntN(24)
		if round%10 == 9 {
			n = 130 + rng.IntN(20) // tried indices past the set's small words
		}
		c := randomFastClient(t, rng, n, start)
		for range 60 {
			shuffleState(c, rng, now)
			r := randomFastRequest(t, c, rng, now)
			tried := randomTried(rng, r)
			for s := stagePinned; s <= stagePaidLast; s++ {
				want := filterAgrees(t, c, r, &tried, s, now, round)
				seen.add(c, r, &tried, s, now, want)
			}
		}
	}
	// The random states must reach every side of the rules, or agreement proves little.
	if seen.admitted < 5000 || seen.trials < 500 || seen.dropped < 5000 {
		t.Fatalf("random states too narrow: %d decisions, %d admitted (%d trials), %d left out",
			seen.decisions, seen.admitted, seen.trials, seen.dropped)
	}
	t.Logf("%d decisions, %d admitted (%d trials), %d left out", seen.decisions, seen.admitted, seen.trials, seen.dropped)
}

// randomTried marks about one in six of r's engines as tried.
func randomTried(rng *rand.Rand, r *request) set {
	var tried set
	for _, e := range r.s.engines {
		if rng.IntN(6) == 0 {
			tried.add(e.idx)
		}
	}
	return tried
}

// filterAgrees checks that filter, appending to a dst that holds a sentinel, leaves the
// sentinel and appends what filterByExclude gives for stage s. It returns those candidates.
func filterAgrees(t *testing.T, c *Client, r *request, tried *set, s stage, now int64, round int) []candidate {
	t.Helper()
	opt := cmp.AllowUnexported(candidate{})
	sentinel := candidate{w: -1, i: -1, doubt: true}
	want := filterByExclude(c, r, tried, s, now)
	got := c.filter(r, tried, s, now, []candidate{sentinel})
	if diff := cmp.Diff(sentinel, got[0], opt); diff != "" {
		t.Fatalf("filter overwrote what dst held (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, got[1:], opt, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("round %d, stage %d, request %+v: filter disagrees with exclude (-exclude +filter):\n%s",
			round, s, r.Request, diff)
	}
	return want
}

// filterCoverage counts which sides of the rules the random states reached.
type filterCoverage struct {
	decisions int // stages filtered
	admitted  int // candidates admitted
	trials    int // of them, half-open trials
	dropped   int // untried engines in the stage that exclude left out
}

// add counts one stage's decision: admitted are the candidates filter gave.
func (f *filterCoverage) add(c *Client, r *request, tried *set, s stage, now int64, admitted []candidate) {
	f.decisions++
	f.admitted += len(admitted)
	for _, cd := range admitted {
		f.trials += b2i(cd.trial)
	}
	for _, e := range r.s.engines {
		v := e.view.Load()
		if !tried.has(e.idx) && s.in(e, v, r) {
			if why, _ := c.exclude(e, v, r, now, c.budgetFraction(r, now)); why != reasonNone {
				f.dropped++
			}
		}
	}
}
