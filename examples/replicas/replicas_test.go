package main

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/fanyi-go/translate/examples/replicas/scenario"
	"github.com/fanyi-go/translate/redisstore/redistest"
)

func TestMain(m *testing.M) {
	if os.Getenv(scenario.EnvReplica) != "" { // a replica process of TestReplicas
		os.Exit(scenario.ReplicaMain())
	}
	code := m.Run()
	redistest.ReportSkips("examples/replicas")
	os.Exit(code)
}

// TestReplicas runs 4 replica processes (this test binary re-executed) against one real
// redis-server: open-loop load above the budget and the quota, one replica killed with
// SIGKILL, Redis paused with SIGSTOP for 3s. See scenario.Report.Verdicts. It never skips
// in CI (CI=true): a missing redis-server fails it.
func TestReplicas(t *testing.T) {
	runScenario(t, scenario.Default())
}

// TestReplicasZipfFlushAll runs 8 replica processes under Zipf(1.1)-skewed load against one
// real redis-server and FLUSHALLs it at 3s: the engines are never sent more than the daily
// budget (the store notices the loss and serves only from the blocks it held), no request
// id reaches an engine twice. See scenario.ZipfFlushAll.
func TestReplicasZipfFlushAll(t *testing.T) {
	runScenario(t, scenario.ZipfFlushAll())
}

// TestReplicasZipfSpendTheBudget runs 8 replica processes under Zipf(1.1)-skewed load
// against one real redis-server until the budget is spent: at least 99.9% of it reaches the
// engines, never more, and at most 0.1% is stranded. See scenario.Zipf.
func TestReplicasZipfSpendTheBudget(t *testing.T) {
	runScenario(t, scenario.Zipf())
}

// runScenario runs cfg's replica processes against a redis-server of its own and checks
// every verdict. It never skips in CI (CI=true): a missing redis-server fails it.
func runScenario(t *testing.T, cfg scenario.Config) {
	if testing.Short() && !redistest.InCI() {
		t.Skip("skipping the multi-process scenario in -short mode")
	}
	srv, err := redistest.Start()
	if err != nil {
		redistest.Skip(t, err) // fails in CI
	}
	defer srv.Stop()
	cfg.RedisURL, cfg.Prefix, cfg.Dir, cfg.Now = "redis://"+srv.Addr, "replicas:", t.TempDir(), time.Now()
	var logs bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	rep, err := scenario.Run(ctx, cfg, os.Args[0], []string{"-test.run=^$"}, srv, &logs)
	if err != nil {
		t.Fatalf("%v\nreplica logs:\n%s", err, logs.String())
	}
	var table bytes.Buffer
	rep.Table(&table)
	t.Logf("per second (ok/refused/failed, budget spent as each replica sees it, * degraded):\n%s", table.String())
	for _, v := range rep.Verdicts() {
		if v.OK {
			t.Logf("ok   %s: %s", v.Name, v.Detail)
		} else {
			t.Errorf("FAIL %s: %s", v.Name, v.Detail)
		}
	}
	if t.Failed() {
		t.Logf("replica logs:\n%s", logs.String())
	}
}
