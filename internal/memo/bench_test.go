package memo

import (
	"hash/maphash"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"
)

// Each mechanism against the plain version it replaces: a hit, a flight and a request id
// remembered. Medians of `go test -run XXX -bench . -benchmem -count 6 ./internal/memo`
// on a quiet 2-core AMD EPYC (ns/op, B/op, allocs/op):
//
//	Cache.Get           11.7 0 0    golang-lru Get           68.5 0 0
//	  parallel           4.1 0 0      parallel               60.8 0 0
//	Flights Join+Land   21.2 0 0    singleflight.Do         170.4 80 1
//	  parallel          48.4 0 0      parallel              252.0 80 1
//	Seen, 100k ids/10s   883 129 2  mutex+map, swept        1018 106 2
//	  1M ids/10s         736 159 2                          1521 239 2
//	  parallel, 100k     846 134 2                          1171 120 2
//	  parallel, 1M       575 164 2                          1636 246 2
//
// (The Seen loops allocate each new id string themselves: one of the two allocations.)

const benchKeys = 1024

var benchSeed = maphash.MakeSeed()

func benchKeySet() ([]key, []uint64) {
	ks := make([]key, benchKeys)
	hs := make([]uint64, benchKeys)
	for i := range ks {
		ks[i] = key{"the quick brown fox " + strconv.Itoa(i), 7}
		hs[i] = maphash.String(benchSeed, ks[i].text)
	}
	return ks, hs
}

func BenchmarkCacheGet(b *testing.B) {
	ks, hs := benchKeySet()
	c := NewCache[key, string](10_000, 0)
	for i := range ks {
		c.Put(hs[i], ks[i], ks[i].text, 0, 0)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		j := i & (benchKeys - 1)
		c.Get(hs[j], ks[j], 1)
		i++
	}
}

// BenchmarkPlainLRUGet is the plain version: golang-lru's Cache, a mutex, a map and a list.
func BenchmarkPlainLRUGet(b *testing.B) {
	ks, _ := benchKeySet()
	c, _ := lru.New[key, string](10_000)
	for i := range ks {
		c.Add(ks[i], ks[i].text)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c.Get(ks[i&(benchKeys-1)])
		i++
	}
}

func BenchmarkCacheGetParallel(b *testing.B) {
	ks, hs := benchKeySet()
	c := NewCache[key, string](10_000, 0)
	for i := range ks {
		c.Put(hs[i], ks[i], ks[i].text, 0, 0)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			j := i & (benchKeys - 1)
			c.Get(hs[j], ks[j], 1)
			i++
		}
	})
}

func BenchmarkPlainLRUGetParallel(b *testing.B) {
	ks, _ := benchKeySet()
	c, _ := lru.New[key, string](10_000)
	for i := range ks {
		c.Add(ks[i], ks[i].text)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.Get(ks[i&(benchKeys-1)])
			i++
		}
	})
}

// flightLoop leads and lands flights over the keys, one at a time: the uncontended miss.
// The Flight is reused only because no follower ever holds it.
func flightLoop(fs *Flights[key, string], ks []key, hs []uint64, next func() bool) {
	var f Flight[key, string]
	for i := 0; next(); i++ {
		j := i & (benchKeys - 1)
		f = Flight[key, string]{}
		g, _ := fs.Join(hs[j], ks[j], &f)
		fs.Land(hs[j], ks[j], g, "out", nil)
	}
}

func sfLoop(g *singleflight.Group, ks []key, next func() bool) {
	fn := func() (any, error) { return "out", nil }
	for i := 0; next(); i++ {
		g.Do(ks[i&(benchKeys-1)].text, fn)
	}
}

func BenchmarkFlightsJoinLand(b *testing.B) {
	ks, hs := benchKeySet()
	var fs Flights[key, string]
	b.ReportAllocs()
	flightLoop(&fs, ks, hs, b.Loop)
}

// BenchmarkSingleflightDo is the plain version: golang.org/x/sync/singleflight.
func BenchmarkSingleflightDo(b *testing.B) {
	ks, _ := benchKeySet()
	var g singleflight.Group
	b.ReportAllocs()
	sfLoop(&g, ks, b.Loop)
}

// The parallel benchmarks give each goroutine keys of its own, over all the slots.
func parallelKeys() func() ([]key, []uint64) {
	var n atomic.Int64
	return func() ([]key, []uint64) {
		g := strconv.Itoa(int(n.Add(1)))
		ks, hs := benchKeySet()
		for i := range ks {
			ks[i].text += "/" + g
			hs[i] = maphash.String(benchSeed, ks[i].text)
		}
		return ks, hs
	}
}

func BenchmarkFlightsJoinLandParallel(b *testing.B) {
	keys := parallelKeys()
	var fs Flights[key, string]
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ks, hs := keys()
		flightLoop(&fs, ks, hs, pb.Next)
	})
}

func BenchmarkSingleflightDoParallel(b *testing.B) {
	keys := parallelKeys()
	var g singleflight.Group
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ks, _ := keys()
		sfLoop(&g, ks, pb.Next)
	})
}

