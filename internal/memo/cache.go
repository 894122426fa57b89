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
// Entries are keyed by hash and compared by key: a Get whose key differs from the stored
// one misses. Two keys with one hash share one entry: the later Put replaces the earlier.
// Recency is kept at a granularity of promoteEvery: a hit moves its entry to the front of
// its LRU at most once per promoteEvery.
type Cache[K comparable, V any] struct {
	shards []cacheShard[K, V]
	smask  uint64
	index  []atomic.Pointer[entry[K, V]] // slot hash&imask; a power of 2, twice the capacity
	imask  uint64
}

type cacheShard[K comparable, V any] struct {
	mu  sync.Mutex // guards lru and serialises index writes, so it never holds an evicted entry
	lru *simplelru.LRU[uint64, *entry[K, V]]
}

// entry is one cached value; it is never changed once published, except promoted.
type entry[K comparable, V any] struct {
	hash     uint64
	key      K
	val      V
	at       int64        // unix nanos when stored
	promoted atomic.Int64 // unix nanos when last moved to the front of its LRU
}

// promoteEvery is how often, at most, a hit moves its entry to the front of its LRU
// (nanoseconds): taking the LRU's lock on every hit would make it the cost of a hit.
const promoteEvery = int64(1e9)

// cacheShards is the shard count of caches of at least 1024 entries; smaller ones have one.
const cacheShards = 16

// NewCache returns a Cache that holds up to entries values (at least 1).
func NewCache[K comparable, V any](entries int) *Cache[K, V] {
	entries = max(entries, 1)
	n := 1
	if entries >= 1024 {
		n = cacheShards
	}
	slots := 1
	for slots < 2*entries {
		slots <<= 1
	}
	c := &Cache[K, V]{shards: make([]cacheShard[K, V], n), smask: uint64(n - 1),
		index: make([]atomic.Pointer[entry[K, V]], slots), imask: uint64(slots - 1)}
	for i := range c.shards {
		// Evictions run inside Add, under the shard's mu. NewLRU fails only for size <= 0.
		c.shards[i].lru, _ = simplelru.NewLRU((entries+n-1)/n, c.unindex)
	}
	return c
}

// unindex takes an evicted entry out of the index, unless its slot holds another.
func (c *Cache[K, V]) unindex(h uint64, e *entry[K, V]) {
	c.index[h&c.imask].CompareAndSwap(e, nil)
}

// shard picks a shard by the hash's top bits, independent of the index slot's low bits.
func (c *Cache[K, V]) shard(h uint64) *cacheShard[K, V] { return &c.shards[(h>>59)&c.smask] }

// Get returns the value stored for (hash, key) and when it was stored (unix nanos). now is
// the caller's clock, used only to decide whether to refresh the entry's recency.
func (c *Cache[K, V]) Get(hash uint64, key K, now int64) (v V, storedAt int64, ok bool) {
	e := c.index[hash&c.imask].Load()
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

// Put stores v for (hash, key) at now (unix nanos), replacing what hash held, and evicts
// the least recently used entry of the shard when it is full.
func (c *Cache[K, V]) Put(hash uint64, key K, v V, now int64) {
	e := &entry[K, V]{hash: hash, key: key, val: v, at: now}
	e.promoted.Store(now)
	s := c.shard(hash)
	s.mu.Lock()
	s.lru.Add(hash, e)
	c.index[hash&c.imask].Store(e)
	s.mu.Unlock()
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
