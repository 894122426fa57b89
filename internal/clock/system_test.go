package clock

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestSystemSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		canceled, cancel := context.WithCancel(context.Background())
		cancel()
		for _, tc := range []struct {
			name string
			ctx  context.Context
			d    time.Duration
			want error
			took time.Duration
		}{
			{"waits d", context.Background(), time.Minute, nil, time.Minute},
			{"not positive", context.Background(), -time.Second, nil, 0},
			{"not positive, canceled", canceled, 0, context.Canceled, 0},
			{"canceled", canceled, time.Hour, context.Canceled, 0},
		} {
			start := time.Now()
			err := System{}.Sleep(tc.ctx, tc.d)
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Errorf("%s: Sleep = %v, want %v", tc.name, err, tc.want)
			}
			if took := time.Since(start); took != tc.took {
				t.Errorf("%s: Sleep took %v, want %v", tc.name, took, tc.took)
			}
		}
	})
}

// TestSystemSleepNotPositive: a canceled ctx wins over a wait of 0 every time (a timer of 0
// would race it).
func TestSystemSleepNotPositive(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 100 {
		if err := (System{}).Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
			t.Fatalf("Sleep(canceled, 0) = %v, want Canceled", err)
		}
	}
}

func TestSystemSleepStopsAtCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		if err := (System{}).Sleep(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Sleep = %v, want DeadlineExceeded", err)
		}
		if took := time.Since(start); took != time.Second {
			t.Errorf("Sleep took %v, want 1s", took)
		}
	})
}

func TestSystemNow(t *testing.T) {
	before := time.Now()
	got := System{}.Now()
	if got.Before(before) || got.After(time.Now()) {
		t.Errorf("Now() = %v, not between the readings around it", got)
	}
}
