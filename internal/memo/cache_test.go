package memo

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type key struct {
	text string
	n    int32
}

// got is what Get returned, for comparing with cmp.
type got struct {
	V  string
	At int64
	OK bool
}

func get(c *Cache[key, string], h uint64, k key, now int64) got {
	v, at, ok := c.Get(h, k, now)
	return got{v, at, ok}
}

func TestCacheHitAndMiss(t *testing.T) {
	c := NewCache[key, string](8, 0)
	c.Put(1, key{"a", 1}, "A", 100, 0)
	for _, tc := range []struct {
		name string
		h    uint64
		k    key
		want got
	}{
		{"hit", 1, key{"a", 1}, got{"A", 100, true}},
		{"absent hash", 2, key{"a", 1}, got{}},
		{"same hash, other text", 1, key{"b", 1}, got{}},
		{"same hash, other field", 1, key{"a", 2}, got{}},
	} {
		if diff := cmp.Diff(tc.want, get(c, tc.h, tc.k, 200)); diff != "" {
			t.Errorf("%s: Get (-want +got):\n%s", tc.name, diff)
		}
	}
	if c.Len() != 1 {
		t.Errorf("Len = %d, want 1", c.Len())
	}
}

// Two keys with one hash: the later Put replaces the earlier, and neither is ever
// returned for the other.
func TestCacheHashCollisionNeverConfusesKeys(t *testing.T) {
	c := NewCache[key, string](8, 0)
	a, b := key{"a", 0}, key{"b", 0}
	c.Put(7, a, "A", 1, 0)
	if diff := cmp.Diff(got{}, get(c, 7, b, 1)); diff != "" {
		t.Errorf("Get(b) after Put(a) (-want +got):\n%s", diff)
	}
	c.Put(7, b, "B", 2, 0)
	if diff := cmp.Diff(got{}, get(c, 7, a, 2)); diff != "" {
		t.Errorf("Get(a) after Put(b) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(got{"B", 2, true}, get(c, 7, b, 2)); diff != "" {
		t.Errorf("Get(b) (-want +got):\n%s", diff)
	}
}

// Entries whose hashes share an index slot are all found: the one the slot does not hold
// comes from its LRU.
func TestCacheIndexSlotCollision(t *testing.T) {
	c := NewCache[key, string](4, 0) // 8 slots, one shard
	slots := uint64(len(c.index.Load().slots))
	c.Put(3, key{"x", 0}, "X", 1, 0)
	c.Put(3+slots, key{"y", 0}, "Y", 1, 0) // takes slot 3
	if diff := cmp.Diff(got{"X", 1, true}, get(c, 3, key{"x", 0}, 1)); diff != "" {
		t.Errorf("Get(x) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(got{"Y", 1, true}, get(c, 3+slots, key{"y", 0}, 1)); diff != "" {
		t.Errorf("Get(y) (-want +got):\n%s", diff)
	}
}

// An evicted entry is never returned, although the index is read without the LRU's lock.
func TestCacheEvictionLeavesIndex(t *testing.T) {
	c := NewCache[key, string](4, 0) // 8 slots: entries 92-95 would stay in slots 4-7
	for i := range 100 {
		c.Put(uint64(i), key{fmt.Sprint(i), 0}, fmt.Sprint("v", i), 1, 0)
	}
	for i := range 100 {
		want := got{}
		if i >= 96 {
			want = got{fmt.Sprint("v", i), 1, true}
		}
		if diff := cmp.Diff(want, get(c, uint64(i), key{fmt.Sprint(i), 0}, 1)); diff != "" {
			t.Errorf("Get(%d) (-want +got):\n%s", i, diff)
		}
	}
	if c.Len() != 4 {
		t.Errorf("Len = %d, want 4", c.Len())
	}
}

// A hit at least promoteEvery after the entry's last promotion moves it to the LRU's
// front, so it outlives entries that were not hit.
func TestCacheHitPromotes(t *testing.T) {
	c := NewCache[key, string](2, 0)
	a, b := key{"a", 0}, key{"b", 0}
	c.Put(1, a, "A", 0, 0)
	c.Put(2, b, "B", 0, 0)
	get(c, 1, a, promoteEvery)
	c.Put(3, key{"c", 0}, "C", promoteEvery, 0)
	if diff := cmp.Diff(got{"A", 0, true}, get(c, 1, a, promoteEvery)); diff != "" {
		t.Errorf("Get(a), hit before the Put (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(got{}, get(c, 2, b, promoteEvery)); diff != "" {
		t.Errorf("Get(b), least recently used (-want +got):\n%s", diff)
	}
}

// A hit more often than promoteEvery does not touch the LRU (it keeps a hit lock-free).
func TestCacheHitPromotesAtMostOncePerInterval(t *testing.T) {
	c := NewCache[key, string](2, 0)
	a, b := key{"a", 0}, key{"b", 0}
	c.Put(1, a, "A", 0, 0)
	c.Put(2, b, "B", 0, 0)
	get(c, 1, a, promoteEvery-1)
	c.Put(3, key{"c", 0}, "C", promoteEvery, 0)
	if diff := cmp.Diff(got{}, get(c, 1, a, promoteEvery)); diff != "" {
		t.Errorf("Get(a), hit too soon to promote (-want +got):\n%s", diff)
	}
}

// Concurrent Puts and Gets over many shards and colliding slots: a Get returns only the
// value of its own key.
func TestCacheConcurrent(t *testing.T) {
	c := NewCache[key, string](1024, 0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 5000 {
				n := (i*7 + g) % 3000
				h := uint64(n%700) * 0x9e3779b97f4a7c15 // collisions: 700 hashes, 3000 keys
				k := key{fmt.Sprint(n), int32(n)}
				if v, _, ok := c.Get(h, k, int64(i)); ok && v != k.text {
					t.Errorf("Get(%v) = %q", k, v)
					return
				}
				c.Put(h, k, k.text, int64(i), 0)
			}
		})
	}
	wg.Wait()
	if n := c.Len(); n > 1024 {
		t.Errorf("Len = %d, want at most 1024", n)
	}
}

func TestCacheGetAllocatesNothing(t *testing.T) {
	c := NewCache[key, string](1024, 0)
	k := key{"hello", 1}
	c.Put(42, k, "hi", 0, 0)
	if n := testing.AllocsPerRun(1000, func() {
		if _, _, ok := c.Get(42, k, 5e9); !ok {
			t.Fatal("miss")
		}
	}); n != 0 {
		t.Errorf("Get allocates %v times, want 0", n)
	}
}

// A cache made for 10^8 entries allocates a few kilobytes, not its capacity; its index
// grows as it fills, every entry stays found across the growths, and once full it evicts
// as before.
func TestCacheGrowsWithUse(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	big := NewCache[key, string](1e8, 0)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("NewCache(1e8) allocated %d bytes, want under 1 MiB", n)
	}
	if n := len(big.index.Load().slots); n > initialSlots {
		t.Errorf("NewCache(1e8) has %d index slots, want at most %d", n, initialSlots)
	}

	c := NewCache[key, string](5000, 0)
	for i := range 6000 {
		c.Put(uint64(i)*0x9e3779b97f4a7c15, key{fmt.Sprint(i), 0}, fmt.Sprint("v", i), 1, 0)
	}
	if n := len(c.index.Load().slots); n != c.maxSlots {
		t.Errorf("after 6000 Puts the index has %d slots, want %d", n, c.maxSlots)
	}
	hits := 0
	for i := range 6000 {
		g := get(c, uint64(i)*0x9e3779b97f4a7c15, key{fmt.Sprint(i), 0}, 1)
		if g.OK {
			hits++
			if g.V != fmt.Sprint("v", i) {
				t.Fatalf("Get(%d) = %q", i, g.V)
			}
		}
	}
	if hits != c.Len() || hits < 4900 || hits > 16*313 { // 16 shards of ceil(5000/16)
		t.Errorf("found %d entries, Len %d; want Len found, about 5000", hits, c.Len())
	}
}

