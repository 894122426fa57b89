package lazyctx

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

type ctxKey struct{}

// wait is the translate package's bound on a Store call.
const wait = 250 * time.Millisecond

// TestEndsAtItsDeadline: a Store that waits on the call's context is released at
// the deadline (DeadlineExceeded), sees the request's values but not its cancellation, and
// a context nobody waited on costs no timer.
func TestEndsAtItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
		start := time.Now()
		c := New(parent, start.Add(wait))
		cancel() // the request ends: a settlement still goes on
		if v, _ := c.Value(ctxKey{}).(string); v != "v" {
			t.Errorf("Value = %q, want the parent's", v)
		}
		if d, ok := c.Deadline(); !ok || !d.Equal(start.Add(wait)) {
			t.Errorf("Deadline = %v %v, want %v", d, ok, start.Add(wait))
		}
		if c.timer != nil {
			t.Error("a timer before anyone asked for Done")
		}
		if err := c.Err(); err != nil {
			t.Fatalf("Err before the deadline = %v", err)
		}
		<-c.Done()
		if got := time.Since(start); got != wait {
			t.Errorf("Done after %v, want %v", got, wait)
		}
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Err = %v, want DeadlineExceeded", err)
		}
		c.Release()
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Err after release = %v, want DeadlineExceeded still", err)
		}
	})
}

// TestReleaseCancels: release ends the context like a cancel function, whether or
// not Done was asked for, and stops the timer (no goroutine or timer left behind).
func TestReleaseCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		waited := New(nil, time.Now().Add(time.Hour))
		child, stop := context.WithTimeout(waited, time.Minute) // as a Store that calls Redis does
		defer stop()
		waited.Release()
		<-child.Done() // at once, not after a minute
		if err := child.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("child Err = %v, want Canceled", err)
		}
		idle := New(nil, time.Now().Add(time.Hour))
		idle.Release()
		select {
		case <-idle.Done():
		default:
			t.Error("Done after release is open")
		}
		if err := idle.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err = %v, want Canceled", err)
		}
		synctest.Wait()
	})
}

// TestAfterFunc: a context derived from the Store's (context.WithTimeout in a
// Store) is ended through AfterFunc, without a goroutine waiting on Done; a stopped
// function never runs, the others run once the context ends.
func TestAfterFunc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New(nil, time.Now().Add(time.Hour))
		var ran, stopped bool
		stop := context.AfterFunc(c, func() { stopped = true })
		context.AfterFunc(c, func() { ran = true })
		if len(c.after) != 2 {
			t.Fatalf("%d functions registered with AfterFunc, want 2 (context.AfterFunc uses it)", len(c.after))
		}
		if !stop() {
			t.Error("stop before the end = false, want true")
		}
		c.Release()
		synctest.Wait()
		if !ran || stopped {
			t.Errorf("after release: ran %v, stopped one ran %v; want true, false", ran, stopped)
		}
		late := false
		context.AfterFunc(c, func() { late = true })
		synctest.Wait()
		if !late {
			t.Error("a function registered after the end never ran")
		}
	})
}
