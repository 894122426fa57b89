// Package scenario runs the replicas scenario of redisstore: several processes share one
// daily budget and one quota-limited engine through Redis while one replica is killed and
// Redis is paused. The multi-process test and examples/replicas both run it; a replica is
// the calling binary re-executed with EnvReplica set.
package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/redisstore"
)

// Environment of a replica process.
const (
	EnvReplica = "REDISSTORE_SCENARIO_REPLICA" // the replica's index
	EnvConfig  = "REDISSTORE_SCENARIO_CONFIG"  // the Config as JSON
)

// Engine names in the scenario.
const (
	PaidEngine  = "paid"  // charged to the daily budget
	QuotaEngine = "quota" // free, with a quota in characters
)

// TextChars is the length of every request's text, in standard characters.
const TextChars = 24

// Config is the scenario. Default gives every field a value.
type Config struct {
	Replicas int
	Rate     float64       // requests per second per replica, open loop
	Duration time.Duration // load per replica, at least
	// MaxDuration bounds the load: past Duration a replica goes on until the shared budget
	// is spent, so a machine too busy to serve the load in time still spends it.
	MaxDuration    time.Duration
	StoreTimeout   time.Duration // redisstore.WithTimeout
	Daily          float64       // the shared daily budget in credits
	CostPerMillion float64       // the paid engine's price
	Quota          int64         // the quota engine's characters per day
	// Pinned is how every request is routed, by its number n: Pinned[n%len(Pinned)] is the
	// engine it pins (Request.Engine, no fallback), "" lets the router choose.
	Pinned        []string
	EngineLatency time.Duration
	// KilledLatency is the engine latency of the last replica, the one killed: long enough
	// that it dies holding leases, whose expiry the run then checks.
	KilledLatency time.Duration
	KillAt        time.Duration // SIGKILL of the last replica, from the start; 0: none
	PauseAt       time.Duration // SIGSTOP of Redis
	PauseFor      time.Duration // 0: no pause
	// FlushAt is when Redis loses every key (FLUSHALL), from the start; 0: never.
	FlushAt time.Duration
	// Weights, when set, scale each replica's Rate: replica i asks Rate*Weights[i] requests/s.
	Weights []float64
	// SpendAll checks the run as one that spends the whole budget (at least 99.9%, at most
	// 0.1% stranded). Every scenario keeps a replica's load on past Duration, once the
	// budget is spent or leased, until for 2 seconds in a row it served none of its own
	// requests and was refused: it spent its own block (or MaxDuration).
	SpendAll   bool
	RetryEvery int    // every n-th request also retries a request another replica sent; 0 none
	RedisURL   string // redis://host:port/db, as redis.ParseURL reads it
	Prefix     string
	Dir        string // engine records
	Now        time.Time
}

// Default is the scenario the test and the example run over 12 seconds or more. A third of the
// requests pins the paid engine, a third the quota engine, a third goes where the router
// sends it (the free quota engine first, the paid one when the quota is gone). A paid call
// costs 24 characters at 100 credits a million, 0.0024 credits, so the budget of 1.8 pays
// 750 calls; the quota of 14,400 characters allows 600. The replicas ask over 1,000 calls
// of each engine: the quota runs out near 4s, before the pause (5s to 8s), and the budget
// after it, partly from the blocks the replicas held through the pause. The load goes on 4s after the pause, as
// the replicas hold back the others' shares for a while after Redis answers again, and
// until the budget is spent and each replica's own block with it (30s at most on a loaded
// machine under the race detector). The replica that is killed at 3s has a slow
// vendor (1s), so it dies with calls in flight. The store's timeout is 200ms: a Redis
// paused for 3s is an outage, a loaded machine's scheduling delay is not.
func Default() Config {
	return Config{Replicas: 4, Rate: 60, Duration: 12 * time.Second, MaxDuration: 30 * time.Second,
		StoreTimeout: 200 * time.Millisecond, Daily: 1.8,
		CostPerMillion: 100, Quota: 14_400, Pinned: []string{PaidEngine, QuotaEngine, ""},
		EngineLatency: 30 * time.Millisecond, KilledLatency: time.Second,
		KillAt: 3 * time.Second, PauseAt: 5 * time.Second, PauseFor: 3 * time.Second, RetryEvery: 5}
}

