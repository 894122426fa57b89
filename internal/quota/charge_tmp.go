package quota

import "math"

// Charge replaces a reservation by the actual charge (temporary; replaced by the full API).
func (q *Quota) Charge(reserved, actual int64, now int64) {
	if q.limit == 0 || reserved == actual {
		return
	}
	if actual < reserved {
		q.Refund(reserved - actual)
		return
	}
	for {
		left := q.left.Load()
		nl := max(left-(actual-reserved), 0)
		if q.left.CompareAndSwap(left, nl) {
			return
		}
	}
}

// Charge replaces a reservation by the actual charge (temporary).
func (b *Budget) Charge(reserved, actual float64, now int64) {
	if actual < reserved {
		b.Refund(reserved - actual)
		return
	}
	b.Reserve(0, now)
	if b.daily == 0 || actual == reserved {
		return
	}
	for {
		old := b.spent.Load()
		s := mathFrom(old) + actual - reserved
		if b.spent.CompareAndSwap(old, mathTo(s)) {
			return
		}
	}
}

func mathFrom(u uint64) float64 { return math.Float64frombits(u) }
func mathTo(f float64) uint64   { return math.Float64bits(f) }
