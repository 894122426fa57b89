// Package drill plays failure drills against simulated engines: it runs open-loop load
// through a [translate.Client] over four [fake] engines in real time, injects one fault part
// way through, and records what every caller and every engine saw, so that [Verdict] can
// judge the failover and [WriteTable] and [WriteSVG] can show it.
//
// The four scenarios are the ones of the drill program in examples/drill: the top-scored
// engine is killed ([KillTop]), one engine's latency jumps to 5s ([SlowEngine]), the free
// engine's quota drops to zero ([QuotaOut]) and one engine answers 5xx on 70% of calls
// ([ServerErrors]).
//
// Everything runs on real time: the Client's deadlines and the engines' latencies are
// timers. What can be made deterministic is: latencies, injected failures and routing draw
// from generators seeded by [Config].Seed.
package drill

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// Scenario is one of the four drills. The zero value is not a scenario.
type Scenario int

// Scenarios.
const (
	KillTop      Scenario = 1 + iota // the top-scored engine is killed: every call fails
	SlowEngine                       // the top-scored engine's latency jumps to 5s
	QuotaOut                         // the free engine's quota drops to zero
	ServerErrors                     // the top-scored engine answers 5xx on 70% of calls
)

// Scenarios lists every scenario, in order.
var Scenarios = []Scenario{KillTop, SlowEngine, QuotaOut, ServerErrors}

// String returns the scenario's short name, such as "kill-top".
func (s Scenario) String() string {
	switch s {
	case KillTop:
		return "kill-top"
	case SlowEngine:
		return "slow-engine"
	case QuotaOut:
		return "quota-out"
	case ServerErrors:
		return "server-errors"
	}
	return fmt.Sprintf("scenario(%d)", int(s))
}

// Title describes the scenario in a sentence.
func (s Scenario) Title() string {
	switch s {
	case KillTop:
		return "the top-scored engine is killed (every call fails)"
	case SlowEngine:
		return fmt.Sprintf("the top-scored engine's latency jumps to %v", SlowLatency)
	case QuotaOut:
		return "the free engine's quota drops to zero"
	case ServerErrors:
		return fmt.Sprintf("the top-scored engine answers 5xx on %.0f%% of calls", 100*ServerErrorRate)
	}
	return s.String()
}

// SlowLatency is the latency of the slow engine in [SlowEngine]. It is not scaled by
// Config.LatencyScale: it stays far above any attempt timeout.
const SlowLatency = 5 * time.Second

// ServerErrorRate is the share of calls that fail with a 503 in [ServerErrors].
const ServerErrorRate = 0.7

// Config configures a drill. Zero fields mean the default written beside them.
type Config struct {
	Scenario     Scenario      // required
	Rate         float64       // requests started per second, open loop; 0 means 200
	Duration     time.Duration // how long requests are started; 0 means 20s
	At           time.Duration // when the fault is injected, from the start; 0 means Duration/4
	Seed         uint64        // latencies, injected failures and routing; 0 means 1
	LatencyScale float64       // multiplies the engines' latencies (50 to 800ms); 0 means 1
	Timeout      time.Duration // every engine's Profile.Timeout (per attempt); 0 means 1s
	Deadline     time.Duration // WithDeadline (per request); 0 means 3s
	Cooldown     time.Duration // BreakerPolicy.Cooldown; 0 means the library default, 10s
	// Budget is the daily budget in credits of the QuotaOut scenario (the others run
	// without one). 0 means the spend the run would make if the free engine kept its quota:
	// the budget somebody planned before the free tier ran out.
	Budget float64
}

// withDefaults returns c with its zero fields set to their defaults, or an error naming
// the first field out of range.
func (c Config) withDefaults() (Config, error) {
	c.Rate = cmp.Or(c.Rate, 200)
	c.Duration = cmp.Or(c.Duration, 20*time.Second)
	c.At = cmp.Or(c.At, c.Duration/4)
	c.Seed = cmp.Or(c.Seed, 1)
	c.LatencyScale = cmp.Or(c.LatencyScale, 1)
	c.Timeout = cmp.Or(c.Timeout, time.Second)
	c.Deadline = cmp.Or(c.Deadline, 3*time.Second)
	return c, c.validate()
}

