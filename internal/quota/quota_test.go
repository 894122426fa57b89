package quota

import (
	"sync"
	"testing"
	"time"
)

func TestQuotaReserveRefundRoll(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	q := New(100, time.Hour, start)
	now := start.UnixNano()
	if !q.Reserve(60, now) || q.Reserve(50, now) {
		t.Fatal("reserve 60 then 50 of 100: want true, false")
	}
	if got := q.Left(now); got != 40 {
		t.Fatalf("left = %d, want 40", got)
	}
	q.Refund(60)
	if got := q.Left(now); got != 100 {
		t.Fatalf("left after refund = %d, want 100", got)
	}
	q.Exhaust()
	if q.Reserve(1, now) {
		t.Fatal("reserve after Exhaust succeeded")
	}
	later := start.Add(90 * time.Minute).UnixNano()
	if got := q.Left(later); got != 100 {
		t.Fatalf("left in next period = %d, want 100", got)
	}
	if got, want := q.PeriodEnd(later), start.Add(2*time.Hour).UnixNano(); got != want {
		t.Fatalf("period end = %d, want %d", got, want)
	}
	if New(0, time.Hour, start).Left(now) != -1 {
		t.Fatal("unlimited quota Left != -1")
	}
}

func TestQuotaConcurrentNeverOverruns(t *testing.T) {
	q := New(1000, time.Hour, time.Unix(0, 0))
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				if q.Reserve(7, 0) {
					mu.Lock()
					granted += 7
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if granted > 1000 || granted < 1000-7 {
		t.Fatalf("granted %d of 1000", granted)
	}
}

func TestBudgetNeverExceededAndRollsDaily(t *testing.T) {
	b := NewBudget(1.0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0.0
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				if b.Reserve(0.003, 0) {
					mu.Lock()
					total += 0.003
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if total > 1.0+1e-9 {
		t.Fatalf("spent %v of 1.0", total)
	}
	if f := b.Fraction(0); f < 0.99 {
		t.Fatalf("fraction %v, want ~1", f)
	}
	if b.Spent(dayNanos+1) != 0 {
		t.Fatal("budget did not roll over at the next UTC day")
	}
}
