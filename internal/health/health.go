// Package health counts an engine's calls between health folds without locks.
//
// Every request records its engine call here, on every core at once; a plain mutex or a
// single set of atomic counters makes that line of memory bounce between cores and shows up
// as the largest shared cost of a parallel miss. Counters are therefore spread over
// stripes, each on cache lines of its own, chosen by a well-mixed key such as the request's
// hash; a fold (every few seconds) sums and resets them. BenchmarkRecordParallel compares
// them with a mutex-guarded struct.
//
// The package also keeps what the folds make of the counts: Window, the last five minutes
// of an engine's folds, and Availability, its formula; Pairs, an engine's bad-output rate per
// language pair (at most MaxPairs pairs, striped like Counters), which the Client's routing
// reads lock-free.
package health

import (
	"sync/atomic"
	"time"
)

// Stripes is how many stripes the counters are spread over.
const Stripes = 8

// stripe is one stripe of counters, padded to two cache lines: Go does not align structs to
// cache lines, and a stripe must share no line with another.
type stripe struct {
	calls, fails, okCalls atomic.Int64
	latNanos              atomic.Int64 // sum of successful calls' latencies
	served                atomic.Int64 // successful real calls since the last TakeServed
	_                     [88]byte
}

// Counters collects one engine's call statistics between folds. The zero value is ready;
// it is safe for concurrent use and must not be copied.
type Counters struct {
	_       [128]byte // keeps the stripes off the lines of the fields before them
	stripes [Stripes]stripe
	_       [128]byte
}

// Sample is the sum of the counters.
type Sample struct {
	Calls, Fails, OKCalls int64
	LatNanos              int64 // sum of successful calls' latencies
}

// MeanLatency returns the mean latency of the successful calls, 0 when there were none.
func (s Sample) MeanLatency() time.Duration {
	if s.OKCalls == 0 {
		return 0
	}
	return time.Duration(s.LatNanos / s.OKCalls)
}

// Record records one call in the stripe chosen by key.
func (c *Counters) Record(key uint64, ok bool, latency time.Duration) {
	s := &c.stripes[key%Stripes]
	s.calls.Add(1)
	if !ok {
		s.fails.Add(1)
		return
	}
	s.okCalls.Add(1)
	s.latNanos.Add(int64(latency))
}

// Served counts a successful real call, for a prober deciding whether a probe is needed.
func (c *Counters) Served(key uint64) { c.stripes[key%Stripes].served.Add(1) }

// StripeCalls returns the calls and the served calls counted in each stripe (for tests:
// which stripes a caller's keys reach).
func (c *Counters) StripeCalls() (calls, served [Stripes]int64) {
	for i := range c.stripes {
		calls[i], served[i] = c.stripes[i].calls.Load(), c.stripes[i].served.Load()
	}
	return calls, served
}

// TakeServed returns and resets the successful real calls counted by Served.
func (c *Counters) TakeServed() int64 {
	var n int64
	for i := range c.stripes {
		n += c.stripes[i].served.Swap(0)
	}
	return n
}

// Take returns and resets the counters: the calls since the last Take.
func (c *Counters) Take() Sample {
	var t Sample
	for i := range c.stripes {
		s := &c.stripes[i]
		t.Calls += s.calls.Swap(0)
		t.Fails += s.fails.Swap(0)
		t.OKCalls += s.okCalls.Swap(0)
		t.LatNanos += s.latNanos.Swap(0)
	}
	return t
}

// Peek returns the counters without resetting them.
func (c *Counters) Peek() Sample {
	var t Sample
	for i := range c.stripes {
		s := &c.stripes[i]
		t.Calls += s.calls.Load()
		t.Fails += s.fails.Load()
		t.OKCalls += s.okCalls.Load()
		t.LatNanos += s.latNanos.Load()
	}
	return t
}
