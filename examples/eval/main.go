// Command eval measures the quality of translation engines on an evaluation set with
// package eval: it sends every item to every engine through a translate.Client (each
// request pinned to its engine, uncached), scores each engine per language pair and scene
// with chrF2 and BLEU (and a judge model if asked), and prints a table and the quality
// figures for a configuration file (pair_quality per engine).
//
// With no flags it runs the set shipped with package eval (English to Spanish, English to
// Catalan, Spanish to Portuguese) on Apertium when apertium-apy is installed (a local APy
// is started on a free loopback port; APERTIUM_URL names a running one instead), or on two
// simulated engines otherwise, and against a simulated engine that garbles words. No vendor
// key is needed. With -config it evaluates the engines of a configuration file
// (translate.LoadConfig's format).
//
//	go run ./examples/eval
//	go run ./examples/eval -svg chart.svg -json report.json -quality quality.json
//	go run ./examples/eval -config translate.json -set my-set.tsv -results run.jsonl -max-cost 2 -apply measured.json
//	JUDGE_API_KEY=... go run ./examples/eval -judge-url https://api.openai.com/v1 -judge-model gpt-4o-mini -judge-budget 0.5 -judge-price 0.6
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/eval"
)

// args are the command's flags.
type args struct {
	set, config, results     string
	engines                  string
	concurrency              int
	maxCost                  float64
	timeout                  time.Duration
	jsonOut, svgOut, qualOut string
	apply                    string
	metric                   string
	judgeURL, judgeModel     string
	judgeBudget, judgePrice  float64
}

func parseArgs(fs *flag.FlagSet, argv []string) (args, error) {
	var a args
	fs.StringVar(&a.set, "set", "", "evaluation set, TSV or JSON lines (default: the set shipped with package eval)")
	fs.StringVar(&a.config, "config", "", "configuration file whose engines to evaluate (default: Apertium if installed, or simulated engines)")
	fs.StringVar(&a.engines, "engines", "", "comma-separated engine names to evaluate (default: every engine)")
	fs.StringVar(&a.results, "results", "", "results file (JSON lines): outputs are appended as they come, and a run resumes from it")
	fs.IntVar(&a.concurrency, "concurrency", 4, "requests in flight (1..64)")
	fs.Float64Var(&a.maxCost, "max-cost", 0, "stop once the run has cost this many credits (0: no cap of its own)")
	fs.DurationVar(&a.timeout, "timeout", 0, "bound on each request (0: the Client's deadline)")
	fs.StringVar(&a.jsonOut, "json", "", "write the report as JSON to this file")
	fs.StringVar(&a.svgOut, "svg", "", "write a chart (engines by language pair) to this SVG file")
	fs.StringVar(&a.qualOut, "quality", "", "write the quality figures (pair_quality per engine) to this file")
	fs.StringVar(&a.apply, "apply", "", "with -config: write the configuration, each measured engine's pair_quality replaced by the figures, to this file")
	fs.StringVar(&a.metric, "metric", "chrf", "metric of the quality figures and the chart: chrf, bleu or judge")
	fs.StringVar(&a.judgeURL, "judge-url", "", "OpenAI-compatible API base of a judge model (key in JUDGE_API_KEY)")
	fs.StringVar(&a.judgeModel, "judge-model", "", "the judge's model")
	fs.Float64Var(&a.judgeBudget, "judge-budget", 0, "credits the judge may spend (0: at most 1000 calls)")
	fs.Float64Var(&a.judgePrice, "judge-price", 0, "the judge's price in credits per million tokens")
	if err := fs.Parse(argv); err != nil {
		return a, err
	}
	if fs.NArg() > 0 {
		return a, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch eval.Metric(a.metric) {
	case eval.MetricChrF, eval.MetricBLEU, eval.MetricJudge:
	default:
		return a, fmt.Errorf("-metric %q: want chrf, bleu or judge", a.metric)
	}
	if a.apply != "" && a.config == "" {
		return a, errors.New("-apply needs -config")
	}
	if (a.judgeURL == "") != (a.judgeModel == "") {
		return a, errors.New("-judge-url and -judge-model go together")
	}
	return a, nil
}

func main() {
	a, err := parseArgs(flag.CommandLine, os.Args[1:])
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "eval:", err)
		}
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, a, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
}

