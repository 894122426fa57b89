// Command canary runs the canary drill of seed 002 in virtual time: a stable engine and a
// canary that ramps itself (translate.Ramp: 1% -> 5% -> 20% -> 100% of the users) serve a
// stream of users, three times: a good canary, one that fails 30% of its calls, and one
// that echoes the source text (bad output). It prints each step the Client took, a verdict
// per scenario and a text chart of the canary's share over time, and with -svg writes the
// same chart as SVG. Everything runs on fake engines and a virtual clock: a drill of
// several virtual minutes takes about a second.
//
// Usage:
//
//	go run ./examples/canary
//	go run ./examples/canary -svg canary.svg -requests 20000
//
// It exits with status 1 when a verdict fails, 2 on bad flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

func main() {
	fs := flag.NewFlagSet("canary", flag.ContinueOnError)
	a, err := parseArgs(fs, os.Args[1:])
	if err != nil {
		os.Exit(2)
	}
	if err := run(a, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "canary:", err)
		os.Exit(1)
	}
}

// args are the command's flags.
type args struct {
	svg      string        // chart path; "" for none
	requests int           // requests per scenario
	every    time.Duration // virtual time between two requests
	step     time.Duration // Ramp.StepEvery
}

func parseArgs(fs *flag.FlagSet, argv []string) (args, error) {
	var a args
	fs.StringVar(&a.svg, "svg", "", "write the chart as SVG to this file")
	fs.IntVar(&a.requests, "requests", 16000, "requests per scenario, one user each")
	fs.DurationVar(&a.every, "every", 10*time.Millisecond, "virtual time between two requests")
	fs.DurationVar(&a.step, "step-every", 10*time.Second, "Ramp.StepEvery: the least time at a step")
	if err := fs.Parse(argv); err != nil {
		return a, err
	}
	switch {
	case a.requests < 1 || a.requests > 1e6:
		err := errors.New("-requests must be within 1..1e6")
		fmt.Fprintln(fs.Output(), err)
		return a, err
	case a.every <= 0 || a.step <= 0:
		err := errors.New("-every and -step-every must be positive")
		fmt.Fprintln(fs.Output(), err)
		return a, err
	}
	return a, nil
}

// scenario is one way the canary behaves.
type scenario struct {
	name  string
	brk   func(*fake.Engine)
	wants string // "promoted" or "rolled back"
}

var scenarios = []scenario{
	{"good", func(*fake.Engine) {}, "promoted"},
	{"errors", func(e *fake.Engine) { e.FailRate(translate.KindUnavailable, 0.3, 7) }, "rolled back"},
	{"echo", func(e *fake.Engine) { e.SetBadOutput(fake.BadEcho) }, "rolled back"},
}

// result is what one scenario's drill recorded.
type result struct {
	scenario
	steps  []translate.CanaryStep
	shares []float64 // the canary's share at the end of each virtual second
	final  float64
}

func (r result) verdict() string {
	switch {
	case r.final == 100:
		return "promoted"
	case r.final == 0 && len(r.steps) > 0:
		return "rolled back"
	}
	return fmt.Sprintf("stuck at %g%%", r.final)
}

