package translate_test

// Tests of the request path rules (design.md, "Second wave: request path rules"), one or
// more per item of issue 7.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// prefixed returns a fake whose translation is prefix + text: tests tell engines' texts apart.
func prefixed(name, prefix string, opts ...fake.Option) *fake.Engine {
	tr := fake.WithTranslator(func(text string, _, _ language.Tag) string { return prefix + text })
	return fake.New(name, append([]fake.Option{tr}, opts...)...)
}

// errTexts lists the error texts of the attempts ("" for success).
func errTexts(as []translate.Attempt) []string {
	var out []string
	for _, a := range as {
		if a.Err == nil {
			out = append(out, "")
		} else {
			out = append(out, a.Err.Error())
		}
	}
	return out
}

// Issue 7.1: "prefer b, else anything" is served by the others when b is filtered out, and
// the Attempts record b as skipped with its reason.
func TestPinnedWithFallbackServedByOthersWhenPinnedIsOut(t *testing.T) {
	for _, tc := range pinnedOutCases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := fake.New("a"), fake.New("b")
			c := newClient(t, translate.WithClock(newClock()), sharp,
				translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
				translate.WithBreaker(translate.BreakerPolicy{MinCalls: 4, Window: 4}),
				translate.WithEngine(a, secondary), translate.WithEngine(b, tc.profile))
			if tc.setup != nil {
				tc.setup(t, c, b)
			}
			r := pinnedServedByA(t, c, b, tc)

			// Nothing serves: the error records the skip too.
			a.Down(translate.KindUnavailable)
			r.Text = "hello again"
			_, err := c.Translate(context.Background(), r)
			var te *translate.Error
			if !errors.As(err, &te) || len(te.Attempts) == 0 {
				t.Fatalf("with a down too: %v, want a *Error with attempts", err)
			}
			if got := te.Attempts[0]; got.Engine != "b" || translate.KindOf(got.Err).String() != tc.kind {
				t.Errorf("first attempt %+v, want b skipped (%s)", got, tc.kind)
			}
		})
	}
}

// pinnedOutCase is a way engine b is out: its profile, what puts it out, and the kind and
// reason its skipped attempt gives.
type pinnedOutCase struct {
	name    string
	profile translate.Profile
	setup   func(t *testing.T, c *translate.Client, b *fake.Engine)
	kind    string
	reason  string
}

var pinnedOutCases = []pinnedOutCase{{
	name:    "breaker open",
	profile: translate.Profile{Quality: 100},
	setup:   openPinnedBreaker,
	kind:    "unavailable",
	reason:  "breaker open",
}, {
	name:    "quota spent",
	profile: translate.Profile{Quality: 100, Quota: 5},
	kind:    "quota_exhausted",
	reason:  "quota left smaller than the text",
}, {
	name:    "pair not supported",
	profile: translate.Profile{Quality: 100, Languages: []string{"en", "fr"}},
	kind:    "unsupported",
	reason:  "pair not supported",
}}

// openPinnedBreaker opens b's breaker with 4 failed requests pinned to it, then brings b
// up: were it called, it would answer, so the test sees a skip, not a failure.
func openPinnedBreaker(t *testing.T, c *translate.Client, b *fake.Engine) {
	b.Down(translate.KindUnavailable)
	for i := 0; i < 4; i++ {
		r := req(fmt.Sprint("open ", i))
		r.Engine = "b"
		if _, err := c.Translate(context.Background(), r); err == nil {
			t.Fatal("a down pinned engine answered")
		}
	}
	if st := c.Engines()[1]; st.Breaker != translate.BreakerOpen {
		t.Fatalf("b's breaker = %v, want open", st.Breaker)
	}
	b.Up()
}

// pinnedServedByA checks that with b out, an unpinned request and one pinned to b with
// fallback are both served by a, b's skip recorded with its kind and reason and b not
// called. It returns the pinned request.
func pinnedServedByA(t *testing.T, c *translate.Client, b *fake.Engine, tc pinnedOutCase) translate.Request {
	t.Helper()
	before := b.Calls()
	res, err := c.Translate(context.Background(), req("hello world"))
	if err != nil || res.Engine != "a" {
		t.Fatalf("unpinned: %v, %v; want a", res, err)
	}
	r := req("hello world, pinned")
	r.Engine, r.AllowFallback = "b", true
	res, err = c.Translate(context.Background(), r)
	if err != nil {
		t.Fatalf("pinned b with fallback: %v", err)
	}
	if diff := cmp.Diff([]string{"b", "a"}, engineNames(res.Attempts)); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{tc.kind, "ok"}, kinds(res.Attempts)); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	if msg := errTexts(res.Attempts)[0]; !strings.Contains(msg, tc.reason) {
		t.Errorf("b's skip says %q, want the reason %q", msg, tc.reason)
	}
	if res.Engine != "a" || b.Calls() != before {
		t.Errorf("served by %q, b called %d times; want a, and b not called", res.Engine, b.Calls()-before)
	}
	return r
}

