package score

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The seeded sequence is a pure function of the seed, the stripe and the count: the same
// seed draws the same, another seed or stripe draws otherwise.
func TestStripeNext(t *testing.T) {
	draws := func(seed uint64, i uint8) []uint64 {
		var s Stripe
		out := []uint64{s.Next(seed, i), s.Next(seed, i), s.Next(seed, i)}
		if s.Drawn() != 3 {
			t.Errorf("Drawn() = %d, want 3", s.Drawn())
		}
		return out
	}
	var g uint64 = 0x9e3779b97f4a7c15
	var seed uint64 = 7
	want := []uint64{Mix(seed + 1*g), Mix(seed + 2*g), Mix(seed + 3*g)}
	if diff := cmp.Diff(want, draws(7, 0)); diff != "" {
		t.Errorf("stripe 0 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]uint64{Mix(seed + 1<<56 + g)}, draws(7, 1)[:1]); diff != "" {
		t.Errorf("stripe 1 (-want +got):\n%s", diff)
	}
	if cmp.Equal(draws(7, 0), draws(7, 1)) || cmp.Equal(draws(7, 0), draws(8, 0)) {
		t.Error("another stripe or seed draws the same")
	}
}

func TestStripeOf(t *testing.T) {
	seen := map[uint8]bool{}
	for _, s := range []string{"", "a", "hello", "hello world", "0123456789abcdefX", "0123456789abcdefY"} {
		i := StripeOf(s)
		if i >= Stripes || StripeOf(s) != i {
			t.Fatalf("StripeOf(%q) = %d: out of range or unstable", s, i)
		}
		seen[i] = true
	}
	if len(seen) < 3 {
		t.Errorf("six texts fall on %d stripes", len(seen))
	}
	// Only the first 16 bytes and the length count.
	if StripeOf("0123456789abcdefX") != StripeOf("0123456789abcdefY") {
		t.Error("bytes past the 16th change the stripe")
	}
}

// Mix is pinned: a seeded Client must draw the same sequence from one version to the next.
func TestMixUnit(t *testing.T) {
	if diff := cmp.Diff([]uint64{0, 6238072747940578789}, []uint64{Mix(0), Mix(1)}); diff != "" {
		t.Errorf("Mix (-want +got):\n%s", diff)
	}
	for _, x := range []uint64{0, 1, math.MaxUint64 - 1<<11} {
		if u := Unit(x); !(u > 0 && u < 1) {
			t.Errorf("Unit(%#x) = %v, not in (0,1)", x, u)
		}
	}
	if u := Unit(math.MaxUint64); u != 1 {
		t.Errorf("Unit(max) = %v, want 1 (rounded)", u)
	}
	if got := Unit(1 << 63); got != 0.5+0.5/(1<<53) {
		t.Errorf("Unit(1<<63) = %v", got)
	}
}

// Rendezvous: the heavier candidate wins in proportion to its weight; the same hash picks
// the same.
func TestRendezvous(t *testing.T) {
	const n = 20000
	wins := 0
	for h := range uint64(n) {
		a, b := Rendezvous(Mix(h), 11, 3), Rendezvous(Mix(h), 22, 1)
		if a > b {
			wins++
		}
		if Rendezvous(Mix(h), 11, 3) != a {
			t.Fatal("unstable rank")
		}
	}
	if share := float64(wins) / n; math.Abs(share-0.75) > 0.02 {
		t.Errorf("weight 3 against 1 wins %.3f, want 0.75", share)
	}
}
