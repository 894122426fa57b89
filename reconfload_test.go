package translate_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
)

// switchConfigs are the configurations of issue 16 item 15: A has "a" (quality 90) and "b"
// as a last resort (quality 10); B has "b" alone, as a normal engine (quality 90). The
// cache is off; everything else is the default.
func switchConfigs(t testing.TB, vendorA, vendorB string) (a, b *translate.Config) {
	a = rcParse(t, `{"cache": {"disabled": true}, "engines": [
	    {"name": "a", "type": "rc", "settings": {"vendor": %q}, "profile": {"quality": 90}},
	    {"name": "b", "type": "rc", "settings": {"vendor": %q}, "profile": {"quality": 10, "fallback_only": true}}]}`,
		vendorA, vendorB)
	b = rcParse(t, `{"cache": {"disabled": true}, "engines": [
	    {"name": "b", "type": "rc", "settings": {"vendor": %q}, "profile": {"quality": 90}}]}`, vendorB)
	return a, b
}

// switchLoad is the callers of the switching scenario: each translates texts of its own
// until stop is closed, and counts what failed.
type switchLoad struct {
	c      *translate.Client
	stop   chan struct{}
	wg     sync.WaitGroup
	served atomic.Int64
	mu     sync.Mutex
	failed map[string]int // error text -> count
}

func (l *switchLoad) start(callers int) {
	for g := range callers {
		l.wg.Add(1)
		go l.call(g)
	}
}

func (l *switchLoad) call(g int) {
	defer l.wg.Done()
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		_, err := l.c.Translate(context.Background(), req(fmt.Sprintf("t%d-%d", g, i)))
		if err == nil {
			l.served.Add(1)
			continue
		}
		l.mu.Lock()
		l.failed[err.Error()]++
		l.mu.Unlock()
		time.Sleep(50 * time.Millisecond) // a failure costs no time: without a pause, virtual time would stand still
	}
}

// alternate reconfigures c, running B, 100 times 2ms apart: A, B, A, ..., ending on B.
func alternate(t *testing.T, c *translate.Client, cfgA, cfgB *translate.Config) {
	t.Helper()
	for i := range 100 {
		cfg := cfgA
		if i%2 == 1 {
			cfg = cfgB
		}
		if err := c.Reconfigure(cfg); err != nil {
			t.Fatalf("Reconfigure #%d: %v", i, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestReconfigureAlternatingUnderLoad is issue 16 item 15's scenario, in virtual time: 64
// callers, B then A and B alternated 100 times 2ms apart, every engine call taking 50ms.
// b's first call answers after its attempt's deadline (5s, the default Timeout), as an
// engine on a starved machine does when its goroutine is not run in time: that request may
// time out. The Client then calls b apart, which must cost nothing more: no other request may fail, during the alternation or after it (the
// reported failure was every request failing, for good, with "no_engine ... [tried:
// b=unavailable]": the calls in flight on b were counted as abandoned ones, so past 16 of
// them b was skipped).
func TestReconfigureAlternatingUnderLoad(t *testing.T) {
	rcType()
	synctest.Test(t, func(t *testing.T) {
		va, vb := &rcVendor{latency: 50 * time.Millisecond}, &rcVendor{latency: 50 * time.Millisecond}
		vb.lateOnce.Store(int64(5*time.Second + 100*time.Millisecond))
		cfgA, cfgB := switchConfigs(t, rcVendorFor(t, va), rcVendorFor(t, vb))
		c, err := translate.New(translate.WithConfig(cfgB))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		l := &switchLoad{c: c, stop: make(chan struct{}), failed: map[string]int{}}
		l.start(64)
		alternate(t, c, cfgA, cfgB)
		time.Sleep(5300 * time.Millisecond) // past b's late answer, under B
		close(l.stop)
		l.wg.Wait()
		if vb.lateOnce.Load() != 0 {
			t.Fatal("b never answered late: the scenario did not run")
		}
		// The one request whose call answered past its attempt's timeout may fail with a
		// timeout (the deadline holds whatever the engine does, since the deadline work);
		// nothing else may fail.
		for msg, n := range l.failed {
			if n == 1 && strings.Contains(msg, "b: timeout: attempt timed out") {
				delete(l.failed, msg)
			}
		}
		if diff := cmp.Diff(map[string]int{}, l.failed); diff != "" {
			t.Errorf("failed requests (-want +got):\n%s", diff)
		}
		t.Logf("%d requests served; a %d calls, b %d calls", l.served.Load(), va.calls.Load(), vb.calls.Load())
	})
}

// BenchmarkReconfigure alternates the switching scenario's A and B with no load: what one
// Reconfigure costs by itself (its latency under load is the soak test's).
func BenchmarkReconfigure(b *testing.B) {
	rcType()
	va, vb := &rcVendor{}, &rcVendor{}
	ida, idb := fmt.Sprintf("bench-a/%p", va), fmt.Sprintf("bench-b/%p", vb)
	rcVendors.Store(ida, va)
	rcVendors.Store(idb, vb)
	defer rcVendors.Delete(ida)
	defer rcVendors.Delete(idb)
	cfgA, cfgB := switchConfigs(b, ida, idb)
	c, err := translate.New(translate.WithConfig(cfgA))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		cfg := cfgA
		if i%2 == 0 {
			cfg = cfgB
		}
		if err := c.Reconfigure(cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReconfigureAllocations holds the allocations of a Reconfigure between the switching
// scenario's A and B, engine factory included. Under 64 callers that never wait, the
// collector marks nearly all the time, and each allocation a goroutine makes while it marks
// can park it in the assist queue and then behind the run queue (see TestReconfigureSoak):
// a Reconfigure's latency under that load grows with its allocations, 2 of them already
// costing some 0.4s at p99 on a busy 2-core machine. The steps that allocated for nothing
// (checks of empty Languages and PairQuality, boxed policies, error prefixes built before
// any error, an empty tenant table rebuilt) must not come back.
func TestReconfigureAllocations(t *testing.T) {
	rcType()
	va, vb := &rcVendor{}, &rcVendor{}
	cfgA, cfgB := switchConfigs(t, rcVendorFor(t, va), rcVendorFor(t, vb))
	c, err := translate.New(translate.WithConfig(cfgB))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	i := 0
	n := testing.AllocsPerRun(100, func() {
		cfg := cfgA
		if i%2 == 1 {
			cfg = cfgB
		}
		i++
		if err := c.Reconfigure(cfg); err != nil {
			t.Fatal(err)
		}
	})
	const most = 28 // 27 measured (Go 1.26); 52 before the cuts
	if n > most {
		t.Errorf("a Reconfigure between A and B allocates %.1f times, want %d at most", n, most)
	}
	t.Logf("%.1f allocations per Reconfigure", n)
}
