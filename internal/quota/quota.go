// Package quota keeps per-engine character quotas and the Client's daily budget. Both reserve
// before an engine call and refund when it fails, with compare-and-swap loops, so concurrent
// requests can never overrun a limit.
package quota

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Quota is a number of standard characters per period. Periods are aligned on the start time
// given to New. Safe for concurrent use.
type Quota struct {
	limit  int64 // 0: unlimited
	period int64 // nanos
	left   atomic.Int64
	end    atomic.Int64 // unix nanos when the current period ends
	mu     sync.Mutex   // serialises rollovers
}

// New returns a Quota of limit characters per period starting at start. A limit of 0 means
// unlimited.
func New(limit int64, period time.Duration, start time.Time) *Quota {
	q := &Quota{limit: limit, period: int64(period)}
	q.left.Store(limit)
	q.end.Store(start.UnixNano() + int64(period))
	return q
}

// Unlimited reports whether the quota has no limit.
func (q *Quota) Unlimited() bool { return q.limit == 0 }

func (q *Quota) roll(now int64) {
	if now < q.end.Load() {
		return
	}
	q.mu.Lock()
	if end := q.end.Load(); now >= end {
		n := (now-end)/q.period + 1
		q.end.Store(end + n*q.period)
		q.left.Store(q.limit)
	}
	q.mu.Unlock()
}

// Left returns the characters left in the current period, -1 when unlimited.
func (q *Quota) Left(now int64) int64 {
	if q.limit == 0 {
		return -1
	}
	q.roll(now)
	return q.left.Load()
}

// PeriodEnd returns when the current period ends (unix nanos).
func (q *Quota) PeriodEnd(now int64) int64 {
	q.roll(now)
	return q.end.Load()
}

// Reserve takes n characters if that many are left and reports whether it did.
func (q *Quota) Reserve(n int64, now int64) bool {
	if q.limit == 0 {
		return true
	}
	q.roll(now)
	for {
		left := q.left.Load()
		if left < n {
			return false
		}
		if q.left.CompareAndSwap(left, left-n) {
			return true
		}
	}
}

// Refund gives back n reserved characters (never above the limit).
func (q *Quota) Refund(n int64) {
	if q.limit == 0 {
		return
	}
	for {
		left := q.left.Load()
		nl := min(left+n, q.limit)
		if q.left.CompareAndSwap(left, nl) {
			return
		}
	}
}

// Exhaust sets what is left to zero until the period ends.
func (q *Quota) Exhaust() { q.left.Store(0) }

// Budget is a number of credits per UTC day. Safe for concurrent use.
type Budget struct {
	daily float64 // 0: unlimited
	spent atomic.Uint64
	day   atomic.Int64
}

// NewBudget returns a daily budget; 0 means unlimited.
func NewBudget(daily float64) *Budget { return &Budget{daily: daily} }

// Unlimited reports whether the budget has no limit.
func (b *Budget) Unlimited() bool { return b.daily == 0 }

const dayNanos = int64(24 * time.Hour)

func (b *Budget) roll(now int64) {
	d := now / dayNanos
	if old := b.day.Load(); old != d && b.day.CompareAndSwap(old, d) {
		b.spent.Store(0)
	}
}

// Spent returns the credits spent today.
func (b *Budget) Spent(now int64) float64 {
	b.roll(now)
	return math.Float64frombits(b.spent.Load())
}

// Fraction returns the fraction of today's budget spent, 0 when unlimited.
func (b *Budget) Fraction(now int64) float64 {
	if b.daily == 0 {
		return 0
	}
	return b.Spent(now) / b.daily
}

// Reserve takes cost credits if the day's budget allows and reports whether it did.
func (b *Budget) Reserve(cost float64, now int64) bool {
	if b.daily == 0 || cost <= 0 {
		return true
	}
	b.roll(now)
	for {
		old := b.spent.Load()
		s := math.Float64frombits(old) + cost
		if s > b.daily*(1+1e-12) {
			return false
		}
		if b.spent.CompareAndSwap(old, math.Float64bits(s)) {
			return true
		}
	}
}

// Refund gives back reserved credits.
func (b *Budget) Refund(cost float64) {
	if b.daily == 0 || cost <= 0 {
		return
	}
	for {
		old := b.spent.Load()
		s := math.Max(0, math.Float64frombits(old)-cost)
		if b.spent.CompareAndSwap(old, math.Float64bits(s)) {
			return
		}
	}
}

// Daily returns the budget's daily limit, 0 when unlimited.
func (b *Budget) Daily() float64 { return b.daily }
