package deadline

import (
	"context"
	"testing"
	"time"
)

type nopJob struct{}

func (nopJob) Run()  {}
func (nopJob) Late() {}

// BenchmarkRunnerDo is the cost of running a job that returns at once on a Runner: a
// handoff to a pooled goroutine and back, and the deadline timer.
func BenchmarkRunnerDo(b *testing.B) {
	stop := make(chan struct{})
	defer close(stop)
	r := NewRunner(stop)
	var w Waiter
	var c Call
	b.ReportAllocs()
	for b.Loop() {
		c.Ctx.InitWatched(context.Background(), time.Now().Add(time.Second))
		r.Do(&w, &c, nopJob{}, time.Millisecond)
		c.Ctx.Release()
	}
}