// Issue 7.2: a no-fallback pin never gets another engine's text, not even from the cache.
func TestPinnedWithoutFallbackNeverGetsAnotherEnginesCachedText(t *testing.T) {
	a, b := prefixed("a", "A:"), prefixed("b", "B:")
	c := newClient(t, translate.WithClock(newClock()), sharp, translate.WithCache(100, time.Hour),
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		translate.WithEngine(a, secondary), translate.WithEngine(b, primary))
	pin := func(fallback bool) (*translate.Result, error) {
		r := req("hello world")
		r.Engine, r.AllowFallback = "b", fallback
		return c.Translate(context.Background(), r)
	}
	b.Down(translate.KindUnavailable)
	res, err := pin(true)
	if err != nil || res.Text != "A:hello world" {
		t.Fatalf("pin b with fallback, b down: %v, %v; want a's text", res, err)
	}
	res, err = pin(false)
	if err == nil {
		t.Fatalf("pin b without fallback, b down: got %q from %q (cache %v), want an error", res.Text, res.Engine, res.FromCache)
	}
	if translate.KindOf(err) != translate.KindUnavailable {
		t.Errorf("err = %v, want b's unavailable", err)
	}
	b.Up()
	res, err = pin(false)
	if err != nil || res.Text != "B:hello world" || res.FromCache {
		t.Fatalf("pin b without fallback, b up: %+v, %v; want b's own call", res, err)
	}
	res, err = pin(false)
	if err != nil || res.Text != "B:hello world" || !res.FromCache {
		t.Fatalf("again: %+v, %v; want b's text from the cache", res, err)
	}
}

// Issue 7.3: the cache key holds the full target; zh, zh-CN and zh-Hans are one.
func TestCacheKeyHoldsTheRegion(t *testing.T) {
	for _, tc := range []struct{ src, t1, t2 string }{
		{"en", "pt-BR", "pt-PT"},
		{"de", "en-US", "en-GB"},
		{"en", "es", "es-419"},
		{"en", "zh-TW", "zh-HK"},
	} {
		t.Run(tc.t1+"/"+tc.t2, func(t *testing.T) {
			a := fake.New("a")
			c := newClient(t, translate.WithClock(newClock()), translate.WithCache(100, time.Hour),
				translate.WithEngine(a, translate.Profile{}))
			for _, tgt := range []string{tc.t1, tc.t2, tc.t1, tc.t2} {
				if _, err := c.Translate(context.Background(), translate.Request{Text: "good morning", Source: tc.src, Target: tgt}); err != nil {
					t.Fatal(err)
				}
			}
			if a.Calls() != 2 {
				t.Errorf("%d engine calls for %s, %s, %s, %s; want 2 (one per region)", a.Calls(), tc.t1, tc.t2, tc.t1, tc.t2)
			}
		})
	}
	t.Run("zh", func(t *testing.T) {
		a := fake.New("a")
		c := newClient(t, translate.WithClock(newClock()), translate.WithCache(100, time.Hour),
			translate.WithEngine(a, translate.Profile{}))
		var cached []bool
		for _, tgt := range []string{"zh", "zh-CN", "zh-Hans"} {
			res, err := c.Translate(context.Background(), translate.Request{Text: "good morning", Source: "en", Target: tgt})
			if err != nil {
				t.Fatal(err)
			}
			cached = append(cached, res.FromCache)
		}
		if diff := cmp.Diff([]bool{false, true, true}, cached); diff != "" {
			t.Errorf("FromCache for zh, zh-CN, zh-Hans (-want +got):\n%s", diff)
		}
	})
}

