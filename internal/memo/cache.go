package memo

import (
	"sync"
	"sync/atomic"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Cache is a bounded LRU cache with a lock-free index for hits. It is safe for concurrent
// use; make one with NewCache.
//
// Entries live in LRUs (golang-lru/v2's simplelru), sharded by hash, each behind a mutex:
// they decide what is evicted. Beside them sits a direct-mapped index of the entries, one
// atomic pointer per slot, so a hit is one atomic load: no lock, no allocation. An entry
// whose slot another entry took is still found in its LRU, under its shard's lock. An
// evicted entry leaves the index at once, so Get never returns it.
//
// The index starts small (at most initialSlots) and doubles as the cache fills, up to twice
// the capacity: memory follows the entries stored, never the capacity asked for, so a cache
// made for 10^8 entries costs a few kilobytes until it holds them.
//
// Entries are keyed by hash and compared by key: a Get whose key differs from the stored
// one misses. Two keys with one hash share one entry: the later Put replaces the earlier.
// Recency is kept at a granularity of promoteEvery: a hit moves its entry to the front of
// its LRU at most once per promoteEvery.
type Cache[K comparable, V any] struct {
	shards     []cacheShard[K, V]
	shardBytes int64 // the bytes each shard holds at most (see NewCache); 0: no bound
	smask      uint64
	index      atomic.Pointer[index[K, V]] // replaced, never changed, when it grows
	maxSlots   int                         // twice the capacity, a power of 2
	n          atomic.Int64                // entries stored
	grow       sync.Mutex                  // one growIndex at a time
}

// index is a power-of-2 table of atomic pointers: slot hash&mask holds an entry or nil.
type index[K comparable, V any] struct {
	slots []atomic.Pointer[entry[K, V]]
	mask  uint64
}

func newIndex[K comparable, V any](n int) *index[K, V] {
	return &index[K, V]{slots: make([]atomic.Pointer[entry[K, V]], n), mask: uint64(n - 1)}
}

func (x *index[K, V]) slot(h uint64) *atomic.Pointer[entry[K, V]] { return &x.slots[h&x.mask] }

type cacheShard[K comparable, V any] struct {
	mu    sync.Mutex // guards lru and bytes and serialises index writes, so it never holds an evicted entry
	lru   *simplelru.LRU[uint64, *entry[K, V]]
	bytes int64 // the sizes of the entries in lru
}

// entry is one cached value; it is never changed once published, except promoted.
type entry[K comparable, V any] struct {
	hash     uint64
	key      K
	val      V
	at       int64        // unix nanos when stored
	size     int64        // what Put was told it holds
	promoted atomic.Int64 // unix nanos when last moved to the front of its LRU
}

// promoteEvery is how often, at most, a hit moves its entry to the front of its LRU
// (nanoseconds): taking the LRU's lock on every hit would make it the cost of a hit.
const promoteEvery = int64(1e9)

// initialSlots is the most index slots a new Cache allocates (8 bytes each).
const initialSlots = 1024

// cacheShards is the shard count of caches of at least 1024 entries; smaller ones have one.
const cacheShards = 16

// NewCache returns a Cache that holds up to entries values (at least 1) and, when maxBytes
// is positive, values whose sizes (as Put is told them) come to at most about maxBytes:
// each of its shards holds at most its share, and keeps its latest entry whatever its size.
// It allocates O(min(entries, initialSlots)) up front; the index grows as entries are
// stored.
func NewCache[K comparable, V any](entries int, maxBytes int64) *Cache[K, V] {
	entries = max(entries, 1)
	n := 1
	if entries >= 1024 {
		n = cacheShards
	}
	slots := 1
	for slots < 2*entries && slots < 1<<62 {
		slots <<= 1
	}
	c := &Cache[K, V]{shards: make([]cacheShard[K, V], n), smask: uint64(n - 1), maxSlots: slots,
		shardBytes: max(maxBytes, 0) / int64(n)}
	c.index.Store(newIndex[K, V](min(slots, initialSlots)))
	for i := range c.shards {
		// Evictions run inside Add, under the shard's mu. NewLRU fails only for size <= 0.
		c.shards[i].lru, _ = simplelru.NewLRU((entries+n-1)/n, c.unindex)
	}
	return c
}

// unindex takes an evicted entry out of the index, unless its slot holds another, and out
// of its shard's bytes. It runs under the entry's shard lock.
func (c *Cache[K, V]) unindex(h uint64, e *entry[K, V]) {
	c.index.Load().slot(h).CompareAndSwap(e, nil)
	c.shard(h).bytes -= e.size
}

// growIndex doubles the index when it is less than twice the entries stored. It takes
// every shard's lock, so no index write runs meanwhile, fills the new index from the LRUs,
// publishes it and empties the old one: a Get that still reads the old one misses its
// slot and looks in the LRU, so an evicted entry is never returned.
func (c *Cache[K, V]) growIndex() {
	if !c.grow.TryLock() {
		return
	}
	defer c.grow.Unlock()
	old := c.index.Load()
	if len(old.slots) >= c.maxSlots || int64(len(old.slots)) >= 2*c.n.Load() {
		return
	}
	for i := range c.shards {
		c.shards[i].mu.Lock()
	}
	nx := newIndex[K, V](2 * len(old.slots))
	for i := range c.shards {
		lru := c.shards[i].lru
		for _, h := range lru.Keys() {
			e, _ := lru.Peek(h)
			nx.slot(h).Store(e)
		}
	}
	c.index.Store(nx)
	for i := range old.slots {
		old.slots[i].Store(nil)
	}
	for i := range c.shards {
		c.shards[i].mu.Unlock()
	}
}

// shard picks a shard by the hash's top bits, independent of the index slot's low bits.
func (c *Cache[K, V]) shard(h uint64) *cacheShard[K, V] { return &c.shards[(h>>59)&c.smask] }

// Get returns the value stored for (hash, key) and when it was stored (unix nanos). now is
// the caller's clock, used only to decide whether to refresh the entry's recency.
func (c *Cache[K, V]) Get(hash uint64, key K, now int64) (v V, storedAt int64, ok bool) {
	e := c.index.Load().slot(hash).Load()
	if e == nil || e.hash != hash {
		s := c.shard(hash)
		s.mu.Lock()
		e, ok = s.lru.Peek(hash)
		s.mu.Unlock()
		if !ok {
			return v, 0, false
		}
	}
	if e.key != key {
		return v, 0, false
	}
	if p := e.promoted.Load(); now-p >= promoteEvery && e.promoted.CompareAndSwap(p, now) {
		s := c.shard(hash)
		s.mu.Lock()
		s.lru.Get(hash)
		s.mu.Unlock()
	}
	return e.val, e.at, true
}

// Put stores v, which holds size bytes, for (hash, key) at now (unix nanos), replacing what
// hash held, and evicts the least recently used entries of the shard while it holds more
// entries or (with a byte bound) more bytes than its share.
func (c *Cache[K, V]) Put(hash uint64, key K, v V, now, size int64) {
	e := &entry[K, V]{hash: hash, key: key, val: v, at: now, size: size}
	e.promoted.Store(now)
	s := c.shard(hash)
	s.mu.Lock()
	old, had := s.lru.Peek(hash)
	if had {
		s.bytes -= old.size // replaced, not evicted: unindex does not run for it
	}
	s.bytes += size
	evicted := s.lru.Add(hash, e)
	x := c.index.Load()
	x.slot(hash).Store(e)
	shed := 0
	for c.shardBytes > 0 && s.bytes > c.shardBytes && s.lru.Len() > 1 {
		s.lru.RemoveOldest()
		shed++
	}
	s.mu.Unlock()
	if shed > 0 {
		c.n.Add(-int64(shed))
	}
	if !had && !evicted && c.n.Add(1) > int64(len(x.slots)/2) {
		c.growIndex()
	}
}

// Bytes returns the sizes of the entries stored, as Put was told them.
func (c *Cache[K, V]) Bytes() int64 {
	var n int64
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += s.bytes
		s.mu.Unlock()
	}
	return n
}

// Len returns the number of entries.
func (c *Cache[K, V]) Len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += s.lru.Len()
		s.mu.Unlock()
	}
	return n
}
