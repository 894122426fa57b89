package translate_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

func TestCacheHitAndTTL(t *testing.T) {
	clk := newClock()
	a := fake.New("a")
	c := newClient(t, translate.WithClock(clk), translate.WithCache(100, time.Hour), translate.WithEngine(a, translate.Profile{CostPerMillion: 10}))
	first, err := c.Translate(context.Background(), req("hello"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Translate(context.Background(), req("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Calls() != 1 || !second.FromCache || second.Text != first.Text || second.Cost != 0 || second.Engine != "a" {
		t.Fatalf("second = %+v after %d calls, want a cache hit", second, a.Calls())
	}
	if second.RequestID == first.RequestID || second.RequestID == "" {
		t.Errorf("request ids %q and %q", first.RequestID, second.RequestID)
	}
	// Different scene, style, target: different entries.
	r := req("hello")
	r.Style = translate.StyleFormal
	if res, _ := c.Translate(context.Background(), r); res.FromCache {
		t.Errorf("style ignored by the cache key")
	}
	r = req("hello")
	r.NoCache = true
	if res, _ := c.Translate(context.Background(), r); res.FromCache {
		t.Errorf("NoCache read the cache")
	}
	clk.Advance(time.Hour)
	if res, _ := c.Translate(context.Background(), req("hello")); res.FromCache {
		t.Errorf("expired entry served as fresh")
	}
}

func TestStaleEntryBeatsAnError(t *testing.T) {
	clk := newClock()
	a := fake.New("a")
	c := newClient(t, translate.WithClock(clk), translate.WithCache(100, time.Minute), translate.WithEngine(a, translate.Profile{}))
	if _, err := c.Translate(context.Background(), req("hello")); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Minute)
	a.Down(translate.KindUnavailable)
	res, err := c.Translate(context.Background(), req("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.FromCache || !res.Degraded || res.Text != "[es] hello" || res.Engine != "a" {
		t.Errorf("res = %+v, want a's stale entry, FromCache and Degraded", res)
	}
	if len(res.Attempts) == 0 {
		t.Errorf("the failed attempts are not reported")
	}
}

func TestSameRequestIDAnsweredFromFirstCall(t *testing.T) {
	clk := newClock()
	a := fake.New("a")
	c := newClient(t, translate.WithClock(clk), translate.WithEngine(a, translate.Profile{CostPerMillion: 10}))
	r := req("hello")
	r.RequestID = "order-42"
	first, err := c.Translate(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(9 * time.Second)
	second, err := c.Translate(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if a.Calls() != 1 || second.Text != first.Text || second.Cost != 0 || second.RequestID != "order-42" {
		t.Fatalf("second = %+v, calls %d: want the first answer, unbilled", second, a.Calls())
	}
	clk.Advance(time.Second)
	if _, err := c.Translate(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if a.Calls() != 2 {
		t.Errorf("calls = %d after 10s, want 2", a.Calls())
	}
}

func TestConcurrentIdenticalMissesShareOneCall(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 16)
	a := fake.New("a", fake.WithHook(func(ctx context.Context, _ *translate.EngineRequest) error {
		entered <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}))
	c := newClient(t, translate.WithClock(newClock()), translate.WithEngine(a, translate.Profile{}))
	const n = 10
	var wg sync.WaitGroup
	results := make([]*translate.Result, n)
	errs := make([]error, n)
	wg.Add(1)
	go func() {
		defer wg.Done()
		results[0], errs[0] = c.Translate(context.Background(), req("hello"))
	}()
	<-entered // the leader is in the engine
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i], errs[i] = c.Translate(context.Background(), req("hello"))
		}(i)
	}
	waitFor(t, func() bool { return translate.WaitingForTest(c) == n-1 })
	close(release)
	wg.Wait()
	for i := range results {
		if errs[i] != nil || results[i].Text != "[es] hello" {
			t.Fatalf("request %d: %v %+v", i, errs[i], results[i])
		}
	}
	if a.Calls() != 1 {
		t.Errorf("engine calls = %d, want 1", a.Calls())
	}
}

// waitFor polls cond, yielding, for at most 5s of real time.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		runtimeGosched()
	}
}