// seenOps is what a request with an id does: Lookup, Claim an engine, Answer.
type seenOps interface {
	Claim(id string, h uint64, engine int, now int64) bool
	Answer(id string, h uint64, v string, now int64)
	Lookup(id string, h uint64, now int64) (string, bool, error, uint64, bool)
}

// seenLoads are the request rates the Seen benchmarks run at, as the time an op takes:
// 100 000 ids in a 10 s window, and a flood of 1 000 000 (the 1M ids).
var seenLoads = []struct {
	name string
	step int64
}{{"100k-ids-a-window", 100_000}, {"1M-ids-a-window", 10_000}}

// seenLoop runs requests with new ids, each an op's time after the last.
func seenLoop(s seenOps, step int64, prefix string, clock *atomic.Int64, next func() bool) {
	buf := []byte(prefix)
	for i := 0; next(); i++ {
		now := clock.Add(step)
		id := string(strconv.AppendInt(buf, int64(i), 10))
		h := maphash.String(benchSeed, id)
		if _, has, _, _, _ := s.Lookup(id, h, now); has {
			continue
		}
		s.Claim(id, h, 0, now)
		s.Answer(id, h, id, now)
	}
}

// newSeen is Seen as the Client would size it: 256k ids, 64 MB.
func newSeen() *Seen[string] {
	return NewSeen(window, 1<<18, 64<<20, func(v string) int64 { return int64(len(v)) })
}

func newPlainSeen() *plainSeen {
	return &plainSeen{window: int64(window), m: map[seenKey]*plainEntry{}}
}

func BenchmarkSeen(b *testing.B) {
	for _, l := range seenLoads {
		b.Run(l.name, func(b *testing.B) {
			var clock atomic.Int64
			b.ReportAllocs()
			seenLoop(newSeen(), l.step, "r", &clock, b.Loop)
		})
	}
}

// BenchmarkPlainSeen is the plain version: a mutex and a map, swept once a window.
func BenchmarkPlainSeen(b *testing.B) {
	for _, l := range seenLoads {
		b.Run(l.name, func(b *testing.B) {
			var clock atomic.Int64
			b.ReportAllocs()
			seenLoop(newPlainSeen(), l.step, "r", &clock, b.Loop)
		})
	}
}

func seenParallel(b *testing.B, s seenOps, step int64) {
	var clock, n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		seenLoop(s, step, strconv.Itoa(int(n.Add(1)))+"-r", &clock, pb.Next)
	})
}

func BenchmarkSeenParallel(b *testing.B) {
	for _, l := range seenLoads {
		b.Run(l.name, func(b *testing.B) { seenParallel(b, newSeen(), l.step) })
	}
}

func BenchmarkPlainSeenParallel(b *testing.B) {
	for _, l := range seenLoads {
		b.Run(l.name, func(b *testing.B) { seenParallel(b, newPlainSeen(), l.step) })
	}
}

// plainSeen is the plain version of Seen: one mutex, one map, bounded only by time.
type plainSeen struct {
	mu     sync.Mutex
	m      map[seenKey]*plainEntry
	sweep  int64
	window int64
}

type plainEntry struct {
	at        int64
	engines   uint64
	hasAnswer bool
	v         string
	err       error
}

// entry returns k's live entry, making one if asked; a write sweeps the map once a window.
func (s *plainSeen) entry(k seenKey, now int64, create bool) *plainEntry {
	if create && now-s.sweep >= s.window {
		for k, e := range s.m {
			if now-e.at >= s.window {
				delete(s.m, k)
			}
		}
		s.sweep = now
	}
	e := s.m[k]
	if e != nil && now-e.at >= s.window {
		e = nil
	}
	if e == nil && create {
		e = &plainEntry{at: now}
		s.m[k] = e
	}
	return e
}

func (s *plainSeen) Claim(id string, h uint64, engine int, now int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entry(seenKey{id, h}, now, true)
	if e.engines&engineBit(engine) != 0 {
		return false
	}
	e.engines |= engineBit(engine)
	e.at = now
	return true
}

func (s *plainSeen) Answer(id string, h uint64, v string, now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.entry(seenKey{id, h}, now, true); !e.hasAnswer {
		e.v, e.hasAnswer, e.at = v, true, now
	}
}

func (s *plainSeen) Lookup(id string, h uint64, now int64) (string, bool, error, uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entry(seenKey{id, h}, now, false)
	if e == nil {
		return "", false, nil, 0, false
	}
	return e.v, e.hasAnswer, e.err, e.engines, true
}

// BenchmarkFlightsJoinLandHot is one hot key on every goroutine, with followers that run
// alone instead of waiting, as the Client's are for an engine that answers at once: what
// the slot's sharing costs. Each Join gets a new Flight, as each of the Client's requests
// brings one in its Result.
func BenchmarkFlightsJoinLandHot(b *testing.B) {
	ks, hs := benchKeySet()
	var fs Flights[key, string]
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			f := new(Flight[key, string])
			g, lead := fs.Join(hs[0], ks[0], f)
			if !lead {
				g = f
			}
			fs.Land(hs[0], ks[0], g, "out", nil)
		}
	})
}