// ZipfFlushAll is the second scenario: 8 replicas under Zipf(1.1)-skewed load (replica i
// asks in proportion to 1/(i+1)^1.1, 320 requests/s in all), every request pinned to the
// paid engine, and Redis FLUSHALLed at 3s, at about a third of the budget. No replica is
// killed and Redis is not paused. The store notices the loss and serves only from the
// blocks it held: the engines are never sent more than the budget.
func ZipfFlushAll() Config {
	w := make([]float64, 8)
	sum := 0.0
	for i := range w {
		w[i] = 1 / math.Pow(float64(i+1), 1.1)
		sum += w[i]
	}
	for i := range w {
		w[i] *= float64(len(w)) / sum // the mean weight is 1
	}
	return Config{Replicas: 8, Rate: 40, Weights: w, Duration: 8 * time.Second, MaxDuration: 10 * time.Second,
		StoreTimeout: 200 * time.Millisecond, Daily: 6, CostPerMillion: 100, Quota: 14_400,
		Pinned: []string{PaidEngine}, EngineLatency: 30 * time.Millisecond, FlushAt: 3 * time.Second}
}

// Zipf is the third scenario: ZipfFlushAll's 8 replicas and Zipf(1.1)-skewed load without
// the FLUSHALL, each replica going on until the budget is spent (SpendAll): the blocks sized
// from each replica's own rate must leave nothing stranded, however skewed the load.
func Zipf() Config {
	cfg := ZipfFlushAll()
	// 1,000 calls: 3s of the load, 20s at most on a loaded machine under the race detector.
	cfg.Daily, cfg.Duration, cfg.MaxDuration = 2.4, 3*time.Second, 25*time.Second
	cfg.FlushAt, cfg.SpendAll = 0, true
	return cfg
}

// rate is replica i's requests per second.
func (cfg *Config) rate(i int) float64 {
	if i < len(cfg.Weights) {
		return cfg.Rate * cfg.Weights[i]
	}
	return cfg.Rate
}

// Pin is the engine request n pins; "" when the router chooses. A retry has the number of
// the request it repeats, so it pins the same engine.
func (cfg *Config) Pin(n int) string {
	if len(cfg.Pinned) == 0 {
		return ""
	}
	return cfg.Pinned[n%len(cfg.Pinned)]
}

// Second is one replica's figures for one second, printed as a JSON line.
type Second struct {
	Replica int `json:"r"`
	Second  int `json:"s"`
	OK      int `json:"ok"`
	Refused int `json:"refused"` // budget, quota or no engine
	Failed  int `json:"failed"`
	// UnservedPaid and UnservedQuota are the requests pinned to the paid or the quota
	// engine that got no translation: demand above what the budget or the quota allowed.
	UnservedPaid  int `json:"up"`
	UnservedQuota int `json:"uq"`
	// RefusedIDs are admissions refused while Redis was away because their request id may
	// have reached an engine through another replica (redisstore.WithStrictRequestIDs).
	RefusedIDs int     `json:"rid"`
	Spent      float64 `json:"spent"` // Client.Budget().Spent as this replica sees it
	Degraded   bool    `json:"degraded"`
}

// recorder is an engine that appends every request it receives to a file, one unbuffered
// write per request, before it answers: what the vendor saw survives a SIGKILL. A line is
// "REQUESTID\tCHARS\tUNIXNANO\tD", D "1" when the call's admission was decided from the
// replica's local share (Redis did not answer).
type recorder struct {
	name    string
	f       *os.File
	latency time.Duration
	st      *taggedStore
}

func (r *recorder) Name() string { return r.name }

func (r *recorder) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	n := 0
	for _, t := range req.Texts {
		n += len([]rune(t))
	}
	d := "0"
	if r.st.wasLocal(r.name, req.RequestID) {
		d = "1"
	}
	line := req.RequestID + "\t" + strconv.Itoa(n) + "\t" + strconv.FormatInt(time.Now().UnixNano(), 10) + "\t" + d + "\n"
	if _, err := r.f.WriteString(line); err != nil {
		return nil, &translate.Error{Kind: translate.KindUnavailable, Engine: r.name, Message: "record: " + err.Error()}
	}
	t := time.NewTimer(r.latency)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
	}
	out := make([]string, len(req.Texts))
	for i, s := range req.Texts {
		out[i] = "[es] " + s
	}
	return &translate.EngineResult{Texts: out}, nil
}

// RecordFile is where replica i's engine name records what it was sent.
func RecordFile(dir, engine string, i int) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%d.log", engine, i))
}