func TestCacheHitsShareTheEntrysResult(t *testing.T) {
	a := fake.New("a")
	c := newClient(t, translate.WithClock(newClock()), translate.WithCache(100, time.Hour), translate.WithEngine(a, translate.Profile{}))
	first, err := c.Translate(context.Background(), req("hello"))
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := c.Translate(context.Background(), req("hello"))
	h2, _ := c.Translate(context.Background(), req("hello"))
	if h1 != h2 || h1.RequestID == first.RequestID || h1.Latency != 0 || !h1.FromCache {
		t.Errorf("hits %p %+v and %p: want one shared Result with its own id and no latency", h1, h1, h2)
	}
	r := req("hello")
	r.RequestID = "mine"
	own, _ := c.Translate(context.Background(), r)
	if own == h1 || own.RequestID != "mine" || own.Text != h1.Text {
		t.Errorf("hit with a RequestID = %+v, want a copy carrying it", own)
	}
	if h1.RequestID == "mine" {
		t.Errorf("the shared Result took a caller's RequestID")
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	clk := newClock()
	a := fake.New("a")
	c := newClient(t, translate.WithClock(clk), translate.WithCache(2, time.Hour), translate.WithEngine(a, translate.Profile{}))
	get := func(text string) bool {
		t.Helper()
		res, err := c.Translate(context.Background(), req(text))
		if err != nil {
			t.Fatal(err)
		}
		return res.FromCache
	}
	get("one")
	get("two")
	clk.Advance(2 * time.Second) // past the recency granularity
	if !get("one") {             // one is now the most recent
		t.Fatal("one not cached")
	}
	get("three") // evicts two
	// In this order: looking two up (a miss) stores it and evicts again.
	for _, tc := range []struct {
		text string
		want bool
	}{{"one", true}, {"three", true}, {"two", false}} {
		if got := get(tc.text); got != tc.want {
			t.Errorf("%s cached = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestCacheFindsEntriesWhoseIndexSlotWasTaken(t *testing.T) {
	// 64 entries share a 128-slot index, so some keys take the same slot. Every entry the LRU
	// keeps must still be found.
	a := fake.New("a")
	c := newClient(t, translate.WithClock(newClock()), translate.WithCache(64, time.Hour), translate.WithEngine(a, translate.Profile{}))
	for i := 0; i < 64; i++ {
		if _, err := c.Translate(context.Background(), req(fmt.Sprint("text ", i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 64; i++ {
		res, err := c.Translate(context.Background(), req(fmt.Sprint("text ", i)))
		if err != nil || !res.FromCache {
			t.Fatalf("text %d: cached %v, err %v", i, res != nil && res.FromCache, err)
		}
	}
	if a.Calls() != 64 {
		t.Errorf("engine calls = %d, want 64", a.Calls())
	}
}

func TestCoalescingUnderLoad(t *testing.T) {
	// Many goroutines over few texts: every caller gets its text's translation, whether it
	// led a flight, followed one or came after it landed.
	a := fake.New("a", fake.WithLatency(time.Millisecond))
	c := newClient(t, translate.WithEngine(a, translate.Profile{}))
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				text := fmt.Sprint("text ", (g+i)%5)
				res, err := c.Translate(context.Background(), req(text))
				if err != nil || res.Text != "[es] "+text {
					t.Errorf("%q: %v %+v", text, err, res)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	if a.Calls() >= 64*20 {
		t.Errorf("%d engine calls for %d requests over 5 texts: nothing was coalesced", a.Calls(), 64*20)
	}
}

// answer is what a test checks of a Result: who made it and how it was served.
type answer struct {
	Text, Engine        string
	FromCache, Degraded bool
}

func answerOf(t *testing.T, c *translate.Client, r translate.Request) answer {
	t.Helper()
	res, err := c.Translate(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return answer{res.Text, res.Engine, res.FromCache, res.Degraded}
}

// TestCacheKeepsWhoAndHow: with the bundled profiles and the default cache, a last
// resort's answer is cached as a degraded one: its hits say Degraded and name the engine,
// and it stays fresh for a minute only, so the preferred engine answers again once it is
// back, and its answer's hits name it. A stale entry served when every engine fails names
// its engine too.
func TestCacheKeepsWhoAndHow(t *testing.T) {
	dl, gg := bundled(t)
	gg.FallbackOnly = true
	clk := newClock()
	a, z := prefixed("deepl", "A:"), prefixed("last", "Z:")
	c, err := translate.New(translate.WithClock(clk), translate.WithEngine(a, dl), translate.WithEngine(z, gg))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a.Down(translate.KindUnavailable)
	steps := []struct {
		name string
		wait time.Duration
		up   bool
		want answer
	}{
		{"the last resort answers", 0, false, answer{"Z:hello", "last", false, true}},
		{"its answer's hit", time.Second, false, answer{"Z:hello", "last", true, true}},
		{"primary back, the degraded entry still fresh", 0, true, answer{"Z:hello", "last", true, true}},
		{"the degraded entry past a minute", time.Minute, true, answer{"A:hello", "deepl", false, false}},
		{"the primary's answer's hit", time.Hour, true, answer{"A:hello", "deepl", true, false}},
	}
	for _, st := range steps {
		clk.Advance(st.wait)
		if st.up {
			a.Up()
		}
		if diff := cmp.Diff(st.want, answerOf(t, c, req("hello"))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", st.name, diff)
		}
	}
	clk.Advance(25 * time.Hour)
	a.Down(translate.KindUnavailable)
	z.Down(translate.KindUnavailable)
	if diff := cmp.Diff(answer{"A:hello", "deepl", true, true}, answerOf(t, c, req("hello"))); diff != "" {
		t.Errorf("a stale entry when every engine fails (-want +got):\n%s", diff)
	}
}
