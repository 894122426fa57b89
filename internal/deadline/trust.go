package deadline

import (
	"sync/atomic"
	"time"
)

// Trust decides, for one engine, whether its calls may run inline on the caller's goroutine
// instead of on a Runner's. The Runner's hand-off (two goroutine switches, and on a machine
// with an idle processor two wake-ups of another thread) costs far more than the call of an
// engine that computes its answer in process; but inline, nothing can stop the caller's
// wait for a call that hangs. So an engine earns inline calls and loses them:
//
//   - It earns them with Earn calls in a row that each returned within Instant: an engine
//     that computes and returns, not one that waits on a network. Its first calls, and every
//     call after a slow one, run on the Runner, and keep the deadline whatever they do.
//   - It loses them at the first call, inline or not, that takes longer than Instant (or that
//     never returns): the calls after it run on the Runner until it earns them again.
//   - While none of its calls returned within Instant for Stall, its calls run on the Runner:
//     a call that hangs inline holds its own caller, and those of the calls started inline
//     within Stall of the last instant return, not every caller after it.
//
// Its methods are safe for concurrent use and cost a load or two on shared memory that
// changes seldom: a busy engine's calls do not contend on it.
type Trust struct {
	good    atomic.Int32 // calls in a row that returned within Instant, up to Earn
	lastEnd atomic.Int64 // Now of the last instant return, refreshed every Stall/8
}

// Trust's thresholds.
const (
	Earn    = 64                     // instant calls in a row that earn inline calls
	Instant = 500 * time.Microsecond // the longest call that counts as instant
	Stall   = 10 * time.Millisecond  // inline calls stop when no call returned in time for this
)

// epoch is Now's origin: its monotonic reading.
var epoch = time.Now()

// Now returns the monotonic clock in nanoseconds: a clock read that costs half of time.Now's.
func Now() int64 { return int64(time.Since(epoch)) }

// At returns t, taken with time.Now, as Now would have: no clock read.
func At(t time.Time) int64 { return int64(t.Sub(epoch)) }

// Inline reports whether a call starting at now (see Now) may run inline.
func (t *Trust) Inline(now int64) bool {
	return t.good.Load() >= Earn && now-t.lastEnd.Load() < int64(Stall)
}

// Record notes a call that ran from start to end (see Now); a call that was abandoned is
// recorded when it returns, or never.
func (t *Trust) Record(start, end int64) {
	if end-start > int64(Instant) {
		if t.good.Load() != 0 {
			t.good.Store(0)
		}
		return
	}
	if t.good.Load() < Earn {
		t.good.Add(1) // racing calls may take it a little past Earn: harmless
	}
	if last := t.lastEnd.Load(); last == 0 || end-last > int64(Stall/8) { // (Now may be < 0 in a synctest bubble)
		t.lastEnd.Store(end)
	}
}
