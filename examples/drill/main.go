// Command drill runs load against simulated engines in real time and plays a failure
// scenario: the top-scored engine is killed (1), one engine's latency jumps to 5s (2), the
// free engine's quota drops to zero (3), or one engine answers 5xx on 70% of calls (4). For
// each it prints a per-second table and a verdict, and writes an SVG chart of the traffic
// share per engine with breaker-open stretches shaded and p99 latency on a second axis.
//
// Usage:
//
//	go run ./examples/drill -scenario all
//	go run ./examples/drill -scenario 2 -rate 300 -duration 30s -at 10s -out slow.svg
//
// It exits with status 1 when a verdict fails, 2 on bad flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fanyi-go/translate/examples/drill/drill"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("drill", flag.ContinueOnError)
	scenario := fs.String("scenario", "all", "scenario to play: 1 (kill the top engine), 2 (5s latency), 3 (free quota to zero), 4 (70% 5xx) or all")
	rate := fs.Float64("rate", 200, "requests started per second")
	duration := fs.Duration("duration", 20*time.Second, "how long requests are started")
	at := fs.Duration("at", 0, "when the fault is injected (default duration/4)")
	out := fs.String("out", "", "chart path (default drill-<scenario>.svg; with -scenario all, the scenario number is added before the extension)")
	seed := fs.Uint64("seed", 1, "seed of latencies, injected failures and routing")
	budget := fs.Float64("budget", 0, "scenario 3's daily budget in credits (default: the spend planned for the run)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var scenarios []drill.Scenario
	if *scenario == "all" {
		scenarios = drill.Scenarios
	} else {
		n, err := strconv.Atoi(*scenario)
		if err != nil || n < 1 || n > len(drill.Scenarios) {
			fmt.Fprintf(os.Stderr, "drill: -scenario must be 1, 2, 3, 4 or all, not %q\n", *scenario)
			return 2
		}
		scenarios = []drill.Scenario{drill.Scenario(n)}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	failed := false
	for k, s := range scenarios {
		if k > 0 {
			fmt.Println()
		}
		cfg := drill.Config{Scenario: s, Rate: *rate, Duration: *duration, At: *at, Seed: *seed, Budget: *budget}
		fmt.Printf("running scenario %d (%s) for %s at %g requests/s...\n", int(s), s, *duration, *rate)
		r, err := drill.Run(ctx, cfg)
		if r == nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "drill: stopped early:", err)
		}
		if err := drill.WriteTable(os.Stdout, r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		ok, lines := drill.Verdict(r)
		fmt.Println("\nverdict:")
		for _, l := range lines {
			fmt.Println("  " + l)
		}
		if !ok {
			failed = true
		}
		path := chartPath(*out, s, len(scenarios) > 1)
		if err := writeChart(path, r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("chart:", path)
		if ctx.Err() != nil {
			break
		}
	}
	if failed {
		return 1
	}
	return 0
}

func chartPath(out string, s drill.Scenario, many bool) string {
	if out == "" {
		return fmt.Sprintf("drill-%d.svg", int(s))
	}
	if !many {
		return out
	}
	ext := filepath.Ext(out)
	return fmt.Sprintf("%s-%d%s", strings.TrimSuffix(out, ext), int(s), ext)
}

func writeChart(path string, r *drill.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := drill.WriteSVG(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
