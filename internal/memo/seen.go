package memo

import (
	"sync"
	"time"
	"unsafe"
)

// Seen remembers, for a window, each request id's engines and first outcome, so that an id
// reaches each engine at most once within the window (unless its claim is released: the
// call cost nothing) and a retry gets the first answer (or the first error while an engine
// still holds a claim) instead of a second bill. It is safe for concurrent use; make one
// with NewSeen.
//
// An entry is keyed by the id and the request's content hash, and lives for window after
// it was last sent to an engine or got its outcome. Memory is bounded by count and by
// bytes, both split evenly over seenShards shards, each a mutex and two generations of
// entries: writes go to the current one, which becomes the previous one when it is a
// window old or holds half its shard's bounds, and the previous one is then dropped
// whole, oldest entries first. Entries written again move to the current generation. So
// expiry and the bounds cost O(1) per write: no sweep of a map, no list, no deletes. An
// entry that alone is over half its shard's byte share is not remembered.
type Seen[V any] struct {
	window int64
	size   func(V) int64
	shards [seenShards]seenShard[V]
}

const seenShards = 16

type seenShard[V any] struct {
	mu         sync.Mutex
	cur, prev  seenGen[V]
	maxEntries int   // of a generation
	maxBytes   int64 // of a generation
}

// seenGen is a generation of entries: those written from start until the next one began.
type seenGen[V any] struct {
	m      map[seenKey]*seenEntry[V]
	start  int64 // unix nanos when it became the current generation
	newest int64 // the latest entry's at
	bytes  int64
}

type seenKey struct {
	id string
	h  uint64
}

type seenEntry[V any] struct {
	at        int64  // unix nanos of the last Claim or of the outcome
	engines   uint64 // bit i: engine i has had the id (engines >= 63 share bit 63)
	bytes     int64
	hasAnswer bool
	v         V
	err       error
}

// errBytes is what a remembered error is counted as.
const errBytes = 64

// NewSeen returns a Seen that remembers ids for window and holds at most maxEntries
// entries and maxBytes bytes: each entry counts its id, size of its answer (size may be
// nil: answers count 0) and a fixed overhead for its bookkeeping. Bounds too small for
// two entries a shard are raised to that.
func NewSeen[V any](window time.Duration, maxEntries int, maxBytes int64, size func(V) int64) *Seen[V] {
	s := &Seen[V]{window: int64(window), size: size}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.maxEntries = max(maxEntries/(2*seenShards), 1)
		sh.maxBytes = max(maxBytes/(2*seenShards), entryOverhead[V]())
	}
	return s
}

// entryOverhead is the bookkeeping an entry costs besides its id and answer: the entry and
// its map slot.
func entryOverhead[V any]() int64 {
	return int64(unsafe.Sizeof(seenEntry[V]{})) + int64(unsafe.Sizeof(seenKey{})) + 16
}

// shard picks id's shard by the content hash alone: hashing the id too would cost a pass
// over it, and a flood of ids evicts entries in every shard either way.
func (s *Seen[V]) shard(id string, h uint64) *seenShard[V] {
	return &s.shards[(h^h>>32)%seenShards]
}

func engineBit(engine int) uint64 {
	if engine < 0 || engine > 63 {
		engine = 63
	}
	return 1 << engine
}

// Claim records that id (with content hash h) is about to be sent to engine and reports
// true, or reports false if engine has had it within the window: then it must not be sent
// there. Engines are small indexes; 63 and above share one mark, and negative ones too.
func (s *Seen[V]) Claim(id string, h uint64, engine int, now int64) bool {
	sh := s.shard(id, h)
	k := seenKey{id, h}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.entry(k, now, s.window, true)
	if e == nil {
		return true // too big to remember
	}
	bit := engineBit(engine)
	if e.engines&bit != 0 {
		return false
	}
	e.engines |= bit
	sh.update(k, e, 0, now)
	return true
}

