package redisstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate"
)

func TestPrefixIsValidated(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	for _, p := range []string{"bad\xff:", "a\nb:", strings.Repeat("p", 201)} {
		if _, err := New(rdb, WithPrefix(p)); err == nil {
			t.Errorf("New(WithPrefix(%q)) succeeded", p)
		}
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, ContextTimeoutEnabled: true})
	defer cc.Close()
	for p, ok := range map[string]bool{"svc:": false, "{}:": false, "{svc:": false, "{svc}:": true, "x{a}:": true} {
		if _, err := New(cc, WithPrefix(p)); (err == nil) != ok {
			t.Errorf("cluster client, New(WithPrefix(%q)): %v, want ok %v", p, err, ok)
		}
	}
}

// A plain client on a cluster node with a prefix without a hash tag: Redis answers
// CROSSSLOT (or MOVED), a configuration error returned by every Admit, not an outage
// served from blocks.
func TestClusterMisconfigurationIsNotAnOutage(t *testing.T) {
	cl := needCluster(t)
	rdb := newClient(t, cl.Addrs[0])
	st, err := New(rdb, WithPrefix("plain:"))
	if err != nil {
		t.Fatal(err)
	}
	a := translate.Admission{Now: time.Now(), Engine: "e", Credits: 1, Daily: 100}
	for i := range 2 {
		_, err := st.Admit(context.Background(), a)
		if err == nil || !strings.Contains(err.Error(), "configuration error") {
			t.Errorf("Admit %d: %v, want a configuration error", i, err)
		}
	}
	if st.Degraded() {
		t.Error("a configuration error was taken for an outage")
	}
}

// Three replicas on a 3-master cluster spend a budget while the master holding the
// tenant's slot is killed and restarted empty: the replicas spend only the blocks they
// hold, find the figures lost, and never exceed the budget.
func TestClusterMasterKilledAndRestartedEmpty(t *testing.T) {
	cl := needCluster(t)
	const daily = 20_000.0
	clk := newClock(t0)
	ctx := context.Background()
	var stores []*Store
	for range 3 {
		st, err := New(newClusterClient(t, cl.Addrs), WithPrefix("{kill}:"), withClock(clk), WithTimeout(200*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.blocks.wg.Wait)
		stores = append(stores, st)
	}
	cr := &clusterRun{stores: stores, clk: clk, daily: daily}
	step := func(n int) int { return cr.step(t, n) }
	for range 200 { // 2 s at 3,000 calls/s: 6,000
		step(10)
	}
	master, err := newClusterClient(t, cl.Addrs).MasterForKey(ctx, "{kill}:E")
	if err != nil {
		t.Fatal(err)
	}
	addr := master.Options().Addr
	if err := cl.Kill(addr); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		step(10)
	}
	if err := cl.Restart(addr); err != nil {
		t.Fatal(err)
	}
	// Until the clients found the restarted master (ClusterStateReloadInterval) and a
	// replica noticed the loss; at most 20s.
	for deadline := time.Now().Add(20 * time.Second); !anyLost(stores) && time.Now().Before(deadline); {
		step(10)
		time.Sleep(10 * time.Millisecond)
	}
	for idle := 0; idle < 200; {
		if step(10) == 0 {
			idle++
		} else {
			idle = 0
		}
	}
	t.Logf("granted %.0f of %.0f with the tenant's master killed and restarted empty", cr.granted, daily)
	if cr.granted > daily {
		t.Errorf("granted %.0f: over the budget of %.0f", cr.granted, daily)
	}
	if !anyLost(stores) {
		t.Error("no replica noticed the lost figures")
	}
}

func anyLost(stores []*Store) bool {
	for _, st := range stores {
		for _, l := range st.blocks.all() {
			l.mu.Lock()
			lost := l.lost
			l.mu.Unlock()
			if lost {
				return true
			}
		}
	}
	return false
}

// clusterRun asks each store for n calls of 1 credit per 10 ms step.
type clusterRun struct {
	stores  []*Store
	clk     *clock
	daily   float64
	granted float64
	lastErr string
}

func (cr *clusterRun) step(t *testing.T, n int) int {
	cr.clk.add(10 * time.Millisecond)
	got := 0
	ctx := context.Background()
	for _, st := range cr.stores {
		for range n {
			a := translate.Admission{Now: cr.clk.now(), Engine: "paid", Credits: 1, Daily: cr.daily}
			r, err := st.Admit(ctx, a)
			if err != nil || r.Lease == "" {
				if testing.Verbose() && err != nil && cr.lastErr != err.Error() {
					cr.lastErr = err.Error()
					t.Log(cr.lastErr)
				}
				continue
			}
			_ = st.Settle(ctx, translate.Settlement{Lease: r.Lease, Sent: true, Credits: 1})
			got++
		}
	}
	for _, st := range cr.stores {
		st.blocks.wg.Wait()
	}
	cr.granted += float64(got)
	return got
}

var _ = errors.New

// Request-id and cache keys carry their own hash tag, so they spread over a cluster's slots
// instead of landing on the tenant's; prefixes that differ only by their braces do not
// share them.
func TestIDAndCacheKeysSpreadOverSlots(t *testing.T) {
	cl := needCluster(t)
	rdb := newClusterClient(t, cl.Addrs)
	k := newKeys("{tenant}:")
	ctx := context.Background()
	tenant := rdb.ClusterKeySlot(ctx, k.budget(t0)).Val()
	slots := map[int64]bool{}
	for i := range 50 {
		for _, key := range []string{k.request("id-" + strings.Repeat("x", i)), k.cache("c" + strings.Repeat("y", i))} {
			slots[rdb.ClusterKeySlot(ctx, key).Val()] = true
		}
	}
	if len(slots) < 50 || slots[tenant] {
		t.Errorf("100 id and cache keys in %d slots (tenant's slot among them: %v), want spread and apart", len(slots), slots[tenant])
	}
	if other := newKeys("tenant:"); other.request("r") == k.request("r") || other.cache("c") == k.cache("c") {
		t.Error("prefixes differing by their braces share id or cache keys")
	}
}
