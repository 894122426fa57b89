package translate

import (
	"context"
	"sync"
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2"
)

// cacheEntry is one cached translation. The key fields are kept to rule out hash collisions.
type cacheEntry struct {
	text   string
	key    keyFields
	out    string
	source string // detected or given source tag
	engine string
	at     int64 // unix nanos when stored
}

// keyFields is what, besides the text, makes two requests the same: languages, scene,
// style and the pinned engine (policy).
type keyFields struct {
	src, tgt int
	scene    Scene
	style    Style
	pinned   int // engine index + 1; 0 when routed
}

func (r *request) keyFields() keyFields {
	k := keyFields{src: r.srcID, tgt: r.tgt.ID, scene: r.Scene, style: r.Style}
	if r.pinned != nil {
		k.pinned = r.pinned.idx + 1
	}
	return k
}

// cache is the in-process translation cache: LRUs (golang-lru/v2), sharded by key to keep
// concurrent requests off one lock, whose entries are fresh for ttl and then kept, stale,
// until evicted, to answer when every engine fails.
type cache struct {
	shards []*lru.Cache[uint64, *cacheEntry]
	mask   uint64
	ttl    int64
}

// cacheShards is the shard count of caches of at least 1024 entries.
const cacheShards = 16

func newCache(entries int, ttl int64) *cache {
	n := 1
	if entries >= 1024 {
		n = cacheShards
	}
	c := &cache{shards: make([]*lru.Cache[uint64, *cacheEntry], n), mask: uint64(n - 1), ttl: ttl}
	for i := range c.shards {
		c.shards[i], _ = lru.New[uint64, *cacheEntry]((entries + n - 1) / n) // entries > 0 is checked in New
	}
	return c
}

func (c *cache) shard(h uint64) *lru.Cache[uint64, *cacheEntry] { return c.shards[(h>>59)&c.mask] }

// get returns the entry for r, and whether it is still fresh.
func (c *cache) get(r *request, now int64) (*cacheEntry, bool) {
	e, ok := c.shard(r.hash).Get(r.hash)
	if !ok || e.text != r.Text || e.key != r.key {
		return nil, false
	}
	return e, now-e.at < c.ttl
}

func (c *cache) put(r *request, out, source, engine string, now int64) {
	c.shard(r.hash).Add(r.hash, &cacheEntry{text: r.Text, key: r.key, out: out, source: source, engine: engine, at: now})
}

// flight is one engine round-trip that identical concurrent requests share. Its done
// channel is made by the first follower, so a request nobody joins allocates none.
type flight struct {
	text string
	key  keyFields
	done chan struct{} // under the shard's lock until landed
	res  *Result
	err  error
}

// flights coalesces concurrent identical misses into one call. It is sharded by key.
type flights struct {
	shards  [16]flightShard
	waiting atomic.Int32 // followers waiting on a flight (for tests)
}

type flightShard struct {
	mu sync.Mutex
	m  map[uint64]*flight
}

func (fs *flights) shard(h uint64) *flightShard { return &fs.shards[h>>60] }

// join registers f as r's flight and returns it with lead true, or returns the flight an
// identical request already leads. A hash collision with a different request is not
// coalesced: the caller leads f, unregistered.
func (fs *flights) join(r *request, f *flight) (*flight, bool) {
	s := fs.shard(r.hash)
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.m[r.hash]; ok {
		if g.text == r.Text && g.key == r.key {
			if g.done == nil {
				g.done = make(chan struct{})
			}
			return g, false
		}
		return f, true
	}
	if s.m == nil {
		s.m = map[uint64]*flight{}
	}
	f.text, f.key = r.Text, r.key
	s.m[r.hash] = f
	return f, true
}

func (fs *flights) land(r *request, f *flight, res *Result, err error) {
	f.res, f.err = res, err
	s := fs.shard(r.hash)
	s.mu.Lock()
	if s.m[r.hash] == f {
		delete(s.m, r.hash)
	}
	done := f.done
	s.mu.Unlock()
	if done != nil {
		close(done)
	}
}

// wait waits for the flight or ctx.
func (fs *flights) wait(ctx context.Context, f *flight) error {
	fs.waiting.Add(1)
	defer fs.waiting.Add(-1)
	select {
	case <-f.done:
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
