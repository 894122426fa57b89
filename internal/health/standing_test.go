package health

import (
	stdcmp "cmp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestStandingWindow(t *testing.T) {
	var s Standing
	for i := range int64(Folds + 2) { // the first two folds fall out of the window
		s.Push(10*(i+1), i+1)
	}
	type pair struct{ Calls, Fails int64 }
	c, f := s.Window()
	if diff := cmp.Diff(pair{30 + 40 + 50 + 60 + 70 + 80, 3 + 4 + 5 + 6 + 7 + 8}, pair{c, f}); diff != "" {
		t.Errorf("window (-want +got):\n%s", diff)
	}
	s.ClearWindow()
	c, f = s.Window()
	if diff := cmp.Diff(pair{}, pair{c, f}); diff != "" {
		t.Errorf("cleared window (-want +got):\n%s", diff)
	}
}

// Judge: two drops over 15% in a row, or a fold under the minimum, demote; two good folds
// (Judge or Promote) bring back.
func TestStandingJudge(t *testing.T) {
	type step struct {
		was, now float64 // availability; was < 0: Promote instead of Judge
		demoted  bool    // after the step
		back     bool    // Promote's answer
	}
	tests := []struct {
		name  string
		min   float64 // 0 means 0.8
		steps []step
	}{
		{"one drop keeps", 0, []step{{1, 0.84, false, false}, {0.84, 0.84, false, false}}},
		{"two drops demote", 0.5, []step{{1, 0.84, false, false}, {0.84, 0.7, true, false}}},
		{"drops of 14% keep", 0.5, []step{{1, 0.86, false, false}, {0.86, 0.74, false, false}, {0.74, 0.64, false, false}}},
		{"under minimum demotes", 0, []step{{0.9, 0.79, true, false}}},
		{"two good folds bring back", 0, []step{{0.9, 0.5, true, false}, {0.5, 0.9, true, false}, {0.9, 0.9, false, false}}},
		{"a bad fold restarts the count", 0, []step{{0.9, 0.5, true, false}, {0.5, 0.9, true, false},
			{0.9, 0.7, true, false}, {0.7, 0.9, true, false}, {0.9, 0.9, false, false}}},
		{"two probes bring back", 0, []step{{0.9, 0.5, true, false}, {-1, 0, true, false}, {-1, 0, false, true}}},
		{"probe of a standing engine does nothing", 0, []step{{-1, 0, false, false}, {-1, 0, false, false}}},
		{"mixed fold and probe", 0, []step{{0.9, 0.5, true, false}, {0.5, 0.9, true, false}, {-1, 0, false, true}}},
	}
	for _, tt := range tests {
		var s Standing
		for i, st := range tt.steps {
			back := false
			if st.was < 0 {
				back = s.Promote()
			} else {
				s.Judge(st.was, st.now, stdcmp.Or(tt.min, 0.8))
			}
			if s.Demoted() != st.demoted || back != st.back {
				t.Errorf("%s: step %d: demoted %v back %v, want %v %v", tt.name, i, s.Demoted(), back, st.demoted, st.back)
			}
		}
		s.Reset()
		if s.Demoted() || s != (Standing{}) {
			t.Errorf("%s: Reset left %+v", tt.name, s)
		}
	}
}

func TestEWMA(t *testing.T) {
	ms := time.Millisecond
	got := []time.Duration{EWMA(300*ms, 100*ms, false), EWMA(300*ms, 100*ms, true), EWMA(100*ms, 100*ms, true)}
	if diff := cmp.Diff([]time.Duration{100 * ms, 240 * ms, 100 * ms}, got); diff != "" {
		t.Errorf("EWMA (-want +got):\n%s", diff)
	}
}
