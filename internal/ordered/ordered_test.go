package ordered

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A call that failed over, or was abandoned, cannot change the partial text any more.
func TestSinkGenerations(t *testing.T) {
	var woken int
	s := &Sink{wake: func() { woken++ }}
	a := s.Begin()
	s.Update(a, "llm", "Hola")
	s.End(a)
	b := s.Begin()
	s.Update(a, "llm", "Hola mundo") // the old call, late
	if text, engine, seq := s.Latest(); text != "Hola" || engine != "llm" || seq != 1 || woken != 1 {
		t.Errorf("after a late update of an ended call: %q %q %d, woken %d", text, engine, seq, woken)
	}
	s.Update(b, "other", "Buenos")
	if text, engine, seq := s.Latest(); text != "Buenos" || engine != "other" || seq != 2 || woken != 2 {
		t.Errorf("the current call: %q %q %d, woken %d", text, engine, seq, woken)
	}
}

// The next part starts only with a free slot, within reach of the head and before a
// failed part.
func TestCanStart(t *testing.T) {
	for _, tc := range []struct {
		head, started, running, failed int
		want                           bool
	}{
		{head: 0, started: 0, running: 0, failed: 100, want: true},
		{head: 0, started: 2, running: 2, failed: 100, want: false}, // no free slot
		{head: 0, started: 7, running: 1, failed: 100, want: true},
		{head: 0, started: 8, running: 1, failed: 100, want: false}, // 4 × 2 ahead of the head
		{head: 1, started: 8, running: 1, failed: 100, want: true},
		{head: 0, started: 3, running: 1, failed: 3, want: false}, // part 3 failed
		{head: 0, started: 100, running: 0, failed: 100, want: false},
	} {
		s := &Stream[int]{conc: 2, ahead: 4, started: tc.started, running: tc.running, failed: tc.failed}
		if got := s.canStart(tc.head); got != tc.want {
			t.Errorf("%+v: canStart = %v, want %v", tc, got, tc.want)
		}
	}
}

// Parts that finish last-first come back first-last, a failed part ends the run with its
// error after the parts before it, and Stop leaves no goroutine behind.
func TestRunInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		work := func(ctx context.Context, i int, _ *Sink) (int, error) {
			time.Sleep(time.Duration(10-i) * time.Millisecond)
			if i == 6 {
				return 0, errors.New("part 6")
			}
			return i * i, nil
		}
		s := New(context.Background(), 8, 3, 4, work)
		var got []int
		failed := -1
		s.Run(func(i, r int) bool { got = append(got, r); return true },
			func(int, string, string) bool { return true },
			func(i int, err error) { failed = i })
		s.Stop()
		if diff := cmp.Diff([]int{0, 1, 4, 9, 16, 25}, got); diff != "" || failed != 6 {
			t.Errorf("results (-want +got):\n%s; failed at %d, want 6", diff, failed)
		}
	})
}
