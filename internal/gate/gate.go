// Package gate holds new requests back, briefly, while a writer works.
//
// A Client's Reconfigure competes for the CPU with the requests it changes the rules for.
// On a machine whose cores the callers keep busy (engines that answer in process, callers
// that never wait), the goroutine running Reconfigure queues behind every runnable caller
// each time it yields: at each allocation the collector makes it help with, at each lock.
// A Reconfigure that costs 35µs of CPU took 0.1-2s that way under 64 such callers. A Gate
// gives the writer priority, as a writer-preferring lock does: while it is closed, requests
// that arrive park until it opens, the runnable callers drain away, and the writer has the
// cores. The hold is bounded: a Gate opens by itself after the hold given to New, whatever
// the writer is doing, so a slow writer delays requests by at most that.
package gate

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Gate is a writer-priority barrier with a bounded hold. Its zero value is not usable; call
// New. It is safe for concurrent use. An open Gate costs a request one atomic load.
type Gate struct {
	// state is the channel a request waits on: opened while the Gate is open, else the
	// closing's channel, closed when the Gate opens. A channel in an atomic.Value is stored
	// without an allocation.
	state  atomic.Value
	opened chan struct{} // closed at New
	mu     sync.Mutex    // serialises Close, Open and the timer
	spare  chan struct{} // the next closing's, made while the Gate is closed
	timer  *time.Timer
	hold   time.Duration
}

// New returns an open Gate that, once closed, opens by itself after hold.
func New(hold time.Duration) *Gate {
	g := &Gate{hold: hold, opened: make(chan struct{}), spare: make(chan struct{})}
	close(g.opened)
	g.state.Store(g.opened)
	g.timer = time.AfterFunc(hold, g.expire)
	g.timer.Stop()
	return g
}

// Closed reports whether the Gate is closed: whether Wait would wait.
func (g *Gate) Closed() bool { return g.state.Load().(chan struct{}) != g.opened }

// Wait returns at once when the Gate is open. Otherwise it returns when the Gate opens (the
// writer is done, or the hold has passed) or ctx is done, whichever comes first.
func (g *Gate) Wait(ctx context.Context) {
	ch := g.state.Load().(chan struct{})
	if ch == g.opened {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// Close closes the Gate for at most its hold; a closed Gate stays closed. It allocates
// nothing, so that it cannot wait for the collector.
func (g *Gate) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.Closed() {
		return
	}
	g.state.Store(g.spare)
	g.timer.Reset(g.hold)
}

// Open opens the Gate and releases the requests waiting at it. Opening an open Gate does
// nothing.
func (g *Gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.timer.Stop()
	g.open()
}

// expire opens the Gate when its hold has passed: g.timer's function. A timer that fires
// as the writer opens the Gate and closes it again may open the later closing early: the
// Gate errs on the side of letting requests through.
func (g *Gate) expire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open()
}

// open opens a closed Gate. The next closing's channel is made before the requests are let
// through, while the writer still has the cores. g.mu is held.
func (g *Gate) open() {
	if !g.Closed() {
		return
	}
	ch := g.spare
	g.spare = make(chan struct{})
	g.state.Store(g.opened)
	close(ch)
}
