// Package clock holds Coarse, a clock read from an atomic that a goroutine refreshes every
// few milliseconds.
//
// It exists because reading the system clock costs 60-100ns on cloud VMs (where the
// hypervisor's clock source often makes the vDSO fall back to a system call), more than a
// whole cache hit. Consumers that think in seconds — cache expiry, health folds, breaker
// cooldowns, quota periods, the budget day, the request-id window — read a 5ms-refreshed
// atomic instead: one load, under a nanosecond. Latencies and deadlines need real readings
// and must not use it. BenchmarkCoarseNow and BenchmarkTimeNow measure the difference.
package clock

import (
	"sync"
	"sync/atomic"
	"time"
)

// DefaultTick is the refresh interval NewCoarse uses for a tick of 0 or less.
const DefaultTick = 5 * time.Millisecond

// Coarse is a clock refreshed every tick by its own goroutine. Now is safe for concurrent
// use and costs one atomic load. Its readings are the wall clock at NewCoarse plus the
// monotonic time elapsed since, as of the latest tick: they never go backwards and do not
// follow steps of the wall clock, and they lag the true time by up to a tick (more when the
// process is starved of CPU). The zero value is not usable: call NewCoarse, and Stop when
// done.
type Coarse struct {
	now  atomic.Int64 // unix nanos
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// NewCoarse returns a Coarse refreshed every tick (DefaultTick when tick <= 0) and starts
// the goroutine that refreshes it; Stop stops it.
func NewCoarse(tick time.Duration) *Coarse {
	if tick <= 0 {
		tick = DefaultTick
	}
	start := time.Now()
	wall := start.UnixNano() // start.Sub below reads the monotonic clock
	c := &Coarse{stop: make(chan struct{}), done: make(chan struct{})}
	c.now.Store(wall)
	go c.run(tick, start, wall)
	return c
}

func (c *Coarse) run(tick time.Duration, start time.Time, wall int64) {
	defer close(c.done)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			c.now.Store(wall + int64(now.Sub(start)))
		case <-c.stop:
			return
		}
	}
}

// Now returns the latest reading in unix nanoseconds. After Stop it keeps returning the
// last one.
func (c *Coarse) Now() int64 { return c.now.Load() }

// Stop stops the refreshing goroutine and waits for it to end. It is safe to call more than
// once and from several goroutines.
func (c *Coarse) Stop() {
	c.once.Do(func() { close(c.stop) })
	<-c.done
}
