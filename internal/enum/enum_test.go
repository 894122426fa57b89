package enum

import (
	"math"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestItoa(t *testing.T) {
	for _, n := range []int{0, 1, -1, 9, 10, -10, 42, 255, 1234567890, math.MaxInt, math.MinInt} {
		if got, want := Itoa(n), strconv.Itoa(n); got != want {
			t.Errorf("Itoa(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestName(t *testing.T) {
	tests := []struct {
		names []string
		v     int
		what  string
		want  string
	}{
		{Kinds[:], 0, "kind", "unknown"},
		{Kinds[:], 5, "kind", "rate_limited"},
		{Kinds[:], 13, "kind", "closed"},
		{Kinds[:], 14, "kind", "kind(14)"},
		{Scenes[:], 2, "scene", "legal"},
		{Scenes[:], 200, "scene", "scene(200)"},
		{Styles[:], 2, "style", "casual"},
		{Styles[:], 3, "style", "style(3)"},
		{Priorities[:], 1, "priority", "high"},
		{Priorities[:], 2, "priority", "priority(2)"},
		{Classes[:], 1, "class", "free"},
		{Classes[:], -1, "class", "class(-1)"},
	}
	var got, want []string
	for _, tt := range tests {
		got = append(got, Name(tt.names, tt.v, tt.what))
		want = append(want, tt.want)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Name (-want +got):\n%s", d)
	}
}
