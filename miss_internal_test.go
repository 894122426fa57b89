package translate

import (
	"context"
	"fmt"
	"maps"
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
		now := c.now()
		if err := c.prepare(&Request{Text: "hot", Source: "en", Target: "es"}, &sc.r, now); err != nil {
			t.Fatal(err)
		}
		sc.r.spread = sc.spread // as doAvoiding does
		res, err := c.translate(context.Background(), &sc.r, now, sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.obs.requestEnd(context.Background(), nil, &sc.r, res, nil, res.Latency)
	}
	counted := map[uint64]uint64{} // the observer's request counter, by stripe
	for k := range uint64(tally.Stripes) {
		if n := c.obs.t.Requests(0, false, false).Stripe(int(k)); n > 0 {
			counted[k] = n
		}
	}
	want := map[uint64]uint64{}
	for _, sc := range []*scratch{s1, s2} {
		want[(sc.r.hash^sc.spread)%tally.Stripes]++
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
