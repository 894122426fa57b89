package quota

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestQuotaCharge(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	q := New(100, time.Hour, start)
	now := start.UnixNano()
	steps := []struct {
		name string
		do   func()
		left int64
	}{
		{"reserve 60", func() { q.Reserve(60, now) }, 40},
		{"vendor counted 40 of 60", func() { q.Charge(60, 40, now) }, 60},
		{"reserve 10", func() { q.Reserve(10, now) }, 50},
		{"vendor counted 30 for 10", func() { q.Charge(10, 30, now) }, 30},
		{"reserve 20", func() { q.Reserve(20, now) }, 10},
		{"refunded by charging 0", func() { q.Charge(20, 0, now) }, 30},
		{"reserve 30", func() { q.Reserve(30, now) }, 0},
		{"vendor counted far more: left stays 0", func() { q.Charge(30, 500, now) }, 0},
	}
	for _, s := range steps {
		s.do()
		if got := q.Left(now); got != s.left {
			t.Fatalf("after %s: left %d, want %d", s.name, got, s.left)
		}
	}
	if q.Reserve(1, now) {
		t.Fatal("reserved past the limit after an over-count")
	}
}

func TestQuotaChargeSettlesInItsPeriod(t *testing.T) {
	start := time.Unix(0, 0)
	q := New(100, time.Hour, start)
	t0 := start.UnixNano()
	t1 := start.Add(time.Hour).UnixNano()
	t2 := start.Add(2 * time.Hour).UnixNano()
	if !q.Reserve(50, t0) {
		t.Fatal("reserve 50 in period 0")
	}
	if !q.Reserve(70, t1) { // rolls over
		t.Fatal("reserve 70 in period 1")
	}
	q.Charge(50, 0, t0) // refund of period 0's reservation, settled late
	if got := q.Left(t1); got != 30 {
		t.Errorf("period 1 left %d after period 0's refund, want 30 (untouched)", got)
	}
	if got := q.Left(t0); got != 100 {
		t.Errorf("period 0 left %d after its refund, want 100", got)
	}
	// A reading a little behind, after the rollover, counts in its own period.
	if !q.Reserve(100, t1-1) || q.Left(t1) != 30 {
		t.Errorf("reserve in period 0 after the rollover: period 1 left %d, want 30", q.Left(t1))
	}
	q.Reserve(10, t2)    // period 2; period 0 is forgotten
	q.Charge(100, 0, t0) // nothing to settle it in
	q.Charge(70, 0, t1)  // period 1 is the previous one
	if got := q.Left(t2); got != 90 {
		t.Errorf("period 2 left %d, want 90", got)
	}
}

func TestQuotaExhaustHoldsUntilPeriodEnd(t *testing.T) {
	start := time.Unix(0, 0)
	q := New(100, time.Hour, start)
	now := start.UnixNano()
	q.Reserve(10, now)
	q.Exhaust()
	q.Refund(10)
	q.Charge(10, 0, now)
	if q.Left(now) != 0 || q.Reserve(1, now) {
		t.Fatalf("after Exhaust and refunds: left %d, want 0 and no reservation", q.Left(now))
	}
	if later := start.Add(time.Hour).UnixNano(); q.Left(later) != 100 {
		t.Fatalf("next period left %d, want 100", q.Left(later))
	}
}

type budgetState struct{ Spent, Reserved, Used float64 }

func state(b *Budget, now int64) budgetState {
	return budgetState{b.Spent(now), b.Reserved(now), b.Used(now)}
}