// Issue 7.4: with every engine failing, one request makes MaxAttempts calls in all, the
// last resort included: primary, one backup, one last resort; at most MaxSwitches switches.
func TestAttemptBudgetIncludesLastResort(t *testing.T) {
	for _, rp := range []translate.RetryPolicy{{}, {MaxAttempts: 10}, {MaxSwitches: 10, PerEngine: 1}} {
		t.Run(fmt.Sprintf("%+v", rp), func(t *testing.T) {
			var all []*fake.Engine
			var opts []translate.Option
			for _, s := range []struct {
				name string
				p    translate.Profile
			}{
				{"a", translate.Profile{Quality: 100}}, {"b", translate.Profile{Quality: 60}},
				{"c", translate.Profile{Quality: 1}},
				{"l1", translate.Profile{FallbackOnly: true}}, {"l2", translate.Profile{FallbackOnly: true}},
			} {
				e := fake.New(s.name)
				e.Down(translate.KindUnavailable)
				all = append(all, e)
				opts = append(opts, translate.WithEngine(e, s.p))
			}
			c := newClient(t, append(opts, translate.WithClock(newClock()), sharp, translate.WithRetry(rp))...)
			_, err := c.Translate(context.Background(), req("hello world"))
			var te *translate.Error
			if !errors.As(err, &te) {
				t.Fatalf("err = %v, want a *Error", err)
			}
			calls := 0
			for _, e := range all {
				calls += e.Calls()
			}
			got := engineNames(te.Attempts)
			if calls != 3 || len(got) != 3 {
				t.Fatalf("%d calls, attempts %v; want 3: primary, backup, last resort", calls, got)
			}
			if got[0] != "a" || got[1] != "b" || (got[2] != "l1" && got[2] != "l2") {
				t.Errorf("attempts %v, want [a b l1|l2]", got)
			}
		})
	}
}

// Issue 7.5: a healthy free last-resort engine comes before a stale cache entry.
func TestLastResortEngineBeforeStaleCache(t *testing.T) {
	clk := newClock()
	a, l := prefixed("a", "A:"), prefixed("l", "L:")
	c := newClient(t, translate.WithClock(clk), translate.WithCache(100, time.Minute),
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		translate.WithEngine(a, translate.Profile{CostPerMillion: 10}),
		translate.WithEngine(l, translate.Profile{Class: translate.ClassFree, FallbackOnly: true}))
	if res, err := c.Translate(context.Background(), req("hello world")); err != nil || res.Engine != "a" {
		t.Fatalf("priming: %v, %v", res, err)
	}
	clk.Advance(2 * time.Minute) // the entry is stale
	a.Down(translate.KindUnavailable)
	res, err := c.Translate(context.Background(), req("hello world"))
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Text            string
		Engine          string
		FromCache, Degr bool
		LastResortCalls int
	}
	want := view{Text: "L:hello world", Engine: "l", Degr: true, LastResortCalls: 1}
	if diff := cmp.Diff(want, view{res.Text, res.Engine, res.FromCache, res.Degraded, l.Calls()}); diff != "" {
		t.Errorf("a down, stale entry, l healthy (-want +got):\n%s", diff)
	}
	// Then the cache: l down too, l's entry stale, it serves.
	clk.Advance(2 * time.Minute)
	l.Down(translate.KindUnavailable)
	res, err = c.Translate(context.Background(), req("hello world"))
	if err != nil {
		t.Fatal(err)
	}
	want = view{Text: "L:hello world", Engine: "l", FromCache: true, Degr: true, LastResortCalls: 2}
	if diff := cmp.Diff(want, view{res.Text, res.Engine, res.FromCache, res.Degraded, l.Calls()}); diff != "" {
		t.Errorf("every engine down, stale entry (-want +got):\n%s", diff)
	}
}

// Issue 7.6: past EconomyAt normal requests go to free engines, paid ones only when no free
// engine can; high priority keeps its engines; past 100% free engines only.
func TestEconomyModeSendsNormalRequestsToFreeEngines(t *testing.T) {
	paid, free := fake.New("paid"), fake.New("free")
	c := newClient(t, translate.WithClock(newClock()), sharp, translate.WithBudget(translate.Budget{Daily: 10}),
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		// 10 characters at 100 000 per million: 1 credit a call.
		translate.WithEngine(paid, translate.Profile{Quality: 100, CostPerMillion: 100_000}),
		translate.WithEngine(free, translate.Profile{Quality: 1, Class: translate.ClassFree}))
	n := 0
	send := func(p translate.Priority) string {
		t.Helper()
		r := req(fmt.Sprintf("text %05d", n))
		n++
		r.Priority = p
		res, err := c.Translate(context.Background(), r)
		if err != nil {
			t.Fatalf("request %d: %v", n, err)
		}
		return res.Engine
	}
	count := func(k int, p translate.Priority) map[string]int {
		m := map[string]int{}
		for i := 0; i < k; i++ {
			m[send(p)]++
		}
		return m
	}
	if diff := cmp.Diff(map[string]int{"paid": 8}, count(8, translate.PriorityNormal)); diff != "" {
		t.Fatalf("below 80%% (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"free": 20}, count(20, translate.PriorityNormal)); diff != "" {
		t.Errorf("normal requests at 80%% (-want +got):\n%s", diff)
	}
	if got := send(translate.PriorityHigh); got != "paid" {
		t.Errorf("high priority at 80%% went to %s, want paid", got)
	}
	free.Down(translate.KindUnavailable)
	if got := send(translate.PriorityNormal); got != "paid" {
		t.Errorf("normal request at 90%% with the free engine down went to %s, want paid", got)
	}
	free.Up()
	if got := c.Budget().Spent; got != 10 {
		t.Fatalf("spent %v, want 10", got)
	}
	// Past 100% paid engines are not even chosen: no skip for the budget shows.
	r := req("past the budget")
	r.Priority = translate.PriorityHigh
	res, err := c.Translate(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"free"}, engineNames(res.Attempts)); diff != "" {
		t.Errorf("high priority past 100%% (-want +got):\n%s", diff)
	}
}

