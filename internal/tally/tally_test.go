package tally

import (
	"math"
	"sync"
	"testing"
)

func TestCounterSumsConcurrentAdds(t *testing.T) {
	var c Counter
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				if i%2 == 0 {
					c.Add(uint64(g + 1))
				} else {
					c.AddAt(uint64(i*g), uint64(g+1))
				}
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
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				f.Add(0.5)
				f.Add(-1) // ignored
				f.Add(math.NaN())
				f.Add(math.Inf(1))
			}
		})
	}
	wg.Wait()
	if got := f.Load(); got != 4000 {
		t.Fatalf("Load = %v, want 4000", got)
	}
}

func TestZeroValueIsEmpty(t *testing.T) {
	var c Counter
	var f Float
	if c.Load() != 0 || f.Load() != 0 {
		t.Fatal("zero values are not empty")
	}
}

func BenchmarkCounterAddParallel(b *testing.B) {
	var c Counter
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Add(1)
		}
	})
}
