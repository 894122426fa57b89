package health

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestBlend(t *testing.T) {
	type got struct {
		Avail float64
		OK    bool
	}
	const timeout = time.Second
	cases := []struct {
		name         string
		s, extra     Sample
		calls, fails int64
		want         got
	}{
		{"no calls", Sample{}, Sample{}, 4, 1, got{}},
		{"the window's rate", Sample{Calls: 10, Fails: 1, OKCalls: 9}, Sample{}, 0, 0, got{0.9, true}},
		{"the folds' rate is lower", Sample{Calls: 10, Fails: 1, OKCalls: 9}, Sample{}, 4, 2, got{0.5, true}},
		{"extra counts on both", Sample{}, Sample{Calls: 4, Fails: 1, OKCalls: 3}, 0, 0, got{0.75, true}},
		{"extra in the folds", Sample{Calls: 10, OKCalls: 10}, Sample{Calls: 2, Fails: 2}, 2, 0, got{0.5, true}},
		{"latency lowers the folds' figure too", Sample{Calls: 2, OKCalls: 2, LatNanos: 2 * int64(timeout)}, Sample{}, 1, 0, got{0.75, true}},
	}
	for _, tc := range cases {
		a, ok := Blend(tc.s, tc.extra, tc.calls, tc.fails, timeout)
		if diff := cmp.Diff(tc.want, got{a, ok}, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
			t.Errorf("%s: Blend (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestPairStateFactor(t *testing.T) {
	cases := []struct {
		name string
		st   PairState
		want float64
	}{
		{"clean", PairState{}, 1},
		{"bad rate lowers the quality term", PairState{Bad: 0.2}, math.Exp(-0.5 * 0.2 * 2 / 0.5)},
		{"down past 1-minHealth", PairState{Bad: 0.5}, math.Exp(-0.5*0.5*2/0.5) * PairDownFactor},
		{"probe down", PairState{ProbeDown: true}, PairDownFactor},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, tc.st.Factor(0.5, 2, 0.5, 0.6), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
			t.Errorf("%s: Factor (-want +got):\n%s", tc.name, diff)
		}
	}
}
