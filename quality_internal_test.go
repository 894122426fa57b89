package translate

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fanyi-go/translate/internal/recovery"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// stepClock is a manual Clock for the package's own tests.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) Sleep(ctx context.Context, d time.Duration) error {
	c.Advance(d)
	return ctx.Err()
}
func (c *stepClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// newFoldClient is a Client of the named engines on a manual clock.
func newFoldClient(t *testing.T, names ...string) (*Client, *stepClock) {
	t.Helper()
	clk := &stepClock{t: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)}
	opts := []Option{WithClock(clk), WithoutCache()}
	for _, n := range names {
		opts = append(opts, WithEngine(nopEngine{n}, Profile{Quality: 80}))
	}
	c, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, clk
}

// record records n calls of the named engine as if requests had made them.
func record(c *Client, name string, n, fails int, lat time.Duration) {
	e := c.cfg.Load().byName[name]
	for i := range n {
		e.h.Record(uint64(i), i >= fails, lat)
	}
}

// foldHealth folds and returns the engines' Health and routing availability by name.
func foldHealth(c *Client, clk *stepClock) map[string][2]float64 {
	clk.Advance(10 * time.Second)
	out := map[string][2]float64{}
	for _, st := range c.Engines() {
		out[st.Name] = [2]float64{st.Health, c.cfg.Load().byName[st.Name].view.Load().avail}
	}
	return out
}

// TestAvailabilityWeighsLatency: two engines that never fail, one at 40ms and one at 120ms,
// get different availability: success rate times 1 - ½·m/(m+Timeout), Timeout 5s.
func TestAvailabilityWeighsLatency(t *testing.T) {
	c, clk := newFoldClient(t, "fast", "slow")
	record(c, "fast", 20, 0, 40*time.Millisecond)
	record(c, "slow", 20, 0, 120*time.Millisecond)
	got := foldHealth(c, clk)
	fast, slow := 1-0.5*0.040/5.040, 1-0.5*0.120/5.120
	want := map[string][2]float64{"fast": {fast, fast}, "slow": {slow, slow}}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Health and availability (-want +got):\n%s", diff)
	}
	t.Logf("availability: 40ms %.4f, 120ms %.4f", got["fast"][0], got["slow"][0])
}

// TestAvailabilityRemembersFiveMinutes: failures three minutes old still lower availability
// (the success rate of five minutes), while the last minute's error rate is what a fresh
// failure shows at once.
func TestAvailabilityRemembersFiveMinutes(t *testing.T) {
	c, clk := newFoldClient(t, "a")
	record(c, "a", 20, 4, 0) // a fold with 4 failures of 20
	var got []float64
	got = append(got, foldHealth(c, clk)["a"][1])
	for range 18 { // three minutes of folds without a failure
		record(c, "a", 20, 0, 0)
		got = append(got, foldHealth(c, clk)["a"][1])
	}
	for range 12 { // two more minutes: the failures leave the window
		record(c, "a", 20, 0, 0)
		got = append(got, foldHealth(c, clk)["a"][1])
	}
	want := []float64{0.8, 1 - 4.0/120, 1 - 4.0/380, 1} // after the fold, 1 minute, 3 minutes, 5 minutes
	if diff := cmp.Diff(want, []float64{got[0], got[5], got[18], got[30]}, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("availability at 0s, 1m, 3m, 5m (-want +got):\n%s\nall: %v", diff, fmt.Sprint(got))
	}
}

// TestKnownAnswerChecks: the known-answer probe's request per pair, and its check.
func TestKnownAnswerChecks(t *testing.T) {
	c, _ := newFoldClient(t, "a")
	id := func(tag string) int {
		in, err := c.langs.Lookup(tag)
		if err != nil {
			t.Fatal(err)
		}
		return in.ID
	}
	type probe struct{ Source, Target, Text string }
	var got []probe
	for _, pair := range [][2]int{{id("en"), id("ja")}, {0, id("de")}, {id("de"), id("zh-Hant")}, {id("ko"), id("en")}} {
		r := c.knownRequest(uint64(pair[0])<<32 | uint64(pair[1]))
		if r == nil {
			got = append(got, probe{})
			continue
		}
		got = append(got, probe{r.Source, r.tgt.Canon, r.Text})
	}
	want := []probe{
		{"en", "ja", recovery.KnownSentence("en")},
		{"", "de", recovery.KnownSentence("en")}, // a detected source is sent English
		{"de", "zh-Hant", recovery.KnownSentence("de")},
		{}, // no Korean sentence: not probed
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("known-answer requests (-want +got):\n%s", diff)
	}

	r := c.knownRequest(uint64(id("en"))<<32 | uint64(id("ja")))
	answers := map[string]bool{
		"ご注文 {id} の商品 3 点は本日発送されます。":        true,
		"ご注文 {id} の商品三点は本日発送されます。":          false, // the number is lost
		"[ja] Your order {id} with 3 items": false, // not in Japanese script
	}
	for answer, want := range answers {
		if got := recovery.KnownAnswer(r.Text, answer, targetScript(r)); got != want {
			t.Errorf("knownAnswer(%q) = %v, want %v", answer, got, want)
		}
	}
}
