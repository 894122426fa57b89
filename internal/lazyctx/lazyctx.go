// Package lazyctx is a context.Context bounded by a deadline that arms no timer until
// someone waits on it. The translate package bounds each Store call with one: most Store
// calls are served in process and never ask for Done, so a context.WithDeadline per call
// (a timer armed and stopped each time) is cost for nothing.
package lazyctx

import (
	"context"
	"sync"
	"time"
)

// A Context is bounded by a deadline without arming a timer: a callee that serves the call
// in process (redisstore's leased blocks) reads at most Deadline, and the call costs no
// timer; a callee that waits on Done gets a channel closed at the deadline. It carries
// parent's values but not its cancellation (a settlement outlives the request), and
// Release, once the call returned, ends it as a cancel function would. It is safe for
// concurrent use.
type Context struct {
	parent   context.Context // nil: no values
	deadline time.Time
	mu       sync.Mutex
	done     chan struct{} // made by the first Done
	timer    *time.Timer
	err      error
	after    map[*func()]struct{} // AfterFunc's functions not run yet
}

// New returns a Context with parent's values (none when parent is nil) that ends at deadline.
func New(parent context.Context, deadline time.Time) *Context {
	return &Context{parent: parent, deadline: deadline}
}

// Deadline returns the deadline, always set.
func (c *Context) Deadline() (time.Time, bool) { return c.deadline, true }

// Value returns the parent's value for key.
func (c *Context) Value(key any) any {
	if c.parent == nil {
		return nil
	}
	return c.parent.Value(key)
}

// Done returns a channel closed at the deadline or at Release; the first call arms the timer.
func (c *Context) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil { // released before anyone asked
			close(c.done)
		} else if d := time.Until(c.deadline); d <= 0 {
			c.end(context.DeadlineExceeded)
		} else {
			c.timer = time.AfterFunc(d, func() {
				c.mu.Lock()
				defer c.mu.Unlock()
				c.end(context.DeadlineExceeded)
			})
		}
	}
	return c.done
}

// Err returns DeadlineExceeded or Canceled once c is done, nil before.
func (c *Context) Err() error {
	c.Done()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// end closes done with err, once, and starts AfterFunc's functions. c.mu is held and done
// is made.
func (c *Context) end(err error) {
	if c.err == nil {
		c.err = err
		close(c.done)
		for f := range c.after {
			go (*f)()
		}
		c.after = nil
	}
}

// AfterFunc runs f in its own goroutine once c is done, as context.AfterFunc does; stop
// keeps it from running. A context derived from c (context.WithTimeout in a Store) uses it
// instead of a goroutine of its own that waits on Done.
func (c *Context) AfterFunc(f func()) (stop func() bool) {
	c.Done()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	if c.after == nil {
		c.after = map[*func()]struct{}{}
	}
	c.after[&f] = struct{}{}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, waiting := c.after[&f]
		delete(c.after, &f)
		return waiting
	}
}

// Release ends the call's context: Canceled unless the deadline passed first.
func (c *Context) Release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
	switch {
	case c.err != nil:
	case c.done == nil:
		c.err = context.Canceled // a later Done returns a closed channel
	default:
		c.end(context.Canceled)
	}
}
