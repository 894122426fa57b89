package deadline

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestTrustIsEarnedAndLost: an engine's calls run inline only after Earn calls in a row
// returned within Instant; one slow call (inline or not) sends the next back to the Runner
// until Earn more; and while no call returned within Instant for Stall, calls go to the
// Runner (a hung inline call does not draw every later caller in). Now's origin may lie
// after the calls' times (a synctest bubble's clock is older than the process's).
func TestTrustIsEarnedAndLost(t *testing.T) {
	for _, origin := range []time.Duration{time.Hour, -26 * 365 * 24 * time.Hour} {
		trustEarnedAndLost(t, int64(origin))
	}
}

func trustEarnedAndLost(t *testing.T, now int64) {
	var tr Trust
	fast := func() { tr.Record(now, now+int64(Instant)); now += int64(time.Millisecond) }
	for i := range Earn {
		if tr.Inline(now) {
			t.Fatalf("inline after %d instant calls, want %d first", i, Earn)
		}
		fast()
	}
	if !tr.Inline(now) {
		t.Fatalf("not inline after %d instant calls", Earn)
	}
	tr.Record(now, now+int64(Instant)+1) // one slow call
	if tr.Inline(now) {
		t.Fatal("inline after a slow call")
	}
	for range Earn - 1 {
		fast()
	}
	if tr.Inline(now) {
		t.Fatal("inline before earning it again")
	}
	fast()
	if !tr.Inline(now) {
		t.Fatal("not inline after earning it again")
	}
	if tr.Inline(now + int64(Stall)) {
		t.Fatalf("inline although no call returned for %v", Stall)
	}
	fast()
	if !tr.Inline(now) {
		t.Fatal("not inline once a call returned at once again")
	}
}

// TestInlineContextAlarm: a Context set up with InitInline ends at its deadline by its
// Waiter's alarm, or with its parent; Release reports it reusable unless the alarm fired
// (the alarm then drops its timer, and the next Context is not ended by the old one);
// reused, a Context whose Done is asked costs one allocation, its channel.
func TestInlineContextAlarm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w Waiter
		var c Context
		c.InitInline(context.Background(), time.Now().Add(time.Second), &w)
		<-c.Done()
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("Err = %v", c.Err())
		}
		if c.Release() {
			t.Fatal("reusable after its alarm fired")
		}
		c.InitInline(context.Background(), time.Now().Add(time.Second), &w)
		<-c.Done()
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("second Context: Err = %v", c.Err())
		}
		c.Release()

		parent, cancel := context.WithCancel(context.Background())
		c.InitInline(parent, time.Now().Add(time.Hour), &w)
		done := c.Done()
		cancel()
		<-done
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("parent canceled: Err = %v", c.Err())
		}
		c.Release()

		c.InitInline(context.Background(), time.Now().Add(time.Second), &w)
		<-c.Done()
		c.Release()
		c.InitInline(context.Background(), time.Now().Add(time.Second), &w)
		c.Done()
		if !c.Release() {
			t.Fatal("not reusable after a call that returned in time")
		}
		time.Sleep(2 * time.Second) // a stale alarm would end the next Context
		c.InitInline(context.Background(), time.Now().Add(time.Hour), &w)
		c.Done()
		time.Sleep(2 * time.Second)
		if c.Err() != nil {
			t.Fatalf("a reused Context ended early: %v", c.Err())
		}
		c.Release()
	})
	var w Waiter
	var c Context
	allocs := testing.AllocsPerRun(100, func() {
		c.InitInline(context.Background(), time.Now().Add(time.Hour), &w)
		c.Done()
		if !c.Release() {
			t.Fatal("not reusable")
		}
	})
	if allocs > 1 {
		t.Fatalf("%v allocations per inline Context, want 1 (Done's channel)", allocs)
	}
}
