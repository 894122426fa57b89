package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want flags
	}{
		{nil, flags{scenarios: drill.Scenarios, rate: 200, duration: 20 * time.Second, seed: 1}},
		{[]string{"-scenario", "2", "-rate", "300", "-duration", "30s", "-at", "10s", "-out", "slow.svg", "-seed", "7", "-budget", "0.5"},
			flags{scenarios: []drill.Scenario{drill.SlowEngine}, rate: 300, duration: 30 * time.Second, at: 10 * time.Second,
				out: "slow.svg", seed: 7, budget: 0.5}},
	} {
		got, code := parseFlags(tc.args)
		if code != 0 {
			t.Errorf("parseFlags(%q) exit code %d", tc.args, code)
		}
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(flags{})); diff != "" {
			t.Errorf("parseFlags(%q) (-want +got):\n%s", tc.args, diff)
		}
	}
}
