package score

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestFactors(t *testing.T) {
	approx := cmpopts.EquateApprox(0, 1e-9)
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"speed at 100ms", Speed(100 * time.Millisecond), 100},
		{"speed below 100ms", Speed(time.Millisecond), 100},
		{"speed at 1s", Speed(time.Second), 50},
		{"speed at 10s", Speed(10 * time.Second), 0},
		{"speed past 10s", Speed(time.Minute), 0},
		{"cost free", Cost(0), 100},
		{"cost 25", Cost(25), 50},
		{"cost at max", Cost(MaxCostPerMillion), 0},
		{"cost past max", Cost(80), 0},
		{"quota none", QuotaWeight(5, 0), 1},
		{"quota unknown", QuotaWeight(-1, 100), 1},
		{"quota plenty", QuotaWeight(50, 100), 1},
		{"quota at 20%", QuotaWeight(20, 100), 1},
		{"quota at 15%", QuotaWeight(15, 100), 0.75},
		{"quota at 5%", QuotaWeight(5, 100), 0.25},
		{"gate no safe rate", TrafficGate(100, 0), 1},
		{"gate at 70%", TrafficGate(7, 10), 1},
		{"gate at 85%", TrafficGate(8.5, 10), 0.55},
		{"gate at 100%", TrafficGate(10, 10), 0.1},
		{"gate past 100%", TrafficGate(30, 10), 0.1},
	}
	for _, tt := range tests {
		if !cmp.Equal(tt.got, tt.want, approx) {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func TestInWindow(t *testing.T) {
	h := time.Hour
	tests := []struct {
		from, to, d time.Duration
		want        bool
	}{
		{9 * h, 17 * h, 9 * h, true},
		{9 * h, 17 * h, 17 * h, false},
		{9 * h, 17 * h, 8 * h, false},
		{22 * h, 6 * h, 23 * h, true},
		{22 * h, 6 * h, 5 * h, true},
		{22 * h, 6 * h, 6 * h, false},
		{22 * h, 6 * h, 12 * h, false},
		{5 * h, 5 * h, 5 * h, false},
	}
	for _, tt := range tests {
		if got := InWindow(tt.from, tt.to, tt.d); got != tt.want {
			t.Errorf("InWindow(%v, %v, %v) = %v, want %v", tt.from, tt.to, tt.d, got, tt.want)
		}
	}
	for now, want := range map[int64]time.Duration{0: 0, int64(25 * h): h, -int64(h): 23 * h} {
		if got := TimeOfDay(now); got != want {
			t.Errorf("TimeOfDay(%d) = %v, want %v", now, got, want)
		}
	}
}

func TestCheckWeights(t *testing.T) {
	type res struct {
		Name, Problem string
		OK            bool
	}
	tests := []struct {
		w    [4]float64
		want res
	}{
		{[4]float64{0.4, 0.25, 0.2, 0.15}, res{OK: true}},
		{[4]float64{0.6, 0.2, 0.1, 0.1}, res{"Quality", "must be within 0..0.5", false}},
		{[4]float64{0.5, -0.1, 0.3, 0.3}, res{"Availability", "must be within 0..0.5", false}},
		{[4]float64{0.3, 0.3, math.NaN(), 0.1}, res{"Speed", "must be within 0..0.5", false}},
		{[4]float64{0.2, 0.2, 0.2, 0.4}, res{"Cost", "must be at most 0.3", false}},
		{[4]float64{0.3, 0.2, 0.18, 0.32}, res{"Cost", "must be at most 0.3", false}},
		{[4]float64{0.2, 0.2, 0.2, 0.2}, res{"", "must sum to 1", false}},
	}
	for _, tt := range tests {
		n, p, ok := CheckWeights(tt.w[0], tt.w[1], tt.w[2], tt.w[3])
		if diff := cmp.Diff(tt.want, res{n, p, ok}); diff != "" {
			t.Errorf("CheckWeights%v (-want +got):\n%s", tt.w, diff)
		}
	}
}

func TestSet(t *testing.T) {
	var s Set
	if s.Has(0) || s.Has(500) {
		t.Fatal("empty set has members")
	}
	in := []int{0, 63, 64, 127, 128, 191, 192, 1000}
	for _, i := range in {
		s.Add(i)
	}
	c := s.Clone()
	s.Del(64)
	s.Del(1000)
	s.Del(5000) // beyond: no effect
	var got, gotClone []int
	for i := range 1100 {
		if s.Has(i) {
			got = append(got, i)
		}
		if c.Has(i) {
			gotClone = append(gotClone, i)
		}
	}
	if diff := cmp.Diff([]int{0, 63, 127, 128, 191, 192}, got); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(in, gotClone); diff != "" {
		t.Errorf("the clone's members (-want +got):\n%s", diff)
	}
}

func TestRaiseTo(t *testing.T) {
	var a atomic.Int64
	for _, t0 := range []int64{5, 3, 9, 9, 7, 10, 9} {
		RaiseTo(&a, t0)
	}
	if got := a.Load(); got != 10 {
		t.Errorf("got %d, want 10", got)
	}
}
