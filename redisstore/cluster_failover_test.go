package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate/redisstore/redistest"
)

// failoverLimit bounds the wait for the tenant's replica to be promoted (cluster-node-timeout
// 2s plus the election: about 3-4s) and for every store to reach Redis again afterwards
// (ClusterStateReloadInterval 1s).
const failoverLimit = 20 * time.Second

// Three replicas on a cluster of 3 masters, each with a replica, spend a budget while the
// master holding the tenant's slot is killed and its replica takes over: the replicas
// never exceed the budget, get blocks from the promoted replica within failoverLimit, go
// on spending from it (the whole budget unless the figures were lost), and Flush. Replica
// acknowledgements are left to the default: the promoted replica has no replica of its own
// until the killed master comes back, so it grants without them (with the rule that once on
// they stay on, it granted nothing new and every store ran dry).
func TestClusterMasterFailsOverToReplica(t *testing.T) {
	needServer(t)
	cl, err := redistest.StartClusterWithReplicas(3, 1)
	if err != nil {
		redistest.Skip(t, err) // fails in CI
	}
	t.Cleanup(cl.Stop)
	const daily = 20_000.0
	clk := newClock(t0)
	var stores []*Store
	for range 3 {
		st, err := New(newClusterClient(t, cl.Addrs), WithPrefix("{failover}:"), withClock(clk), WithTimeout(200*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.blocks.wg.Wait)
		stores = append(stores, st)
	}
	cr := &clusterRun{stores: stores, clk: clk, daily: daily}
	for range 200 { // 2 s at 3,000 calls/s: 6,000
		cr.step(t, 10)
	}
	_, maddr, raddr := masterAndReplica(t, cl, "{failover}:E")
	killed := time.Now()
	if err := cl.Kill(maddr); err != nil {
		t.Fatal(err)
	}
	promoted, serving := failover(t, cr, cl, raddr, killed)
	t.Logf("master %s killed; replica %s promoted after %v, every store reached Redis again after %v",
		maddr, raddr, promoted.Round(time.Millisecond), serving.Round(time.Millisecond))
	before := cr.granted
	for idle := 0; idle < 200; {
		if cr.step(t, 10) == 0 {
			idle++
		} else {
			idle = 0
		}
	}
	t.Logf("granted %.0f of %.0f (%.0f after the failover); figures lost: %v", cr.granted, daily, cr.granted-before, anyLost(stores))
	if cr.granted > daily {
		t.Errorf("granted %.0f: over the budget of %.0f", cr.granted, daily)
	}
	for i, st := range stores {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := st.Flush(ctx); err != nil {
			t.Errorf("store %d: Flush after the failover: %v", i, err)
		}
		cancel()
	}
	if !anyLost(stores) && cr.granted < daily {
		t.Errorf("granted %.0f of %.0f with no figures lost: the promoted replica stranded budget", cr.granted, daily)
	}
}

// failover steps cr until the replica at raddr is promoted and then until every store has
// a budget block renewed by Redis after the promotion (or learnt from Redis that the
// figures were lost), for at most failoverLimit each; it returns both times since killed.
func failover(t *testing.T, cr *clusterRun, cl *redistest.Cluster, raddr string, killed time.Time) (promoted, serving time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cl.WaitMaster(raddr, failoverLimit) }()
	for promoted == 0 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			promoted = time.Since(killed)
		case <-time.After(10 * time.Millisecond):
			cr.step(t, 10)
		}
	}
	since := cr.clk.now()
	for deadline := time.Now().Add(failoverLimit); ; {
		n := 0
		for _, st := range cr.stores {
			if renewedSince(st, since) {
				n++
			}
		}
		if n == len(cr.stores) {
			return promoted, time.Since(killed)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d stores got no block from Redis within %v of the promotion (last error: %s)",
				len(cr.stores)-n, len(cr.stores), failoverLimit, cr.lastErr)
		}
		cr.step(t, 10)
		time.Sleep(10 * time.Millisecond)
	}
}

// renewedSince reports whether st's budget block was granted or renewed by Redis at or
// after since (on the store's clock), or Redis told it the figures were lost.
func renewedSince(st *Store, since time.Time) bool {
	for _, l := range st.blocks.all() {
		if l.quota {
			continue
		}
		l.mu.Lock()
		ok := l.lost || (l.cur != nil && !l.cur.expires.Before(since.Add(BlockTTL)))
		l.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// masterAndReplica returns the master that holds key, its address and its replica's.
func masterAndReplica(t *testing.T, cl *redistest.Cluster, key string) (*redis.Client, string, string) {
	t.Helper()
	master, err := newClusterClient(t, cl.Addrs).MasterForKey(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	maddr := master.Options().Addr
	raddr, err := cl.ReplicaOf(maddr)
	if err != nil {
		t.Fatal(err)
	}
	return master, maddr, raddr
}
