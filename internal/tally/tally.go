// Package tally keeps counters that every core adds to at once, for metrics that are read
// far less often than they are written: an OpenTelemetry observable counter reads them at
// each collection, where a synchronous SDK counter would take a lookup, a lock and
// sometimes an exemplar on every Add (100-250 ns on the machines we measure on; a Counter
// here costs a few).
//
// A Counter spreads its sum over stripes, each on a cache line of its own, picked at random
// per Add (the runtime's per-thread generator: no shared state) or by the caller's key
// (AddAt), so that two cores adding
// at once do not make one line of memory bounce between them. Load sums the stripes: it
// sees every Add that happened before it, and some of those that race with it.
package tally

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
)

// Stripes is how many stripes a Counter spreads over.
const Stripes = 4

// line is one stripe, padded to a cache line (Go does not align structs to lines: the
// padding before the first stripe, in Counter, keeps it off its neighbour's line).
type line struct {
	n atomic.Uint64
	_ [56]byte
}

// Counter is a monotonic sum of integers. The zero value is ready; it is safe for
// concurrent use and must not be copied.
type Counter struct {
	_ [64]byte
	s [Stripes]line
}

// Add adds n (n ≥ 0) to a stripe picked at random.
func (c *Counter) Add(n uint64) { c.s[rand.Uint32()%Stripes].n.Add(n) }

// AddAt adds n to the stripe key picks: cheaper than Add when the caller has a well-mixed
// key at hand (a request's hash), which spreads the cores' adds as well.
func (c *Counter) AddAt(key, n uint64) { c.s[key%Stripes].n.Add(n) }

// Stripe returns what stripe i (0 <= i < Stripes) holds: for tests of who adds where.
func (c *Counter) Stripe(i int) uint64 { return c.s[i].n.Load() }

// Load returns the sum of every Add so far.
func (c *Counter) Load() uint64 {
	var t uint64
	for i := range c.s {
		t += c.s[i].n.Load()
	}
	return t
}

// Float is a monotonic sum of non-negative floats. The zero value is ready; it is safe
// for concurrent use and must not be copied.
type Float struct {
	_ [64]byte
	s [Stripes]line // each holds the bits of a float64
}

// Add adds v; a negative, NaN or infinite v is ignored, so that the sum stays monotonic
// and finite.
func (f *Float) Add(v float64) {
	if !(v > 0) || math.IsInf(v, 1) {
		return
	}
	s := &f.s[rand.Uint32()%Stripes].n
	for {
		old := s.Load()
		if s.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// Load returns the sum of every Add so far.
func (f *Float) Load() float64 {
	var t float64
	for i := range f.s {
		t += math.Float64frombits(f.s[i].n.Load())
	}
	return t
}
