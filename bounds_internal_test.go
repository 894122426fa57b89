package translate

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// Remembered unsupported pairs come from user input: they are bounded by count.
func TestUnsupportedPairsBounded(t *testing.T) {
	var p pairMemory
	for i := range 300_000 {
		p.add(i, i+1)
	}
	if n := p.Len(); n > maxUnsupportedPairs {
		t.Fatalf("remembered %d pairs, want at most %d", n, maxUnsupportedPairs)
	}
	if !p.Has(299_999, 300_000) {
		t.Error("the newest pair was forgotten")
	}
}

// Request ids are bounded by count and bytes, whatever their rate.
func TestRequestIDMemoryBounded(t *testing.T) {
	s := newSeen()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	now := time.Now().UnixNano()
	for i := range 300_000 {
		id := fmt.Sprintf("req-%d", i)
		s.m.Answer(id, uint64(i), &Result{Text: "some translated text of a few words", Engine: "e"}, now)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if n := s.m.Len(); n > seenEntries {
		t.Fatalf("remembered %d request ids, want at most %d", n, seenEntries)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 2*seenBytes {
		t.Errorf("heap grew %d MB for 300k request ids", grown>>20)
	}
}
