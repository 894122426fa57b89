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
	fast := func() { tr.Record(now, now+int64(Instant), false, true); now += int64(time.Millisecond) }
	for i := range Earn {
		if tr.Inline(now) {
			t.Fatalf("inline after %d instant calls, want %d first", i, Earn)
		}
		fast()
	}
	if !tr.Inline(now) {
		t.Fatalf("not inline after %d instant calls", Earn)
	}
	tr.Record(now, now+int64(Instant)+1, false, true) // one slow call
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

// TestTrustIsEarnedByHeedingCalls: an engine whose calls wait (longer than Instant) earns
// inline calls with Earn calls in a row that asked their context for Done and returned by
// their deadline; a slow call that did not ask for Done, a call past its deadline, or an
// alarm finding a call overdue loses them; an instant call that did not ask for Done neither
// earns nor loses them; the stall rule holds for these calls too.
func TestTrustIsEarnedByHeedingCalls(t *testing.T) {
	var tr Trust
	now := int64(time.Hour)
	call := func(watched, onTime bool) {
		tr.Record(now, now+int64(30*time.Millisecond), watched, onTime)
		now += int64(30 * time.Millisecond)
	}
	earn := func(what string) {
		t.Helper()
		for i := range Earn {
			if tr.Inline(now) {
				t.Fatalf("%s: inline after %d heeding calls, want %d first", what, i, Earn)
			}
			call(true, true)
		}
		if !tr.Inline(now) {
			t.Fatalf("%s: not inline after %d heeding calls", what, Earn)
		}
	}
	earn("first")
	tr.Record(now, now+1, false, true) // instant, no Done: neither
	if !tr.Inline(now) {
		t.Fatal("an instant call that did not watch its context lost inline calls")
	}
	for _, lose := range []struct {
		what string
		do   func()
	}{
		{"slow call without Done", func() { call(false, true) }},
		{"call past its deadline", func() { call(true, false) }},
		{"instant call past its deadline", func() { tr.Record(now, now+1, true, false) }},
		{"overdue inline call", tr.Overdue},
	} {
		lose.do()
		if tr.Inline(now) {
			t.Fatalf("inline after: %s", lose.what)
		}
		earn("after: " + lose.what)
	}
	if tr.Inline(now + int64(Stall)) {
		t.Fatalf("inline although no call returned for %v", Stall)
	}
}

// TestInlineContextAlarm: a Context set up with InitInline ends at its deadline by its
// Waiter's alarm, or with its parent; Release reports it reusable once the alarm's function
// cannot touch it (and the next Context is not ended by the old one's alarm); reused, a
// Context whose Done is asked costs one allocation, its channel.
func TestInlineContextAlarm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w Waiter
		var c Context
		c.InitInline(context.Background(), time.Now().Add(time.Second), &w, nil)
		<-c.Done()
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("Err = %v", c.Err())
		}
		synctest.Wait() // the alarm's function returned
		if !c.Release() {
			t.Fatal("not reusable after its alarm fired and returned")
		}
		c.InitInline(context.Background(), time.Now().Add(time.Second), &w, nil)
		<-c.Done()
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("second Context: Err = %v", c.Err())
		}
		c.Release()

		parent, cancel := context.WithCancel(context.Background())
		c.InitInline(parent, time.Now().Add(time.Hour), &w, nil)
		done := c.Done()
		cancel()
		<-done
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("parent canceled: Err = %v", c.Err())
		}
		c.Release()

		c.InitInline(context.Background(), time.Now().Add(time.Second), &w, nil)
		c.Done()
		if !c.Release() {
			t.Fatal("not reusable after a call that returned in time")
		}
		time.Sleep(2 * time.Second) // a stale alarm would end the next Context
		c.InitInline(context.Background(), time.Now().Add(time.Hour), &w, nil)
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
		c.InitInline(context.Background(), time.Now().Add(time.Hour), &w, nil)
		c.Done()
		if !c.Release() {
			t.Fatal("not reusable")
		}
	})
	if allocs > 1 {
		t.Fatalf("%v allocations per inline Context, want 1 (Done's channel)", allocs)
	}
}