// countingHook counts calls per request id and blocks each call until release is closed.
type countingHook struct {
	mu      sync.Mutex
	byID    map[string]int
	entered atomic.Int64
	release chan struct{}
}

// calls is the number of calls made with request id id so far.
func (h *countingHook) calls(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.byID[id]
}

func (h *countingHook) hook(ctx context.Context, r *translate.EngineRequest) error {
	h.mu.Lock()
	h.byID[r.RequestID]++
	h.mu.Unlock()
	h.entered.Add(1)
	select {
	case <-h.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// spinUntil spins (yielding, not sleeping) until cond holds, failing after a real-time guard.
func spinUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	guard := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(guard) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtimeGosched()
	}
}

// Issue 7.7: 50 concurrent requests with one RequestID make one engine call while 3,000
// other requests are in flight.
func TestOneRequestIDOneCallUnderLoad(t *testing.T) {
	const others, dups = 3000, 50
	h := &countingHook{byID: map[string]int{}, release: make(chan struct{})}
	a := fake.New("a", fake.WithHook(h.hook))
	b := fake.New("b", fake.WithHook(h.hook))
	long := translate.Profile{Timeout: time.Minute}
	c := newClient(t, translate.WithClock(newClock()), translate.WithDeadline(time.Minute),
		translate.WithEngine(a, long), translate.WithEngine(b, long))
	l := &idLoad{c: c, errs: make(chan error, others+dups)}
	for i := 0; i < others; i++ {
		l.other(i)
	}
	spinUntil(t, "the other requests' calls", func() bool { return h.entered.Load() == others })
	texts := make([]string, dups)
	for i := 0; i < dups; i++ {
		l.dup(&texts[i])
	}
	// Every duplicate is in an engine call (blocked), waiting on one, or done.
	spinUntil(t, "the duplicates", func() bool {
		return h.calls("dup")+translate.WaitingForTest(c)+int(l.dupsDone.Load()) == dups
	})
	close(h.release)
	l.wg.Wait()
	close(l.errs)
	for err := range l.errs {
		t.Fatal(err)
	}
	if got := h.byID["dup"]; got != 1 {
		t.Errorf("request id dup made %d engine calls, want 1", got)
	}
	for i, txt := range texts {
		if txt != "[es] the same request" {
			t.Fatalf("duplicate %d got %q", i, txt)
		}
	}
}

// idLoad sends requests with request ids to c, each from its own goroutine; errors go
// to errs.
type idLoad struct {
	c        *translate.Client
	wg       sync.WaitGroup
	errs     chan error
	dupsDone atomic.Int64 // duplicates answered
}

// other sends request i with its own request id.
func (l *idLoad) other(i int) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		r := req(fmt.Sprint("other ", i))
		r.RequestID = fmt.Sprint("other-", i)
		if _, err := l.c.Translate(context.Background(), r); err != nil {
			l.errs <- err
		}
	}()
}

// dup sends "the same request" with request id "dup" and puts its text in text.
func (l *idLoad) dup(text *string) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		r := req("the same request")
		r.RequestID = "dup"
		res, err := l.c.Translate(context.Background(), r)
		l.dupsDone.Add(1)
		if err != nil {
			l.errs <- err
			return
		}
		*text = res.Text
	}()
}

