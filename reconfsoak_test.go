//go:build soak

package translate_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
)

// TestReconfigureSoak is issue 16 item 15's scenario on the real clock, as reported: 64
// callers, A and B alternated 100 times 2ms apart, no injected fault; with engines that
// answer at once (the callers never wait: 64 goroutines that want the CPU all the time) and
// with engines that take 5ms. It fails on any failed request and on a Reconfigure p99 of
// 10ms or more, and logs the latencies. It is too heavy for every `go test`; run it by hand:
//
//	go test -tags soak -run TestReconfigureSoak -count 20 -v . | grep -E 'reconfigure|FAIL|ok'
//
// Why Reconfigure needs the gate (internal/gate), measured on a 2-core machine, Go 1.26.
// With engines that answer at once the callers allocate some 55MB/s over a 1MB live heap:
// 18-21 collections a second, each marking for some 80ms, so the collector marks nearly all
// the time. A goroutine that allocates while it marks owes assist work; when the mark
// workers hold all the work it parks in the assist queue, and each wake waits behind the
// run queue of callers. The wait grows with the number of allocations, not with the work:
// the control below, making Reconfigure's allocations and nothing else, has a p99 of
// 0.4-1.5s, and even as much CPU with no allocation at all (spinLikeReconfigure) 2-70ms.
// Reconfigure itself (27 allocations, 35µs of CPU) had a p99 of 0.5-1.4s. With the gate
// closed while it builds, arriving requests park, the runnable callers drain away and
// Reconfigure has the cores: p99 1.1-2.3ms on a quiet machine (0.2-0.6s for the control),
// 4-9ms at load average 14 beside other work (control 0.7s). With
// 5ms engines it was 0.08-0.35ms either way.
func TestReconfigureSoak(t *testing.T) {
	for _, latency := range []time.Duration{0, 5 * time.Millisecond} {
		t.Run("engines taking "+latency.String(), func(t *testing.T) { soak(t, latency) })
	}
}

func soak(t *testing.T, latency time.Duration) {
	rcType()
	va, vb := &rcVendor{latency: latency}, &rcVendor{latency: latency}
	cfgA, cfgB := switchConfigs(t, rcVendorFor(t, va), rcVendorFor(t, vb))
	c, err := translate.New(translate.WithConfig(cfgB))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l := &switchLoad{c: c, stop: make(chan struct{}), failed: map[string]int{}}
	l.start(64)
	lat := make([]time.Duration, 0, 100)
	control := make([]time.Duration, 0, 100) // as many allocations as a Reconfigure, nothing else
	spin := make([]time.Duration, 0, 100)    // about its CPU time, with no allocation and no lock
	for i := range 100 {
		cfg := cfgA
		if i%2 == 1 {
			cfg = cfgB
		}
		steps := [3]func(){
			func() { timed(&control, allocLikeReconfigure) },
			func() { timed(&spin, spinLikeReconfigure) },
			func() {
				timed(&lat, func() {
					if err := c.Reconfigure(cfg); err != nil {
						t.Fatalf("Reconfigure #%d: %v", i, err)
					}
				})
			},
		}
		// In turn first, second and third: one that waited through a collection's mark
		// leaves the next one a window with none, which favoured the last one measured.
		for k := range steps {
			steps[(i+k)%3]()
		}
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // under B after the last swap
	close(l.stop)
	l.wg.Wait()
	slices.Sort(lat)
	slices.Sort(control)
	slices.Sort(spin)
	t.Logf("reconfigure p50 %v p99 %v max %v; the same allocations alone p50 %v p99 %v max %v; "+
		"as much CPU with no allocation p50 %v p99 %v max %v; %d requests served; a %d calls, b %d calls",
		lat[49], lat[98], lat[99], control[49], control[98], control[99], spin[49], spin[98], spin[99],
		l.served.Load(), va.calls.Load(), vb.calls.Load())
	if diff := cmp.Diff(map[string]int{}, l.failed); diff != "" {
		t.Errorf("failed requests (-want +got):\n%s", diff)
	}
	if lat[98] >= 10*time.Millisecond {
		t.Errorf("Reconfigure p99 %v, want under 10ms", lat[98])
	}
}

// timed runs f and appends how long it took to *d.
func timed(d *[]time.Duration, f func()) {
	t0 := time.Now()
	f()
	*d = append(*d, time.Since(t0))
}

var (
	sink     [][]byte
	spinSink uint64
)

// allocLikeReconfigure makes as many allocations as a Reconfigure between A and B made
// before its cuts (48 objects, about 7.9 KB: BenchmarkReconfigure -benchmem; 27 since),
// and nothing else.
func allocLikeReconfigure() {
	out := make([][]byte, 48)
	for i := range out {
		out[i] = make([]byte, 7900/48)
	}
	sink = out
}

// spinLikeReconfigure computes for about as long as a Reconfigure between A and B on an
// idle machine (some 40us), allocating nothing, taking no lock, making no call: what its
// latency shows under load is the scheduler's and the collector's alone.
func spinLikeReconfigure() {
	x := spinSink | 1
	for range 100_000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	spinSink = x
}
