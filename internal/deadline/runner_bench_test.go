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

// BenchmarkInlineContext is the deadline's share of an inline call to an engine that reads
// ctx.Done(): a reused Context set up, its Done asked (a channel; the Waiter's alarm armed),
// and released.
func BenchmarkInlineContext(b *testing.B) {
	var w Waiter
	var c Context
	var t Trust
	b.ReportAllocs()
	for b.Loop() {
		c.InitInline(context.Background(), time.Now().Add(time.Second), &w, &t)
		c.Done()
		if !c.Release() {
			b.Fatal("not reusable")
		}
	}
}
