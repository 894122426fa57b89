package recovery

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"
)

func TestPace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waits []time.Duration
	rounds, next := 0, time.Duration(1)
	sleep := func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		if len(waits) == 4 {
			return errors.New("ctx ended")
		}
		return nil
	}
	interval := func() time.Duration { next *= 2; return next }
	Pace(ctx, time.Now, sleep, interval, nil, func(context.Context) { rounds++ })
	if diff := cmp.Diff([]time.Duration{2, 4, 8, 16}, waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if rounds != 3 {
		t.Errorf("%d rounds, want 3 (none after the failed wait)", rounds)
	}
	cancel()
	rounds = 0
	Pace(ctx, time.Now, func(context.Context, time.Duration) error { return nil }, interval, nil, func(context.Context) { rounds++ })
	if rounds != 0 {
		t.Errorf("%d rounds after ctx ended, want 0", rounds)
	}
}

func TestWakeOnWake(t *testing.T) {
	stop, wake := make(chan struct{}), make(chan struct{}, 1)
	Wake(wake)
	Wake(wake) // never blocks: the pending signal stands for it
	rounds := 0
	OnWake(stop, wake, func() {
		if rounds++; rounds == 1 {
			close(stop)
		}
	})
	if rounds != 1 {
		t.Errorf("%d rounds, want 1", rounds)
	}
}

func TestTryGates(t *testing.T) {
	now := time.Unix(100, 0)
	type got struct{ Slot, OK bool }
	full := make(chan struct{}, 1)
	full <- struct{}{}
	cases := []struct {
		name    string
		limiter *rate.Limiter
		sem     chan struct{}
		want    got
		tokens  float64 // left after the call
	}{
		{"unlimited", nil, nil, got{false, true}, 0},
		{"token and slot", rate.NewLimiter(1, 2), make(chan struct{}, 1), got{true, true}, 1},
		{"no token", rate.NewLimiter(1, 0), make(chan struct{}, 1), got{false, false}, 0},
		{"no slot", rate.NewLimiter(1, 2), full, got{false, false}, 1},
	}
	for _, tc := range cases {
		slot, ok := TryGates(tc.limiter, tc.sem, now)
		if diff := cmp.Diff(tc.want, got{slot, ok}); diff != "" {
			t.Errorf("%s: TryGates (-want +got):\n%s", tc.name, diff)
		}
		if tc.limiter != nil && tc.limiter.TokensAt(now) != tc.tokens {
			t.Errorf("%s: %v tokens left, want %v", tc.name, tc.limiter.TokensAt(now), tc.tokens)
		}
	}
}

func TestSetLatest(t *testing.T) {
	cases := []struct {
		off, a, b, want int64
	}{
		{0, 5, 3, 5},
		{9, 5, 3, 5}, // lowered: a hold ended
		{0, 0, 0, 0},
		{0, -4, -7, -4},
		{1, 2, math.MaxInt64, math.MaxInt64},
	}
	for _, tc := range cases {
		var off, a, b atomic.Int64
		off.Store(tc.off)
		a.Store(tc.a)
		b.Store(tc.b)
		SetLatest(&off, &a, &b)
		if got := off.Load(); got != tc.want {
			t.Errorf("SetLatest(%d; %d, %d) = %d, want %d", tc.off, tc.a, tc.b, got, tc.want)
		}
	}
}

// TestPaceReset: a signal on reset makes Pace read the interval again: a shorter one runs
// the round once it has passed since the wait began (at once when it already has), and
// resets more frequent than the interval do not hold the rounds back. Virtual time.
func TestPaceReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		var every atomic.Int64
		every.Store(int64(24 * time.Hour))
		reset := make(chan struct{}, 1)
		var rounds []time.Duration
		done := make(chan struct{})
		go func() {
			defer close(done)
			Pace(ctx, time.Now, timerSleep, func() time.Duration { return time.Duration(every.Load()) }, reset,
				func(context.Context) { rounds = append(rounds, time.Since(start)) })
		}()
		const h, m = time.Hour, time.Minute
		set := func(at, d time.Duration) {
			time.Sleep(at - time.Since(start))
			every.Store(int64(d))
			Wake(reset)
		}
		set(10*m, h)        // 24h -> 1h 10m into the wait: the round at 1h, then 2h
		set(2*h+30*m, 10*m) // 1h -> 10m 30m into a wait: the round at once, then 10m later
		set(2*h+45*m, h)    // 10m -> 1h 5m into a wait: the round 1h after it began
		for at := 2*h + 55*m; at < 6*h; at += 10 * m {
			set(at, h) // resets more frequent than the interval
		}
		time.Sleep(6*h - time.Since(start))
		cancel()
		<-done
		want := []time.Duration{h, 2 * h, 2*h + 30*m, 2*h + 40*m, 3*h + 40*m, 4*h + 40*m, 5*h + 40*m}
		if diff := cmp.Diff(want, rounds); diff != "" {
			t.Errorf("rounds at (-want +got):\n%s", diff)
		}
	})
}

// timerSleep sleeps d on a timer, or until ctx ends.
func timerSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