// Issue 7.7: a request id reaches each engine at most once within RequestWindow, whatever
// became of the first call; later requests get the first error, or go to engines that have
// not seen it.
func TestRequestIDReachesEachEngineOnce(t *testing.T) {
	t.Run("first error", func(t *testing.T) {
		clk := newClock()
		a := fake.New("a")
		a.Down(translate.KindTimeout)
		c := newClient(t, translate.WithClock(clk), translate.WithEngine(a, translate.Profile{}))
		r := req("hello world")
		r.RequestID = "r1"
		_, err1 := c.Translate(context.Background(), r)
		if translate.KindOf(err1) != translate.KindTimeout || a.Calls() != 1 {
			t.Fatalf("first: %v after %d calls; want one timed-out call (no retry of a request id)", err1, a.Calls())
		}
		a.Up()
		clk.Advance(translate.RequestWindow - time.Second)
		_, err2 := c.Translate(context.Background(), r)
		if a.Calls() != 1 || translate.KindOf(err2) != translate.KindTimeout {
			t.Fatalf("within the window: %v after %d calls; want the first error and no call", err2, a.Calls())
		}
		clk.Advance(2 * time.Second)
		if _, err := c.Translate(context.Background(), r); err != nil || a.Calls() != 2 {
			t.Fatalf("after the window: %v after %d calls; want a new call", err, a.Calls())
		}
	})
	t.Run("engines that have not seen it", func(t *testing.T) {
		a, b := fake.New("a"), fake.New("b")
		a.Down(translate.KindTimeout)
		c := newClient(t, translate.WithClock(newClock()), sharp,
			translate.WithEngine(a, primary), translate.WithEngine(b, secondary))
		r := req("hello world")
		r.RequestID, r.Engine = "r2", "a"
		if _, err := c.Translate(context.Background(), r); translate.KindOf(err) != translate.KindTimeout {
			t.Fatalf("pinned to a: %v, want a timeout", err)
		}
		a.Up()
		r.Engine = ""
		res, err := c.Translate(context.Background(), r)
		if err != nil || res.Engine != "b" || a.Calls() != 1 {
			t.Fatalf("unpinned: %v from %v, a called %d times; want b, a once", err, res, a.Calls())
		}
	})
}

// Issue 7.8: an engine that echoes its input is not a translation, unless the text is the
// same in every language.
func TestEchoIsBadOutput(t *testing.T) {
	for _, tc := range []struct {
		text, src, tgt string
		detected       language.Tag // what the echoing engine says the source is
		echoOK         bool
	}{
		{text: "Good morning, friend.", src: "", tgt: "es"},
		{text: "Good morning, friend.", src: "en", tgt: "es"},
		{text: "Hello {name}, welcome back", src: "en", tgt: "es"},
		{text: "早上好，朋友。", src: "zh", tgt: "en"},
		{text: "早上好", src: "zh", tgt: "ja"},
		{text: "สวัสดีตอนเช้า", src: "th", tgt: "en"},
		{text: "iPhone 15", src: "en", tgt: "es", echoOK: true},
		{text: "12345", src: "en", tgt: "es", echoOK: true},
		{text: "https://example.com/a/b", src: "en", tgt: "es", echoOK: true},
		{text: "Buenos días, amigo.", src: "", tgt: "es", detected: language.Spanish, echoOK: true},
	} {
		t.Run(tc.src+">"+tc.tgt+" "+tc.text, func(t *testing.T) {
			det := tc.detected
			if det == (language.Tag{}) {
				det = language.English
			}
			a, b := fake.New("a", fake.WithDetected(det)), fake.New("b")
			a.SetBadOutput(fake.BadEcho)
			c := newClient(t, translate.WithClock(newClock()), sharp,
				translate.WithEngine(a, primary), translate.WithEngine(b, secondary))
			res, err := c.Translate(context.Background(), translate.Request{Text: tc.text, Source: tc.src, Target: tc.tgt})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"bad_output", "ok"}
			if tc.echoOK {
				want = []string{"ok"}
			}
			if diff := cmp.Diff(want, kinds(res.Attempts)); diff != "" {
				t.Errorf("kinds (-want +got):\n%s", diff)
			}
		})
	}
}

// errEngine fails every call with err.
type errEngine struct {
	name string
	err  error
}

func (e errEngine) Name() string { return e.name }

func (e errEngine) Translate(context.Context, *translate.EngineRequest) (*translate.EngineResult, error) {
	return nil, e.err
}

