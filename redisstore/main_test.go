package redisstore

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/fanyi-go/translate/redisstore/redistest"
)

// shared is the redis-server most tests use, each under its own prefix; nil when
// redis-server is not installed (tests then skip, or fail in CI).
var shared *redistest.Server

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

// runTests starts the shared server, runs the tests, stops it and checks for leaked
// goroutines.
func runTests(m *testing.M) int {
	var err error
	shared, err = redistest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "redisstore tests:", err)
		if redistest.InCI() {
			return 1
		}
		shared = nil
	}
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	if cluster != nil {
		cluster.Stop()
	}
	redistest.ReportSkips("redisstore")
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreCurrent()); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code
}

// needServer returns the shared server; without one it skips t (fails it in CI), and
// TestMain says how many tests it skipped.
func needServer(t testing.TB) *redistest.Server {
	t.Helper()
	if shared == nil {
		redistest.Skip(t, redistest.ErrMissing)
	}
	return shared
}

// cluster is the 3-master Redis Cluster the cluster tests share, started by the first.
var (
	cluster     *redistest.Cluster
	clusterErr  error
	clusterOnce sync.Once
)

func needCluster(t testing.TB) *redistest.Cluster {
	t.Helper()
	needServer(t)
	clusterOnce.Do(func() { cluster, clusterErr = redistest.StartCluster(3) })
	if clusterErr != nil {
		redistest.Skip(t, clusterErr) // fails in CI; reported by TestMain
	}
	return cluster
}

func newClusterClient(t testing.TB, addrs []string) *redis.ClusterClient {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true,
		ClusterStateReloadInterval: time.Second, DisableIdentity: true, MaxRetries: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// ownServer starts a redis-server for one test (one it may pause) and stops it at the end.
func ownServer(t testing.TB) *redistest.Server {
	t.Helper()
	needServer(t)
	s, err := redistest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// newClient is a go-redis client with no read or write timeout of its own: the store's
// WithTimeout is the only bound on a call, as the tests check.
func newClient(t testing.TB, addr string) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true,
		MaxRetries: -1, DisableIdentity: true, ReadTimeout: -1, WriteTimeout: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// clock is a settable wall clock for the store (Hold, probes).
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock    { c := new(clock); c.ns.Store(t.UnixNano()); return c }
func (c *clock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *clock) add(d time.Duration) { c.ns.Add(int64(d)) }

func withClock(c *clock) Option { return func(o *options) { o.now = c.now } }

// t0 is the tests' "now": 10:00 UTC, well inside a day.
var t0 = time.Date(2030, 3, 4, 10, 0, 0, 0, time.UTC)

var prefixes sync.Map

// prefixFor is a key prefix no other test uses.
func prefixFor(t testing.TB) string {
	p := "t:" + strings.NewReplacer("/", ":", " ", "_").Replace(t.Name()) + ":"
	if _, dup := prefixes.LoadOrStore(p, true); dup {
		p += fmt.Sprint(time.Now().UnixNano()) + ":"
	}
	return p
}

// fixture is a Store on the shared server with its own prefix and clock.
type fixture struct {
	t   testing.TB
	rdb *redis.Client
	st  *Store
	clk *clock
	ctx context.Context
}

func newFixture(t testing.TB, opts ...Option) *fixture {
	srv := needServer(t)
	f := &fixture{t: t, rdb: newClient(t, srv.Addr), clk: newClock(t0), ctx: context.Background()}
	opts = append([]Option{WithPrefix(prefixFor(t)), withClock(f.clk), WithTimeout(2 * time.Second)}, opts...)
	st, err := New(f.rdb, opts...)
	if err != nil {
		t.Fatal(err)
	}
	f.st = st
	t.Cleanup(st.blocks.wg.Wait)
	return f
}
