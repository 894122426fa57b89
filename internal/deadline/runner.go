package deadline

import (
	"context"
	"sync/atomic"
	"time"
)

// A Runner runs calls on goroutines of its own, so that the goroutine that waits for a call
// stops waiting at the call's deadline whatever the call does: a call that ignores its
// context is left running apart, and the waiter goes on. Its goroutines are pooled: a call
// is handed to an idle one (no goroutine is started, nothing is allocated), and at most
// maxIdle wait for work; they all end when the Runner's stop channel is closed (a goroutine
// still in a call ends when the call returns).
type Runner struct {
	tasks chan *Call // unbuffered: a send succeeds only when an idle goroutine receives it
	stop  <-chan struct{}
	idle  atomic.Int32 // goroutines waiting for work
}

// maxIdle bounds the goroutines a Runner keeps waiting for work after a burst.
const maxIdle = 128

// NewRunner returns a Runner whose goroutines end once stop is closed.
func NewRunner(stop <-chan struct{}) *Runner {
	return &Runner{tasks: make(chan *Call), stop: stop}
}

// A Job is the work of one Call.
type Job interface {
	// Run makes the call, under the Context of its Call.
	Run()
	// Late is called, on the Runner's goroutine, when Run returned after Do gave up on it.
	Late()
}

// Call states.
const (
	running int32 = iota
	returned
	abandoned
)

// A Call is one job in flight and the Context it runs under. Set Ctx up with InitWatched
// before Do. A Call, its Context and its Job may be used again after Do reported that the
// job returned; after Do gave up on it, they belong to the job until it returns.
type Call struct {
	Ctx   Context
	job   Job
	done  chan struct{} // receives one value when the job returns in time
	state atomic.Int32
}

// A Waiter is what one goroutine needs to wait for calls, or to make them inline: a timer
// and an Alarm (see InitInline), each made once and reused.
type Waiter struct {
	t     *time.Timer
	alarm Alarm
}

// wait waits for c's job until d from now, and reports whether it returned.
func (w *Waiter) wait(c *Call, parent <-chan struct{}, d time.Duration) (returned, parentDone bool) {
	if w.t == nil {
		w.t = time.NewTimer(d)
	} else {
		w.t.Reset(d)
	}
	select {
	case <-c.done:
		w.t.Stop()
		return true, false
	case <-w.t.C:
		return false, false
	case <-parent:
		w.t.Stop()
		return false, true
	}
}

// Do runs j on one of r's goroutines under c.Ctx and waits until j returns or, at the
// latest, until c.Ctx's deadline or its parent's end, then grace more: at the deadline (or
// the parent's end) Do ends c.Ctx, and a job that honours its context returns within
// grace. Do reports whether j returned; if it did not, j goes on apart and Do returns
// anyway (c and j are j's until it returns; then its Late is called).
func (r *Runner) Do(w *Waiter, c *Call, j Job, grace time.Duration) bool {
	if c.done == nil {
		c.done = make(chan struct{}, 1)
	}
	c.job = j
	c.state.Store(running)
	select {
	case r.tasks <- c:
	default:
		go r.work(c)
	}
	ctx := &c.Ctx
	ok, parentDone := w.wait(c, ctx.parent.Done(), time.Until(ctx.deadline))
	if ok {
		return true
	}
	if parentDone {
		ctx.end(ctx.parent.Err())
	} else {
		ctx.end(context.DeadlineExceeded)
	}
	if ok, _ := w.wait(c, nil, grace); ok {
		return true
	}
	if c.state.CompareAndSwap(running, abandoned) {
		return false
	}
	<-c.done // it returned just now
	return true
}

// work runs c's job, then the jobs handed to it, until r stops or enough goroutines wait.
func (r *Runner) work(c *Call) {
	for {
		c.run()
		if r.idle.Add(1) > maxIdle {
			r.idle.Add(-1)
			return
		}
		select {
		case c = <-r.tasks:
			r.idle.Add(-1)
		case <-r.stop:
			r.idle.Add(-1)
			return
		}
	}
}

// run runs the job and tells Do, or, when Do gave up on it, calls its Late.
func (c *Call) run() {
	j := c.job
	j.Run()
	if c.state.CompareAndSwap(running, returned) {
		c.done <- struct{}{}
		return
	}
	j.Late()
}
