package redisstore_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/redisstore"
)

// BenchmarkClientMissWithStoreTenant is BenchmarkClientMissWithStore for a tenant with a
// daily and a monthly budget of its own under a Client with a monthly budget too: four
// limits leased in blocks (the Client's day and month, the tenant's day and month) instead
// of one.
func BenchmarkClientMissWithStoreTenant(b *testing.B) {
	srv := startServer(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, DisableIdentity: true})
	b.Cleanup(func() { _ = rdb.Close() })
	cnt := new(counter)
	rdb.AddHook(cnt)
	st, err := redisstore.New(rdb, redisstore.WithPrefix("bench:tenant:"))
	if err != nil {
		b.Fatal(err)
	}
	c := plainClient(b, translate.WithStore(st), translate.WithBudget(translate.Budget{Daily: 1e9, Monthly: 1e10,
		Tenants: map[string]translate.Budget{"acme": {Daily: 1e9, Monthly: 1e10}}}))
	ctx := context.Background()
	ts := texts(1 << 16)
	i := 0
	cnt.n.Store(0)
	b.ReportAllocs()
	for b.Loop() {
		i++
		req := translate.Request{Text: ts[i%len(ts)] + strconv.Itoa(i/len(ts)), Source: "en", Target: "es", Tenant: "acme"}
		if _, err := c.Translate(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cnt.n.Load())/float64(b.N), "roundtrips/op")
}
