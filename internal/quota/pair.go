package quota

// Pair is a daily and a monthly Budget that every cost must fit together: Reserve takes
// from both or from neither. Safe for concurrent use; build it with NewPair.
type Pair struct {
	Day, Month *Budget
}

// NewPair returns a daily and a monthly budget; 0 means unlimited.
func NewPair(daily, monthly float64) Pair {
	return Pair{Day: NewBudget(daily), Month: NewMonthlyBudget(monthly)}
}

// Set changes both limits from now on, keeping the spend (see SetDaily).
func (p Pair) Set(daily, monthly float64) {
	p.Day.SetDaily(daily)
	p.Month.SetDaily(monthly)
}

// Unlimited reports whether neither budget has a limit.
func (p Pair) Unlimited() bool { return p.Day.Unlimited() && p.Month.Unlimited() }

// Reserve takes cost from now's day and now's month if both allow it, and reports whether
// it did; a refusal takes nothing.
func (p Pair) Reserve(cost float64, now int64) bool {
	if !p.Day.Reserve(cost, now) {
		return false
	}
	if !p.Month.Reserve(cost, now) {
		p.Day.Charge(cost, 0, now)
		return false
	}
	return true
}

// Refund gives back a reservation of cost made at now.
func (p Pair) Refund(cost float64, now int64) {
	p.Day.Charge(cost, 0, now)
	p.Month.Charge(cost, 0, now)
}

// Charge settles a reservation of reserved made at now at actual (see Budget.Charge).
func (p Pair) Charge(reserved, actual float64, now int64) {
	p.Day.Charge(reserved, actual, now)
	p.Month.Charge(reserved, actual, now)
}

// Fraction returns the larger of the day's and the month's fractions spent or reserved; 0
// when both are unlimited.
func (p Pair) Fraction(now int64) float64 {
	return max(p.Day.Fraction(now), p.Month.Fraction(now))
}
