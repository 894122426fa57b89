package gate

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// waiting calls g.Wait(ctx) in a goroutine; returned reports whether it has returned, once
// every goroutine of the bubble is blocked.
func waiting(t *testing.T, g *Gate, ctx context.Context) (returned func() bool) {
	t.Helper()
	ch := make(chan struct{})
	go func() { g.Wait(ctx); close(ch) }()
	return func() bool {
		synctest.Wait()
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
}

func TestOpenGateDoesNotWait(t *testing.T) {
	g := New(time.Second)
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { g.Wait(ctx) }); n != 0 {
		t.Errorf("Wait on an open Gate allocates %v times, want 0", n)
	}
	g.Close()
	g.Open()
	g.Wait(ctx) // opened again: returns at once (a test timeout otherwise)
}

func TestClosedGateWaitsForOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(time.Second)
		g.Close()
		g.Close() // closing a closed Gate keeps it closed
		returned := waiting(t, g, context.Background())
		if returned() {
			t.Fatal("Wait returned while the Gate was closed")
		}
		g.Open()
		if !returned() {
			t.Fatal("Wait did not return when the Gate opened")
		}
		g.Open() // opening an open Gate does nothing
	})
}

func TestGateOpensAfterItsHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(20 * time.Millisecond)
		g.Close()
		t0 := time.Now()
		returned := waiting(t, g, context.Background())
		time.Sleep(19 * time.Millisecond)
		if returned() {
			t.Fatal("Wait returned before the hold passed")
		}
		time.Sleep(time.Millisecond)
		if !returned() {
			t.Fatal("Wait did not return when the hold passed")
		}
		if got := time.Since(t0); got != 20*time.Millisecond {
			t.Errorf("waited %v, want the hold, 20ms", got)
		}
		// The next closing has a hold of its own, and an Open before it stops the timer.
		g.Close()
		g.Open()
		g.Close()
		returned = waiting(t, g, context.Background())
		time.Sleep(19 * time.Millisecond)
		if returned() {
			t.Fatal("a closing ended by the hold of the one before")
		}
		g.Open()
	})
}

func TestWaitHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(time.Hour)
		g.Close()
		ctx, cancel := context.WithCancel(context.Background())
		returned := waiting(t, g, ctx)
		if returned() {
			t.Fatal("Wait returned with ctx alive and the Gate closed")
		}
		cancel()
		if !returned() {
			t.Fatal("Wait did not return when ctx was canceled")
		}
		g.Open()
	})
}

// TestCloseAllocatesNothing: a writer that allocated to close the Gate could wait for the
// collector before the Gate held anyone back, which is what the Gate is for.
func TestCloseAllocatesNothing(t *testing.T) {
	g := New(time.Hour)
	var n float64
	for range 10 {
		n += testing.AllocsPerRun(1, g.Close)
		g.Open()
	}
	if n != 0 {
		t.Errorf("Close allocated %v times in 10 closings, want 0", n)
	}
}
