// Package deadline provides a context with a deadline whose timer is armed lazily: only when
// somebody asks for Done. An engine call that returns without waiting on its context (an
// in-process engine, a local cache, a fake) then costs no runtime timer, which on a busy
// client is the largest single cost of an engine call after the call itself.
//
// The Context behaves like context.WithDeadline's: Deadline reports the deadline; Done is
// closed at the deadline, when the parent is done, or when Release is called; Err reports
// why (and reports DeadlineExceeded once the deadline has passed even if nobody asked for
// Done); contexts derived from it are canceled with it, without extra goroutines (it
// implements the AfterFunc method the context package looks for).
package deadline

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// closedChan is a closed channel, returned by Done of contexts finished before Done was asked.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Context is a context.Context with a deadline. Create it with Init or New and call Release
// when the work it bounds is over. It is safe for concurrent use.
type Context struct {
	parent   context.Context
	deadline time.Time
	watched  bool   // ended by the Runner that waits for its call: Done arms nothing
	alarm    *Alarm // set up with InitInline: Done arms it instead of a timer of its own
	trust    *Trust // set up with InitInline: told when the alarm ends the Context
	observed bool   // Done or AfterFunc was asked: somebody may hold the Context

	state atomic.Uint32 // chanNone until Done is asked or the Context ends, then chanMade or chanClosed
	ch    chan struct{} // Done's channel: written before state leaves chanNone, read after

	mu         sync.Mutex // the Context's lock, but for one set up with InitInline: its alarm's
	err        error      // set once, when the context ends
	timer      *time.Timer
	stopParent func() bool
	parentLeft bool         // stopParent was too late: its function runs, and reads the Context
	funcs      []afterFunc  // registered by AfterFunc, not yet run or stopped
	fbuf       [2]afterFunc // funcs' first backing array: a derived context costs no map
	lastID     uint64       // AfterFunc's registrations, never reset: a stale stop finds nothing
}

// Context.state's values.
const (
	chanNone   uint32 = iota // Done was not asked and the Context has not ended
	chanMade                 // Done made ch
	chanClosed               // the Context ended before Done was asked: ch is closedChan
)

type afterFunc struct {
	id uint64
	f  func()
}

// New returns a Context for parent that ends at d at the latest.
func New(parent context.Context, d time.Time) *Context {
	c := &Context{}
	c.Init(parent, d)
	return c
}

// Init sets up a zero Context, or a released one that was never armed (see Reusable), for
// parent, ending at d at the latest.
func (c *Context) Init(parent context.Context, d time.Time) {
	c.state.Store(chanNone)
	c.ch, c.err = nil, nil
	if c.timer != nil || c.stopParent != nil { // seldom: pointer writes cost write barriers
		c.timer, c.stopParent = nil, nil
	}
	if c.fbuf[0].f != nil || c.fbuf[1].f != nil || cap(c.funcs) == 0 || &c.funcs[:1][0] != &c.fbuf[0] {
		c.fbuf = [2]afterFunc{}
		c.funcs = c.fbuf[:0]
	}
	c.parent, c.deadline, c.watched, c.observed, c.parentLeft = parent, d, false, false, false
	if c.alarm != nil {
		c.alarm, c.trust = nil, nil
	}
	if pd, ok := parent.Deadline(); ok && pd.Before(d) {
		c.deadline = pd
	}
}

// InitWatched is Init for a Context that Runner.Do ends: at its deadline, or when its
// parent is done, the Runner that waits for the call ends it, so Done arms no timer of its
// own and does not follow the parent.
func (c *Context) InitWatched(parent context.Context, d time.Time) {
	c.Init(parent, d)
	c.watched = true
}

// InitInline is Init for a Context whose call runs inline on the goroutine that owns w:
// Done arms w's alarm, one timer made once per Waiter and reused, instead of a timer of its
// own (and follows the parent only when the parent can end). Release disarms the alarm. If
// the alarm ends the Context at its deadline, it tells t (if not nil) that a call of its
// engine is overdue (see Trust.Overdue). The Context's lock is then the alarm's: arming and
// disarming it cost no lock of their own.
func (c *Context) InitInline(parent context.Context, d time.Time, w *Waiter, t *Trust) {
	c.Init(parent, d)
	c.alarm, c.trust = &w.alarm, t
}

// Watched reports whether Done (or AfterFunc) was asked since the Context was set up: the
// call it bounds watched it. It may be called at any time, also after Release.
func (c *Context) Watched() bool { return c.state.Load() == chanMade }

// lock takes the Context's lock, and returns it.
func (c *Context) lock() *sync.Mutex {
	mu := &c.mu
	if c.alarm != nil {
		mu = &c.alarm.mu
	}
	mu.Lock()
	return mu
}

// Deadline returns the deadline.
func (c *Context) Deadline() (time.Time, bool) { return c.deadline, true }

// Value returns the parent's value for key.
func (c *Context) Value(key any) any { return c.parent.Value(key) }

// Done returns a channel closed when the context ends. The first call arms the timer.
func (c *Context) Done() <-chan struct{} {
	if c.state.Load() != chanNone {
		return c.ch
	}
	defer c.lock().Unlock()
	if c.state.Load() != chanNone {
		return c.ch
	}
	c.ch = make(chan struct{}) // the only allocation of a watched or an inline Context's Done
	c.state.Store(chanMade)
	c.observed = true
	if !c.watched {
		c.armLocked()
	}
	return c.ch
}