// Issue 7.9: KindNoEngine names every engine and why; ErrClosed has KindClosed; errors name
// the engine once.
func TestErrorsSayWhy(t *testing.T) {
	t.Run("no engine", func(t *testing.T) {
		c := newClient(t, translate.WithClock(newClock()),
			translate.WithEngine(fake.New("deepl"), translate.Profile{Languages: []string{"en", "fr"}}),
			translate.WithEngine(fake.New("prem"), translate.Profile{Class: translate.ClassPremium}),
			translate.WithEngine(fake.New("small"), translate.Profile{Quota: 5}))
		_, err := c.Translate(context.Background(), req("hello world"))
		var te *translate.Error
		if !errors.As(err, &te) || te.Kind != translate.KindNoEngine {
			t.Fatalf("err = %v, want KindNoEngine", err)
		}
		want := map[string]string{
			"deepl": "pair en->es not supported",
			"prem":  "premium engine, normal priority",
			"small": "quota left smaller than the text",
		}
		if diff := cmp.Diff(want, te.Excluded); diff != "" {
			t.Errorf("Excluded (-want +got):\n%s", diff)
		}
		for name, why := range want {
			if !strings.Contains(err.Error(), name+": "+why) {
				t.Errorf("%q does not say %q", err, name+": "+why)
			}
		}
	})
	t.Run("closed", func(t *testing.T) {
		c := newClient(t, translate.WithEngine(fake.New("a"), translate.Profile{}))
		c.Close()
		_, err := c.Translate(context.Background(), req("hello"))
		br := c.TranslateBatch(context.Background(), []translate.Request{req("hello")})
		for _, err := range []error{translate.ErrClosed, err, br[0].Err} {
			if !errors.Is(err, translate.ErrClosed) || translate.KindOf(err) != translate.KindClosed {
				t.Errorf("%v: Kind %v, want closed", err, translate.KindOf(err))
			}
		}
	})
	t.Run("engine named once", func(t *testing.T) {
		e := errEngine{"deepl", &translate.Error{Kind: translate.KindInvalidInput, Engine: "deepl", StatusCode: 400, Message: "deepl: text is not valid"}}
		c := newClient(t, translate.WithClock(newClock()), translate.WithEngine(e, translate.Profile{}))
		_, err := c.Translate(context.Background(), req("hello"))
		if err == nil {
			t.Fatal("no error")
		}
		if n := strings.Count(err.Error(), "deepl:"); n != 1 {
			t.Errorf("%q names the engine %d times, want once", err, n)
		}
	})
}

// Issue 7.10: Engines() shows failures at once, not at the next fold.
func TestEnginesShowFailuresBeforeTheFold(t *testing.T) {
	clk := newClock()
	c, a, _ := breakerClient(t, clk, translate.BreakerPolicy{})
	a.Down(translate.KindUnavailable)
	translateN(t, c, 20)
	st := c.Engines()[0]
	if st.Breaker != translate.BreakerOpen || st.Health != 0 {
		t.Errorf("after 20 of 20 calls failed: breaker %v, health %.2f; want open and 0", st.Breaker, st.Health)
	}
}

// Issue 7.11: probes alone bring back an engine moved to the fallback pool by health: two
// passing probes, not one.
func TestProbesBringBackAnEngineDemotedByHealth(t *testing.T) {
	clk := newClock()
	a, b := fake.New("a"), fake.New("b")
	c := probeClient(t, clk, translate.ProbePolicy{}, sharp,
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		translate.WithBreaker(translate.BreakerPolicy{MinCalls: 40}),
		translate.WithEngine(a, primary), translate.WithEngine(b, secondary))
	a.Down(translate.KindUnavailable)
	translateN(t, c, 10)
	clk.Advance(10 * time.Second) // the fold: a's availability is 0
	if got := pools(c)["a"]; got != translate.PoolFallback {
		t.Fatalf("a's pool = %v after a fold of failures, want fallback", got)
	}
	a.Up()
	a.Reset()
	translateN(t, c, 10)
	if a.Calls() != 0 {
		t.Fatalf("a got %d calls in the fallback pool", a.Calls())
	}
	translate.ProbeRoundForTest(c)
	if got := pools(c)["a"]; got != translate.PoolFallback {
		t.Fatalf("a's pool = %v after one passing probe, want still fallback", got)
	}
	translate.ProbeRoundForTest(c)
	if got := pools(c)["a"]; got != translate.PoolNormal {
		t.Fatalf("a's pool = %v after two passing probes, want normal", got)
	}
	res, err := c.Translate(context.Background(), req("after the probes"))
	if err != nil || res.Engine != "a" {
		t.Fatalf("after the probes: %v from %v, want a", err, res)
	}
	// Its window restarts from the probes: the failures that demoted it do not demote it
	// again at the next fold of good calls.
	translateN(t, c, 10)
	clk.Advance(10 * time.Second)
	if got := pools(c)["a"]; got != translate.PoolNormal {
		t.Fatalf("a's pool = %v at the fold after its recovery, want normal: the old failures still count", got)
	}
}

// billing is an engine that reports what it billed.
type billing struct {
	billed, in, out int64
}

func (billing) Name() string { return "llm" }

