// Package tally keeps counters that every core adds to at once, for metrics that are read
// far less often than they are written: an OpenTelemetry observable counter reads them at
// each collection, where a synchronous SDK counter would take a lookup, a lock and
// sometimes an exemplar on every Add (100-250 ns on the machines we measure on; a Counter
// here costs a few).
//
// A Counter spreads its sum over stripes, each on a cache line of its own, picked by the
// caller's key, so that two cores adding at once do not write one line of memory. The key
// should stay with a core (a per-processor scratch's, see the Client's scratch.spread):
// each core then keeps writing a line of its own. Random or per-request keys (a text's
// hash) spread the adds too, but move every line between the cores: on two cores that cost
// more than one shared atomic (BenchmarkCounterAddParallel: 33 ns an add against 12.6, and
// 3.0 with a key per core). Here is such a key where the caller has none. Load sums the
// stripes: it sees every add that happened before it, and some of those that race with it.
package tally

import (
	"math"
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

// AddAt adds n to the stripe key picks.
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

// AddAt adds v to the stripe key picks; a negative, NaN or infinite v is ignored, so that
// the sum stays monotonic and finite.
func (f *Float) AddAt(key uint64, v float64) {
	if !(v > 0) || math.IsInf(v, 1) {
		return
	}
	s := &f.s[key%Stripes].n
	for {
		old := s.Load()
		if s.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// Stripe returns what stripe i (0 <= i < Stripes) holds: for tests of who adds where.
func (f *Float) Stripe(i int) float64 { return math.Float64frombits(f.s[i].n.Load()) }

// Load returns the sum of every Add so far.
func (f *Float) Load() float64 {
	var t float64
	for i := range f.s {
		t += math.Float64frombits(f.s[i].n.Load())
	}
	return t
}
