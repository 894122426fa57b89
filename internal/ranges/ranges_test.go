package ranges

import (
	"testing"
	"time"
)

// TestStringAsDocsWriteIt: ranges are written as the doc comments state them.
func TestStringAsDocsWriteIt(t *testing.T) {
	for _, tc := range []struct {
		l    Limit
		dur  bool
		want string
	}{
		{Limit{Lo: 1, Hi: 10000}, false, "1..10000"},
		{Limit{Lo: 0, Hi: 1e6}, false, "0..1e6"},
		{Limit{Lo: 0.2, Hi: 0.9}, false, "0.2..0.9"},
		{Limit{Lo: float64(100 * time.Millisecond), Hi: float64(time.Hour)}, true, "100ms..1h"},
		{Limit{Lo: float64(time.Second), Hi: float64(8760 * time.Hour)}, true, "1s..8760h"},
	} {
		if got := tc.l.String(tc.dur); got != tc.want {
			t.Errorf("%+v.String(%v) = %q, want %q", tc.l, tc.dur, got, tc.want)
		}
	}
}

// TestCheckNamesTheField: the first field outside its range is named, a zero that means
// the default passes, and a negative value says so.
func TestCheckNamesTheField(t *testing.T) {
	type P struct {
		N int
		D time.Duration
	}
	table := map[string]Limit{"P.N": {Lo: 1, Hi: 10, Zero: true}, "P.D": {Lo: 1, Hi: float64(time.Minute)}}
	for _, tc := range []struct {
		v          P
		field, msg string
	}{
		{P{N: 0, D: time.Second}, "", ""},
		{P{N: 11, D: time.Second}, "N", "must be within 1..10"},
		{P{N: 5, D: -1}, "D", "must not be negative"},
		{P{N: 5, D: time.Hour}, "D", "must be within 1ns..1m"},
	} {
		if f, m := Check(tc.v, table); f != tc.field || m != tc.msg {
			t.Errorf("Check(%+v) = %q %q, want %q %q", tc.v, f, m, tc.field, tc.msg)
		}
	}
}
