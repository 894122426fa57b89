// Command loadgen measures examples/server against the Portkey gateway, both in front of the
// same OpenAI-compatible mock vendor on loopback, with the same closed-loop load, one after
// the other in one run (issue 20). scripts/peer-portkey installs Portkey, builds the server and
// runs it:
//
//	go run ./internal/loadgen -server BIN -portkey .../build/start-server.js [-c 50] [-duration 10s]
//
// For each target it reports requests per second, p50 and p99 latency, the target process's
// CPU (user and system, from /proc/PID/stat) per request, and the connections to the vendor
// opened and closed during the measured window, then prints a markdown table with the ratios
// and whether examples/server served at least 3x Portkey's requests and opened no vendor
// connection in steady state. Linux only (it reads /proc).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// settings are the tool's flags.
type settings struct {
	server, node, portkey, portkeyVersion string
	conc                                  int
	warmup, duration, delay               time.Duration
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func parseFlags(args []string, stderr io.Writer) (settings, error) {
	var s settings
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&s.server, "server", "", "examples/server binary (required)")
	fs.StringVar(&s.portkey, "portkey", "", "the Portkey gateway's build/start-server.js; empty measures examples/server alone")
	fs.StringVar(&s.portkeyVersion, "portkey-version", "", "Portkey's version, for the table")
	fs.StringVar(&s.node, "node", "node", "node executable")
	fs.IntVar(&s.conc, "c", 50, "concurrency: requests in flight, each sent as the previous answered")
	fs.DurationVar(&s.warmup, "warmup", 5*time.Second, "load before the measured window")
	fs.DurationVar(&s.duration, "duration", 10*time.Second, "measured window per target")
	fs.DurationVar(&s.delay, "vendor-delay", 20*time.Millisecond, "how long the mock vendor takes to answer")
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	switch {
	case fs.NArg() > 0:
		return s, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case s.server == "":
		return s, errors.New("-server is required")
	case s.conc < 1 || s.warmup < 0 || s.duration <= 0 || s.delay < 0:
		return s, errors.New("-c and -duration must be positive, -warmup and -vendor-delay not negative")
	}
	return s, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	s, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "loadgen:", err)
		}
		return 2
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	v, err := startVendor(s.delay)
	if err != nil {
		fmt.Fprintln(stderr, "loadgen: vendor:", err)
		return 1
	}
	defer v.close()
	targets := []target{serverTarget(s.server)}
	if s.portkey != "" {
		targets = append(targets, portkeyTarget(s.node, s.portkey, s.portkeyVersion))
	}
	var results []result
	for _, t := range targets {
		r, err := measure(ctx, s, v, t)
		if err != nil {
			fmt.Fprintf(stderr, "loadgen: %s: %v\n", t.name, err)
			return 1
		}
		fmt.Fprintf(stderr, "%s: %s\n", t.name, r.summary())
		results = append(results, r)
	}
	fmt.Fprintf(stdout, "%d requests in flight, %v warm-up, %v measured per target, vendor answering after %v\n\n",
		s.conc, s.warmup, s.duration, s.delay)
	return writeReport(stdout, results)
}

// measure starts t, checks that one request succeeds, drives the load and stops t.
func measure(ctx context.Context, s settings, v *vendor, t target) (result, error) {
	p, err := start(ctx, t, v.baseURL())
	if err != nil {
		return result{}, err
	}
	defer p.stop()
	client, dialer := newClient(s.conc)
	defer client.CloseIdleConnections()
	l := &load{
		client: client,
		newReq: func(ctx context.Context, seq uint64) (*http.Request, error) {
			return t.request(ctx, p.base, v.baseURL(), seq)
		},
		conc: s.conc, warmup: s.warmup, duration: s.duration,
	}
	if err := l.once(ctx, 0); err != nil {
		return result{}, fmt.Errorf("first request: %w", err)
	}
	var at [2]snapshot
	var snapErr error
	l.mark = func(phase int32) {
		i := 0
		if phase == phaseDone {
			i = 1
		}
		snap, err := take(p.cmd.Process.Pid, v, dialer)
		at[i], snapErr = snap, errors.Join(snapErr, err)
	}
	w := l.run(ctx)
	if err := errors.Join(ctx.Err(), snapErr); err != nil {
		return result{}, err
	}
	return newResult(t.name, w, at[0], at[1]), nil
}
