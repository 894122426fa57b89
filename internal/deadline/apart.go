package deadline

import (
	"context"
	"sync/atomic"
	"time"
)

// Apart runs call on a goroutine of its own and returns its answer, or ctx's error when ctx
// ends first. After ctx ends it still waits up to grace for the call, so that a call that
// honours ctx leaves no goroutine behind; past that the call is abandoned: count counts it
// until it returns, and left reports that this call was abandoned. Unlike a Runner it
// takes a plain context and starts a goroutine per call: it is for the rare calls that
// stream (TranslateStream) or probe, not for the request path.
func Apart[T any](ctx context.Context, grace time.Duration, count *atomic.Int32, call func() (T, error)) (out T, left bool, err error) {
	type answer struct {
		out T
		err error
	}
	ch := make(chan answer, 1)
	var state atomic.Int32
	go func() {
		out, err := call()
		ch <- answer{out, err}
		if !state.CompareAndSwap(running, returned) {
			count.Add(-1)
		}
	}()
	select {
	case a := <-ch:
		return a.out, false, a.err
	case <-ctx.Done():
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	var zero T
	select {
	case <-ch:
		return zero, false, ctx.Err()
	case <-t.C:
	}
	count.Add(1)
	if !state.CompareAndSwap(running, abandoned) {
		count.Add(-1) // it returned just now
		return zero, false, ctx.Err()
	}
	return zero, true, ctx.Err()
}
