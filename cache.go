package translate

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// cacheEntry is one cached translation. The key fields are kept to rule out hash collisions.
// res is the Result every fresh hit without a RequestID of its own gets: shared, read-only,
// with a request id of its own.
type cacheEntry struct {
	hash     uint64
	text     string
	key      keyFields
	at       int64        // unix nanos when stored
	promoted atomic.Int64 // unix nanos when last moved to the LRU's front
	res      *Result
	shared   resultID
}

// resultID is a Result with room for a generated request id.
type resultID struct {
	Result
	id [32]byte
}

// hit returns the Result of a fresh hit: the shared one, or a copy carrying the caller's
// RequestID.
func (e *cacheEntry) hit(reqID string) *Result {
	if reqID == "" {
		return e.res
	}
	res := new(Result)
	*res = *e.res
	res.RequestID = reqID
	return res
}

// keyFields is what, besides the text, makes two requests the same: languages, scene,
// style and the pinned engine (policy).
type keyFields struct {
	src, tgt int32 // interned language ids
	pinned   int32 // engine index + 1; 0 when routed
	scene    Scene
	style    Style
}

func (r *request) keyFields() keyFields {
	k := keyFields{src: int32(r.srcID), tgt: int32(r.tgt.ID), scene: r.Scene, style: r.Style}
	if r.pinned != nil {
		k.pinned = int32(r.pinned.idx + 1)
	}
	return k
}

// cache is the in-process translation cache: LRUs (golang-lru/v2), sharded by key, whose
// entries are fresh for ttl and then kept, stale, until evicted, to answer when every engine
// fails. Hits read a lock-free, direct-mapped index of the entries beside the LRUs: one
// atomic load. The LRUs decide evictions, and an evicted entry leaves the index; an entry
// whose index slot another key took is still found in its LRU.
type cache struct {
	shards []cacheShard
	mask   uint64
	index  []atomic.Pointer[cacheEntry] // slot hash&imask; twice the capacity, a power of 2
	imask  uint64
	ttl    int64
}

type cacheShard struct {
	mu  sync.Mutex // serialises writes, so the index never holds an evicted entry
	lru *lru.Cache[uint64, *cacheEntry]
}

// cacheShards is the shard count of caches of at least 1024 entries.
const cacheShards = 16

func newCache(entries int, ttl int64) *cache {
	n := 1
	if entries >= 1024 {
		n = cacheShards
	}
	slots := 1
	for slots < 2*entries {
		slots <<= 1
	}
	c := &cache{shards: make([]cacheShard, n), mask: uint64(n - 1), ttl: ttl,
		index: make([]atomic.Pointer[cacheEntry], slots), imask: uint64(slots - 1)}
	for i := range c.shards {
		// entries > 0 is checked in New. Evictions run inside Add, so under the shard's mu.
		c.shards[i].lru, _ = lru.NewWithEvict((entries+n-1)/n, func(k uint64, e *cacheEntry) {
			c.index[k&c.imask].CompareAndSwap(e, nil)
		})
	}
	return c
}

func (c *cache) shard(h uint64) *cacheShard { return &c.shards[(h>>59)&c.mask] }

// promoteEvery is how often a hot entry moves to the front of its LRU: taking the LRU's
// lock on every hit would make it the cost of a hit, so recency is kept at this granularity.
const promoteEvery = int64(time.Second)

// get returns the entry for r, and whether it is still fresh.
func (c *cache) get(r *request, now int64) (*cacheEntry, bool) {
	e := c.index[r.hash&c.imask].Load()
	if e == nil || e.hash != r.hash {
		var ok bool
		if e, ok = c.shard(r.hash).lru.Peek(r.hash); !ok {
			return nil, false
		}
	}
	if e.text != r.Text || e.key != r.key {
		return nil, false
	}
	if p := e.promoted.Load(); now-p >= promoteEvery && e.promoted.CompareAndSwap(p, now) {
		c.shard(r.hash).lru.Get(r.hash)
	}
	return e, now-e.at < c.ttl
}