// validate returns an error naming the first field of c out of range.
func (c Config) validate() error {
	switch {
	case c.Scenario < KillTop || c.Scenario > ServerErrors:
		return fmt.Errorf("drill: unknown scenario %d (want 1 to 4)", int(c.Scenario))
	case negativeOrNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return errors.New("drill: Rate must be positive")
	case c.Duration < 0:
		return errors.New("drill: Duration must be positive")
	case c.At < 0 || c.At >= c.Duration:
		return errors.New("drill: At must be within the run")
	case negativeOrNaN(c.LatencyScale):
		return errors.New("drill: LatencyScale must be positive")
	case c.Timeout < 0 || c.Deadline < 0 || c.Cooldown < 0:
		return errors.New("drill: Timeout, Deadline and Cooldown must be positive")
	case negativeOrNaN(c.Budget):
		return errors.New("drill: Budget must not be negative")
	}
	return nil
}

// negativeOrNaN reports whether f cannot be a rate, a scale or a budget.
func negativeOrNaN(f float64) bool { return f < 0 || math.IsNaN(f) }

// EngineInfo describes one simulated engine.
type EngineInfo struct {
	Name    string
	Median  time.Duration // median latency, before Config.LatencyScale
	Profile translate.Profile
	Color   string // for charts
}

// Lineup returns the simulated engines every drill runs: three standard engines of different
// quality and price and one free engine with a daily quota. Their latencies are drawn around
// Median (see [Config].LatencyScale); scores and traffic shares follow from the profiles.
func Lineup() []EngineInfo {
	return []EngineInfo{
		{Name: "atlas", Median: 140 * time.Millisecond, Color: "#1f77b4",
			Profile: translate.Profile{Quality: 95, CostPerMillion: 10}},
		{Name: "boreal", Median: 155 * time.Millisecond, Color: "#ff7f0e",
			Profile: translate.Profile{Quality: 84, CostPerMillion: 20}},
		{Name: "cirrus", Median: 150 * time.Millisecond, Color: "#2ca02c",
			Profile: translate.Profile{Quality: 80, CostPerMillion: 30}},
		{Name: "libre", Median: 160 * time.Millisecond, Color: "#9467bd",
			Profile: translate.Profile{Quality: 78, Class: translate.ClassFree, Quota: freeQuota}},
	}
}

// freeQuota is the free engine's daily quota in characters, as the vendor and the Client
// both count it: far more than a drill uses, so only the injected fault exhausts it.
const freeQuota = 5_000_000

// latencyFunc returns a seeded latency distribution around median: a log-normal body
// (sigma 0.2: 90% of calls within 0.72x to 1.39x the median, 100 to 225ms for these
// engines) plus 0.2% slow outliers between 400 and 800ms, all clipped to 50..800ms and then
// scaled.
// The generator is shared by concurrent calls, hence the mutex.
func latencyFunc(median time.Duration, scale float64, seed uint64) func() time.Duration {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 0x6c6174656e6379))
	return func() time.Duration {
		mu.Lock()
		slow, u, z := rng.Float64() < 0.002, rng.Float64(), rng.NormFloat64()
		mu.Unlock()
		ms := float64(median/time.Millisecond) * math.Exp(0.2*z)
		if slow {
			ms = 400 + 400*u
		}
		ms = min(800, max(50, ms))
		return time.Duration(ms * scale * float64(time.Millisecond))
	}
}

// text returns the text of request i: distinct, so that neither the cache nor request
// coalescing hides a request from the engines, and always the same length, so that every
// request costs the same.
func text(i int) string {
	return fmt.Sprintf("Drill request %07d: the quick brown fox jumps over the lazy dog.", i)
}

// textChars is the length of every drill text in standard characters.
var textChars = len([]rune(text(0)))

// options are the Client options of every drill. They are chosen so that the verdicts are
// reachable at 200 requests per second with engines answering in 50 to 800ms:
func options(cfg Config) []translate.Option {
	opts := []translate.Option{
		// Every request must reach an engine: with a cache (or identical texts) the drill
		// would measure cache hits.
		translate.WithoutCache(),
		// One request can absorb one attempt timeout (Config.Timeout, 1s) and still fail
		// over twice; 3s is far below the library's 8s default, which would let a caller
		// wait on a slow engine much longer than it needs to.
		translate.WithDeadline(cfg.Deadline),
		// With healthy engines around, trying another engine at once beats waiting 200ms
		// to retry a failing one: one call per engine, at most three calls and two
		// switches per request.
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1, MaxAttempts: 3, MaxSwitches: 2}),
		// A window of 20 calls that may open after 10: at 50-70 calls per second an
		// engine's breaker opens within about 0.2s of its failures coming back, instead
		// of the 0.4s or more the default window of 40 and 20 calls needs.
		translate.WithBreaker(translate.BreakerPolicy{Window: 20, MinCalls: 10, Cooldown: cfg.Cooldown}),
		translate.WithSeed(cfg.Seed),
	}
	if cfg.Scenario == QuotaOut {
		opts = append(opts, translate.WithBudget(translate.Budget{Daily: cfg.Budget}))
	}
	return opts
}

