package deadline

import (
	"math"
	"sync/atomic"
	"time"
)

// Trust decides, for one engine, whether its calls may run inline on the caller's goroutine
// instead of on a Runner's. The Runner's hand-off (two goroutine switches, and on a machine
// with an idle processor two wake-ups of another thread) costs far more than the call of an
// engine that computes its answer in process, and under load, when the caller's and the
// Runner's goroutines queue behind thousands of others, it adds to every call's latency; but
// inline, nothing can stop the caller's wait for a call that hangs. So an engine earns
// inline calls by evidence, and loses them:
//
//   - It earns them with Earn calls in a row that each returned within Instant (an engine
//     that computes and returns, not one that waits on a network), or with Earn calls in a
//     row that each watched their context (asked for Done) and returned by their deadline
//     (an engine that waits on a network and heeds its context, as every HTTP engine does).
//     Its first calls, and every call after it lost them, run on the Runner, and keep the
//     deadline whatever they do.
//   - It loses them at the first call, inline or not, that returns past its deadline (or
//     never returns), or that takes longer than Instant without watching its context (the
//     instant calls' standing is lost by any call longer than Instant), and when the alarm
//     of an inline call ends it at its deadline (Overdue: the call may be hung, and the
//     calls after it should not wait to hear). The calls after it run on the Runner until
//     it earns them again.
//   - While none of its calls returned within Instant, or watching its context in time, for
//     Stall, its calls run on the Runner: a call that hangs inline holds its own caller, and
//     those of the calls started inline within Stall of the last good return, not every
//     caller after it.
//
// Its methods are safe for concurrent use and cost a load or two on shared memory that
// changes seldom: a busy engine's calls do not contend on it.
type Trust struct {
	good    atomic.Int32 // calls in a row that returned within Instant, up to Earn
	heeded  atomic.Int32 // calls in a row that watched their context and returned in time, up to Earn
	lastEnd atomic.Int64 // Now of the last good return, refreshed every Stall/8
}

// Trust's thresholds.
const (
	Earn    = 64                     // good calls in a row that earn inline calls
	Instant = 500 * time.Microsecond // the longest call that counts as instant
	Stall   = 10 * time.Millisecond  // inline calls stop when no call returned well for this
)

// epoch is Now's origin: its monotonic reading.
var epoch = time.Now()

// Now returns the monotonic clock in nanoseconds: a clock read that costs half of time.Now's.
func Now() int64 { return int64(time.Since(epoch)) }

// At returns t, taken with time.Now, as Now would have: no clock read. A t more than about
// 292 years from the process's start comes out as the smallest or largest int64.
func At(t time.Time) int64 { return int64(t.Sub(epoch)) }

// Time returns the instant n (see Now) as a time.Time, for a context's Deadline, with
// At(Time(n)) == n. It carries a monotonic reading, and its wall clock is n's: in a synctest
// bubble, where time.Now carries none and times compare by their wall clocks, the bubble's.
func Time(n int64) time.Time { return epoch.Add(time.Duration(n)) }

// Add returns the instant d after n (see Now), or the first or last instant an int64 holds
// when n+d overflows: an absurd timeout never wraps around into the past.
func Add(n int64, d time.Duration) int64 {
	m := n + int64(d)
	switch {
	case d > 0 && m < n:
		return math.MaxInt64
	case d < 0 && m > n:
		return math.MinInt64
	}
	return m
}

// Inline reports whether a call starting at now (see Now) may run inline.
func (t *Trust) Inline(now int64) bool {
	return (t.good.Load() >= Earn || t.heeded.Load() >= Earn) && now-t.lastEnd.Load() < int64(Stall)
}

// Instant reports whether the engine's calls starting at now run inline because they
// compute in process: its last Earn calls each returned within Instant. An engine that
// earned inline calls by heeding its context (an HTTP engine) is not instant: its calls
// wait on a network and may be billed, so identical requests still share one.
func (t *Trust) Instant(now int64) bool {
	return t.good.Load() >= Earn && now-t.lastEnd.Load() < int64(Stall)
}

// Record notes a call that ran from start to end (see Now); watched reports that it asked
// its context for Done, onTime that it returned by its deadline. A call that was abandoned
// is recorded when it returns, or never.
func (t *Trust) Record(start, end int64, watched, onTime bool) {
	instant := end-start <= int64(Instant)
	bump(&t.good, instant)
	switch {
	case watched && onTime:
		bump(&t.heeded, true)
	case !onTime || !instant:
		bump(&t.heeded, false)
	}
	if !instant && !(watched && onTime) {
		return
	}
	if last := t.lastEnd.Load(); last == 0 || end-last > int64(Stall/8) { // (Now may be < 0 in a synctest bubble)
		t.lastEnd.Store(end)
	}
}

// Overdue notes that a call inline is still running at its deadline: the calls after it run
// on the Runner until the engine earns inline calls again.
func (t *Trust) Overdue() {
	bump(&t.good, false)
	bump(&t.heeded, false)
}

// bump adds one to a count of good calls in a row, up to Earn, or resets it: a store only
// when it changes, so that a busy engine's calls do not write shared memory.
func bump(n *atomic.Int32, good bool) {
	switch {
	case !good:
		if n.Load() != 0 {
			n.Store(0)
		}
	case n.Load() < Earn:
		n.Add(1) // racing calls may take it a little past Earn: harmless
	}
}
