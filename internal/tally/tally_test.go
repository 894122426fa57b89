package tally

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func TestCounterSumsConcurrentAdds(t *testing.T) {
	var c Counter
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				c.AddAt(uint64(i*g), uint64(g+1))
			}
		})
	}
	wg.Wait()
	if got, want := c.Load(), uint64(1000*(1+2+3+4+5+6+7+8)); got != want {
		t.Fatalf("Load = %d, want %d", got, want)
	}
}

func TestFloatSumsConcurrentAddsAndStaysMonotonic(t *testing.T) {
	var f Float
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				key := uint64(i * g)
				f.AddAt(key, 0.5)
				f.AddAt(key, -1) // ignored
				f.AddAt(key, math.NaN())
				f.AddAt(key, math.Inf(1))
			}
		})
	}
	wg.Wait()
	if got := f.Load(); got != 4000 {
		t.Fatalf("Load = %v, want 4000", got)
	}
}

func TestAddAtPicksTheKeysStripe(t *testing.T) {
	var c Counter
	var f Float
	c.AddAt(6, 2)
	f.AddAt(6, 0.5)
	for i := range Stripes {
		wantN, wantV := uint64(0), 0.0
		if i == 6%Stripes {
			wantN, wantV = 2, 0.5
		}
		if c.Stripe(i) != wantN || f.Stripe(i) != wantV {
			t.Errorf("stripe %d holds %d and %v, want %d and %v", i, c.Stripe(i), f.Stripe(i), wantN, wantV)
		}
	}
}

func TestZeroValueIsEmpty(t *testing.T) {
	var c Counter
	var f Float
	if c.Load() != 0 || f.Load() != 0 {
		t.Fatal("zero values are not empty")
	}
}

// BenchmarkCounterAddParallel adds from every P: with a key that stays with the goroutine
// (as a per-processor scratch's spread does), with a random key per add, and to one shared
// atomic. Read at -cpu 2 against -cpu 1: a random key spreads the adds over stripes, yet
// every line still moves between the cores.
func BenchmarkCounterAddParallel(b *testing.B) {
	var next atomic.Uint64
	b.Run("own-key", func(b *testing.B) {
		var c Counter
		b.RunParallel(func(pb *testing.PB) {
			key := next.Add(1)
			for pb.Next() {
				c.AddAt(key, 1)
			}
		})
	})
	b.Run("here", func(b *testing.B) {
		var c Counter
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c.AddAt(Here(), 1)
			}
		})
	})
	b.Run("random-key", func(b *testing.B) {
		var c Counter
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c.AddAt(rand.Uint64(), 1)
			}
		})
	})
	b.Run("shared", func(b *testing.B) {
		var n atomic.Uint64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				n.Add(1)
			}
		})
	})
}

// TestHereIsTheProcessor: Here is a processor's id, below GOMAXPROCS: with one processor
// always 0, so that every add lands on one stripe; with two, on no more than two.
func TestHereIsTheProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for range 100 {
		if p := Here(); p != 0 {
			t.Fatalf("Here() = %d with GOMAXPROCS 1, want 0", p)
		}
	}
	runtime.GOMAXPROCS(2)
	var wg sync.WaitGroup
	var bad atomic.Uint64
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				if p := Here(); p >= 2 {
					bad.Store(p + 1)
				}
			}
		})
	}
	wg.Wait()
	if p := bad.Load(); p != 0 {
		t.Errorf("Here() = %d with GOMAXPROCS 2, want 0 or 1", p-1)
	}
}

// BenchmarkHere is what a key that stays with the core costs.
func BenchmarkHere(b *testing.B) {
	var n uint64
	for b.Loop() {
		n += Here()
	}
	_ = n
}
