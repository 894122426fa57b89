package quota

import (
	"testing"
	"time"
)

// BenchmarkQuotaReserveRefund measures a reservation and its refund on one goroutine.
func BenchmarkQuotaReserveRefund(b *testing.B) {
	q := New(1<<40, time.Hour, time.Unix(0, 0))
	b.ReportAllocs()
	for b.Loop() {
		q.Reserve(100, 1)
		q.Refund(100)
	}
}

// BenchmarkQuotaReserveParallel measures contended reservations.
func BenchmarkQuotaReserveParallel(b *testing.B) {
	q := New(1<<40, time.Hour, time.Unix(0, 0))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			q.Reserve(100, 1)
			q.Refund(100)
		}
	})
}

// BenchmarkBudgetReserveRefund measures a reservation and its refund on one goroutine.
func BenchmarkBudgetReserveRefund(b *testing.B) {
	bu := NewBudget(1e12)
	b.ReportAllocs()
	for b.Loop() {
		bu.Reserve(0.01, 1)
		bu.Refund(0.01)
	}
}

// BenchmarkBudgetReserveParallel measures contended reservations.
func BenchmarkBudgetReserveParallel(b *testing.B) {
	bu := NewBudget(1e12)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bu.Reserve(0.01, 1)
			bu.Refund(0.01)
		}
	})
}
