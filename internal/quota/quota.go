// Package quota keeps per-engine character quotas and the Client's daily budget. Both reserve
// before an engine call and settle after it — refund when the call cannot have reached the
// vendor, charge what the vendor billed otherwise — with compare-and-swap loops, so
// concurrent requests never overrun a limit.
//
// Each period (a quota period, a UTC day) has its own counters, made when the period begins
// and swapped in by compare-and-swap, so a period's rollover never wipes or double-counts a
// reservation. A reservation is settled in the period it was made in: pass Charge the now
// that Reserve was given. Reserve and the settling methods take no lock and do not allocate,
// except the first call of a new period, which allocates its counters.
package quota

import (
	"sync/atomic"
	"time"
)

// Quota is a number of standard characters per period. Periods are aligned on the start time
// given to New. Safe for concurrent use; the zero value is not usable: call New.
type Quota struct {
	limit atomic.Int64 // 0: unlimited
	p     periods[quotaCounts]
}

type quotaCounts struct {
	used      atomic.Int64 // reserved or charged, 0..limit
	exhausted atomic.Bool  // the vendor said so: nothing is left until the period ends
}

// New returns a Quota of limit characters per period starting at start. A limit of 0 means
// unlimited.
func New(limit int64, period time.Duration, start time.Time) *Quota {
	q := &Quota{}
	q.limit.Store(limit)
	q.p.init(start.UnixNano(), max(int64(period), 1), start.UnixNano())
	return q
}

func (q *Quota) lim() int64 { return q.limit.Load() }

// SetLimit changes the limit from now on, keeping what the period used (0: unlimited).
// Reservations made while the quota was unlimited were not counted and are not refunded
// either.
func (q *Quota) SetLimit(limit int64) { q.limit.Store(max(limit, 0)) }

// Unlimited reports whether the quota has no limit.
func (q *Quota) Unlimited() bool { return q.lim() == 0 }

// Left returns the characters left in the period holding now, -1 when unlimited.
func (q *Quota) Left(now int64) int64 {
	if q.lim() == 0 {
		return -1
	}
	c := &q.p.of(now).c
	if c.exhausted.Load() {
		return 0
	}
	return max(0, q.lim()-c.used.Load())
}

// PeriodEnd returns when the period holding now ends (unix nanos).
func (q *Quota) PeriodEnd(now int64) int64 {
	return q.p.of(now).end
}

// Reserve takes n characters from the period holding now, if that many are left there, and
// reports whether it did. It takes nothing, and succeeds, when n <= 0 or the quota is
// unlimited.
func (q *Quota) Reserve(n int64, now int64) bool {
	if q.lim() == 0 || n <= 0 {
		return true
	}
	c := &q.p.of(now).c
	for {
		u := c.used.Load()
		if n > q.lim()-u || c.exhausted.Load() {
			return false
		}
		if c.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// Refund gives back n characters reserved in the current period (never above the limit).
// Charge(n, 0, now) does the same for a reservation made at now, in whichever period that
// was.
func (q *Quota) Refund(n int64) {
	if q.lim() == 0 {
		return
	}
	q.add(q.p.cur.Load(), -n)
}

// Charge settles a reservation of reserved characters made at now (the now given to
// Reserve) with the actual number the vendor counted: actual 0 refunds it, actual above
// reserved takes the difference too, and what is left never goes below zero. A reservation
// from the previous period is settled there and leaves the current period alone; one from
// before that is forgotten with its period.
func (q *Quota) Charge(reserved, actual int64, now int64) {
	if q.lim() == 0 {
		return
	}
	if s, ok := q.p.at(now); ok {
		q.add(s, max(actual, 0)-max(reserved, 0))
	}
}

// add adds d to s's used count, kept within 0..limit.
func (q *Quota) add(s *span[quotaCounts], d int64) {
	for {
		u := s.c.used.Load()
		nu := min(max(u+d, 0), q.lim())
		if s.c.used.CompareAndSwap(u, nu) {
			return
		}
	}
}

// Exhaust sets what is left to zero until the period ends, whatever is refunded meanwhile.
func (q *Quota) Exhaust() { q.p.cur.Load().c.exhausted.Store(true) }