func (b billing) Translate(_ context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	return &translate.EngineResult{Texts: []string{"<" + r.Texts[0] + ">"}, BilledChars: b.billed, InputTokens: b.in, OutputTokens: b.out}, nil
}

// Issue 7.12: a timed-out attempt is charged, not refunded; what the vendor reports billing
// is what is charged.
func TestChargesWhatMayHaveBeenBilled(t *testing.T) {
	for _, tc := range failedCharges {
		t.Run(tc.kind.String(), func(t *testing.T) { testChargedAfterFailure(t, tc) })
	}
	t.Run("canceled after sending", testChargedWhenCanceled)
	t.Run("reported", func(t *testing.T) {
		for _, tc := range reportedCharges {
			t.Run(tc.name, func(t *testing.T) { testChargedAsReported(t, tc) })
		}
	})
}

// billingProfile charges 1 credit for 10 characters (100 000 credits per million).
var billingProfile = translate.Profile{Quality: 100, CostPerMillion: 100_000, Quota: 1000}

// charged is what a Client charged: its budget's spend and the first engine's quota left.
type charged struct {
	Spent     float64
	QuotaLeft int64
}

func chargedBy(c *translate.Client) charged {
	return charged{c.Budget().Spent, c.Engines()[0].QuotaLeft}
}

// failedCharge is what a failed attempt of a kind costs.
type failedCharge struct {
	kind translate.Kind
	want charged
}

// failedCharges: a timeout may have been billed; an unavailable engine did not do the work.
var failedCharges = []failedCharge{
	{translate.KindTimeout, charged{1, 990}},
	{translate.KindUnavailable, charged{0, 1000}},
}

// testChargedAfterFailure: the paid engine a fails with tc.kind, free serves, and a's
// attempt is charged tc.want.
func testChargedAfterFailure(t *testing.T, tc failedCharge) {
	a, free := fake.New("a"), fake.New("free")
	a.Down(tc.kind)
	c := newClient(t, translate.WithClock(newClock()), sharp, translate.WithBudget(translate.Budget{Daily: 100}),
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		translate.WithEngine(a, billingProfile), translate.WithEngine(free, translate.Profile{Quality: 1, Class: translate.ClassFree}))
	res, err := c.Translate(context.Background(), req("0123456789"))
	if err != nil || res.Engine != "free" {
		t.Fatalf("%v from %v, want free", err, res)
	}
	if diff := cmp.Diff(tc.want, chargedBy(c)); diff != "" {
		t.Errorf("after a's %v (-want +got):\n%s", tc.kind, diff)
	}
}

// testChargedWhenCanceled: a caller who gives up while the call is at the vendor is
// charged for it.
func testChargedWhenCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a := fake.New("a", fake.WithHook(func(actx context.Context, _ *translate.EngineRequest) error {
		cancel() // the caller gives up while the call is at the vendor
		<-actx.Done()
		return actx.Err()
	}))
	c := newClient(t, translate.WithClock(newClock()), translate.WithBudget(translate.Budget{Daily: 100}),
		translate.WithEngine(a, billingProfile))
	if _, err := c.Translate(ctx, req("0123456789")); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the caller's cancellation", err)
	}
	if diff := cmp.Diff(charged{1, 990}, chargedBy(c)); diff != "" {
		t.Errorf("after a canceled call (-want +got):\n%s", diff)
	}
}

// reportedCharge is an engine that reports what it billed, and what the request costs.
type reportedCharge struct {
	name      string
	eng       billing
	prof      translate.Profile
	cost      float64
	quotaLeft int64
}

var reportedCharges = []reportedCharge{
	{"billed chars", billing{billed: 50}, translate.Profile{CostPerMillion: 100_000, Quota: 1000}, 5, 950},
	{"tokens", billing{billed: 10, in: 3, out: 4}, translate.Profile{CostPerMillion: 100_000, CostPerMillionTokens: 1e6, Quota: 1000}, 7, 990},
	// A vendor's count is taken up to what the call could cost: 4 per character and 64 more
	// (104 for these 10), and for tokens 4 per character and 8,192 more, each way; a
	// negative count is none.
	{"billed chars absurd", billing{billed: 1e15}, translate.Profile{CostPerMillion: 100_000, Quota: 1000}, 10.4, 896},
	{"tokens absurd", billing{in: 1e15, out: math.MaxInt64}, translate.Profile{CostPerMillion: 100_000, CostPerMillionTokens: 1000, Quota: 1000}, 16.464, 990},
	{"tokens negative", billing{in: -1e15, out: 5}, translate.Profile{CostPerMillion: 100_000, CostPerMillionTokens: 1e6, Quota: 1000}, 5, 990},
}

