package deadline

import (
	"math"
	"testing"
	"testing/synctest"
	"time"
)

// TestTimeIsAtsInverse: Time turns an instant of Now's clock back into a time.Time that At
// reads as the same instant, and that time.Until and time.Since measure as real time, in the
// process and in a synctest bubble (whose clock lies decades before the process's start).
func TestTimeIsAtsInverse(t *testing.T) {
	for _, n := range []int64{0, 1, -1, int64(time.Hour), -26 * 365 * 24 * int64(time.Hour), math.MaxInt64, math.MinInt64} {
		if got := At(Time(n)); got != n {
			t.Errorf("At(Time(%d)) = %d", n, got)
		}
	}
	check := func(t *testing.T) {
		now := Now()
		if d := time.Until(Time(now + int64(time.Hour))); d <= 59*time.Minute || d > time.Hour {
			t.Errorf("time.Until(Time(Now()+1h)) = %v, want about 1h", d)
		}
		if got, want := Time(At(time.Now())), time.Now(); got.Sub(want) > time.Second || want.Sub(got) > time.Second {
			t.Errorf("Time(At(time.Now())) = %v, want about %v", got, want)
		}
	}
	check(t)
	synctest.Test(t, func(t *testing.T) {
		check(t)
		start := Now()
		time.Sleep(3 * time.Second)
		if d := time.Since(Time(start)); d != 3*time.Second {
			t.Errorf("in a bubble, time.Since(Time(start)) after 3s = %v", d)
		}
		if got, want := Time(Now()), time.Now(); !got.Equal(want) {
			t.Errorf("in a bubble, Time(Now()) = %v, want time.Now() %v", got, want)
		}
	})
}

// TestAddSaturates: Add adds, and past the ends of int64 stops there: an absurd timeout
// never wraps into the past.
func TestAddSaturates(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		d    time.Duration
		want int64
	}{
		{5, 3, 8},
		{5, -3, 2},
		{-26 * 365 * 24 * int64(time.Hour), time.Hour, -26*365*24*int64(time.Hour) + int64(time.Hour)},
		{int64(time.Hour), math.MaxInt64, math.MaxInt64},
		{math.MaxInt64 - 1, 2, math.MaxInt64},
		{-int64(time.Hour), math.MinInt64, math.MinInt64},
		{math.MinInt64 + 1, -2, math.MinInt64},
	} {
		if got := Add(tc.n, tc.d); got != tc.want {
			t.Errorf("Add(%d, %d) = %d, want %d", tc.n, tc.d, got, tc.want)
		}
	}
}
