package recovery

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Pace runs round every interval() (read before each wait) until ctx ends: sleep waits on
// the caller's clock and returns an error when ctx ends first.
func Pace(ctx context.Context, sleep func(context.Context, time.Duration) error, interval func() time.Duration, round func(context.Context)) {
	for {
		if err := sleep(ctx, interval()); err != nil || ctx.Err() != nil {
			return
		}
		round(ctx)
	}
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
