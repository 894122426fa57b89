package main

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDrill runs the command as shipped: the good canary is promoted through 1, 5, 20 and
// 100%, the two bad ones are rolled back, and the chart is drawn as text and as SVG.
func TestDrill(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "canary.svg")
	a, err := parseArgs(flag.NewFlagSet("canary", flag.ContinueOnError), []string{"-svg", svg})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(a, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"  1% ->   5%  healthy", "  5% ->  20%  healthy", " 20% -> 100%  healthy",
		"verdict: promoted (want promoted): ok", "1% ->   0%  quality",
		"good    |", "errors  |", "echo    |", "| promoted\n", "| rolled back\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "verdict: rolled back (want rolled back): ok"); n != 2 {
		t.Errorf("%d bad canaries rolled back, want 2:\n%s", n, out.String())
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(data, new(struct{})); err != nil || strings.Count(string(data), "<polyline") != 3 {
		t.Errorf("the SVG does not parse (%v) or lacks its three lines:\n%s", err, data)
	}
}

func TestParseArgs(t *testing.T) {
	for _, argv := range [][]string{{"-requests", "0"}, {"-every", "0s"}, {"-step-every", "-1s"}, {"-nope"}} {
		fs := flag.NewFlagSet("canary", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		if _, err := parseArgs(fs, argv); err == nil {
			t.Errorf("parseArgs(%q) = nil error", argv)
		}
	}
}