// RequestID is the id of replica i's n-th request; Text its text, the same for a retry.
func RequestID(i, n int) string { return fmt.Sprintf("r%d-%d", i, n) }

func Text(id string) string {
	s := fmt.Sprintf("hello %s xxxxxxxxxxxxxxxxxxxxxxxx", id)
	return string([]rune(s)[:TextChars])
}

// NewRedis is a client for url that honours context deadlines, as redisstore requires.
func NewRedis(url string) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("scenario: redis url: %w", err)
	}
	opt.ContextTimeoutEnabled, opt.MaxRetries, opt.DisableIdentity, opt.PoolSize = true, -1, true, 64
	return redis.NewClient(opt), nil
}

// ReplicaMain runs one replica from the environment and prints a Second per second on
// stdout. It returns the process exit code.
func ReplicaMain() int {
	if err := runReplica(); err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 1
	}
	return 0
}

func runReplica() error {
	i, err := strconv.Atoi(os.Getenv(EnvReplica))
	if err != nil {
		return fmt.Errorf("bad %s: %w", EnvReplica, err)
	}
	var cfg Config
	if err := json.Unmarshal([]byte(os.Getenv(EnvConfig)), &cfg); err != nil {
		return fmt.Errorf("bad %s: %w", EnvConfig, err)
	}
	rdb, err := NewRedis(cfg.RedisURL)
	if err != nil {
		return err
	}
	defer rdb.Close()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := redisstore.New(rdb, redisstore.WithPrefix(cfg.Prefix), redisstore.WithReplicas(cfg.Replicas),
		redisstore.WithTimeout(cfg.StoreTimeout), redisstore.WithLogger(log), redisstore.WithStrictRequestIDs())
	if err != nil {
		return err
	}
	tagged := &taggedStore{Store: st, local: map[string]bool{}}
	latency := cfg.EngineLatency
	if i == cfg.Replicas-1 && cfg.KilledLatency > 0 {
		latency = cfg.KilledLatency
	}
	engines := make([]*recorder, 2)
	for j, name := range []string{PaidEngine, QuotaEngine} {
		f, err := os.OpenFile(RecordFile(cfg.Dir, name, i), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		engines[j] = &recorder{name: name, f: f, latency: latency, st: tagged}
	}
	c, err := translate.New(
		translate.WithEngine(engines[0], translate.Profile{Quality: 90, CostPerMillion: cfg.CostPerMillion, Timeout: 2 * time.Second}),
		translate.WithEngine(engines[1], translate.Profile{Quality: 80, Class: translate.ClassFree, Quota: cfg.Quota, Timeout: 2 * time.Second}),
		translate.WithBudget(translate.Budget{Daily: cfg.Daily}),
		translate.WithStore(tagged), translate.WithoutCache(), translate.WithDeadline(3*time.Second),
		translate.WithLogger(log))
	if err != nil {
		return err
	}
	defer c.Close()
	if err := load(c, tagged, cfg, i); err != nil {
		return err
	}
	_ = c.Close() // its calls settled: their reservations leave the blocks Flush returns
	return flush(st)
}

// flush pushes what the replica decided alone before it exits, as a service stopping
// gracefully should: trying again for up to 5s while Redis does not answer.
func flush(st *redisstore.Store) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		err := st.Flush(ctx)
		if err == nil || ctx.Err() != nil {
			return err
		}
	}
}

// taggedStore notes which admissions the store may have decided from its local share: it
// was degraded when Admit began or when it returned. The recorder marks those calls, so a
// request id sent twice is told apart by how it was admitted. It also counts the admissions
// the store refused for a request id another replica may have sent.
type taggedStore struct {
	*redisstore.Store
	refusedIDs atomic.Int64 // admissions refused for a request id another replica may have sent
	mu         sync.Mutex
	local      map[string]bool // engine/request id -> admitted while degraded
}

func (s *taggedStore) Admit(ctx context.Context, a translate.Admission) (translate.Admitted, error) {
	before := s.Degraded()
	got, err := s.Store.Admit(ctx, a)
	if got.Refused == translate.KindUnavailable { // only WithStrictRequestIDs refuses so
		s.refusedIDs.Add(1)
	}
	if got.Lease != "" && a.RequestID != "" && (before || s.Degraded()) {
		s.mu.Lock()
		s.local[a.Engine+"/"+a.RequestID] = true
		s.mu.Unlock()
	}
	return got, err
}