func TestBudgetChargeKeepsSpentAndReservedApart(t *testing.T) {
	b := NewBudget(2)
	const now = 5 * dayNanos
	steps := []struct {
		name string
		do   func()
		want budgetState
	}{
		{"reserve 1", func() { b.Reserve(1, now) }, budgetState{0, 1, 1}},
		{"reserve 0.5", func() { b.Reserve(0.5, now) }, budgetState{0, 1.5, 1.5}},
		{"charge 0.75 for 1", func() { b.Charge(1, 0.75, now) }, budgetState{0.75, 0.5, 1.25}},
		{"refund 0.5 by charging 0", func() { b.Charge(0.5, 0, now) }, budgetState{0.75, 0, 0.75}},
		{"reserve the rest", func() { b.Reserve(1.25, now) }, budgetState{0.75, 1.25, 2}},
		// The vendor billed 0.5 more than reserved: the day ends 0.5 over, and no further.
		{"vendor billed 1.75 for 1.25", func() { b.Charge(1.25, 1.75, now) }, budgetState{2.5, 0, 2.5}},
	}
	for _, s := range steps {
		s.do()
		if diff := cmp.Diff(s.want, state(b, now)); diff != "" {
			t.Fatalf("after %s (-want +got):\n%s", s.name, diff)
		}
	}
	if b.Reserve(0.001, now) {
		t.Fatal("reserved past the limit")
	}
	if f := b.Fraction(now); f != 1.25 {
		t.Fatalf("Fraction = %v, want 1.25", f)
	}
	if diff := cmp.Diff(budgetState{}, state(b, now+dayNanos)); diff != "" {
		t.Fatalf("next day (-want +got):\n%s", diff)
	}
	b.Charge(0.25, 0.25, now) // yesterday's reservation, settled today
	if diff := cmp.Diff(budgetState{}, state(b, now+dayNanos)); diff != "" {
		t.Fatalf("today after yesterday's charge (-want +got):\n%s", diff)
	}
	if got := b.Spent(now); got != 2.75 {
		t.Fatalf("yesterday spent %v, want 2.75", got)
	}
}

func TestBudgetUnlimitedCountsSpend(t *testing.T) {
	b := NewBudget(0)
	if !b.Reserve(1e9, 0) || b.Reserved(0) != 0 {
		t.Fatal("unlimited budget: reserve must succeed and hold nothing")
	}
	b.Charge(1e9, 3, 0)
	if diff := cmp.Diff(budgetState{3, 0, 3}, state(b, 0)); diff != "" {
		t.Fatalf("unlimited budget after a charge (-want +got):\n%s", diff)
	}
	if b.Fraction(0) != 0 {
		t.Fatal("unlimited budget: Fraction != 0")
	}
}

func TestBudgetIgnoresBadAmounts(t *testing.T) {
	b := NewBudget(1)
	nan := func() float64 { var z float64; return z / z }()
	for _, c := range []float64{0, -1, nan} {
		if !b.Reserve(c, 0) {
			t.Errorf("Reserve(%v) refused", c)
		}
		b.Charge(c, c, 0)
		b.Refund(c)
	}
	if diff := cmp.Diff(budgetState{}, state(b, 0)); diff != "" {
		t.Fatalf("after zero, negative and NaN amounts (-want +got):\n%s", diff)
	}
}

func TestReserveAndChargeDoNotAllocate(t *testing.T) {
	q := New(1<<40, time.Hour, time.Unix(0, 0))
	b := NewBudget(1e12)
	b.Reserve(1, 1) // the day's counters exist
	n := testing.AllocsPerRun(100, func() {
		q.Reserve(10, 1)
		q.Charge(10, 8, 1)
		b.Reserve(0.5, 1)
		b.Charge(0.5, 0.25, 1)
	})
	if n != 0 {
		t.Fatalf("Reserve and Charge allocate %v times, want 0", n)
	}
}

func TestQuotaReserveOddAmounts(t *testing.T) {
	q := New(100, time.Hour, time.Unix(0, 0))
	if !q.Reserve(0, 0) || !q.Reserve(-50, 0) || q.Left(0) != 100 {
		t.Fatalf("zero and negative reservations: left %d, want 100", q.Left(0))
	}
	q.Reserve(10, 0)
	if q.Reserve(1<<63-1, 0) || q.Left(0) != 90 {
		t.Fatalf("huge reservation: left %d, want 90 and a refusal", q.Left(0))
	}
}
