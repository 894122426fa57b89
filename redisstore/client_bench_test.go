package redisstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/redisstore"
	"github.com/fanyi-go/translate/redisstore/redistest"
)

type counter struct{ n atomic.Int64 }

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.n.Add(1); return next(ctx, cmd) }
}
func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.n.Add(1); return next(ctx, cmds) }
}

type echoEngine struct{}

func (echoEngine) Name() string { return "echo" }
func (echoEngine) Translate(_ context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	out := make([]string, len(r.Texts))
	for i, t := range r.Texts {
		out[i] = "[es] " + t
	}
	return &translate.EngineResult{Texts: out}, nil
}

func benchClient(b *testing.B) (*translate.Client, *counter) {
	srv, err := redistest.Start()
	if err != nil {
		if redistest.InCI() {
			b.Fatal(err)
		}
		b.Skip("skipping: ", err)
	}
	b.Cleanup(srv.Stop)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, DisableIdentity: true})
	b.Cleanup(func() { _ = rdb.Close() })
	cnt := new(counter)
	rdb.AddHook(cnt)
	st, err := redisstore.New(rdb, redisstore.WithPrefix("bench:"))
	if err != nil {
		b.Fatal(err)
	}
	c, err := translate.New(translate.WithEngine(echoEngine{}, translate.Profile{CostPerMillion: 10}),
		translate.WithBudget(translate.Budget{Daily: 1e9}), translate.WithStore(st))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return c, cnt
}

// BenchmarkClientMissWithStore: every request a new text, so every request calls the
// engine and the store (Admit and Settle).
func BenchmarkClientMissWithStore(b *testing.B) {
	c, cnt := benchClient(b)
	ctx := context.Background()
	i := 0
	cnt.n.Store(0)
	b.ReportAllocs()
	for b.Loop() {
		i++
		if _, err := c.Translate(ctx, translate.Request{Text: fmt.Sprint("hello ", i), Source: "en", Target: "es"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cnt.n.Load())/float64(b.N), "roundtrips/op")
}

// BenchmarkClientHitWithStore: the same text again, served by the in-process cache; the
// store is not asked.
func BenchmarkClientHitWithStore(b *testing.B) {
	c, cnt := benchClient(b)
	ctx := context.Background()
	req := translate.Request{Text: "hello", Source: "en", Target: "es"}
	if _, err := c.Translate(ctx, req); err != nil {
		b.Fatal(err)
	}
	cnt.n.Store(0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Translate(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cnt.n.Load())/float64(b.N), "roundtrips/op")
}