func run(a args, out io.Writer) error {
	var results []result
	failed := 0
	for _, sc := range scenarios {
		r, err := drill(a, sc)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		results = append(results, r)
		fmt.Fprintf(out, "%s canary:\n", sc.name)
		for _, st := range r.steps {
			fmt.Fprintf(out, "  %7.1fs  %3g%% -> %3g%%  %-10s  held %5.1fs  canary %4d calls, errors %.2f, good answers %.2f; others %5d calls, errors %.2f, good answers %.2f\n",
				st.At.Sub(epoch).Seconds(), st.From, st.To, st.Reason, st.Held.Seconds(),
				st.Requests, st.ErrorRate, st.Quality, st.BaseRequests, st.BaseErrorRate, st.BaseQuality)
		}
		ok := "ok"
		if r.verdict() != sc.wants {
			ok, failed = "FAILED", failed+1
		}
		fmt.Fprintf(out, "  verdict: %s (want %s): %s\n\n", r.verdict(), sc.wants, ok)
	}
	fmt.Fprint(out, textChart(results))
	if a.svg != "" {
		if err := os.WriteFile(a.svg, []byte(svgChart(results)), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nchart written to %s\n", a.svg)
	}
	if failed > 0 {
		return fmt.Errorf("%d verdict(s) failed", failed)
	}
	return nil
}

// epoch is where the virtual clock starts.
var epoch = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// drill runs one scenario: a.requests requests, one user each, a.every apart in virtual
// time.
func drill(a args, sc scenario) (result, error) {
	clk := &virtualClock{t: epoch}
	stable, can := fake.New("stable"), fake.New("canary")
	sc.brk(can)
	c, err := translate.New(translate.WithClock(clk), translate.WithoutCache(), translate.WithSeed(1),
		translate.WithEngine(stable, translate.Profile{Quality: 90}),
		translate.WithEngine(can, translate.Profile{Quality: 90, Ramp: &translate.Ramp{StepEvery: a.step}}))
	if err != nil {
		return result{}, err
	}
	defer c.Close()
	r := result{scenario: sc}
	var mu sync.Mutex
	stop := c.OnCanaryStep(func(st translate.CanaryStep) {
		mu.Lock()
		r.steps = append(r.steps, st)
		mu.Unlock()
	})
	defer stop()
	perSecond := max(1, int(time.Second/a.every))
	for i := range a.requests {
		clk.advance(a.every)
		req := translate.Request{Text: fmt.Sprintf("good morning, user %d", i), Source: "en", Target: "es",
			UserID: fmt.Sprintf("user-%d", i)}
		if _, err := c.Translate(context.Background(), req); err != nil {
			return r, fmt.Errorf("request %d: %w", i, err)
		}
		if (i+1)%perSecond == 0 {
			r.shares = append(r.shares, share(c))
		}
	}
	r.final = share(c)
	return r, nil
}

// share is the canary's share now.
func share(c *translate.Client) float64 {
	for _, es := range c.Engines() {
		if es.Name == "canary" {
			return es.Canary
		}
	}
	return 0
}

// virtualClock is a translate.Clock that moves only when told: Sleep advances it at once.
type virtualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *virtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *virtualClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.advance(d)
	return nil
}

func (c *virtualClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// levels are the text chart's marks by share.
var levels = []struct {
	share float64
	mark  byte
}{{100, '#'}, {20, '='}, {5, ':'}, {1, '.'}}

func mark(share float64) byte {
	for _, l := range levels {
		if share >= l.share {
			return l.mark
		}
	}
	if share > 0 {
		return ','
	}
	return '_'
}

// textChart draws each scenario's share over time, one column per textColumn seconds.
func textChart(results []result) string {
	const textColumn = 2 // seconds
	var b strings.Builder
	fmt.Fprintf(&b, "the canary's share of users over virtual time, one column per %ds\n", textColumn)
	fmt.Fprintf(&b, "(_ 0%%  . 1%%  : 5%%  = 20%%  # 100%%)\n")
	secs := 0
	for _, r := range results {
		secs = max(secs, len(r.shares))
		fmt.Fprintf(&b, "%-7s |", r.name)
		for i := 0; i < len(r.shares); i += textColumn {
			b.WriteByte(mark(r.shares[i]))
		}
		fmt.Fprintf(&b, "| %s\n", r.verdict())
	}
	cols := (secs + textColumn - 1) / textColumn
	end := fmt.Sprintf("%ds", secs)
	fmt.Fprintf(&b, "%-7s  0s%s%s\n", "", strings.Repeat(" ", max(1, cols-2-len(end))), end)
	return b.String()
}
