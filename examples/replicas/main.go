// Command replicas runs the redisstore scenario for a person to watch: four replicas of a
// service share one daily budget and one quota-limited engine through Redis, under open-loop
// load above what both allow. One replica is killed with SIGKILL; Redis is paused for 3s.
// It prints a per-second table per replica and the verdicts.
//
//	go run ./examples/replicas                          # starts redis-server if installed
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/replicas
//
// With REDIS_URL the pause is CLIENT PAUSE, since a remote server cannot be stopped.
package main

import (
	"context"
	"errors"
	"fmt"
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

func run() error {
	cfg := scenario.Default()
	var pauser scenario.Pauser
	if url := os.Getenv("REDIS_URL"); url != "" {
		cfg.RedisURL, pauser = url, clientPause{url, cfg.PauseFor}
	} else {
		srv, err := redistest.Start()
		if errors.Is(err, redistest.ErrMissing) {
			return fmt.Errorf("%w; or set REDIS_URL to a Redis this example may use", err)
		}
		if err != nil {
			return err
		}
		defer srv.Stop()
		cfg.RedisURL, pauser = "redis://"+srv.Addr, srv
	}
	dir, err := os.MkdirTemp("", "replicas-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg.Dir, cfg.Now = dir, time.Now()
	cfg.Prefix = fmt.Sprintf("replicas-example:%d:", cfg.Now.UnixNano())
	fmt.Printf("4 replicas, %.0f requests/s each for %v; budget %.2f credits/day, quota engine %d chars/day\n",
		cfg.Rate, cfg.Duration, cfg.Daily, cfg.Quota)
	fmt.Printf("replica %d is killed at %v; Redis is paused at %v for %v\n\n",
		cfg.Replicas-1, cfg.KillAt, cfg.PauseAt, cfg.PauseFor)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := scenario.Run(ctx, cfg, os.Args[0], nil, pauser, os.Stderr)
	if err != nil {
		return err
	}
	rep.Table(os.Stdout)
	fmt.Println()
	vs := rep.Verdicts()
	for _, v := range vs {
		mark := "ok  "
		if !v.OK {
			mark = "FAIL"
		}
		fmt.Printf("%s %s: %s\n", mark, v.Name, v.Detail)
	}
	fmt.Print(`
To share state between real services, give every replica the same Redis and prefix:

	rdb := redis.NewClient(&redis.Options{Addr: "redis:6379", ContextTimeoutEnabled: true})
	st, err := redisstore.New(rdb, redisstore.WithPrefix("mysvc:"), redisstore.WithReplicas(4))
	c, err := translate.New(..., translate.WithStore(st))
`)
	if !scenario.OK(vs) {
		return errors.New("a verdict failed")
	}
	return nil
}