// profile is info's profile with the drill's attempt timeout: far above the slowest healthy
// call (800ms), and short enough that a 5s engine costs a caller 1s, not 5.
func profile(info EngineInfo, cfg Config) translate.Profile {
	p := info.Profile
	p.Timeout = cfg.Timeout
	return p
}

// Run plays cfg's scenario: it starts cfg.Rate requests per second for cfg.Duration, each in
// its own goroutine, injects the fault at cfg.At, waits for every request to finish and
// returns what happened. Canceling ctx stops the load early; Run then still waits for the
// requests in flight and returns the partial report with ctx's error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	infos := Lineup()
	rec := &recorder{t0: time.Now(), index: map[string]int{}}
	fakes, engineOpts := simulate(cfg, infos, rec)
	if cfg.Scenario == QuotaOut && cfg.Budget == 0 {
		if cfg.Budget, err = plannedBudget(cfg, infos, engineOpts); err != nil {
			return nil, err
		}
	}
	client, err := translate.New(append(engineOpts, options(cfg)...)...)
	if err != nil {
		return nil, err
	}
	defer client.Close()

	r := &Report{Config: cfg, Engines: infos}
	if cfg.Scenario == QuotaOut {
		r.Budget = cfg.Budget
	}
	r.Requests = make([]Request, int(math.Ceil(cfg.Rate*cfg.Duration.Seconds())))

	// The load starts now: every offset in the report counts from here.
	rec.t0 = time.Now()
	stopSampler := sample(rec, client)
	launched := r.load(ctx, client, rec, fakes)
	stopSampler()
	r.collect(rec, client, launched)
	if err := ctx.Err(); err != nil {
		r.Interrupted = true
		return r, err
	}
	return r, nil
}

// simulate builds a fake engine per entry of infos, and the Client options that register
// each behind a tap recording its calls into rec, with the drill's logger.
func simulate(cfg Config, infos []EngineInfo, rec *recorder) ([]*fake.Engine, []translate.Option) {
	fakes := make([]*fake.Engine, len(infos))
	engineOpts := make([]translate.Option, 0, len(infos))
	for i, info := range infos {
		rec.index[info.Name] = i
		fakes[i] = fake.New(info.Name,
			fake.WithLatencyFunc(latencyFunc(info.Median, cfg.LatencyScale, cfg.Seed+uint64(i))),
			fake.WithQuota(info.Profile.Quota))
		engineOpts = append(engineOpts, translate.WithEngine(&tap{Engine: fakes[i], rec: rec}, profile(info, cfg)))
	}
	// The Client reports breaker transitions and pool moves through its logger; the drill
	// records them to the millisecond (Engines is only a snapshot).
	engineOpts = append(engineOpts, translate.WithLogger(slog.New(&eventLog{rec: rec})))
	return fakes, engineOpts
}

// plannedBudget is QuotaOut's default budget: the spend of the run with the free engine in,
// from the scores of a Client built like the drill's.
func plannedBudget(cfg Config, infos []EngineInfo, engineOpts []translate.Option) (float64, error) {
	probe, err := translate.New(append(engineOpts, options(cfg)...)...)
	if err != nil {
		return 0, err
	}
	defer probe.Close()
	return plannedSpend(cfg, infos, probe.Engines()), nil
}

