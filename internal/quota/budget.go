package quota

import (
	"math"
	"sync/atomic"
	"time"
)

// Budget is a number of credits per UTC day (NewBudget) or per UTC calendar month
// (NewMonthlyBudget). Safe for concurrent use; the zero value is not usable: call NewBudget
// or NewMonthlyBudget. The methods named after the day (Daily, SetDaily) apply to the
// month's limit in a monthly Budget.
//
// Credits are reserved before a call (Reserve), then either refunded or charged (Charge).
// The day's spend (charged) and reservations (in flight) are kept apart, and Reserve checks
// the limit against their sum, so the day's budget is never exceeded by reservations. A
// vendor may bill more than was reserved (Charge with actual > reserved); that excess is
// charged all the same, so the day may end above its limit by what vendors billed beyond
// their reservations, and by no more.
type Budget struct {
	daily atomic.Uint64 // float64 bits; 0: unlimited
	p     periods[budgetCounts]
}

// NewMonthlyBudget returns a budget per UTC calendar month; 0 means unlimited. A month
// starts at 00:00 UTC on its first day, whatever its length.
func NewMonthlyBudget(monthly float64) *Budget {
	b := &Budget{}
	b.SetDaily(monthly)
	b.p.initMonths(0)
	return b
}

// budgetCounts are a day's counters, float64 bits.
type budgetCounts struct {
	used  atomic.Uint64 // spent + reserved: what the limit is checked against
	spent atomic.Uint64 // charged
}

const dayNanos = int64(24 * time.Hour)

// NewBudget returns a daily budget; 0 means unlimited.
func NewBudget(daily float64) *Budget {
	b := &Budget{}
	b.SetDaily(daily)
	b.p.init(0, dayNanos, 0)
	return b
}

// SetDaily changes the daily limit from now on, keeping the day's spend (0: unlimited).
// Reservations made while the budget was unlimited were not counted and are not refunded
// either.
func (b *Budget) SetDaily(daily float64) { b.daily.Store(math.Float64bits(max(daily, 0))) }

// Unlimited reports whether the budget has no limit.
func (b *Budget) Unlimited() bool { return b.Daily() == 0 }

// Daily returns the budget's daily limit, 0 when unlimited.
func (b *Budget) Daily() float64 { return math.Float64frombits(b.daily.Load()) }

// Spent returns the credits charged on now's day (see Charge); reservations in flight are not
// included: see Reserved and Used.
func (b *Budget) Spent(now int64) float64 {
	return load(&b.p.of(now).c.spent)
}

// Reserved returns the credits reserved on now's day by calls not settled yet.
func (b *Budget) Reserved(now int64) float64 {
	c := &b.p.of(now).c
	return max(0, load(&c.used)-load(&c.spent)) // exact unless a Charge is under way
}

// Used returns now's day's spend and reservations together: what Reserve checks the limit
// against.
func (b *Budget) Used(now int64) float64 {
	return load(&b.p.of(now).c.used)
}

// Fraction returns the fraction of now's day's budget spent or reserved, 0 when unlimited.
func (b *Budget) Fraction(now int64) float64 {
	d := b.Daily()
	if d == 0 {
		return 0
	}
	return b.Used(now) / d
}

// Reserve takes cost credits from now's day if its budget allows and reports whether it did. It
// always succeeds, and takes nothing, when the budget is unlimited or cost is not positive.
func (b *Budget) Reserve(cost float64, now int64) bool {
	daily := b.Daily()
	if daily == 0 || !(cost > 0) {
		return true
	}
	used := &b.p.of(now).c.used
	for {
		old := used.Load()
		u := math.Float64frombits(old) + cost
		if u > daily*(1+1e-12) {
			return false
		}
		if used.CompareAndSwap(old, math.Float64bits(u)) {
			return true
		}
	}
}

// Refund gives back credits reserved today. Charge(cost, 0, now) does the same for a
// reservation made at now, in whichever day that was.
func (b *Budget) Refund(cost float64) {
	if b.Unlimited() || !(cost > 0) {
		return
	}
	add(&b.p.cur.Load().c.used, -cost)
}

// Charge settles a reservation of reserved credits made at now (the now given to Reserve)
// with the actual charge the vendor billed: actual 0 refunds it, and actual above reserved
// is charged in full, even beyond the day's limit. A reservation from yesterday is settled
// in yesterday and leaves today alone; one from before that is forgotten with its day. With an unlimited budget Charge only counts
// the spend.
func (b *Budget) Charge(reserved, actual float64, now int64) {
	if !(actual > 0) {
		actual = 0
	}
	if b.Unlimited() || !(reserved > 0) {
		reserved = 0 // Reserve took nothing
	}
	s, ok := b.p.at(now)
	if !ok {
		return
	}
	add(&s.c.spent, actual)
	add(&s.c.used, actual-reserved)
}

func load(v *atomic.Uint64) float64 { return math.Float64frombits(v.Load()) }

// add adds d to *v, never going below zero.
func add(v *atomic.Uint64, d float64) {
	if d == 0 {
		return
	}
	for {
		old := v.Load()
		n := max(0, math.Float64frombits(old)+d)
		if v.CompareAndSwap(old, math.Float64bits(n)) {
			return
		}
	}
}
