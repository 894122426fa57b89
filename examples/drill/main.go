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
	f, code := parseFlags(args)
	if code != 0 {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	failed := false
	for k, s := range f.scenarios {
		if k > 0 {
			fmt.Println()
		}
		passed, code := play(ctx, f, s)
		if code != 0 {
			return code
		}
		failed = failed || !passed
		if ctx.Err() != nil {
			break
		}
	}
	if failed {
		return 1
	}
	return 0
}

// flags are the command line's settings.
type flags struct {
	scenarios []drill.Scenario
	rate      float64
	duration  time.Duration
	at        time.Duration
	out       string
	seed      uint64
	budget    float64
}

// parseFlags reads the command line; on a bad one it returns exit code 2, the flag package
// or it having said why.
func parseFlags(args []string) (flags, int) {
	var f flags
	fs := flag.NewFlagSet("drill", flag.ContinueOnError)
	scenario := fs.String("scenario", "all", "scenario to play: 1 (kill the top engine), 2 (5s latency), 3 (free quota to zero), 4 (70% 5xx) or all")
	fs.Float64Var(&f.rate, "rate", 200, "requests started per second")
	fs.DurationVar(&f.duration, "duration", 20*time.Second, "how long requests are started")
	fs.DurationVar(&f.at, "at", 0, "when the fault is injected (default duration/4)")
	fs.StringVar(&f.out, "out", "", "chart path (default drill-<scenario>.svg; with -scenario all, the scenario number is added before the extension)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of latencies, injected failures and routing")
	fs.Float64Var(&f.budget, "budget", 0, "scenario 3's daily budget in credits (default: the spend planned for the run)")
	if err := fs.Parse(args); err != nil {
		return f, 2
	}
	if *scenario == "all" {
		f.scenarios = drill.Scenarios
		return f, 0
	}
	n, err := strconv.Atoi(*scenario)
	if err != nil || n < 1 || n > len(drill.Scenarios) {
		fmt.Fprintf(os.Stderr, "drill: -scenario must be 1, 2, 3, 4 or all, not %q\n", *scenario)
		return f, 2
	}
	f.scenarios = []drill.Scenario{drill.Scenario(n)}
	return f, 0
}

// play runs scenario s, prints its table and verdict and writes its chart. It reports
// whether the verdict passed, and a non-zero exit code when the drill could not run (2)
// or its output could not be written (1).
func play(ctx context.Context, f flags, s drill.Scenario) (passed bool, code int) {
	cfg := drill.Config{Scenario: s, Rate: f.rate, Duration: f.duration, At: f.at, Seed: f.seed, Budget: f.budget}
	fmt.Printf("running scenario %d (%s) for %s at %g requests/s...\n", int(s), s, f.duration, f.rate)
	r, err := drill.Run(ctx, cfg)
	if r == nil {
		fmt.Fprintln(os.Stderr, err)
		return false, 2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "drill: stopped early:", err)
	}
	if err := drill.WriteTable(os.Stdout, r); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return false, 1
	}
	passed, lines := drill.Verdict(r)
	fmt.Println("\nverdict:")
	for _, l := range lines {
		fmt.Println("  " + l)
	}
	path := chartPath(f.out, s, len(f.scenarios) > 1)
	if err := writeChart(path, r); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return false, 1
	}
	fmt.Println("chart:", path)
	return passed, 0
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
