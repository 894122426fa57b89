package canary

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestListeners(t *testing.T) {
	var l Listeners[int]
	var heard []string
	hear := func(name string) func(int) { return func(int) { heard = append(heard, name) } }
	stopA := l.Add(hear("a"))
	l.Add(hear("b"))
	stopC := l.Add(hear("c"))
	call := func() []string {
		heard = nil
		l.Call(0, func(p any) { heard = append(heard, fmt.Sprint("panic: ", p)) })
		return heard
	}
	steps := []struct {
		do   func()
		want []string
	}{
		{func() {}, []string{"a", "b", "c"}},
		{stopA, []string{"b", "c"}},
		{stopA, []string{"b", "c"}}, // a second stop is harmless
		{func() { l.Add(hear("d")) }, []string{"b", "c", "d"}},
		{stopC, []string{"b", "d"}},
		{func() { l.Add(func(int) { panic("e") }); l.Add(hear("f")) }, []string{"b", "d", "panic: e", "f"}},
	}
	for i, s := range steps {
		s.do()
		if diff := cmp.Diff(s.want, call()); diff != "" {
			t.Errorf("step %d: listeners called (-want +got):\n%s", i, diff)
		}
	}
}

func TestCheckSteps(t *testing.T) {
	type verdict struct{ At, Problem string }
	cases := []struct {
		steps []float64
		want  verdict
	}{
		{nil, verdict{}},
		{[]float64{1, 5, 20, 100}, verdict{}},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, verdict{"", "must have at most 10 steps"}},
		{[]float64{0}, verdict{"[0]", "must be above 0 and at most 100"}},
		{[]float64{5, 100.5}, verdict{"[1]", "must be above 0 and at most 100"}},
		{[]float64{5, 5}, verdict{"[1]", "must be above the step before"}},
	}
	for _, tc := range cases {
		at, p := CheckSteps(tc.steps)
		if diff := cmp.Diff(tc.want, verdict{at, p}); diff != "" {
			t.Errorf("CheckSteps(%v) (-want +got):\n%s", tc.steps, diff)
		}
	}
}

func TestOutcomeOf(t *testing.T) {
	type got struct {
		O       Outcome
		Counted bool
	}
	cases := []struct {
		failed, engines, bad bool
		want                 got
	}{
		{false, false, false, got{OK, true}}, // success counts whatever the kind says
		{true, false, true, got{OK, false}},  // not the engine's: not counted
		{true, true, true, got{BadOutput, true}},
		{true, true, false, got{Failed, true}},
	}
	for _, tc := range cases {
		o, c := OutcomeOf(tc.failed, tc.engines, tc.bad)
		if diff := cmp.Diff(tc.want, got{o, c}); diff != "" {
			t.Errorf("OutcomeOf(%v, %v, %v) (-want +got):\n%s", tc.failed, tc.engines, tc.bad, diff)
		}
	}
}
