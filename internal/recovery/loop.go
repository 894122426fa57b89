package recovery

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Pace runs round every interval() until ctx ends: sleep waits on the caller's clock and
// returns an error when ctx ends first; now reads that clock. A signal on reset (nil: none)
// says interval() may have changed: it cuts the wait short, and the round then runs once
// the new interval has passed since the wait began, at once if it already has. A reset
// never starts the wait again, so resets more frequent than the interval cannot starve
// the rounds.
func Pace(ctx context.Context, now func() time.Time, sleep func(context.Context, time.Duration) error,
	interval func() time.Duration, reset <-chan struct{}, round func(context.Context)) {
	for waitRound(ctx, now, sleep, interval, reset) {
		round(ctx)
	}
}

// waitRound waits interval() from now, reading it again at each signal on reset; false
// when ctx ended.
func waitRound(ctx context.Context, now func() time.Time, sleep func(context.Context, time.Duration) error,
	interval func() time.Duration, reset <-chan struct{}) bool {
	start, d := now(), interval()
	for {
		woken, err := sleepOrReset(ctx, sleep, d, reset)
		switch {
		case err != nil || ctx.Err() != nil:
			return false
		case !woken:
			return true
		}
		if d = interval() - now().Sub(start); d <= 0 {
			return true
		}
	}
}

// sleepOrReset sleeps d, cut short by a signal on reset: woken reports that one came.
func sleepOrReset(ctx context.Context, sleep func(context.Context, time.Duration) error, d time.Duration, reset <-chan struct{}) (woken bool, err error) {
	if reset == nil {
		return false, sleep(ctx, d)
	}
	sctx, cancel := context.WithCancel(ctx)
	got := make(chan bool, 1)
	go func() {
		select {
		case <-reset:
			got <- true
			cancel()
		case <-sctx.Done():
			got <- false
		}
	}()
	err = sleep(sctx, d)
	cancel()
	if woken = <-got; woken && ctx.Err() == nil {
		return true, nil
	}
	return false, err
}

// Wake signals wake (a channel of capacity 1) without blocking: a signal pending already
// stands for this one.
func Wake(wake chan<- struct{}) {
	select {
	case wake <- struct{}{}:
	default:
	}
}

// OnWake runs round after each signal on wake, until stop closes.
func OnWake(stop, wake <-chan struct{}, round func()) {
	for {
		select {
		case <-stop:
			return
		case <-wake:
		}
		round()
	}
}

// TryGates takes a token of limiter (nil: unlimited) at now and a slot of sem (nil:
// unlimited) if both are free at once: a probe must not take what real traffic is waiting
// for. slot reports whether a slot was taken (the caller gives it back); a token taken
// when no slot is free is spent.
func TryGates(limiter *rate.Limiter, sem chan struct{}, now time.Time) (slot, ok bool) {
	if limiter != nil && !limiter.AllowN(now, 1) {
		return false, false
	}
	if sem == nil {
		return false, true
	}
	select {
	case sem <- struct{}{}:
		return true, true
	default:
		return false, false
	}
}

// SetLatest sets off to the latest of the times (unix nanos) the others hold, re-reading
// them until it wins against concurrent writers.
func SetLatest(off *atomic.Int64, others ...*atomic.Int64) {
	for {
		old, want := off.Load(), int64(math.MinInt64)
		for _, o := range others {
			want = max(want, o.Load())
		}
		if old == want || off.CompareAndSwap(old, want) {
			return
		}
	}
}
