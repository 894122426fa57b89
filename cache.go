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

// cache is the in-process translation cache: an LRU (golang-lru/v2) whose entries are fresh
// for ttl and then kept, stale, until evicted, to answer when every engine fails.
type cache struct {
	lru *lru.Cache[uint64, *cacheEntry]
	ttl int64
}

func newCache(entries int, ttl int64) *cache {
	l, _ := lru.New[uint64, *cacheEntry](entries) // entries > 0 is checked in New
	return &cache{lru: l, ttl: ttl}
}

// get returns the entry for r, and whether it is still fresh.
func (c *cache) get(r *request, now int64) (*cacheEntry, bool) {
	e, ok := c.lru.Get(r.hash)
	if !ok || e.text != r.Text || e.key != r.key {
		return nil, false
	}
	return e, now-e.at < c.ttl
}

func (c *cache) put(r *request, out, source, engine string, now int64) {
	c.lru.Add(r.hash, &cacheEntry{text: r.Text, key: r.key, out: out, source: source, engine: engine, at: now})
}

// flight is one engine round-trip that identical concurrent requests share.
type flight struct {
	text string
	key  keyFields
	done chan struct{}
	res  *Result
	err  error
}

// flights coalesces concurrent identical misses into one call.
type flights struct {
	mu      sync.Mutex
	m       map[uint64]*flight
	waiting atomic.Int32 // followers waiting on a flight (for tests)
}

// join returns the flight for r and whether the caller leads it (and must call land).
// A hash collision with a different request is not coalesced: it leads a flight of its own
// that is not registered.
func (fs *flights) join(r *request) (*flight, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f, ok := fs.m[r.hash]; ok {
		if f.text == r.Text && f.key == r.key {
			return f, false
		}
		return &flight{done: make(chan struct{})}, true
	}
	if fs.m == nil {
		fs.m = map[uint64]*flight{}
	}
	f := &flight{text: r.Text, key: r.key, done: make(chan struct{})}
	fs.m[r.hash] = f
	return f, true
}

func (fs *flights) land(r *request, f *flight, res *Result, err error) {
	f.res, f.err = res, err
	fs.mu.Lock()
	if fs.m[r.hash] == f {
		delete(fs.m, r.hash)
	}
	fs.mu.Unlock()
	close(f.done)
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