// Puts racing with the index's growth lose no entry and never see an evicted one.
func TestCacheGrowthConcurrent(t *testing.T) {
	c := NewCache[key, string](1<<14, 0)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 4000 {
				h := uint64(w*4000+i) * 0x9e3779b97f4a7c15
				k := key{fmt.Sprint(w, i), 0}
				c.Put(h, k, "v", 1, 0)
				if g := get(c, h, k, 1); !g.OK {
					t.Errorf("Get right after Put missed %v", k)
					return
				}
			}
		}()
	}
	wg.Wait()
	if c.Len() != 16000 {
		t.Errorf("Len = %d, want 16000", c.Len())
	}
}

// TestCacheBoundsBytes: with a byte bound, a shard sheds its least recently used entries
// while their sizes pass its share, whatever their count, and a replaced entry's size is
// its new one; without, only the count bounds it.
func TestCacheBoundsBytes(t *testing.T) {
	c := NewCache[key, string](100, 1000) // one shard: 1,000 bytes
	for i := range 10 {
		c.Put(uint64(i+1), key{"k", int32(i)}, "v", int64(i), 300)
	}
	if got, n := c.Bytes(), c.Len(); got != 900 || n != 3 {
		t.Errorf("after ten entries of 300 bytes: %d bytes in %d entries, want 900 in 3", got, n)
	}
	var kept []int
	for i := range 10 {
		if _, _, ok := c.Get(uint64(i+1), key{"k", int32(i)}, 100); ok {
			kept = append(kept, i)
		}
	}
	if d := cmp.Diff([]int{7, 8, 9}, kept); d != "" {
		t.Errorf("entries kept (-want +got):\n%s", d)
	}
	c.Put(10, key{"k", 9}, "w", 11, 50) // replaces entry 9
	if got := c.Bytes(); got != 650 {
		t.Errorf("after replacing a 300-byte entry with 50 bytes: %d bytes, want 650", got)
	}
	c.Put(11, key{"big", 0}, "x", 12, 5000) // alone over the bound: kept, the others shed
	if got, n := c.Bytes(), c.Len(); got != 5000 || n != 1 {
		t.Errorf("after an entry of 5,000 bytes: %d bytes in %d entries, want it alone", got, n)
	}
	u := NewCache[key, string](100, 0)
	for i := range 10 {
		u.Put(uint64(i+1), key{"k", int32(i)}, "v", int64(i), 300)
	}
	if n := u.Len(); n != 10 {
		t.Errorf("without a byte bound: %d entries, want 10", n)
	}
}
