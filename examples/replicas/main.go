// Command replicas runs the redisstore scenario for a person to watch: four replicas of a
// service share one daily budget and one quota-limited engine through Redis, under open-loop
// load above what both allow. One replica is killed with SIGKILL; Redis is paused for 3s.
// It prints a per-second table per replica and the verdicts. With -scenario zipf-flushall,
// eight replicas under Zipf-skewed load share the budget and Redis loses every key
// (FLUSHALL) at 3s instead (scenario.ZipfFlushAll); with -scenario zipf they spend the whole
// budget without a loss, and the verdicts give what was spent and what stranded (scenario.Zipf).
//
//	go run ./examples/replicas                          # starts redis-server if installed
//	go run ./examples/replicas -scenario zipf-flushall
//	go run ./examples/replicas -scenario zipf
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/replicas
//
// With REDIS_URL the pause is CLIENT PAUSE, since a remote server cannot be stopped.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/fanyi-go/translate/examples/replicas/scenario"
	"github.com/fanyi-go/translate/redisstore/redistest"
)

func main() {
	if os.Getenv(scenario.EnvReplica) != "" { // this binary re-executed as one replica
		os.Exit(scenario.ReplicaMain())
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "replicas:", err)
		os.Exit(1)
	}
}

// redact drops the password of a Redis URL for printing.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable REDIS_URL)"
	}
	return u.Redacted()
}

// clientPause pauses a Redis the example did not start, with CLIENT PAUSE.
type clientPause struct {
	url string
	d   time.Duration
}

func (c clientPause) Pause() error {
	rdb, err := scenario.NewRedis(c.url)
	if err != nil {
		return err
	}
	defer rdb.Close()
	return rdb.ClientPause(context.Background(), c.d).Err()
}

func (c clientPause) Resume() error { return nil } // CLIENT PAUSE ends by itself

// chosen is the scenario the -scenario flag names.
func chosen() (scenario.Config, error) {
	which := flag.String("scenario", "outage", "outage (a replica killed, Redis paused), zipf-flushall (8 replicas, Zipf load, FLUSHALL at 3s) or zipf (8 replicas, Zipf load, the whole budget)")
	flag.Parse()
	switch *which {
	case "outage":
		return scenario.Default(), nil
	case "zipf-flushall":
		return scenario.ZipfFlushAll(), nil
	case "zipf":
		return scenario.Zipf(), nil
	}
	return scenario.Config{}, fmt.Errorf("unknown -scenario %q", *which)
}

// header says what the run does.
func header(cfg scenario.Config) {
	if len(cfg.Weights) > 0 {
		fmt.Printf("%d replicas under Zipf(1.1) load, %.0f requests/s in all (weights %.2f), every request pinned to the paid engine,\n"+
			"for %v and on until the budget is spent (%v at most); budget %.2f credits/day; Redis at %s\n", cfg.Replicas, cfg.Rate*float64(cfg.Replicas), cfg.Weights,
			cfg.Duration, cfg.MaxDuration, cfg.Daily, redact(cfg.RedisURL))
		if cfg.FlushAt > 0 {
			fmt.Printf("Redis loses every key (FLUSHALL) at %v\n", cfg.FlushAt)
		}
		fmt.Println()
		return
	}
	fmt.Printf("%d replicas, %.0f requests/s each for %v and on until the budget is spent (%v at most; a third pinned to\n"+
		"the paid engine, a third to the quota engine, a third routed); budget %.2f credits/day, quota engine %d chars/day;\n"+
		"Redis at %s\n", cfg.Replicas, cfg.Rate, cfg.Duration, cfg.MaxDuration, cfg.Daily, cfg.Quota, redact(cfg.RedisURL))
	fmt.Printf("replica %d (its vendor answers in %v) is killed at %v; Redis is paused at %v for %v\n\n",
		cfg.Replicas-1, cfg.KilledLatency, cfg.KillAt, cfg.PauseAt, cfg.PauseFor)
}

func run() error {
	cfg, err := chosen()
	if err != nil {
		return err
	}
	pauser, stop, err := useRedis(&cfg)
	if err != nil {
		return err
	}
	defer stop()
	dir, err := os.MkdirTemp("", "replicas-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg.Dir, cfg.Now = dir, time.Now()
	cfg.Prefix = fmt.Sprintf("replicas-example:%d:", cfg.Now.UnixNano())
	header(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := scenario.Run(ctx, cfg, os.Args[0], nil, pauser, os.Stderr)
	if err != nil {
		return err
	}
	rep.Table(os.Stdout)
	fmt.Println()
	vs := rep.Verdicts()
	printVerdicts(vs)
	fmt.Print(howToShare)
	if !scenario.OK(vs) {
		return errors.New("a verdict failed")
	}
	return nil
}

// useRedis points cfg at the Redis of REDIS_URL, paused with CLIENT PAUSE, or else at a
// redis-server it starts, paused by stopping it. stop stops what it started.
func useRedis(cfg *scenario.Config) (pauser scenario.Pauser, stop func(), err error) {
	if u := os.Getenv("REDIS_URL"); u != "" && cfg.FlushAt > 0 {
		return nil, nil, errors.New("-scenario zipf-flushall runs FLUSHALL: it runs only on the redis-server it starts itself, not on REDIS_URL")
	} else if u != "" {
		cfg.RedisURL = u
		return clientPause{u, cfg.PauseFor}, func() {}, nil
	}
	srv, err := redistest.Start()
	if errors.Is(err, redistest.ErrMissing) {
		return nil, nil, fmt.Errorf("%w; or set REDIS_URL to a Redis this example may use", err)
	}
	if err != nil {
		return nil, nil, err
	}
	cfg.RedisURL = "redis://" + srv.Addr
	return srv, srv.Stop, nil
}

// printVerdicts prints one line per verdict, marked ok or FAIL.
func printVerdicts(vs []scenario.Verdict) {
	for _, v := range vs {
		mark := "ok  "
		if !v.OK {
			mark = "FAIL"
		}
		fmt.Printf("%s %s: %s\n", mark, v.Name, v.Detail)
	}
}

// howToShare ends the run: how to play it on a Redis of your own, and how real services
// share state the same way.
const howToShare = `
To run this scenario against a Redis of your own (it writes keys under "replicas-example:"
and pauses that server for 3s with CLIENT PAUSE):

	REDIS_URL=redis://host:6379/0 go run ./examples/replicas

To share state between real services, give every replica the same Redis and prefix, for
example from REDIS_URL:

	opt, err := redis.ParseURL(os.Getenv("REDIS_URL")) // redis://user:pass@host:6379/0, rediss:// for TLS
	opt.ContextTimeoutEnabled = true                   // redisstore bounds every call by its own timeout
	st, err := redisstore.New(redis.NewClient(opt), redisstore.WithPrefix("mysvc:"), redisstore.WithReplicas(4))
	// add redisstore.WithStrictRequestIDs(), as this scenario does, to refuse while Redis is
	// away a request id another replica may have sent, rather than risk sending it twice
	c, err := translate.New(..., translate.WithStore(st))
	defer st.Flush(context.Background()) // on shutdown: push what was decided while Redis was away
`
