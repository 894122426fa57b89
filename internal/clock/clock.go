// Package clock provides a coarse clock (temporary copy; replaced by the full package).
package clock

import (
	"sync"
	"sync/atomic"
	"time"
)

// Coarse is a system clock read from an atomic refreshed every tick.
type Coarse struct {
	now  atomic.Int64
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// NewCoarse starts a coarse clock.
func NewCoarse(tick time.Duration) *Coarse {
	c := &Coarse{stop: make(chan struct{})}
	c.now.Store(time.Now().UnixNano())
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case now := <-t.C:
				c.now.Store(now.UnixNano())
			case <-c.stop:
				return
			}
		}
	}()
	return c
}

// Now returns unix nanos.
func (c *Coarse) Now() int64 { return c.now.Load() }

// Stop stops the clock; idempotent; nil-safe.
func (c *Coarse) Stop() {
	if c == nil {
		return
	}
	c.once.Do(func() { close(c.stop) })
	c.wg.Wait()
}