func (c *cache) put(r *request, out, source string, now int64) {
	e := &cacheEntry{hash: r.hash, text: r.Text, key: r.key, at: now}
	e.promoted.Store(now)
	e.res = &e.shared.Result
	*e.res = Result{Text: out, Source: source, FromCache: true, RequestID: requestID("", &e.shared.id)}
	s := c.shard(r.hash)
	s.mu.Lock()
	s.lru.Add(r.hash, e)
	c.index[r.hash&c.imask].Store(e)
	s.mu.Unlock()
}

// flight is one engine round-trip that identical concurrent requests share. Its done
// channel is made by the first follower, so a request nobody joins allocates none.
type flight struct {
	hash   uint64
	text   string
	key    keyFields
	done   atomic.Pointer[chan struct{}]
	landed atomic.Bool // res and err are set
	res    *Result
	err    error
}

// flightSlots is the size of the flights table: more than the requests a Client usually has
// in flight at once.
const flightSlots = 1024

// flights coalesces concurrent identical misses into one call, without locks: a
// direct-mapped table of the flights in the air. A request whose slot holds a different
// request's flight is not coalesced (it leads a flight of its own, unregistered); identical
// requests always meet in their slot.
type flights struct {
	slots   [flightSlots]atomic.Pointer[flight]
	waiting atomic.Int32 // followers waiting on a flight (for tests)
}

// join registers f as r's flight and returns it with lead true, or returns the flight an
// identical request already leads.
func (fs *flights) join(r *request, f *flight) (*flight, bool) {
	f.hash, f.text, f.key = r.hash, r.Text, r.key
	s := &fs.slots[r.hash%flightSlots]
	for {
		if s.CompareAndSwap(nil, f) {
			return f, true
		}
		g := s.Load()
		if g == nil {
			continue // it landed in between
		}
		if g.hash == r.hash && g.text == r.Text && g.key == r.key {
			return g, false
		}
		return f, true
	}
}

// land publishes the leader's answer and wakes the followers.
func (fs *flights) land(r *request, f *flight, res *Result, err error) {
	f.res, f.err = res, err
	f.landed.Store(true)
	fs.slots[r.hash%flightSlots].CompareAndSwap(f, nil)
	if ch := f.done.Load(); ch != nil {
		close(*ch)
	}
}

// wait waits for the flight or ctx. The follower publishes its channel before it looks at
// landed, and the leader sets landed before it looks for a channel, so one of them sees the
// other: no follower waits on a flight that has landed.
func (fs *flights) wait(ctx context.Context, f *flight) error {
	fs.waiting.Add(1)
	defer fs.waiting.Add(-1)
	ch := f.done.Load()
	if ch == nil {
		nc := make(chan struct{})
		if f.done.CompareAndSwap(nil, &nc) {
			ch = &nc
		} else {
			ch = f.done.Load()
		}
	}
	if f.landed.Load() {
		return nil
	}
	select {
	case <-*ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// dedupWindow is how long a RequestID's first answer is reused.
const dedupWindow = int64(10e9)

// dedupKey identifies a request by its RequestID and content.
type dedupKey struct {
	id   string
	hash uint64
}

type dedupEntry struct {
	res *Result
	at  int64
}

// dedup remembers, for 10 seconds, the answer to each caller-given RequestID, so a retried
// request is answered from its first call and never billed twice.
type dedup struct {
	mu    sync.Mutex
	m     map[dedupKey]dedupEntry
	sweep int64
}

func (d *dedup) get(k dedupKey, now int64) *Result {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.m[k]
	if !ok || now-e.at >= dedupWindow {
		return nil
	}
	return e.res
}

func (d *dedup) put(k dedupKey, res *Result, now int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[dedupKey]dedupEntry{}
	}
	if now-d.sweep >= dedupWindow {
		for k, e := range d.m {
			if now-e.at >= dedupWindow {
				delete(d.m, k)
			}
		}
		d.sweep = now
	}
	d.m[k] = dedupEntry{res: res, at: now}
}
