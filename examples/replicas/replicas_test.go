package main

import (
	"bytes"
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/examples/replicas/scenario"
	"github.com/fanyi-go/translate/redisstore/redistest"
)

func TestMain(m *testing.M) {
	if os.Getenv(scenario.EnvReplica) != "" { // a replica process of TestReplicas
		os.Exit(scenario.ReplicaMain())
	}
	os.Exit(m.Run())
}

// countingStore grants everything and counts Admits: it tells whether the Client uses its
// Store at all.
type countingStore struct{ admits atomic.Int64 }

func (c *countingStore) Admit(context.Context, translate.Admission) (translate.Admitted, error) {
	c.admits.Add(1)
	return translate.Admitted{Lease: "x", QuotaLeft: -1}, nil
}
func (c *countingStore) Settle(context.Context, translate.Settlement) error { return nil }
func (c *countingStore) Hold(context.Context, string, translate.Kind, time.Time) error {
	return nil
}
func (c *countingStore) Budget(context.Context, time.Time, float64) (translate.BudgetStatus, error) {
	return translate.BudgetStatus{}, nil
}

type echo struct{}

func (echo) Name() string { return "echo" }
func (echo) Translate(_ context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	out := make([]string, len(r.Texts))
	for i, t := range r.Texts {
		out[i] = "[es] " + t
	}
	return &translate.EngineResult{Texts: out}, nil
}

func clientUsesStore(t *testing.T) bool {
	st := new(countingStore)
	c, err := translate.New(translate.WithEngine(echo{}, translate.Profile{}), translate.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Translate(context.Background(), translate.Request{Text: "hello", Source: "en", Target: "es"})
	return st.admits.Load() > 0
}

// TestReplicas runs 4 replica processes (this test binary re-executed) against one real
// redis-server: open-loop load above the budget and the quota, one replica killed with
// SIGKILL, Redis paused with SIGSTOP for 3s. See scenario.Report.Verdicts.
func TestReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the multi-process scenario in -short mode")
	}
	srv, err := redistest.Start()
	if err != nil {
		if redistest.InCI() {
			t.Fatal(err)
		}
		t.Skip("skipping: ", err)
	}
	defer srv.Stop()
	if !clientUsesStore(t) {
		t.Skip("skipping: translate.Client does not call its Store yet (WithStore wiring)")
	}
	cfg := scenario.Default()
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
	t.Logf("per second (ok/refused/failed, budget spent as each replica sees it, * local share):\n%s", table.String())
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
