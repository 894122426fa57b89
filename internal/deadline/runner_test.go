package deadline

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// job is a Job that blocks for d, watching its context or not.
type job struct {
	ctx    context.Context
	d      time.Duration
	honour bool
	ran    atomic.Bool
	late   atomic.Bool
	err    error
}

func (j *job) Run() {
	t := time.NewTimer(j.d)
	defer t.Stop()
	if j.honour {
		select {
		case <-t.C:
		case <-j.ctx.Done():
			j.err = j.ctx.Err()
		}
	} else {
		<-t.C
	}
	j.ran.Store(true)
}

func (j *job) Late() { j.late.Store(true) }

// TestRunnerKeepsTheDeadline: Do returns when the job does; at the deadline it ends the
// context (a job that honours it returns within the grace); a job that ignores it is left
// running apart, and its Late is called when it returns; a parent's cancel ends it too.
func TestRunnerKeepsTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := make(chan struct{})
		defer close(stop)
		r := NewRunner(stop)
		var w Waiter
		run := func(parent context.Context, d time.Duration, honour bool) (*job, bool, time.Duration) {
			var c Call
			c.Ctx.InitWatched(parent, time.Now().Add(time.Second))
			j := &job{ctx: &c.Ctx, d: d, honour: honour}
			t0 := time.Now()
			ok := r.Do(&w, &c, j, 20*time.Millisecond)
			return j, ok, time.Since(t0)
		}
		if j, ok, took := run(context.Background(), 100*time.Millisecond, false); !ok || !j.ran.Load() || took != 100*time.Millisecond {
			t.Errorf("a 100ms job: returned %v after %v", ok, took)
		}
		if j, ok, took := run(context.Background(), time.Hour, true); !ok || !errors.Is(j.err, context.DeadlineExceeded) || took != time.Second {
			t.Errorf("a job that honours ctx: returned %v after %v, err %v", ok, took, j.err)
		}
		j, ok, took := run(context.Background(), time.Hour, false)
		if ok || took != time.Second+20*time.Millisecond || j.late.Load() {
			t.Errorf("a job that ignores ctx: returned %v after %v", ok, took)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if !j.late.Load() {
			t.Error("Late not called when the abandoned job returned")
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		if j, ok, took := run(ctx, time.Hour, true); !ok || !errors.Is(j.err, context.Canceled) || took != 50*time.Millisecond {
			t.Errorf("parent canceled: returned %v after %v, err %v", ok, took, j.err)
		}
	})
}

func TestTimeoutGrowsWithTokens(t *testing.T) {
	for _, tc := range []struct {
		texts []string
		want  int
	}{
		{nil, 0}, {[]string{"abcd"}, 1}, {[]string{"abcde"}, 2}, {[]string{"日本語"}, 3}, {[]string{"abcd", "日本"}, 3},
	} {
		if got := Tokens(tc.texts); got != tc.want {
			t.Errorf("Tokens(%q) = %d, want %d", tc.texts, got, tc.want)
		}
	}
	if got := Grown(5*time.Second, 15*time.Second, []string{string(make([]byte, 4000))}); got != 20*time.Second {
		t.Errorf("Grown over 1,000 tokens = %v, want 20s", got)
	}
	if got := Grown(time.Second, time.Duration(1<<62), []string{string(make([]byte, 40000))}); got <= 0 {
		t.Errorf("Grown overflowed: %v", got)
	}
	if got := Reserve(8*time.Second, 8*time.Second); got != 2*time.Second {
		t.Errorf("Reserve(8s, 8s) = %v, want 2s", got)
	}
	if got := Reserve(8*time.Second, 2*time.Second); got != time.Second {
		t.Errorf("Reserve(8s, 2s) = %v, want 1s", got)
	}
}