// armLocked sets what ends the Context: its timer, or its alarm, and its parent's end.
func (c *Context) armLocked() {
	if err := c.parent.Err(); err != nil {
		c.endLocked(err)
		return
	}
	if c.alarm == nil || !c.alarm.covers(c.deadline) { // (a clock read only then)
		left := time.Until(c.deadline)
		if left <= 0 {
			c.endLocked(context.DeadlineExceeded)
			return
		}
		if c.alarm != nil {
			c.alarm.reset(c.deadline, left)
		} else {
			c.timer = time.AfterFunc(left, func() { c.end(context.DeadlineExceeded) })
		}
	}
	if c.alarm != nil {
		c.alarm.target = c
	}
	if c.parent.Done() != nil {
		c.stopParent = context.AfterFunc(c.parent, func() { c.end(c.parent.Err()) })
	}
}

// Err returns nil while the context runs; then context.DeadlineExceeded, the parent's
// error, or context.Canceled after Release.
func (c *Context) Err() error {
	mu := c.lock()
	err := c.err
	mu.Unlock()
	if err != nil {
		return err
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// AfterFunc arranges for f to run in its own goroutine once the context ends, as
// context.AfterFunc does; contexts derived from this one use it to follow it.
func (c *Context) AfterFunc(f func()) (stop func() bool) {
	c.Done() // arm
	defer c.lock().Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	c.lastID++
	id := c.lastID
	c.funcs = append(c.funcs, afterFunc{id: id, f: f})
	return func() bool { return c.stopFunc(id) }
}

// stopFunc unregisters AfterFunc's registration id and reports whether it was still there.
func (c *Context) stopFunc(id uint64) bool {
	defer c.lock().Unlock()
	for i := range c.funcs {
		if c.funcs[i].id == id {
			c.funcs = slices.Delete(c.funcs, i, i+1)
			return true
		}
	}
	return false
}

// Release ends the context with context.Canceled, if it has not ended, and frees its timer.
// It reports whether the Context may be set up again with Init, once the work it bounds has
// returned: no callback of its can still run. A Context set up with Init is reusable only if
// nobody asked for Done (or AfterFunc), so that nobody can hold it; one set up with
// InitWatched arms nothing, so it is reusable also when Done was asked, unless an AfterFunc
// was still registered (its function, started now, may read the Context later). A caller
// whose work did not return (an abandoned call) must not reuse it whatever Release says.
// One set up with InitInline is reusable unless a function of its parent or of AfterFunc
// may still run (its alarm's function, which runs under the same lock, finds it disarmed).
func (c *Context) Release() (reusable bool) {
	defer c.lock().Unlock()
	pending := len(c.funcs) > 0
	c.endLocked(context.Canceled) // (disarms the alarm: its function, under the same lock, finds nothing)
	switch {
	case c.watched:
		return !pending
	case c.alarm != nil:
		return !pending && !c.parentLeft
	}
	return !c.observed && c.timer == nil && c.stopParent == nil
}

func (c *Context) end(err error) {
	defer c.lock().Unlock()
	c.endLocked(err)
}

func (c *Context) endLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.state.Load() == chanMade {
		close(c.ch)
	} else {
		c.ch = closedChan
		c.state.Store(chanClosed)
	}
	if a := c.alarm; a != nil && a.target == c {
		a.target = nil
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.stopParent != nil && !c.stopParent() {
		c.parentLeft = true
	}
	for _, a := range c.funcs {
		go a.f()
	}
	clear(c.funcs)
	c.funcs = c.funcs[:0]
}

// An Alarm ends a Context at its deadline with one timer, made at its first use and reused
// after: what a Context set up with InitInline arms when Done is asked. It serves one
// Context at a time, whose lock is the alarm's mu.
//
// Its timer is left set when a Context is released, and not set again for the next Context
// unless that one's deadline comes first: deadlines are mostly the same length from their
// call's start, so the next one is later, and arming costs no timer operation and no clock
// read (a timer's Reset and Stop cost more than the rest of an inline call). The timer then
// fires early, finds the Context's deadline not passed, and sets itself for it: one timer
// operation per deadline's length, not two per call.
type Alarm struct {
	mu     sync.Mutex
	t      *time.Timer
	set    bool      // t is set to fire at when
	when   time.Time // (the deadline it was set for)
	target *Context  // the Context armed for; nil when none (see Context.endLocked)
}

// covers reports whether the timer is set to fire by deadline. Under a.mu.
func (a *Alarm) covers(deadline time.Time) bool { return a.set && !deadline.Before(a.when) }

// reset sets the timer to fire in d, at deadline. Under a.mu.
func (a *Alarm) reset(deadline time.Time, d time.Duration) {
	if a.t == nil {
		a.t = time.AfterFunc(d, a.fire)
	} else {
		a.t.Reset(d)
	}
	a.set, a.when = true, deadline
}

// fire is the timer's function: it ends the target if its deadline passed, and tells the
// target's Trust, or sets the timer for it.
func (a *Alarm) fire() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.set = false
	c := a.target
	if c == nil {
		return
	}
	if left := time.Until(c.deadline); left > 0 {
		a.reset(c.deadline, left)
		return
	}
	c.endLocked(context.DeadlineExceeded) // (no longer the target)
	if c.trust != nil {
		c.trust.Overdue()
	}
}
