package redisstore

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate/redisstore/redistest"
)

// A failover that loses the master's last writes, as asynchronous replication can: the
// replica's link to its master is cut, every store then takes a block of what remains of
// the day from the master alone, the master is SIGKILLed, and its replica, which never saw
// those grants, is promoted. The epoch key survives (it was replicated long before), so only
// the figure key's write count tells the stores that writes they saw are gone; from then no
// block is granted from the day, and the stores spend only what they hold: overrun 0.
// Without the write-count check the promoted replica grants the same budget again. Replica
// acknowledgements are off (WithReplicaAcks(0, 0)): this is the write count's test; with
// them the grants during the cut are never used (TestClusterFailoverUnackedGrantOverrunsNothing).
func TestClusterLossyFailoverOverrunsNothing(t *testing.T) {
	needServer(t)
	cl, err := redistest.StartClusterWithReplicas(3, 1)
	if err != nil {
		redistest.Skip(t, err) // fails in CI
	}
	t.Cleanup(cl.Stop)
	const daily = 20_000.0
	clk := newClock(t0)
	cr := &clusterRun{stores: clusterStores(t, cl, "{lossy}:", 3, clk), clk: clk, daily: daily}
	for range 100 { // 3,000 calls
		cr.step(t, 10)
	}
	master, maddr, raddr := masterAndReplica(t, cl, "{lossy}:E")
	lostWrites(t, newClient(t, raddr), master, func() {
		for _, st := range cr.stores {
			grabTheRest(t, st, daily)
		}
	})
	killed := time.Now()
	if err := cl.Kill(maddr); err != nil {
		t.Fatal(err)
	}
	promoted(t, cr, cl, raddr)
	t.Logf("master %s killed with writes its replica %s never saw; promoted after %v", maddr, raddr, time.Since(killed).Round(time.Millisecond))
	for idle := 0; idle < 300; {
		if cr.step(t, 10) == 0 {
			idle++
			time.Sleep(time.Millisecond) // the clients find the promoted replica in real time
		} else {
			idle = 0
		}
	}
	t.Logf("granted %.0f of %.0f; figures lost: %v", cr.granted, daily, anyLost(cr.stores))
	if cr.granted > daily {
		t.Errorf("granted %.0f: %.1f%% over the budget of %.0f after a lossy failover", cr.granted, 100*(cr.granted/daily-1), daily)
	}
	if !anyLost(cr.stores) {
		t.Error("no store noticed that the promoted replica lost writes")
	}
}

// clusterStores are n stores on cl with prefix and the virtual clock clk.
func clusterStores(t *testing.T, cl *redistest.Cluster, prefix string, n int, clk *clock) []*Store {
	var stores []*Store
	for range n {
		st, err := New(newClusterClient(t, cl.Addrs), WithPrefix(prefix), withClock(clk), WithTimeout(200*time.Millisecond), WithReplicaAcks(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.blocks.wg.Wait)
		stores = append(stores, st)
	}
	return stores
}

// promoted steps cr until the replica at raddr is a master, for at most failoverLimit.
func promoted(t *testing.T, cr *clusterRun, cl *redistest.Cluster, raddr string) {
	done := make(chan error, 1)
	go func() { done <- cl.WaitMaster(raddr, failoverLimit) }()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		case <-time.After(10 * time.Millisecond):
			cr.step(t, 10)
		}
	}
}

// lostWrites cuts the replica's link to master, runs write, and checks that the link stayed
// down and master has writes the replica lacks: they are lost if master dies now.
func lostWrites(t *testing.T, replica, master *redis.Client, write func()) {
	t.Helper()
	ctx := context.Background()
	// A password the master does not have keeps the replica from reconnecting (it tries
	// once a second): the link stays down until the master dies.
	if err := replica.ConfigSet(ctx, "masterauth", "cut-off").Err(); err != nil {
		t.Fatal(err)
	}
	if err := replica.ClientKillByFilter(ctx, "TYPE", "master").Err(); err != nil {
		t.Fatal(err)
	}
	write()
	if up := replInfo(t, replica, "master_link_status"); up != "down" {
		t.Fatalf("the replica's link is %q after the writes: they may have reached it", up)
	}
	m, _ := strconv.ParseInt(replInfo(t, master, "master_repl_offset"), 10, 64)
	r, _ := strconv.ParseInt(replInfo(t, replica, "master_repl_offset"), 10, 64)
	if m <= r {
		t.Fatalf("master's replication offset %d, the replica's %d: no write to lose", m, r)
	}
}

// replInfo is one field of INFO replication.
func replInfo(t *testing.T, c *redis.Client, field string) string {
	t.Helper()
	s, err := c.Info(context.Background(), "replication").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO replication has no %s", field)
	return ""
}

// grabTheRest refills st's budget blocks asking for the whole day: each store gets its
// share of what remains.
func grabTheRest(t *testing.T, st *Store, daily float64) {
	t.Helper()
	for _, l := range st.blocks.all() {
		if l.quota {
			continue
		}
		l.rmu.Lock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := st.refillLocked(ctx, l, daily, 0, false)
		cancel()
		l.rmu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
}
