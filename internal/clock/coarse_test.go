package clock

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNowStartsAtTheWallClock(t *testing.T) {
	before := time.Now().UnixNano()
	c := NewCoarse(time.Hour) // no tick during the test
	defer c.Stop()
	after := time.Now().UnixNano()
	if got := c.Now(); got < before || got > after {
		t.Fatalf("Now() = %d, want within [%d, %d]", got, before, after)
	}
}

func TestNowAdvancesAndNeverGoesBack(t *testing.T) {
	c := NewCoarse(time.Millisecond)
	defer c.Stop()
	first := c.Now()
	prev, changes := first, 0
	timeout := time.After(10 * time.Second)
	for changes < 3 {
		select {
		case <-timeout:
			t.Fatalf("Now changed %d times in 10s with a 1ms tick", changes)
		default:
		}
		now := c.Now()
		if now < prev {
			t.Fatalf("Now went back from %d to %d", prev, now)
		}
		if now > prev {
			changes++
		}
		prev = now
		runtime.Gosched()
	}
	if real := time.Now().UnixNano(); prev > real {
		t.Fatalf("Now() = %d is ahead of time.Now() = %d", prev, real)
	}
}

func TestStopIsIdempotentAndConcurrent(t *testing.T) {
	c := NewCoarse(time.Millisecond)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(c.Stop)
	}
	wg.Wait()
	select {
	case <-c.done:
	default:
		t.Fatal("Stop returned before the goroutine ended")
	}
	c.Stop()
	last := c.Now()
	if c.Now() != last {
		t.Fatal("Now changed after Stop")
	}
	// goleak (TestMain) checks that the goroutine has ended.
}

func TestStopWaitsForTheGoroutine(t *testing.T) {
	for range 20 {
		c := NewCoarse(time.Hour)
		c.Stop()
		select {
		case <-c.done:
		default:
			t.Fatal("Stop returned before the goroutine ended")
		}
	}
}

func TestZeroTickUsesDefault(t *testing.T) {
	c := NewCoarse(0)
	defer c.Stop()
	if c.Now() == 0 {
		t.Fatal("Now() = 0")
	}
}

func BenchmarkCoarseNow(b *testing.B) {
	c := NewCoarse(DefaultTick)
	defer c.Stop()
	var sink int64
	for b.Loop() {
		sink += c.Now()
	}
	_ = sink
}

// BenchmarkTimeNow is the plain version Coarse replaces.
func BenchmarkTimeNow(b *testing.B) {
	var sink int64
	for b.Loop() {
		sink += time.Now().UnixNano()
	}
	_ = sink
}

func BenchmarkCoarseNowParallel(b *testing.B) {
	c := NewCoarse(DefaultTick)
	defer c.Stop()
	b.RunParallel(func(pb *testing.PB) {
		var sink int64
		for pb.Next() {
			sink += c.Now()
		}
		_ = sink
	})
}

func BenchmarkTimeNowParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		var sink int64
		for pb.Next() {
			sink += time.Now().UnixNano()
		}
		_ = sink
	})
}
