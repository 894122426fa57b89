package memo

import (
	"errors"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const window = 10 * time.Second

// known is what Lookup returned, for comparing with cmp.
type known struct {
	V         string
	HasAnswer bool
	Err       error
	Engines   uint64
	OK        bool
}

func lookup(s *Seen[string], id string, h uint64, now int64) known {
	v, has, err, engines, ok := s.Lookup(id, h, now)
	return known{v, has, err, engines, ok}
}

var cmpErr = cmpopts.EquateErrors()

func TestSeenClaimPerEngine(t *testing.T) {
	s := NewSeen[string](window, 100, 1<<20, nil)
	for _, c := range []struct {
		id     string
		h      uint64
		engine int
		want   bool
	}{
		{"r1", 1, 0, true},
		{"r1", 1, 0, false}, // engine 0 had it
		{"r1", 1, 2, true},
		{"r1", 1, 2, false},
		{"r1", 2, 0, true}, // same id, other content
		{"r2", 1, 0, true},
		{"r2", 1, 63, true},
		{"r2", 1, 70, false}, // 63 and up share a mark
	} {
		if got := s.Claim(c.id, c.h, c.engine, 0); got != c.want {
			t.Errorf("Claim(%s, %d, engine %d) = %v, want %v", c.id, c.h, c.engine, got, c.want)
		}
	}
	if diff := cmp.Diff(known{Engines: 0b101, OK: true}, lookup(s, "r1", 1, 1), cmpErr); diff != "" {
		t.Errorf("Lookup(r1) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(known{}, lookup(s, "r3", 1, 1), cmpErr); diff != "" {
		t.Errorf("Lookup(r3), never seen (-want +got):\n%s", diff)
	}
}

// Concurrent Claims of one id for one engine: exactly one wins.
func TestSeenClaimConcurrent(t *testing.T) {
	s := NewSeen[string](window, 100, 1<<20, nil)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if s.Claim("r", 1, 3, 0) {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Errorf("%d of 50 concurrent Claims won, want 1", n)
	}
}

func TestSeenFirstOutcome(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	s := NewSeen[string](window, 100, 1<<20, nil)
	s.Claim("r", 1, 0, 0)
	s.Fail("r", 1, errA, 1)
	s.Fail("r", 1, errB, 2)
	if diff := cmp.Diff(known{Err: errA, Engines: 1, OK: true}, lookup(s, "r", 1, 3), cmpErr); diff != "" {
		t.Errorf("after two Fails (-want +got):\n%s", diff)
	}
	s.Claim("r", 1, 1, 4)
	s.Answer("r", 1, "first", 5)
	s.Answer("r", 1, "second", 6)
	s.Fail("r", 1, errB, 7)
	want := known{V: "first", HasAnswer: true, Err: errA, Engines: 0b11, OK: true}
	if diff := cmp.Diff(want, lookup(s, "r", 1, 8), cmpErr); diff != "" {
		t.Errorf("after Answers (-want +got):\n%s", diff)
	}
	s.Answer("q", 1, "only", 9) // an answer without a Claim is remembered too
	s.Fail("q", 1, errA, 10)    // and an error after it is not
	if diff := cmp.Diff(known{V: "only", HasAnswer: true, OK: true}, lookup(s, "q", 1, 11), cmpErr); diff != "" {
		t.Errorf("Answer then Fail (-want +got):\n%s", diff)
	}
}

// TestSeenReleasedFailureNotReplayed: a released claim may be made again, and a failure
// with every claim released is not remembered; with a claim still held it is.
func TestSeenReleasedFailureNotReplayed(t *testing.T) {
	errA := errors.New("a")
	s := NewSeen[string](window, 100, 1<<20, nil)
	s.Claim("r", 1, 0, 0)
	s.Release("r", 1, 0, 1)
	s.Fail("r", 1, errA, 2)
	if diff := cmp.Diff(known{OK: true}, lookup(s, "r", 1, 3), cmpErr); diff != "" {
		t.Errorf("a failure with its claim released (-want +got):\n%s", diff)
	}
	if !s.Claim("r", 1, 0, 4) {
		t.Fatal("a released claim could not be made again")
	}
	s.Claim("r", 1, 2, 5)
	s.Release("r", 1, 0, 6)
	s.Fail("r", 1, errA, 7)
	if diff := cmp.Diff(known{Err: errA, Engines: 0b100, OK: true}, lookup(s, "r", 1, 8), cmpErr); diff != "" {
		t.Errorf("a failure with a claim held (-want +got):\n%s", diff)
	}
	s.Fail("q", 1, errA, 9) // nothing claimed
	if got := lookup(s, "q", 1, 10); got.OK {
		t.Errorf("a failure of an id never claimed is remembered: %+v", got)
	}
}

func TestSeenWindow(t *testing.T) {
	w := int64(window)
	s := NewSeen[string](window, 100, 1<<20, nil)
	s.Claim("r", 1, 0, 0)
	s.Answer("r", 1, "A", 0)
	if got := lookup(s, "r", 1, w-1); !got.OK || !got.HasAnswer {
		t.Errorf("Lookup just inside the window = %+v, want the answer", got)
	}
	if diff := cmp.Diff(known{}, lookup(s, "r", 1, w), cmpErr); diff != "" {
		t.Errorf("Lookup at the window's end (-want +got):\n%s", diff)
	}
	if !s.Claim("r", 1, 0, w) {
		t.Error("Claim after the window refused")
	}
	// A later Claim restarts the window: engine 0 had it at w, engine 1 at w+5s.
	s.Claim("r", 1, 1, w+5e9)
	if s.Claim("r", 1, 0, 2*w+1e9) {
		t.Error("Claim for engine 0 within the window of the last Claim accepted")
	}
	if !s.Claim("r", 1, 0, 2*w+5e9) {
		t.Error("Claim after the last Claim's window refused")
	}
}

// sameShard returns n ids that land in one shard of s.
func sameShard(s *Seen[string], n int) []string {
	var ids []string
	want := s.shard("id0", 1)
	for i := 0; len(ids) < n; i++ {
		id := "id" + strconv.Itoa(i)
		if s.shard(id, 1) == want {
			ids = append(ids, id)
		}
	}
	return ids
}

// The oldest entry is evicted first; a Claim makes an entry the newest.
func TestSeenEvictsOldestFirst(t *testing.T) {
	s := NewSeen[string](window, 2*seenShards, 1<<30, nil) // two entries a shard
	ids := sameShard(s, 3)
	s.Claim(ids[0], 1, 0, 1)
	s.Claim(ids[1], 1, 0, 2)
	s.Claim(ids[0], 1, 1, 3) // ids[0] is now the newest
	s.Claim(ids[2], 1, 0, 4)
	for i, want := range []bool{true, false, true} {
		if got := lookup(s, ids[i], 1, 5).OK; got != want {
			t.Errorf("ids[%d] remembered = %v, want %v", i, got, want)
		}
	}
}

// Expired entries leave on the next write, before the count bound is reached.
func TestSeenDropsExpired(t *testing.T) {
	s := NewSeen[string](window, 1000, 1<<30, nil)
	ids := sameShard(s, 3)
	s.Claim(ids[0], 1, 0, 0)
	s.Claim(ids[1], 1, 0, 1)
	s.Claim(ids[2], 1, 0, int64(window)+1)
	if n := s.Len(); n != 1 {
		t.Errorf("Len = %d after two entries expired, want 1", n)
	}
}

// heapAfterGC returns the bytes of live heap.
func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A million ids, each with an answer of its own, keep Seen within its count bound and its
// memory within a few MB (unbounded, they hold about 250 MB).
func TestSeenBoundedByCount(t *testing.T) {
	before := heapAfterGC()
	s := NewSeen[string](window, 10_000, 1<<40, func(v string) int64 { return int64(len(v)) })
	for i := range 1_000_000 {
		id := "request-" + strconv.Itoa(i)
		s.Claim(id, uint64(i), 0, int64(i))
		s.Answer(id, uint64(i), id+" answered", int64(i))
	}
	if n := s.Len(); n > 10_000 {
		t.Errorf("Len = %d, want at most 10000", n)
	}
	grew := int64(heapAfterGC()) - int64(before)
	t.Logf("heap grew by %d KB for %d entries", grew>>10, s.Len())
	if grew > 32<<20 {
		t.Errorf("heap grew by %d MB, want at most 32 MB", grew>>20)
	}
	runtime.KeepAlive(s)
}

func TestSeenBoundedByBytes(t *testing.T) {
	const maxBytes = 1 << 20
	s := NewSeen[string](window, 1<<30, maxBytes, func(v string) int64 { return int64(len(v)) })
	answer := string(make([]byte, 10_000))
	for i := range 100_000 {
		s.Answer("request-"+strconv.Itoa(i), uint64(i), answer, int64(i))
	}
	if n := s.Len(); n > maxBytes/10_000 {
		t.Errorf("Len = %d, want at most %d", n, maxBytes/10_000)
	}
	var total int64
	for i := range s.shards {
		sh := &s.shards[i]
		for _, g := range []*seenGen[string]{&sh.cur, &sh.prev} {
			if g.bytes > sh.maxBytes {
				t.Errorf("shard %d: a generation counts %d bytes, over its share %d", i, g.bytes, sh.maxBytes)
			}
			total += g.bytes
		}
	}
	if total > maxBytes {
		t.Errorf("entries count %d bytes, want at most %d", total, maxBytes)
	}
}

// An entry that alone is over its shard's byte share is not remembered, and evicts no
// other.
func TestSeenTooBigToRemember(t *testing.T) {
	s := NewSeen[string](window, 100, 16*1024, func(v string) int64 { return int64(len(v)) })
	ids := sameShard(s, 2)
	s.Answer(ids[0], 1, "small", 0)
	s.Answer(ids[1], 1, string(make([]byte, 2048)), 0)
	if diff := cmp.Diff(known{}, lookup(s, ids[1], 1, 1), cmpErr); diff != "" {
		t.Errorf("big answer (-want +got):\n%s", diff)
	}
	if got := lookup(s, ids[0], 1, 1); !got.HasAnswer {
		t.Errorf("small answer lost to a big one: %+v", got)
	}
}

// With a real clock (now far from 0), a generation shifted by a write keeps the entries
// within the window: the shift moves them to the previous generation, it does not drop
// them.
func TestSeenShiftKeepsLiveEntries(t *testing.T) {
	const t0 = int64(1_750_000_000e9)
	s := NewSeen[string](window, 1000, 16*1024, func(v string) int64 { return int64(len(v)) })
	ids := sameShard(s, 2) // 512 bytes a generation
	s.Claim(ids[0], 1, 0, t0)
	s.Claim(ids[1], 1, 0, t0+1)
	s.Answer(ids[1], 1, string(make([]byte, 300)), t0+2) // over the share: ids[0] moves to prev
	s.Claim(ids[1], 1, 1, t0+3)
	for i, id := range ids {
		if got := lookup(s, id, 1, t0+4); !got.OK {
			t.Errorf("ids[%d] forgotten within the window", i)
		}
	}
	if s.Claim(ids[0], 1, 0, t0+5) {
		t.Error("ids[0] sent to engine 0 twice within the window")
	}
}
