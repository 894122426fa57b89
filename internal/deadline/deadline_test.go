package deadline

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNoTimerUntilDone(t *testing.T) {
	c := New(context.Background(), time.Now().Add(time.Hour))
	if c.timer != nil || c.state.Load() != chanNone {
		t.Fatal("armed before Done was asked")
	}
	if err := c.Err(); err != nil {
		t.Fatalf("Err = %v", err)
	}
	c.Release()
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("after Release Err = %v", c.Err())
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done not closed after Release")
	}
}

func TestReuseOnlyWhenNeverArmed(t *testing.T) {
	c := New(context.Background(), time.Now().Add(time.Hour))
	if !c.Release() {
		t.Fatal("an unarmed, released context is not reusable")
	}
	c.Init(context.Background(), time.Now().Add(time.Hour))
	if c.Err() != nil {
		t.Fatalf("after Init Err = %v", c.Err())
	}
	select {
	case <-c.Done():
		t.Fatal("Done closed after Init") // (asking for Done armed the timer)
	default:
	}
	if c.Release() {
		t.Fatal("an armed context is reusable")
	}
}

func TestDeadlineFiresWhenWaitedOn(t *testing.T) {
	c := New(context.Background(), time.Now().Add(20*time.Millisecond))
	defer c.Release()
	<-c.Done() // returns once the deadline passes
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err = %v", c.Err())
	}
}

func TestErrReportsPassedDeadlineWithoutDone(t *testing.T) {
	c := New(context.Background(), time.Now().Add(-time.Millisecond))
	defer c.Release()
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err = %v", c.Err())
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done of a passed deadline is not closed")
	}
}

func TestParentCancelAndEarlierParentDeadline(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	c := New(parent, time.Now().Add(time.Hour))
	defer c.Release()
	done := c.Done()
	cancel()
	<-done
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("Err = %v", c.Err())
	}

	pd := time.Now().Add(time.Minute)
	p2, cancel2 := context.WithDeadline(context.Background(), pd)
	defer cancel2()
	c2 := New(p2, time.Now().Add(time.Hour))
	defer c2.Release()
	if d, _ := c2.Deadline(); !d.Equal(pd) {
		t.Fatalf("Deadline = %v, want the parent's %v", d, pd)
	}
	if c2.Value("k") != nil {
		t.Fatal("unexpected value")
	}
}

func TestDerivedContextsFollowWithoutGoroutines(t *testing.T) {
	c := New(context.Background(), time.Now().Add(time.Hour))
	child, cancel := context.WithCancel(c)
	defer cancel()
	c.Release()
	<-child.Done()
	if !errors.Is(child.Err(), context.Canceled) {
		t.Fatalf("child Err = %v", child.Err())
	}
	// AfterFunc after the end runs at once; stop after registration reports it.
	ran := make(chan struct{})
	c.AfterFunc(func() { close(ran) })
	<-ran
	c2 := New(context.Background(), time.Now().Add(time.Hour))
	stop := c2.AfterFunc(func() { t.Error("stopped func ran") })
	if !stop() {
		t.Fatal("stop = false before the end")
	}
	c2.Release()
}

// TestWatchedReusableAfterDone: a watched Context arms nothing when Done is asked, so once
// its call returned it may be set up again, its Done closed at Release and a new one made
// after; one that still had an AfterFunc registered at Release may not (the function may
// read it later).
func TestWatchedReusableAfterDone(t *testing.T) {
	var c Context
	c.InitWatched(context.Background(), time.Now().Add(time.Hour))
	first := c.Done()
	if c.timer != nil || c.stopParent != nil {
		t.Fatal("a watched context armed a timer or followed its parent")
	}
	if !c.Release() {
		t.Fatal("a watched context whose Done was asked is not reusable after Release")
	}
	select {
	case <-first:
	default:
		t.Fatal("Done not closed after Release")
	}
	c.InitWatched(context.Background(), time.Now().Add(time.Hour))
	if c.Err() != nil {
		t.Fatalf("after InitWatched Err = %v", c.Err())
	}
	select {
	case <-c.Done():
		t.Fatal("Done of the reused context is already closed")
	default:
	}
	ran := make(chan struct{})
	c.AfterFunc(func() { close(ran) })
	if c.Release() {
		t.Fatal("a watched context with an AfterFunc registered at Release is reusable")
	}
	<-ran
	c.InitWatched(context.Background(), time.Now().Add(time.Hour))
	stop := c.AfterFunc(func() {})
	stop()
	if !c.Release() {
		t.Fatal("a watched context whose AfterFunc was stopped is not reusable")
	}
}

// TestAfterFuncCheap: a context derived from a watched Context (as net/http derives one for
// every request) costs the Context two allocations, its Done channel and the stop function,
// and a stale stop from before a reuse finds nothing.
func TestAfterFuncCheap(t *testing.T) {
	var c Context
	f := func() { t.Error("a stopped func ran") }
	allocs := testing.AllocsPerRun(100, func() {
		c.InitWatched(context.Background(), time.Now().Add(time.Hour))
		stop := c.AfterFunc(f)
		if !stop() {
			t.Error("stop = false before the end")
		}
		if !c.Release() {
			t.Error("not reusable after its AfterFunc was stopped")
		}
	})
	if allocs > 2 {
		t.Errorf("InitWatched, AfterFunc, stop, Release: %.1f allocations, want at most 2", allocs)
	}
	c.InitWatched(context.Background(), time.Now().Add(time.Hour))
	stale := c.AfterFunc(func() {})
	c.Release()
	c.InitWatched(context.Background(), time.Now().Add(time.Hour))
	ran := make(chan struct{})
	c.AfterFunc(func() { close(ran) })
	if stale() {
		t.Error("a stop from before the reuse found a registration")
	}
	c.Release()
	<-ran
}