// TestAlarmLeftSet: the alarm's timer stays set when a Context is released, and arming it
// for a Context whose deadline is later costs no timer operation: the timer fires at the
// earlier deadline, finds the Context's not passed, and ends the Context at its own. A
// Context whose deadline comes before the one the timer is set for sets it again.
func TestAlarmLeftSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w Waiter
		var c Context
		t0 := time.Now()
		c.InitInline(context.Background(), t0.Add(time.Second), &w, nil)
		c.Done()
		c.Release()
		set := w.alarm.setFor()
		for i := range 5 { // later deadlines: the timer is left as it is
			c.InitInline(context.Background(), t0.Add(time.Duration(i+2)*time.Second), &w, nil)
			c.Done()
			if w.alarm.setFor() != set {
				t.Fatalf("Context %d: the alarm was set again for a later deadline", i)
			}
			if i < 4 {
				c.Release()
			}
		}
		<-c.Done()
		if got, want := time.Since(t0), 6*time.Second; got != want {
			t.Fatalf("the last Context ended after %v, want %v (its deadline)", got, want)
		}
		c.Release()

		c.InitInline(context.Background(), time.Now().Add(time.Hour), &w, nil)
		c.Done()
		c.Release()
		t1 := time.Now()
		c.InitInline(context.Background(), t1.Add(time.Second), &w, nil)
		<-c.Done()
		if got := time.Since(t1); got != time.Second {
			t.Fatalf("a Context with an earlier deadline than the alarm's ended after %v, want 1s", got)
		}
		c.Release()
	})
}

// TestAlarmTellsTrust: when the alarm ends an inline call's Context at its deadline, the
// engine's Trust hears of it (its next calls go to the Runner at once, not when the overdue
// call returns); when the call returned in time, it hears nothing.
func TestAlarmTellsTrust(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tr Trust
		for range Earn { // calls that heed their context
			tr.Record(Now(), Now()+int64(time.Millisecond), true, true)
		}
		var w Waiter
		var c Context
		c.InitInline(context.Background(), time.Now().Add(time.Second), &w, &tr)
		c.Done()
		c.Release()
		time.Sleep(2 * time.Second)          // past the released Context's deadline
		tr.Record(Now(), Now(), false, true) // a call returned at once: not the stall rule
		if !tr.Inline(Now()) {
			t.Fatal("not inline after a call that returned in time")
		}
		c.InitInline(context.Background(), time.Now().Add(time.Second), &w, &tr)
		<-c.Done()
		synctest.Wait()
		tr.Record(Now(), Now(), false, true)
		if tr.Inline(Now()) {
			t.Fatal("inline after the alarm found a call overdue")
		}
		c.Release()
	})
}

// setFor returns the deadline the alarm's timer is set for.
func (a *Alarm) setFor() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.when
}

// TestHeededTrustIsNotInstant: an engine that earned inline calls by heeding its context
// (an HTTP engine: 30ms calls that watched Done and returned in time) runs inline but is
// not instant, so the Client still merges its identical requests into one billed call;
// one whose calls returned within Instant is both.
func TestHeededTrustIsNotInstant(t *testing.T) {
	var heeding, computing Trust
	now := int64(time.Hour)
	for i := range Earn {
		end := now + int64(i)*int64(time.Millisecond)
		heeding.Record(end-int64(30*time.Millisecond), end, true, true)
		computing.Record(end-int64(time.Microsecond), end, false, true)
	}
	at := now + int64(Earn)*int64(time.Millisecond)
	got := [4]bool{heeding.Inline(at), heeding.Instant(at), computing.Inline(at), computing.Instant(at)}
	if want := [4]bool{true, false, true, true}; got != want {
		t.Errorf("heeding inline, instant; computing inline, instant = %v, want %v", got, want)
	}
}
