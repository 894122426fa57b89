package redisstore

import (
	"context"
	"strconv"
	"testing"

	"github.com/fanyi-go/translate/fidelity/memory"
)

// Shared memory entries work on a cluster and carry their own hash tag: 50 entries spread
// over the slots, none on the tenant's.
func TestMemoryKeysSpreadOverSlots(t *testing.T) {
	cl := needCluster(t)
	rdb := newClusterClient(t, cl.Addrs)
	st, err := New(rdb, WithPrefix("{memtenant}:"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tenant := rdb.ClusterKeySlot(ctx, st.k.budget(t0)).Val()
	slots := map[int64]bool{}
	for i := range 50 {
		e := memory.Entry{Source: "en", Target: "de", Text: "text " + strconv.Itoa(i), Translation: "Text", Engine: "x"}
		if err := st.MemoryPut(ctx, e); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := st.MemoryGet(ctx, "en", "de", e.Text); !ok || err != nil {
			t.Fatalf("entry %d: found %v, %v", i, ok, err)
		}
		slots[rdb.ClusterKeySlot(ctx, st.k.memory("en", "de", e.Text)).Val()] = true
	}
	if len(slots) < 40 || slots[tenant] {
		t.Errorf("50 memory keys in %d slots (tenant's slot among them: %v), want spread and apart", len(slots), slots[tenant])
	}
}
