package longtext

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestLimits(t *testing.T) {
	for _, tc := range []struct {
		maxCall, maxText, maxTexts int
		text, call                 int
	}{
		{0, 0, 0, 0, 0},
		{1000, 0, 5, 1000, 1000},
		{1000, 300, 5, 300, 1000},
		{200, 300, 5, 200, 200},
		{0, 300, 5, 300, 1500},
		{0, 300, 0, 300, 300},
		{0, math.MaxInt32, 2, math.MaxInt32, 0},
		{0, math.MaxInt32 / 2, 2, math.MaxInt32 / 2, math.MaxInt32 / 2 * 2},
	} {
		if got := TextChars(tc.maxText, tc.maxCall); got != tc.text {
			t.Errorf("TextChars(%d, %d) = %d, want %d", tc.maxText, tc.maxCall, got, tc.text)
		}
		if got := CallChars(tc.maxCall, tc.maxText, tc.maxTexts); got != tc.call {
			t.Errorf("CallChars(%d, %d, %d) = %d, want %d", tc.maxCall, tc.maxText, tc.maxTexts, got, tc.call)
		}
	}
}

// Every unit runs once, never more than conc at a time.
func TestRunAll(t *testing.T) {
	for _, conc := range []int{0, 1, 3, 50} {
		synctest.Test(t, func(t *testing.T) {
			const n = 20
			var mu sync.Mutex
			counts := make([]int, n)
			var running, most atomic.Int64
			Run(t.Context(), n, conc, func(ctx context.Context, i int) bool {
				most.Store(max(most.Load(), running.Add(1)))
				time.Sleep(time.Second) // on the bubble's clock: the others start, if they may
				running.Add(-1)
				mu.Lock()
				counts[i]++
				mu.Unlock()
				return true
			})
			want := make([]int, n)
			for i := range want {
				want[i] = 1
			}
			if diff := cmp.Diff(want, counts); diff != "" {
				t.Errorf("conc %d: runs per unit (-want +got):\n%s", conc, diff)
			}
			if limit := max(1, min(conc, n)); most.Load() != int64(limit) {
				t.Errorf("conc %d: at most %d at a time, want %d", conc, most.Load(), limit)
			}
		})
	}
}

// A failed unit cancels those running and starts no more; so does the caller's ctx.
func TestRunStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var started atomic.Int64
		var cancelled atomic.Bool
		zero := make(chan struct{}) // unit 0 is running
		Run(t.Context(), 100, 2, func(ctx context.Context, i int) bool {
			started.Add(1)
			switch i {
			case 0:
				close(zero)
				<-ctx.Done() // the other unit's failure ends it
				cancelled.Store(true)
			case 3:
				<-zero // fail only once unit 0 runs: a unit not started yet never starts
				return false
			}
			return true
		})
		if started.Load() != 4 || !cancelled.Load() {
			t.Errorf("started %d units (want 4), running one cancelled: %v", started.Load(), cancelled.Load())
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		ran := false
		Run(ctx, 10, 2, func(context.Context, int) bool { ran = true; return true })
		if ran {
			t.Error("a unit ran after ctx ended")
		}
	})
}

func TestCursor(t *testing.T) {
	c := NewCursor("a")
	if got := c.Load(); got != "a" {
		t.Errorf("Load = %q, want a", got)
	}
	c.Update(func(s *string) { *s += "b" })
	if got := c.Load(); got != "ab" {
		t.Errorf("Load after Update = %q, want ab", got)
	}
	if c.Err() != nil {
		t.Errorf("Err = %v before any Fail", c.Err())
	}
	first := errors.New("first")
	c.Fail(first)
	c.Fail(errors.New("second"))
	if c.Err() != first {
		t.Errorf("Err = %v, want the first", c.Err())
	}
}

// The cursor is safe for concurrent use (run with -race).
func TestCursorConcurrent(t *testing.T) {
	var c Cursor[int]
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				c.Update(func(s *int) { *s++ })
				_ = c.Load()
				c.Fail(errors.New("x"))
			}
		}()
	}
	wg.Wait()
	if got := c.Load(); got != 800 {
		t.Errorf("Load = %d after 800 updates", got)
	}
}

func TestSum(t *testing.T) {
	parts := []Part[string]{
		{Text: "a", By: []string{"x"}, Cost: 1, Attempts: []string{"x1"}, Ended: 5},
		{Text: "b", By: []string{"x", "y"}, Cost: 2, Source: "en", Attempts: []string{"x2", "y1"}, Degraded: true, Ended: 9},
		{Text: "c", By: []string{"y"}, Cost: 0.5, Source: "fr", Ended: 7},
	}
	want := Total[string]{Texts: []string{"a", "b", "c"}, By: []string{"x", "x", "y", "y"}, Cost: 3.5, Source: "en",
		Attempts: []string{"before", "x1", "x2", "y1"}, Degraded: true, Ended: 9}
	if diff := cmp.Diff(want, Sum(parts, []string{"before"})); diff != "" {
		t.Errorf("Sum (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Total[string]{Texts: []string{}, By: []string{}}, Sum[string](nil, nil), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Sum of none (-want +got):\n%s", diff)
	}
}