// run evaluates and prints the table and the quality figures to out; progress and notes go
// to errw.
func run(ctx context.Context, a args, getenv func(string) string, out, errw io.Writer) error {
	set, err := readSet(a.set)
	if err != nil {
		return err
	}
	c, names, cleanup, err := client(ctx, a, set, getenv, errw)
	if err != nil {
		return err
	}
	defer cleanup()
	defer c.Close()
	cfg := eval.Config{Engines: names, Concurrency: a.concurrency, MaxCost: a.maxCost, Timeout: a.timeout,
		Progress: newProgress(errw).update}
	if a.judgeURL != "" {
		cfg.Judge = &eval.Judge{BaseURL: a.judgeURL, Key: getenv("JUDGE_API_KEY"), Model: a.judgeModel,
			Budget: a.judgeBudget, CostPerMillionTokens: a.judgePrice}
	}
	closeResults, err := results(a.results, &cfg)
	if err != nil {
		return err
	}
	defer closeResults()
	outs, runErr := eval.Run(ctx, c, set, cfg)
	fmt.Fprintln(errw)
	if runErr != nil {
		fmt.Fprintln(errw, "eval: the run stopped early:", runErr)
	}
	r := eval.NewReport(set, names, outs)
	if err := r.WriteTable(out); err != nil {
		return err
	}
	fig, err := r.ConfigJSON(eval.Metric(a.metric))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nQuality figures (%s) for the configuration file, each engine's pair_quality into its profile:\n%s\n", a.metric, fig)
	if err := writeFiles(a, r, fig); err != nil {
		return err
	}
	return runErr
}

func readSet(path string) ([]eval.Item, error) {
	if path == "" {
		return eval.ApertiumSet(), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return eval.ReadSet(f)
}

// results opens the results file: its outputs resume the run and new ones are appended.
func results(path string, cfg *eval.Config) (closeFn func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if cfg.Resume, err = eval.ReadOutputs(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg.Record = eval.NewRecorder(f)
	return func() { f.Close() }, nil
}

// writeFiles writes the report, chart and figures the flags ask for.
func writeFiles(a args, r *eval.Report, fig []byte) error {
	if a.jsonOut != "" {
		data, err := r.JSON()
		if err != nil {
			return err
		}
		if err := os.WriteFile(a.jsonOut, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	if a.svgOut != "" {
		var b strings.Builder
		if err := r.WriteSVG(&b, eval.Metric(a.metric)); err != nil {
			return err
		}
		if err := os.WriteFile(a.svgOut, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	if a.qualOut != "" {
		if err := os.WriteFile(a.qualOut, append(fig, '\n'), 0o644); err != nil {
			return err
		}
	}
	if a.apply != "" {
		return applyTo(a, r)
	}
	return nil
}

// applyTo writes -config with the figures loaded into its engines' profiles to -apply.
func applyTo(a args, r *eval.Report) error {
	cfg, err := translate.LoadConfig(a.config)
	if err != nil {
		return err
	}
	r.Apply(cfg, eval.Metric(a.metric))
	data, err := cfg.MarshalJSON()
	if err != nil {
		return err
	}
	return os.WriteFile(a.apply, append(data, '\n'), 0o644)
}

// progress draws a progress bar on one terminal line.
type progress struct {
	w     io.Writer
	start time.Time
}

func newProgress(w io.Writer) *progress { return &progress{w: w, start: time.Now()} }

func (p *progress) update(done, total int) {
	const width = 30
	n := width * done / max(total, 1)
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d %s", strings.Repeat("#", n), strings.Repeat(".", width-n), done, total,
		time.Since(p.start).Round(100*time.Millisecond))
}
