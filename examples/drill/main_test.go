package main

import (
	"testing"

	"github.com/fanyi-go/translate/examples/drill/drill"
)

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-scenario", "5"},
		{"-scenario", "one"},
		{"-rate", "fast"},
		{"-no-such-flag"},
	} {
		if code := run(args); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
	}
}

func TestChartPath(t *testing.T) {
	for _, tc := range []struct {
		out  string
		many bool
		want string
	}{
		{"", false, "drill-3.svg"},
		{"", true, "drill-3.svg"},
		{"quota.svg", false, "quota.svg"},
		{"charts/run.svg", true, "charts/run-3.svg"},
	} {
		if got := chartPath(tc.out, drill.QuotaOut, tc.many); got != tc.want {
			t.Errorf("chartPath(%q, 3, %v) = %q, want %q", tc.out, tc.many, got, tc.want)
		}
	}
}
