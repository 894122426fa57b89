package translate

import (
	"context"
	"fmt"
	"testing"
)

// drawsTaken returns how many seeded draws c has made, over every stripe.
func drawsTaken(c *Client) uint64 {
	var n uint64
	for i := range c.rng {
		n += c.rng[i].n.Load()
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