// testChargedAsReported: the result's cost, the budget and the quota take what the
// engine reports billing, not the characters sent.
func testChargedAsReported(t *testing.T, tc reportedCharge) {
	c := newClient(t, translate.WithClock(newClock()), translate.WithBudget(translate.Budget{Daily: 100}),
		translate.WithEngine(tc.eng, tc.prof))
	res, err := c.Translate(context.Background(), req("0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	type costCharged struct {
		Cost, Spent float64
		QuotaLeft   int64
	}
	got := costCharged{res.Cost, c.Budget().Spent, c.Engines()[0].QuotaLeft}
	if diff := cmp.Diff(costCharged{tc.cost, tc.cost, tc.quotaLeft}, got); diff != "" {
		t.Errorf("charged (-want +got):\n%s", diff)
	}
}

// Issue 7.13: the defaults hold: an 8s deadline, chat engines within 3s, probes every 30s
// (EconomyAt 0.8: TestEconomyModeDropsPremium).
func TestDefaults(t *testing.T) {
	t.Run("deadline 8s", func(t *testing.T) {
		var left time.Duration
		a := fake.New("a", fake.WithHook(func(ctx context.Context, _ *translate.EngineRequest) error {
			d, _ := ctx.Deadline()
			left = time.Until(d)
			return nil
		}))
		c := newClient(t, translate.WithEngine(a, translate.Profile{Timeout: time.Minute}))
		if _, err := c.Translate(context.Background(), req("hello")); err != nil {
			t.Fatal(err)
		}
		if left > 8*time.Second || left < 7*time.Second {
			t.Errorf("the attempt had %v left, want the 8s request deadline", left)
		}
	})
	t.Run("chat 3s", func(t *testing.T) {
		for _, tc := range []struct {
			ewma time.Duration
			want string
		}{{2900 * time.Millisecond, "a"}, {3100 * time.Millisecond, "b"}} {
			a, b := fake.New("a"), fake.New("b")
			c := newClient(t, translate.WithClock(newClock()), sharp,
				translate.WithEngine(a, primary), translate.WithEngine(b, secondary))
			translate.SetLatencyForTest(c, "a", tc.ewma)
			r := req("hello")
			r.Scene = translate.SceneChat
			res, err := c.Translate(context.Background(), r)
			if err != nil || res.Engine != tc.want {
				t.Errorf("chat with a at %v: %v from %v, want %s", tc.ewma, err, res, tc.want)
			}
		}
	})
	t.Run("probes 30s", func(t *testing.T) {
		clk := &tickClock{clock: newClock(), sleeping: make(chan time.Duration), tick: make(chan struct{})}
		c, err := translate.New(translate.WithEngine(fake.New("a"), translate.Profile{}), translate.WithClock(clk),
			translate.WithProbes(translate.ProbePolicy{}))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if d := within(t, clk.sleeping, "the prober's wait"); d != 30*time.Second {
			t.Errorf("prober waits %v, want 30s", d)
		}
	})
}

// tokenPriced answers every call reporting 1,000 input and 1,000 output tokens.
type tokenPriced struct{}

func (tokenPriced) Name() string { return "llm" }

func (tokenPriced) Translate(_ context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	return &translate.EngineResult{Texts: []string{"<" + r.Texts[0] + ">"}, InputTokens: 1000, OutputTokens: 1000}, nil
}

// TestTokenPricedEngineSpendsTheBudget: an engine priced only by tokens is paid: each call
// is reserved (a token a character each way, 0.05 credits here) and charged its tokens (2
// credits), so a daily budget of 5 serves three calls (the third's reservation fits, its
// charge passes the limit), not ten, and the budget counts what they cost.
func TestTokenPricedEngineSpendsTheBudget(t *testing.T) {
	c := newClient(t, translate.WithClock(newClock()), translate.WithEngine(tokenPriced{}, translate.Profile{CostPerMillionTokens: 1000}),
		translate.WithBudget(translate.Budget{Daily: 5}))
	var cost float64
	served := 0
	for i := range 10 {
		res, err := c.Translate(context.Background(), req(fmt.Sprintf("Sentence number %d here", i)))
		if err == nil {
			served++
			cost += res.Cost
		} else if translate.KindOf(err) != translate.KindBudgetExceeded {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if st := c.Budget(); served != 3 || cost != 6 || st.Spent != 6 {
		t.Errorf("daily budget 5: %d calls served costing %v, the budget counts %v; want 3 calls, 6 and 6", served, cost, st.Spent)
	}
}
