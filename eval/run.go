package eval

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/fanyi-go/translate"
)

// Translator translates one request: a *translate.Client. Run calls it from several
// goroutines at once.
type Translator interface {
	Translate(ctx context.Context, req translate.Request) (*translate.Result, error)
}

// Output is one engine's answer to one item of a set: what a results file holds, one JSON
// object per line. A plain value.
type Output struct {
	Item    string        `json:"item"`   // Item.ID
	Engine  string        `json:"engine"` // the engine asked
	Text    string        `json:"text,omitempty"`
	Err     string        `json:"error,omitempty"` // the error's kind and message; "" on success
	Cost    float64       `json:"cost,omitempty"`  // credits charged (Result.Cost)
	Latency time.Duration `json:"latency_ns,omitempty"`
	// Judge is the judge's score 0..100; nil when not judged (no judge, its budget spent,
	// or its call failed).
	Judge *float64 `json:"judge,omitempty"`
}

// Config configures Run. Zero fields mean the default written beside them; Engines is
// required.
type Config struct {
	Engines     []string // engine names to evaluate, as the Translator knows them; required
	Concurrency int      // items in flight at once; 0 means 4; 1..64
	// MaxCost stops the run once its requests have cost this many credits (the sum of
	// Result.Cost): no new request starts, those in flight (at most Concurrency) finish.
	// 0 means no cap of its own; for a hard cap give the Client a Budget, which is never
	// exceeded.
	MaxCost float64
	// Timeout bounds each request; 0 means the Client's own deadline alone.
	Timeout time.Duration
	// Resume holds the outputs of an earlier run (ReadOutputs): the successful ones are
	// kept and not asked again; failed ones are asked again.
	Resume []Output
	// Record, if set, is called with each new output as it completes, one call at a time,
	// to append it to a results file (NewRecorder); an error stops the run.
	Record func(Output) error
	// Progress, if set, is called after each output with the outputs done (resumed ones
	// included) and the total; one call at a time.
	Progress func(done, total int)
	// Judge, if set, scores each successful output 0..100 under its own budget.
	Judge *Judge
}

// ErrBudget is returned by Run (wrapped) when Config.MaxCost stopped it early.
var ErrBudget = errors.New("eval: the run's budget (MaxCost) is spent")

type job struct {
	item   *Item
	engine string
}

// Run asks every engine of cfg.Engines to translate every item of set through t, each
// request pinned to its engine with no fallback and no cache (Request.Engine,
// Request.NoCache), so that the Client's limits, quotas, breakers and budget apply as they
// do in production. It returns every output, the resumed ones included, in set order then
// engine order. A failed request is an output with Err set, not an error of Run. Run
// returns early with the outputs so far and an error when ctx ends, cfg.Record fails or
// cfg.MaxCost is reached (ErrBudget).
func Run(ctx context.Context, t Translator, set []Item, cfg Config) ([]Output, error) {
	if len(cfg.Engines) == 0 {
		return nil, errors.New("eval: Config.Engines is empty")
	}
	if cfg.Concurrency < 0 || cfg.Concurrency > 64 || cfg.MaxCost < 0 || cfg.Timeout < 0 {
		return nil, errors.New("eval: Config.Concurrency must be within 0..64, MaxCost and Timeout not negative")
	}
	done := map[[2]string]Output{}
	for _, o := range cfg.Resume {
		if o.Err == "" {
			done[[2]string{o.Item, o.Engine}] = o
		}
	}
	var todo []job
	for i := range set {
		for _, e := range cfg.Engines {
			if _, ok := done[[2]string{set[i].ID, e}]; !ok {
				todo = append(todo, job{&set[i], e})
			}
		}
	}
	total := len(set) * len(cfg.Engines)
	r := &runner{t: t, cfg: cfg, done: done, total: total}
	err := r.run(ctx, todo)
	out := make([]Output, 0, total)
	for _, it := range set {
		for _, e := range cfg.Engines {
			if o, ok := r.done[[2]string{it.ID, e}]; ok {
				out = append(out, o)
			}
		}
	}
	return out, err
}

// runner is one Run: its workers and what they have done.
type runner struct {
	t     Translator
	cfg   Config
	done  map[[2]string]Output // by item and engine; the collecting goroutine's alone
	total int
	spent float64
}

// run has n workers translate todo, fed in order, and collects their outputs; after an
// error of collect or the end of ctx it feeds no more and waits for those in flight.
func (r *runner) run(ctx context.Context, todo []job) error {
	n := cmp.Or(r.cfg.Concurrency, 4)
	// outs is unbuffered: a worker takes its next job only once its output is collected,
	// so no more than n requests are ever in flight or done and not yet counted.
	jobs, outs, stop := make(chan job), make(chan Output), make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for j := range jobs {
				outs <- r.one(ctx, j)
			}
		})
	}
	go func() { wg.Wait(); close(outs) }()
	go func() {
		defer close(jobs)
		for _, j := range todo {
			select {
			case jobs <- j:
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	var err error
	for o := range outs {
		if e := r.collect(o); e != nil && err == nil {
			err = e
			close(stop)
		}
	}
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// collect records one output; it returns why the run must stop, if it must.
func (r *runner) collect(o Output) error {
	r.done[[2]string{o.Item, o.Engine}] = o
	r.spent += o.Cost
	if r.cfg.Progress != nil {
		r.cfg.Progress(len(r.done), r.total)
	}
	if r.cfg.Record != nil {
		if err := r.cfg.Record(o); err != nil {
			return fmt.Errorf("eval: recording an output: %w", err)
		}
	}
	if r.cfg.MaxCost > 0 && r.spent >= r.cfg.MaxCost {
		return fmt.Errorf("%w: %.4g credits spent, cap %.4g", ErrBudget, r.spent, r.cfg.MaxCost)
	}
	return nil
}

// one translates one item on one engine, and has the judge score it.
func (r *runner) one(ctx context.Context, j job) Output {
	o := Output{Item: j.item.ID, Engine: j.engine}
	scene, _ := parseScene(j.item.scene())
	rctx := ctx
	if r.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, r.cfg.Timeout)
		defer cancel()
	}
	res, err := r.t.Translate(rctx, translate.Request{Text: j.item.Text, Source: j.item.Source, Target: j.item.Target,
		Scene: scene, Engine: j.engine, NoCache: true, Priority: translate.PriorityHigh}) // high: no rule keeps it from a premium engine
	if err != nil {
		o.Err = err.Error()
		return o
	}
	o.Text, o.Cost, o.Latency = res.Text, res.Cost, res.Latency
	if r.cfg.Judge != nil {
		if s, err := r.cfg.Judge.Score(ctx, *j.item, res.Text); err == nil {
			o.Judge = &s
		}
	}
	return o
}

// NewRecorder returns a Config.Record that appends each output to w as one JSON line.
func NewRecorder(w io.Writer) func(Output) error {
	enc := json.NewEncoder(w)
	return func(o Output) error { return enc.Encode(o) }
}

// ReadOutputs reads a results file that NewRecorder wrote, for Config.Resume. A last line
// cut short (a run killed while writing it) is ignored; any other bad line is an error.
func ReadOutputs(r io.Reader) ([]Output, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var outs []Output
	var bad error
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if bad != nil {
			return nil, bad
		}
		var o Output
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil || o.Item == "" || o.Engine == "" {
			bad = fmt.Errorf("eval: results line %d is not an output", n)
			continue
		}
		outs = append(outs, o)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval: reading results: %w", err)
	}
	return outs, nil
}
