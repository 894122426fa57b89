package deadline

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestApartAbandonsACallThatIgnoresCtx: a call that returns at ctx's end is waited for and
// not counted; one that ignores ctx is abandoned after the grace, counted until it returns.
func TestApartAbandonsACallThatIgnoresCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var count atomic.Int32
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		heeds := func() (int, error) { <-ctx.Done(); return 1, ctx.Err() }
		if _, left, err := Apart(ctx, time.Second, &count, heeds); left || !errors.Is(err, context.DeadlineExceeded) || count.Load() != 0 {
			t.Fatalf("a call that heeds ctx: left %v, err %v, count %d; want false, DeadlineExceeded, 0", left, err, count.Load())
		}
		release := make(chan struct{})
		ignores := func() (int, error) { <-release; return 2, nil }
		start := time.Now()
		if _, left, err := Apart(ctx, time.Second, &count, ignores); !left || err == nil || count.Load() != 1 {
			t.Fatalf("a call that ignores ctx: left %v, err %v, count %d; want true, an error, 1", left, err, count.Load())
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("abandoned after %v, want the grace (1s)", d)
		}
		close(release)
		synctest.Wait()
		if n := count.Load(); n != 0 {
			t.Errorf("count after the abandoned call returned = %d, want 0", n)
		}
		if out, left, err := Apart(context.Background(), time.Second, &count, ignores); out != 2 || left || err != nil {
			t.Errorf("a call in time = %d %v %v, want 2 false nil", out, left, err)
		}
	})
}
