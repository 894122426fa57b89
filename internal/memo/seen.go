package memo

import (
	"hash/maphash"
	"sync"
	"time"
	"unsafe"
)

// Seen remembers, for a window, each request id's engines and first outcome, so that an id
// reaches each engine at most once within the window and a retry gets the first answer
// (or the first error) instead of a second bill. It is safe for concurrent use; make one
// with NewSeen.
//
// An entry is keyed by the id and the request's content hash, and lives for window after
// it was last sent to an engine or got its outcome. Memory is bounded by count and by
// bytes, both split evenly over seenShards shards, each a mutex, a map and a list oldest
// first: a write drops expired entries from the list's front, then the oldest entries
// while its shard is over a bound. An entry that alone is over its shard's byte share is
// not remembered. So the bounds cost O(1) per write, never a sweep of the whole map.
type Seen[V any] struct {
	window int64
	size   func(V) int64
	seed   maphash.Seed
	shards [seenShards]seenShard[V]
}

const seenShards = 16

type seenShard[V any] struct {
	mu         sync.Mutex
	m          map[seenKey]*seenEntry[V]
	head, tail *seenEntry[V] // oldest first
	bytes      int64
	maxEntries int
	maxBytes   int64
	_          [64]byte // keep shards' locks apart
}

type seenKey struct {
	id string
	h  uint64
}

type seenEntry[V any] struct {
	key        seenKey
	prev, next *seenEntry[V]
	at         int64  // unix nanos of the last Claim or of the outcome
	engines    uint64 // bit i: engine i has had the id (engines >= 63 share bit 63)
	hasAnswer  bool
	v          V
	err        error
	bytes      int64
}

// errBytes is what a remembered error is counted as.
const errBytes = 64

// NewSeen returns a Seen that remembers ids for window and holds at most maxEntries
// entries and maxBytes bytes: each entry counts its id, size of its answer (size may be
// nil: answers count 0) and a fixed overhead for its bookkeeping. Bounds below the shard
// count are raised to one entry (or one overhead) per shard.
func NewSeen[V any](window time.Duration, maxEntries int, maxBytes int64, size func(V) int64) *Seen[V] {
	s := &Seen[V]{window: int64(window), size: size, seed: maphash.MakeSeed()}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.m = map[seenKey]*seenEntry[V]{}
		sh.maxEntries = max((maxEntries+seenShards-1)/seenShards, 1)
		sh.maxBytes = max((maxBytes+seenShards-1)/seenShards, entryOverhead[V]())
	}
	return s
}

// entryOverhead is the bookkeeping an entry costs besides its id and answer: the entry and
// its map slot.
func entryOverhead[V any]() int64 {
	return int64(unsafe.Sizeof(seenEntry[V]{})) + int64(unsafe.Sizeof(seenKey{})) + 24
}

func (s *Seen[V]) shard(id string, h uint64) *seenShard[V] {
	return &s.shards[(maphash.String(s.seed, id)^h)%seenShards]
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
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.entry(seenKey{id, h}, now, s.window, true)
	if e == nil {
		return true // too big to remember
	}
	bit := engineBit(engine)
	if e.engines&bit != 0 {
		return false
	}
	e.engines |= bit
	sh.touch(e, now)
	return true
}

// Answer records v as the id's answer unless it has one already.
func (s *Seen[V]) Answer(id string, h uint64, v V, now int64) {
	var n int64
	if s.size != nil {
		n = s.size(v) // before the lock: no caller code runs under it
	}
	sh := s.shard(id, h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.entry(seenKey{id, h}, now, s.window, true)
	if e == nil || e.hasAnswer {
		return
	}
	e.v, e.hasAnswer = v, true
	sh.grow(e, n, now)
}

// Fail records err as the id's first error unless it has an answer or an error already.
func (s *Seen[V]) Fail(id string, h uint64, err error, now int64) {
	if err == nil {
		return
	}
	sh := s.shard(id, h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.entry(seenKey{id, h}, now, s.window, true)
	if e == nil || e.hasAnswer || e.err != nil {
		return
	}
	e.err = err
	sh.grow(e, errBytes, now)
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
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}

// entry returns k's entry within the window, or, when create is set, a new one; nil when
// there is none, or a new one would alone be over the shard's byte share. Writes (create
// set) first drop the expired entries at the list's front.
func (sh *seenShard[V]) entry(k seenKey, now, window int64, create bool) *seenEntry[V] {
	if create {
		for sh.head != nil && now-sh.head.at >= window {
			sh.drop(sh.head)
		}
	}
	e := sh.m[k]
	if e != nil && now-e.at >= window {
		sh.drop(e)
		e = nil
	}
	if e != nil || !create {
		return e
	}
	e = &seenEntry[V]{key: k, at: now, bytes: entryOverhead[V]() + int64(len(k.id))}
	if e.bytes > sh.maxBytes {
		return nil
	}
	sh.m[k] = e
	sh.bytes += e.bytes
	sh.push(e)
	sh.evict(e)
	return e
}

// grow counts n more bytes for e and keeps the shard within its bounds; an entry that
// alone is over the byte share is dropped.
func (sh *seenShard[V]) grow(e *seenEntry[V], n, now int64) {
	e.bytes += n
	sh.bytes += n
	if e.bytes > sh.maxBytes {
		sh.drop(e)
		return
	}
	sh.touch(e, now)
	sh.evict(e)
}

// evict drops the oldest entries, never keep, while the shard is over a bound.
func (sh *seenShard[V]) evict(keep *seenEntry[V]) {
	for sh.head != keep && (len(sh.m) > sh.maxEntries || sh.bytes > sh.maxBytes) {
		sh.drop(sh.head)
	}
}

// touch restarts e's window at now and moves it to the list's back.
func (sh *seenShard[V]) touch(e *seenEntry[V], now int64) {
	e.at = max(e.at, now)
	if sh.tail == e {
		return
	}
	sh.unlink(e)
	sh.push(e)
}

func (sh *seenShard[V]) drop(e *seenEntry[V]) {
	delete(sh.m, e.key)
	sh.bytes -= e.bytes
	sh.unlink(e)
}

func (sh *seenShard[V]) push(e *seenEntry[V]) {
	e.prev, e.next = sh.tail, nil
	if sh.tail != nil {
		sh.tail.next = e
	} else {
		sh.head = e
	}
	sh.tail = e
}

func (sh *seenShard[V]) unlink(e *seenEntry[V]) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		sh.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		sh.tail = e.prev
	}
	e.prev, e.next = nil, nil
}
