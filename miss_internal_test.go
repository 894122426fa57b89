package translate

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fanyi-go/translate/internal/health"
	"github.com/fanyi-go/translate/internal/tally"
)

// drawsTaken returns how many seeded draws c has made, over every stripe.
func drawsTaken(c *Client) uint64 {
	var n uint64
	for i := range c.rng {
		n += c.rng[i].Drawn()
	}
	return n
}

// TestLoneCandidateDrawsNothing: a pick among one candidate takes no draw from the seeded
// sequence (an atomic add on the text's stripe, which two cores serving one hot text share),
// nor from the runtime's source; a pick among two still does, one a request.
func TestLoneCandidateDrawsNothing(t *testing.T) {
	for _, n := range []int{1, 2} {
		opts := []Option{WithSeed(1), WithoutCache()}
		for i := range n {
			opts = append(opts, WithEngine(nopEngine{fmt.Sprint("e", i)}, Profile{}))
		}
		c, err := New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for range 10 {
			if _, err := c.Translate(context.Background(), Request{Text: "hello", Source: "en", Target: "es"}); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := drawsTaken(c), uint64(10*(n-1)); got != want {
			t.Errorf("%d engines: 10 requests took %d seeded draws, want %d", n, got, want)
		}
	}
}

// serveOn translates text from en to es on the scratch sc, as doAvoiding does, and records
// the request.
func serveOn(t *testing.T, c *Client, sc *scratch, text string) {
	t.Helper()
	now := c.now()
	if err := c.prepare(&Request{Text: text, Source: "en", Target: "es"}, &sc.r, now); err != nil {
		t.Fatal(err)
	}
	sc.r.spread = sc.spread
	res, err := c.translate(context.Background(), &sc.r, now, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.obs.requestEnd(context.Background(), nil, &sc.r, res, nil, res.Latency)
}

// TestOneTextSpreadsOverStripes: requests of one text served with two scratches (as two
// cores serving one hot text are: sync.Pool keeps a scratch per processor) add their
// engine's health counts to two stripes, not to the one the text's hash would pick; and
// scratches made one after the other get different stripes of every striped counter.
func TestOneTextSpreadsOverStripes(t *testing.T) {
	c, err := New(WithSeed(1), WithoutCache(), WithEngine(nopEngine{"a"}, Profile{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s1, s2 := c.getScratch(1), c.getScratch(1)
	for _, m := range []uint64{health.Stripes, tally.Stripes} {
		if s1.spread%m == s2.spread%m {
			t.Errorf("two scratches share stripe %d of %d", s1.spread%m, m)
		}
	}
	for _, sc := range []*scratch{s1, s2} {
		serveOn(t, c, sc, "hot")
	}
	counted := map[uint64]uint64{} // the observer's request counter, by stripe
	for k := range uint64(tally.Stripes) {
		if n := c.obs.t.Requests(0, false, false).Stripe(int(k)); n > 0 {
			counted[k] = n
		}
	}
	want := map[uint64]uint64{}
	for _, sc := range []*scratch{s1, s2} {
		want[sc.spread%tally.Stripes]++
	}
	if len(want) != 2 || !maps.Equal(counted, want) {
		t.Errorf("requests counted by stripe %v, want %v (two stripes)", counted, want)
	}
	calls, served := c.cfg.Load().engines[0].h.StripeCalls()
	for i, n := range []uint64{s1.spread, s2.spread} {
		k := n % health.Stripes
		if calls[k] != 1 || served[k] != 1 {
			t.Errorf("request %d (stripe %d): stripes hold calls %v, served %v; want 1 and 1 in stripe %d", i+1, k, calls, served, k)
		}
	}
}

// TestVariedTextsStayOnTheirStripes: every counter a miss adds to, the observer's and its
// engine's included, takes its stripe from the scratch the request ran on, not from the
// text: a processor keeps its scratch (sync.Pool), so two cores serving varied texts write
// two lines of memory of their own instead of bouncing every line between them (random or
// hashed stripes made BenchmarkMissParallel's CPU per miss 27% higher at -cpu 2 than at 1).
func TestVariedTextsStayOnTheirStripes(t *testing.T) {
	c, err := New(WithSeed(1), WithoutCache(), WithEngine(nopEngine{"a"}, Profile{CostPerMillion: 1e6}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := map[uint64]uint64{} // requests by the stripe of their scratch
	for i := range 16 {
		sc := c.getScratch(1)
		sc.spread = uint64(1 + i%2) // the scratches of two processors
		serveOn(t, c, sc, fmt.Sprintf("text %c", 'a'+i))
		want[sc.spread%tally.Stripes]++
	}
	e := c.cfg.Load().engines[0].tel
	requests, calls, chars, credits := map[uint64]uint64{}, map[uint64]uint64{}, map[uint64]uint64{}, map[uint64]uint64{}
	for k := range uint64(tally.Stripes) {
		ok, ch, cr := e.Stripe(int(k))
		for m, n := range map[*map[uint64]uint64]uint64{&requests: c.obs.t.Requests(0, false, false).Stripe(int(k)),
			&calls: ok, &chars: ch / 6, &credits: uint64(cr / 6)} { // "text i": 6 characters, 1 credit each
			if n > 0 {
				(*m)[k] = n
			}
		}
	}
	for name, got := range map[string]map[uint64]uint64{"requests": requests, "engine calls": calls,
		"characters / 6": chars, "credits / 6": credits} {
		if !maps.Equal(got, want) {
			t.Errorf("%s by stripe: %v, want %v (each request on its scratch's stripe)", name, got, want)
		}
	}
}

// TestHitsStayOnTheProcessorsStripe: a cache hit has no scratch; its counters take the
// stripe of the processor it runs on, not its text's (two cores serving one hot entry
// shared one line: BenchmarkCacheHitParallel took 89 ns a hit at -cpu 2 against 55 at 1).
// With one processor, the hits and lookups of eight texts all land on stripe 0.
func TestHitsStayOnTheProcessorsStripe(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	c, err := New(WithEngine(nopEngine{"a"}, Profile{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 16 {
		if _, err := c.Translate(context.Background(), Request{Text: fmt.Sprint("text ", i%8), Source: "en", Target: "es"}); err != nil {
			t.Fatal(err)
		}
	}
	var want [tally.Stripes]uint64
	want[0] = 8
	for name, n := range map[string]*tally.Counter{"fresh hits": c.obs.t.FreshHits(false), "lookups missed": c.obs.t.Lookups(false)} {
		var got [tally.Stripes]uint64
		for k := range got {
			got[k] = n.Stripe(k)
		}
		if got != want {
			t.Errorf("%s by stripe: %v, want %v", name, got, want)
		}
	}
}

// TestStartTimeIsNow: a request's start time reads the monotonic clock now, and carries
// the wall clock of the Client's start plus the time elapsed since: in a bubble, where the
// clocks agree, exactly time.Now.
func TestStartTimeIsNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := New(WithEngine(nopEngine{"a"}, Profile{}))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		time.Sleep(2 * time.Second)
		got, want := c.startTime(), time.Now()
		if !got.Equal(want) || got.Round(0).Equal(got) != want.Round(0).Equal(want) || got.Sub(want) != 0 {
			t.Errorf("startTime %v, want %v", got, want)
		}
	})
}