// Release takes back id's claim on engine: the call was not made, or certainly cost nothing
// (refused before the vendor did any work), so it may be sent there again. It does not
// restart the entry's window.
func (s *Seen[V]) Release(id string, h uint64, engine int, now int64) {
	sh := s.shard(id, h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.entry(seenKey{id, h}, now, s.window, false); e != nil {
		e.engines &^= engineBit(engine)
	}
}

// Answer records v as the id's answer unless it has one already.
func (s *Seen[V]) Answer(id string, h uint64, v V, now int64) {
	var n int64
	if s.size != nil {
		n = s.size(v) // before the lock: no caller code runs under it
	}
	sh := s.shard(id, h)
	k := seenKey{id, h}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.entry(k, now, s.window, true)
	if e == nil || e.hasAnswer {
		return
	}
	e.v, e.hasAnswer = v, true
	sh.update(k, e, n, now)
}

// Fail records err as the id's first error unless it has an answer or an error already, or
// no engine holds a claim on it: a failure whose calls were all released (Release) cost
// nothing, and a retry must be free to make them again rather than get err replayed.
func (s *Seen[V]) Fail(id string, h uint64, err error, now int64) {
	if err == nil {
		return
	}
	sh := s.shard(id, h)
	k := seenKey{id, h}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.entry(k, now, s.window, false)
	if e == nil || e.engines == 0 || e.hasAnswer || e.err != nil {
		return
	}
	if e = sh.entry(k, now, s.window, true); e == nil { // to the current generation
		return
	}
	e.err = err
	sh.update(k, e, errBytes, now)
}

// Lookup returns what is known of id within the window: its answer if any, its first
// error if any, and the engines that have had it (bit i for engine i); ok is false when
// nothing is.
func (s *Seen[V]) Lookup(id string, h uint64, now int64) (v V, hasAnswer bool, firstErr error, engines uint64, ok bool) {
	sh := s.shard(id, h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.entry(seenKey{id, h}, now, s.window, false)
	if e == nil {
		return v, false, nil, 0, false
	}
	return e.v, e.hasAnswer, e.err, e.engines, true
}

// Len returns the number of ids remembered, expired ones not yet dropped included.
func (s *Seen[V]) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += len(sh.cur.m) + len(sh.prev.m)
		sh.mu.Unlock()
	}
	return n
}

// entry returns k's entry within the window, or, when create is set, a new one; nil when
// there is none, or a new one would alone be over a generation's byte share. Writes
// (create set) first retire generations past the window, and move the entry to the
// current generation.
func (sh *seenShard[V]) entry(k seenKey, now, window int64, create bool) *seenEntry[V] {
	if create {
		sh.expire(now, window)
	}
	g := &sh.cur
	e := g.m[k]
	if e == nil {
		g = &sh.prev
		e = g.m[k]
	}
	if e != nil && now-e.at >= window {
		if !create {
			return nil
		}
		g.drop(k, e)
		e = nil
	}
	if !create || (e != nil && g == &sh.cur) {
		return e
	}
	if e != nil {
		sh.prev.drop(k, e)
	} else {
		e = &seenEntry[V]{at: now, bytes: entryOverhead[V]() + int64(len(k.id))}
		if e.bytes > sh.maxBytes {
			return nil
		}
	}
	if len(sh.cur.m) >= sh.maxEntries || sh.cur.bytes+e.bytes > sh.maxBytes {
		sh.shift(now)
	}
	sh.cur.m[k] = e
	sh.cur.bytes += e.bytes
	sh.cur.newest = max(sh.cur.newest, e.at)
	return e
}

// expire retires the generations whose entries are all past the window: both when their
// newest entry is, and the previous one when the current one is a window old (the
// previous one's entries are older than the current one's start).
func (sh *seenShard[V]) expire(now, window int64) {
	switch {
	case sh.cur.m == nil || now-max(sh.cur.newest, sh.prev.newest) >= window:
		sh.prev = seenGen[V]{}
		sh.cur = seenGen[V]{m: map[seenKey]*seenEntry[V]{}, start: now}
	case now-sh.cur.start >= window:
		sh.shift(now)
	}
}

// shift drops the previous generation and starts a new current one, sized like the last.
func (sh *seenShard[V]) shift(now int64) {
	sh.prev = sh.cur
	sh.cur = seenGen[V]{m: make(map[seenKey]*seenEntry[V], len(sh.prev.m)), start: now}
}

// update counts n more bytes for e, which is in the current generation, and restarts its
// window; an entry that alone is over a generation's byte share is dropped, and a
// generation over it is shifted.
func (sh *seenShard[V]) update(k seenKey, e *seenEntry[V], n, now int64) {
	e.bytes += n
	sh.cur.bytes += n
	e.at = max(e.at, now)
	sh.cur.newest = max(sh.cur.newest, e.at)
	if e.bytes > sh.maxBytes {
		sh.cur.drop(k, e)
		return
	}
	if sh.cur.bytes > sh.maxBytes {
		sh.shift(now) // e stays current; the rest moves to prev
		sh.prev.drop(k, e)
		sh.cur.m[k], sh.cur.bytes, sh.cur.newest = e, e.bytes, e.at
	}
}

func (g *seenGen[V]) drop(k seenKey, e *seenEntry[V]) {
	delete(g.m, k)
	g.bytes -= e.bytes
}
