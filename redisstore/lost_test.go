package redisstore

import (
	"context"
	"testing"
	"time"
)

// After Redis loses the day (FLUSHALL) and the replica has noticed, Budget reports at least
// what this replica knows was spent (Redis's last figures and its own block since), not
// the empty figures Redis now holds.
func TestBudgetAfterLostFiguresKeepsWhatWasKnown(t *testing.T) {
	srv := ownServer(t)
	rdb := newClient(t, srv.Addr)
	clk := newClock(t0)
	st, err := New(rdb, WithPrefix(prefixFor(t)), withClock(clk), WithTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.blocks.wg.Wait)
	const daily = 100_000.0
	ctx := context.Background()
	cr := &clusterRun{stores: []*Store{st}, clk: clk, daily: daily}
	for range 100 { // 1,000 calls
		cr.step(t, 10)
	}
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for i := 0; !anyLost(cr.stores); i++ {
		if i == 5000 { // 50 s of the store's clock: a refill is due long before
			t.Fatalf("the store did not notice the lost figures after %.0f calls", cr.granted)
		}
		cr.step(t, 10)
	}
	for range 20 { // spend from the block held at the loss
		cr.step(t, 10)
	}
	for _, read := range []string{"first", "second"} { // the second reads Redis's empty figures again
		b, err := st.Budget(ctx, clk.now(), daily)
		if err != nil {
			t.Fatal(err)
		}
		if b.Spent < cr.granted || b.Spent > daily {
			t.Errorf("%s Budget after the loss: spent %.0f, want at least the %.0f this replica spent (and at most %.0f)", read, b.Spent, cr.granted, daily)
		}
	}
}