// sample snapshots client.Engines into rec once a second until stop is called; stop waits
// for the sampler to end.
func sample(rec *recorder, client *translate.Client) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				rec.snapshot(client.Engines())
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// load starts the report's requests on schedule, open loop, each in its own goroutine,
// injects the fault once it is due, and waits for every request it started. It stops
// starting requests when ctx is canceled, and returns how many it started.
func (r *Report) load(ctx context.Context, client *translate.Client, rec *recorder, fakes []*fake.Engine) int {
	cfg, n := r.Config, len(r.Requests)
	var wg sync.WaitGroup
	interval := max(time.Millisecond, time.Duration(float64(time.Second)/cfg.Rate))
	tick := time.NewTicker(interval)
	launched, injected := 0, false
	for launched < n && wait(ctx, tick.C) {
		elapsed := time.Since(rec.t0)
		if !injected && elapsed >= cfg.At {
			r.FaultAt = time.Since(rec.t0)
			r.Target = inject(cfg, r.Engines, fakes, client.Engines())
			injected = true
		}
		// Open loop: start every request that is due, however many are still in flight.
		due := min(n, int(elapsed.Seconds()*cfg.Rate)+1)
		for ; launched < due; launched++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r.Requests[i] = do(ctx, client, rec.t0, i, cfg.Deadline)
			}(launched)
		}
	}
	tick.Stop()
	wg.Wait()
	return launched
}

// wait waits for the next tick and reports whether it came before ctx was canceled.
func wait(ctx context.Context, tick <-chan time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-tick:
		return true
	}
}

// collect completes the report once the load is over: the requests started, when the last
// one finished, and what rec and the Client saw.
func (r *Report) collect(rec *recorder, client *translate.Client, launched int) {
	r.Requests = r.Requests[:launched]
	r.End = time.Since(rec.t0)
	r.Final = client.Engines()
	rec.mu.Lock()
	r.Calls, r.Transitions, r.Notes, r.Snapshots = rec.calls, rec.transitions, rec.notes, rec.snapshots
	rec.mu.Unlock()
}

// do runs request i under its own context and records how it went.
func do(ctx context.Context, client *translate.Client, t0 time.Time, i int, deadline time.Duration) Request {
	// The Client's deadline ends the request first; this one only guards the drill.
	rctx, cancel := context.WithTimeout(ctx, deadline+time.Second)
	defer cancel()
	start := time.Now()
	res, err := client.Translate(rctx, translate.Request{Text: text(i), Source: "en", Target: "es"})
	q := Request{Start: start.Sub(t0), Latency: time.Since(start)}
	if err != nil {
		q.Err = translate.KindOf(err)
		var te *translate.Error
		if errors.As(err, &te) {
			q.Attempts, q.Tried = len(te.Attempts), engines(te.Attempts)
		}
		return q
	}
	q.OK, q.Engine, q.Cost, q.Attempts, q.Tried = true, res.Engine, res.Cost, len(res.Attempts), engines(res.Attempts)
	return q
}

func engines(as []translate.Attempt) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Engine
	}
	return out
}

// inject applies cfg's fault and returns the name of the engine it hit.
func inject(cfg Config, infos []EngineInfo, fakes []*fake.Engine, status []translate.EngineStatus) string {
	i := topScored(status)
	if cfg.Scenario == QuotaOut {
		for k, info := range infos {
			if info.Profile.Class == translate.ClassFree {
				i = k
			}
		}
	}
	switch cfg.Scenario {
	case KillTop:
		fakes[i].Down(translate.KindUnavailable)
	case SlowEngine:
		fakes[i].SetLatency(SlowLatency)
	case QuotaOut:
		// The vendor says the quota is gone (the key is shared, say), while the Client's
		// own count still shows plenty left.
		fakes[i].SetQuotaLeft(0)
	case ServerErrors:
		fakes[i].FailRate(translate.KindUnavailable, ServerErrorRate, cfg.Seed)
	}
	return infos[i].Name
}

// topScored returns the index of the engine with the highest routing score among those in
// the normal pool with a closed breaker.
func topScored(status []translate.EngineStatus) int {
	best := 0
	for i, s := range status {
		if s.Pool == translate.PoolNormal && s.Breaker == translate.BreakerClosed && s.Score > status[best].Score {
			best = i
		}
	}
	return best
}

// plannedSpend is what the run would spend if nothing failed: the engines' traffic shares
// as the router computes them from their scores (a softmax at the default temperature),
// times their prices.
func plannedSpend(cfg Config, infos []EngineInfo, status []translate.EngineStatus) float64 {
	sum, perRequest := 0.0, 0.0
	for i, s := range status {
		w := math.Exp(s.Score / translate.DefaultTemperature)
		sum += w
		perRequest += w * float64(textChars) * infos[i].Profile.CostPerMillion / 1e6
	}
	return perRequest / sum * cfg.Rate * cfg.Duration.Seconds()
}
