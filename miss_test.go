package translate_test

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/fanyi-go/translate"
)

// bytesPerRequest returns the bytes one Translate of req on c allocates, averaged over many
// calls after enough warm-up calls for its engines to earn inline calls (deadline.Trust),
// the fewest of three runs.
func bytesPerRequest(t *testing.T, c *translate.Client, req translate.Request) float64 {
	t.Helper()
	ctx := context.Background()
	call := func() {
		if _, err := c.Translate(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	for range 200 {
		call()
	}
	const n = 2000
	best := math.Inf(1)
	for range 3 {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for range n {
			call()
		}
		runtime.ReadMemStats(&m1)
		best = min(best, float64(m1.TotalAlloc-m0.TotalAlloc)/n)
	}
	return best
}

// TestInstantMissAllocatesNoFlight: a miss whose engines compute in process never shares
// its call (see Client.instant), so its one allocation is its Result with its first attempt
// and request id (240 bytes), without the flight identical requests would wait on (352
// bytes with it): a third less for the garbage collector on every miss. Under the race
// detector sync.Pool drops some of what it is given, so there the figure is only logged.
func TestInstantMissAllocatesNoFlight(t *testing.T) {
	for _, n := range []int{1, 4} {
		c := engineClient(t, n, false, translate.WithoutCache())
		got := bytesPerRequest(t, c, benchReq)
		t.Logf("%d engines: %.1f bytes a miss", n, got)
		if !raceEnabled && got > 256 {
			t.Errorf("%d engines: a miss allocates %.1f bytes, want at most 256 (its Result, without a flight)", n, got)
		}
	}
}
