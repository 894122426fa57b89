package quota

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hammer runs rounds in which workers reserve from a shared clock that another goroutine
// moves into the next period halfway through, and checks after each round that every
// reservation granted in the period that ended and in the new one is counted there, exactly,
// and that neither is over the limit. reserve reports whether it took one unit at now;
// used reports the units counted in the period holding now.
func hammer(t *testing.T, period int64, limit float64, reserve func(now int64) bool, used func(now int64) float64) {
	t.Helper()
	const workers, calls, rounds = 4, 64, 300
	var clock atomic.Int64
	clock.Store(period - 1) // the last nanosecond of period 0
	granted := map[int64]float64{}
	for r := range int64(rounds) {
		var attempts atomic.Int64
		var wg sync.WaitGroup
		counts := make([][2]float64, workers) // granted in period r, r+1
		start := make(chan struct{})
		for w := range workers {
			wg.Go(func() {
				<-start
				for range calls {
					now := clock.Load()
					if reserve(now) {
						counts[w][now/period-r]++
					}
					attempts.Add(1)
				}
			})
		}
		wg.Go(func() {
			<-start
			for attempts.Load() < workers*calls/2 {
				runtime.Gosched()
			}
			clock.Store((r + 1) * period) // the first nanosecond of period r+1
		})
		close(start)
		wg.Wait()
		for _, c := range counts {
			granted[r] += c[0]
			granted[r+1] += c[1]
		}
		for _, p := range []int64{r, r + 1} {
			if got, want := used(p*period), granted[p]; got != want {
				t.Fatalf("round %d: period %d counts %v, reservations granted %v", r, p, got, want)
			}
			if granted[p] > limit {
				t.Fatalf("round %d: period %d granted %v, over the limit %v", r, p, granted[p], limit)
			}
		}
		clock.Store((r+2)*period - 1) // the last nanosecond of period r+1
	}
}

func TestBudgetRolloverLosesNoReservation(t *testing.T) {
	const limit = 40.0 // 160 reservations of a quarter credit: some days fill up, some not
	b := NewBudget(limit)
	hammer(t, dayNanos, limit/0.25,
		func(now int64) bool { return b.Reserve(0.25, now) },
		func(now int64) float64 { return b.Used(now) / 0.25 })
}

func TestQuotaRolloverLosesNoReservation(t *testing.T) {
	const limit = 160
	q := New(limit, time.Hour, time.Unix(0, 0))
	hammer(t, int64(time.Hour), limit,
		func(now int64) bool { return q.Reserve(1, now) },
		func(now int64) float64 { return float64(limit - q.Left(now)) })
}
