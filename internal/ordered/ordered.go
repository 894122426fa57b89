// Package ordered runs the parts of one job in parallel and hands their results back in
// order, with the partial text of the first part not yet handed back (the head) as it
// streams. The translate package's TranslateStream is one: it keeps what a part is (a
// Request through the same path as Translate) and what the caller sees (Chunks); this
// package keeps the goroutines, the window ahead of the head and the order.
package ordered

import (
	"context"
	"sync"
	"sync/atomic"
)

// A Stream runs work for parts 0..n-1 on up to conc goroutines, none more than ahead × conc
// parts after the head, and hands the results back in order (Run). Stop cancels the work
// still running and waits for it; no goroutine outlives Stop.
type Stream[R any] struct {
	ctx    context.Context
	cancel context.CancelFunc
	work   func(ctx context.Context, i int, sink *Sink) (R, error)
	sinks  []Sink
	out    []done[R] // by part; ok when done
	done   chan done[R]
	poke   chan struct{} // the head's partial text changed
	head   atomic.Int64  // the first part not yet handed back
	wg     sync.WaitGroup

	n, conc, ahead, started, running int
	failed                           int // the first part known to have failed; n if none
}

// done is a finished part.
type done[R any] struct {
	i   int
	res R
	err error
	ok  bool
}

// New returns a Stream of n parts; work translates part i under ctx, sending its partial
// text to sink.
func New[R any](ctx context.Context, n, conc, ahead int, work func(ctx context.Context, i int, sink *Sink) (R, error)) *Stream[R] {
	s := &Stream[R]{work: work, n: n, conc: max(1, min(conc, n)), ahead: ahead, failed: n, poke: make(chan struct{}, 1)}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan done[R], s.conc) // a worker never waits to report
	s.sinks = make([]Sink, n)
	s.out = make([]done[R], n)
	for i := range s.sinks {
		s.sinks[i].wake = func() {
			if s.head.Load() == int64(i) {
				select {
				case s.poke <- struct{}{}:
				default:
				}
			}
		}
	}
	return s
}

// Stop cancels the workers still running and waits for them.
func (s *Stream[R]) Stop() {
	s.cancel()
	s.wg.Wait()
}

// Run hands back the parts in order until the last one, an error, or a callback returns
// false: final for each finished part, partial for each change of the head's partial text,
// and fail, the last call, for a part that failed or the end of ctx.
func (s *Stream[R]) Run(final func(i int, r R) bool, partial func(i int, text, engine string) bool, fail func(i int, err error)) {
	var shown uint64 // change count of the head's partial text last handed back
	for head := 0; head < s.n; {
		if d := s.out[head]; d.ok {
			if d.err != nil {
				fail(head, d.err)
				return
			}
			if !final(head, d.res) {
				return
			}
			head++
			s.head.Store(int64(head))
			shown = 0
			continue
		}
		if text, engine, seq := s.sinks[head].Latest(); seq != shown {
			shown = seq
			if !partial(head, text, engine) {
				return
			}
			continue
		}
		// Parts start only when the stream is about to wait: a finished head is handed back
		// first, so a caller that stops at it starts no further call.
		s.fill(head)
		if err := s.wait(); err != nil {
			fail(head, err)
			return
		}
	}
}

// wait waits for a part to finish, the head's partial text to change or ctx to end.
func (s *Stream[R]) wait() error {
	select {
	case d := <-s.done:
		s.out[d.i] = d
		s.running--
		if d.err != nil {
			s.failed = min(s.failed, d.i)
		}
	case <-s.poke:
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
	return nil
}

// fill starts parts while canStart allows.
func (s *Stream[R]) fill(head int) {
	for s.canStart(head) {
		i := s.started
		s.started++
		s.running++
		s.wg.Add(1)
		go s.run(i)
	}
}

// canStart reports whether the next part may start: fewer than conc run, it is within
// ahead × conc parts of head, and before any part known to have failed (the stream ends
// there).
func (s *Stream[R]) canStart(head int) bool {
	return s.running < s.conc && s.started < s.failed && s.started < head+s.ahead*s.conc
}

// run does part i and reports it on done.
func (s *Stream[R]) run(i int) {
	defer s.wg.Done()
	res, err := s.work(s.ctx, i, &s.sinks[i])
	s.done <- done[R]{i: i, res: res, err: err, ok: true}
}
