package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/redisstore"
	"github.com/fanyi-go/translate/redisstore/redistest"
)

// These benchmarks put a Client with a Store on a redis-server on loopback beside the floor,
// a direct call of a no-op engine. Read them with
//
//	go test -run XXX -bench . -benchmem -count 6 ./redisstore/
//
// On a shared host read cpu-ns/op (the process's CPU per request) beside ns/op.

// counter counts Redis round trips: one per command, one per pipeline; not the hold
// watch's MGET, which each Client sends every WithHoldPoll whatever its requests.
type counter struct{ n atomic.Int64 }

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "mget" {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.n.Add(1); return next(ctx, cmds) }
}

// noop is the cheapest possible engine: it returns a prepared result.
type noop struct{ res *translate.EngineResult }

func newNoop() *noop { return &noop{res: &translate.EngineResult{Texts: []string{"hola"}}} }

func (*noop) Name() string { return "noop" }
func (n *noop) Translate(context.Context, *translate.EngineRequest) (*translate.EngineResult, error) {
	return n.res, nil
}

// floorEngine is a package variable so the compiler cannot devirtualise the call.
var floorEngine translate.Engine = newNoop()

// BenchmarkFloor is a direct call of a no-op engine through the Engine interface, as in the
// root package: the other benchmarks are read beside it.
func BenchmarkFloor(b *testing.B) {
	e := floorEngine
	ctx := context.Background()
	r := &translate.EngineRequest{Texts: []string{"hello"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Translate(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
}

func startServer(b *testing.B) *redistest.Server {
	srv, err := redistest.Start()
	if err != nil {
		if redistest.InCI() {
			b.Fatal(err)
		}
		b.Skip("skipping: ", err)
	}
	b.Cleanup(srv.Stop)
	return srv
}

// storeClient is a Client with a paid no-op engine and a daily budget, sharing state through
// its own redisstore.Store and go-redis client on addr, as one replica would.
func storeClient(b *testing.B, addr, prefix string, opts ...redisstore.Option) (*translate.Client, *counter) {
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, DisableIdentity: true})
	b.Cleanup(func() { _ = rdb.Close() })
	cnt := new(counter)
	rdb.AddHook(cnt)
	st, err := redisstore.New(rdb, append([]redisstore.Option{redisstore.WithPrefix(prefix)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	return plainClient(b, translate.WithStore(st)), cnt
}

func plainClient(b *testing.B, opts ...translate.Option) *translate.Client {
	c, err := translate.New(append([]translate.Option{translate.WithSeed(1),
		translate.WithEngine(newNoop(), translate.Profile{CostPerMillion: 10}),
		translate.WithBudget(translate.Budget{Daily: 1e9})}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return c
}

// texts are distinct request texts, made before the timer so a miss measures the Client.
func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "hello " + strconv.Itoa(i)
	}
	return out
}

func miss(b *testing.B, c *translate.Client, cnt *counter) {
	ctx := context.Background()
	ts := texts(1 << 16)
	i := 0
	if cnt != nil {
		cnt.n.Store(0)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		i++
		req := translate.Request{Text: ts[i%len(ts)] + strconv.Itoa(i/len(ts)), Source: "en", Target: "es"}
		if _, err := c.Translate(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	if cnt != nil {
		b.ReportMetric(float64(cnt.n.Load())/float64(b.N), "roundtrips/op")
	}
}

// cpuTime is the process's user and system CPU time so far: on a shared host the CPU a
// request costs is steadier than its wall time (redis-server's own CPU is not counted).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkClientMissNoStore is the same miss without a Store: the in-process path.
func BenchmarkClientMissNoStore(b *testing.B) {
	miss(b, plainClient(b), nil)
}

// BenchmarkClientMissWithStore: every request a new text, so every request calls the engine
// and the store (Admit before, Settle after) on loopback.
func BenchmarkClientMissWithStore(b *testing.B) {
	srv := startServer(b)
	c, cnt := storeClient(b, srv.Addr, "bench:miss:")
	miss(b, c, cnt)
}

// BenchmarkClientMissWithStoreReplicaAcks is BenchmarkClientMissWithStore on a master with
// a replica: every refill waits for the replica's acknowledgement (WAIT, the default when
// Redis has replicas), off the request path, so a miss should cost what it costs without.
func BenchmarkClientMissWithStoreReplicaAcks(b *testing.B) {
	master, replica := startServer(b), startServer(b)
	host, port, _ := strings.Cut(master.Addr, ":")
	rc := redis.NewClient(&redis.Options{Addr: replica.Addr, DisableIdentity: true})
	b.Cleanup(func() { _ = rc.Close() })
	ctx := context.Background()
	mc := redis.NewClient(&redis.Options{Addr: master.Addr, DisableIdentity: true})
	defer mc.Close()
	// The sync through the socket on both ends: no RDB file written into the package.
	for _, set := range []*redis.StatusCmd{mc.ConfigSet(ctx, "repl-diskless-sync", "yes"),
		mc.ConfigSet(ctx, "repl-diskless-sync-delay", "0"), rc.ConfigSet(ctx, "repl-diskless-load", "on-empty-db")} {
		if set.Err() != nil {
			b.Fatal(set.Err())
		}
	}
	if err := rc.ReplicaOf(ctx, host, port).Err(); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(rc.Info(ctx, "replication").Val(), "master_link_status:up"); {
		if time.Now().After(deadline) {
			b.Fatal("the replica did not link to its master within 20s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for deadline := time.Now().Add(20 * time.Second); ; { // until the master counts the replica for WAIT
		var wait *redis.Cmd
		_, _ = mc.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "bench:acks:probe", "1", time.Minute)
			wait = p.Do(ctx, "wait", 1, 100)
			return nil
		})
		if n, _ := wait.Int64(); n >= 1 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("no replica acknowledged a write within 20s")
		}
	}
	c, cnt := storeClient(b, master.Addr, "bench:acks:")
	miss(b, c, cnt)
	stats := mc.Info(ctx, "commandstats").Val()
	if i := strings.Index(stats, "cmdstat_wait:calls="); i >= 0 { // the refills waited for the replica
		n, _ := strconv.Atoi(strings.SplitN(stats[i+len("cmdstat_wait:calls="):], ",", 2)[0])
		b.ReportMetric(float64(n)/float64(b.N), "waits/op")
	} else {
		b.Fatal("no WAIT reached the master: grants did not wait for the replica")
	}
}

// BenchmarkClientMissWithStoreCache: the same with the second-level cache (WithCache): one
// more key written by Settle, no more round trips.
func BenchmarkClientMissWithStoreCache(b *testing.B) {
	srv := startServer(b)
	c, cnt := storeClient(b, srv.Addr, "bench:misscache:", redisstore.WithCache(time.Hour))
	miss(b, c, cnt)
}

// BenchmarkClientHitWithStore: the same text again, served by the in-process cache; the
// store is not asked (0 round trips).
func BenchmarkClientHitWithStore(b *testing.B) {
	srv := startServer(b)
	c, cnt := storeClient(b, srv.Addr, "bench:hit:")
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

// BenchmarkReplicas4Miss is 4 replicas in one process: 4 Clients, each with its own Store
// and go-redis client, sharing one budget on one redis-server on loopback, every request a
// miss; 16 goroutines per CPU spread over them. It reports requests per second over all
// four (the machine's CPUs serve the Clients and redis-server alike).
func BenchmarkReplicas4Miss(b *testing.B) {
	srv := startServer(b)
	const replicas = 4
	cs := make([]*translate.Client, replicas)
	cnts := make([]*counter, replicas)
	for i := range cs {
		cs[i], cnts[i] = storeClient(b, srv.Addr, "bench:replicas:")
	}
	var next, seq, failed atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(16)
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		c := cs[next.Add(1)%replicas]
		ctx := context.Background()
		for pb.Next() {
			req := translate.Request{Text: "hello " + strconv.FormatInt(seq.Add(1), 10), Source: "en", Target: "es"}
			if _, err := c.Translate(ctx, req); err != nil {
				failed.Add(1) // a refill that timed out on an overloaded host, with the block used up
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	b.ReportMetric(float64(failed.Load())/float64(b.N), "failed/op")
	var n int64
	for _, c := range cnts {
		n += c.n.Load()
	}
	b.ReportMetric(float64(n)/float64(b.N), "roundtrips/op")
}