// wasLocal reports whether the admission of id on engine was decided while degraded, and
// forgets it.
func (s *taggedStore) wasLocal(engine, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := engine + "/" + id
	v := s.local[k]
	delete(s.local, k)
	return v
}

type tally struct {
	ok, refused, failed, unservedPaid, unservedQuota atomic.Int64
	own                                              atomic.Int64 // of ok: the replica's own requests, not retries another replica's request ids answered
}

// send makes replica's n-th request and counts what became of it; own: the replica's own
// request, not a retry of another's.
func (t *tally) send(c *translate.Client, cfg Config, replica, n int, own bool) {
	id := RequestID(replica, n)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	_, err := c.Translate(ctx, translate.Request{Text: Text(id), Source: "en", Target: "es",
		RequestID: id, Engine: cfg.Pin(n)})
	switch {
	case err != nil && cfg.Pin(n) == PaidEngine:
		t.unservedPaid.Add(1)
	case err != nil && cfg.Pin(n) == QuotaEngine:
		t.unservedQuota.Add(1)
	}
	switch translate.KindOf(err) {
	case translate.KindUnknown:
		if err == nil {
			t.ok.Add(1)
			if own {
				t.own.Add(1)
			}
		} else {
			t.failed.Add(1)
		}
	case translate.KindBudgetExceeded, translate.KindQuotaExhausted, translate.KindNoEngine:
		t.refused.Add(1)
	default:
		t.failed.Add(1)
	}
}

// load sends requests open loop: on a fixed schedule, whatever became of earlier ones.
func load(c *translate.Client, st *taggedStore, cfg Config, i int) error {
	enc := json.NewEncoder(os.Stdout)
	var t tally
	var wg sync.WaitGroup
	send := func(replica, n int) {
		defer wg.Done()
		t.send(c, cfg, replica, n, replica == i)
	}
	rate := cfg.rate(i)
	every := time.Duration(float64(time.Second) / rate)
	tick := time.NewTicker(every)
	defer tick.Stop()
	sec := time.NewTicker(time.Second)
	defer sec.Stop()
	start := time.Now()
	s, n, idle := 0, 0, 0 // idle: seconds in a row this replica served nothing and was refused
	for {
		select {
		case <-tick.C:
			// Catch up on ticks a busy machine dropped: request n is due at n/Rate seconds.
			for due := int(time.Since(start).Seconds() * rate); n < due; n++ {
				wg.Add(1)
				go send(i, n)
				if cfg.RetryEvery > 0 && n%cfg.RetryEvery == 0 && n >= 2 {
					wg.Add(1) // a retry of a request the previous replica sent a moment ago
					go send((i+cfg.Replicas-1)%cfg.Replicas, n-2)
				}
			}
		case <-sec.C:
			s++
			b := c.Budget()
			sec := Second{Replica: i, Second: s, OK: int(t.ok.Swap(0)), Refused: int(t.refused.Swap(0)),
				Failed: int(t.failed.Swap(0)), UnservedPaid: int(t.unservedPaid.Swap(0)),
				UnservedQuota: int(t.unservedQuota.Swap(0)), RefusedIDs: int(st.refusedIDs.Swap(0)),
				Spent: b.Spent, Degraded: st.Degraded()}
			if err := enc.Encode(sec); err != nil {
				return err
			}
			// Stop once the budget is spent or leased AND this replica was refused all its own
			// requests for 2 s (a retry served from another replica's answer needs no budget):
			// its own block is spent and Redis grants it nothing more. The budget figure alone
			// (Spent+Reserved as Client.Budget sees it, the last refill's while a refill is
			// under way or Redis is slow) could stop a replica that still held budget, whose
			// return then stranded it: on a loaded host every replica could stop at Duration.
			if idle = idle + 1; t.own.Swap(0) > 0 || sec.Refused == 0 { // refused, not merely slow
				idle = 0
			}
			if d := time.Since(start); d >= cfg.MaxDuration || (d >= cfg.Duration && budgetSpent(cfg, b) && idle >= 2) {
				wg.Wait()
				return nil
			}
		}
	}
}

// budgetSpent reports whether b leaves less than one paid call of the budget.
func budgetSpent(cfg Config, b translate.BudgetStatus) bool {
	call := TextChars * cfg.CostPerMillion / 1e6
	return b.Spent+b.Reserved > cfg.Daily-call+1e-9
}
