package health

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRecordTakePeek(t *testing.T) {
	var c Counters
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				key := uint64(g*1000 + i)
				c.Record(key, i%4 != 0, 10*time.Millisecond)
				if i%4 != 0 {
					c.Served(key)
				}
			}
		}()
	}
	wg.Wait()
	want := Sample{Calls: 8000, Fails: 2000, OKCalls: 6000, LatNanos: 6000 * int64(10*time.Millisecond)}
	if diff := cmp.Diff(want, c.Peek()); diff != "" {
		t.Fatalf("Peek (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, c.Take()); diff != "" {
		t.Fatalf("Take (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Sample{}, c.Peek()); diff != "" {
		t.Fatalf("after Take (-want +got):\n%s", diff)
	}
	if got := c.TakeServed(); got != 6000 {
		t.Fatalf("TakeServed = %d, want 6000", got)
	}
	if got := c.TakeServed(); got != 0 {
		t.Fatalf("second TakeServed = %d, want 0", got)
	}
	if got := want.MeanLatency(); got != 10*time.Millisecond {
		t.Fatalf("MeanLatency = %v", got)
	}
	if got := (Sample{}).MeanLatency(); got != 0 {
		t.Fatalf("MeanLatency of nothing = %v", got)
	}
}

// mutexCounters is the plain version the stripes must beat.
type mutexCounters struct {
	mu                              sync.Mutex
	calls, fails, okCalls, latNanos int64
}

func (m *mutexCounters) record(ok bool, lat time.Duration) {
	m.mu.Lock()
	m.calls++
	if !ok {
		m.fails++
	} else {
		m.okCalls++
		m.latNanos += int64(lat)
	}
	m.mu.Unlock()
}

func BenchmarkRecordParallel(b *testing.B) {
	var c Counters
	var seq uint64
	var mu sync.Mutex
	b.RunParallel(func(pb *testing.PB) {
		mu.Lock()
		seq += 0x9e3779b97f4a7c15
		key := seq
		mu.Unlock()
		for pb.Next() {
			key += 0x9e3779b97f4a7c15
			c.Record(key>>32, true, time.Millisecond)
		}
	})
}

func BenchmarkRecordParallelMutex(b *testing.B) {
	var m mutexCounters
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.record(true, time.Millisecond)
		}
	})
}

// atomicCounters is one set of atomic counters, not striped.
type atomicCounters struct{ calls, okCalls, latNanos atomic.Int64 }

func BenchmarkRecordParallelAtomic(b *testing.B) {
	var m atomicCounters
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.calls.Add(1)
			m.okCalls.Add(1)
			m.latNanos.Add(int64(time.Millisecond))
		}
	})
}
