package translate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/apertium"
	"github.com/fanyi-go/translate/engines/baidu"
	"github.com/fanyi-go/translate/engines/deepl"
	"github.com/fanyi-go/translate/engines/fake"
	"github.com/fanyi-go/translate/engines/google"
	"github.com/fanyi-go/translate/engines/libretranslate"
	"github.com/fanyi-go/translate/engines/microsoft"
	"github.com/fanyi-go/translate/engines/openai"
)

// hang is an engine that never answers. One that honours ctx returns ctx's error when ctx
// ends; one that ignores it returns only when the test releases it (or after sleep, if set).
type hang struct {
	name    string
	honour  bool
	sleep   time.Duration // ignoring ctx: return after sleep; 0: wait for release
	release chan struct{}
	onCall  func() // if set, called at each call's start
	mu      sync.Mutex
	calls   int
}

func newHang(name string, honour bool) *hang {
	return &hang{name: name, honour: honour, release: make(chan struct{})}
}

func (h *hang) Name() string { return h.name }

func (h *hang) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	h.mu.Lock()
	h.calls++
	h.mu.Unlock()
	if h.onCall != nil {
		h.onCall()
	}
	switch {
	case h.honour:
		<-ctx.Done()
		return nil, ctx.Err()
	case h.sleep > 0:
		time.Sleep(h.sleep)
	default:
		<-h.release
	}
	return &translate.EngineResult{Texts: append([]string(nil), req.Texts...)}, nil
}

func (h *hang) Calls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

// callerErrorWant checks that err is the caller's ctx error as Translate's doc promises:
// KindTimeout wrapping context.DeadlineExceeded when ctx's deadline passed, KindCanceled
// wrapping context.Canceled when ctx was canceled.
func callerErrorWant(err error, deadline bool) string {
	kind, target := translate.KindCanceled, context.Canceled
	if deadline {
		kind, target = translate.KindTimeout, context.DeadlineExceeded
	}
	if err == nil {
		return "no error"
	}
	if k := translate.KindOf(err); k != kind || !errors.Is(err, target) {
		return fmt.Sprintf("%v: Kind %v, errors.Is(err, %v) %v", err, k, target, errors.Is(err, target))
	}
	return ""
}

// TestCallerDeadlineIsAlwaysTimeout: a caller's ctx whose deadline (150ms) comes before the
// Client's (300ms), over two engines that hang: every one of 200 requests, through
// Translate, TranslateBatch and TranslateStream, fails with KindTimeout wrapping
// context.DeadlineExceeded; one in four, canceled (no deadline) once an engine is called,
// fails with KindCanceled wrapping context.Canceled. (The first engine's attempt ends early, leaving the second its reserve;
// the second runs into the caller's deadline.) Each request has a Client of its own, so no
// breaker opens. Real time: the race is between ctx's timer and the Client's clock reads.
func TestCallerDeadlineIsAlwaysTimeout(t *testing.T) {
	const rounds, width = 10, 20 // 200 requests per path, 20 at a time
	paths := map[string]func(c *translate.Client, ctx context.Context, text string) error{
		"Translate": func(c *translate.Client, ctx context.Context, text string) error {
			_, err := c.Translate(ctx, req(text))
			return err
		},
		"TranslateBatch": func(c *translate.Client, ctx context.Context, text string) error {
			return c.TranslateBatch(ctx, []translate.Request{req(text)})[0].Err
		},
		"TranslateStream": func(c *translate.Client, ctx context.Context, text string) error {
			for _, err := range c.TranslateStream(ctx, req(text)) {
				if err != nil {
					return err
				}
			}
			return nil
		},
	}
	for name, call := range paths {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			bad := map[string]int{}
			for r := range rounds {
				var wg sync.WaitGroup
				for i := range width {
					deadline := i%4 != 0 // one in four is canceled instead
					ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
					a, b := newHang("a", true), newHang("b", true)
					if !deadline {
						cancel()
						ctx, cancel = context.WithCancel(context.Background())
						a.onCall, b.onCall = cancel, cancel
					}
					c := newClient(t, translate.WithDeadline(300*time.Millisecond),
						translate.WithEngine(a, translate.Profile{Quality: 90}),
						translate.WithEngine(b, translate.Profile{Quality: 80}))
					wg.Go(func() {
						defer cancel()
						if why := callerErrorWant(call(c, ctx, fmt.Sprintf("text %d %d", r, i)), deadline); why != "" {
							mu.Lock()
							bad[why]++
							mu.Unlock()
						}
					})
				}
				wg.Wait()
			}
			for why, n := range bad {
				t.Errorf("%d of %d requests: %s", n, rounds*width, why)
			}
		})
	}
}

// bundledProfiles are the Profile() of every bundled adapter, as a user gets them.
func bundledProfiles(t *testing.T) map[string]translate.Profile {
	t.Helper()
	type profiler interface{ Profile() translate.Profile }
	out := map[string]translate.Profile{}
	add := func(name string, e profiler, err error) {
		if err != nil {
			t.Fatalf("%s.New: %v", name, err)
		}
		out[name] = e.Profile()
	}
	d, err := deepl.New("key")
	add("deepl", d, err)
	g, err := google.New("key")
	add("google", g, err)
	m, err := microsoft.New("key", "westeurope")
	add("microsoft", m, err)
	b, err := baidu.New("app", "secret")
	add("baidu", b, err)
	l, err := libretranslate.New("http://127.0.0.1:1", "")
	add("libretranslate", l, err)
	a, err := apertium.New("http://127.0.0.1:1")
	add("apertium", a, err)
	o, err := openai.New("key", "gpt-4o-mini")
	add("openai", o, err)
	return out
}

// TestHungVendorFailsOverWithBundledProfiles: with every bundled adapter's Profile() and no
// option but the engines, a top engine that hangs (honouring ctx, or ignoring it for 30s)
// is answered by the backup, whatever its bundled profile, within the default 8s deadline.
// Virtual time (synctest): the latencies are exact.
func TestHungVendorFailsOverWithBundledProfiles(t *testing.T) {
	profiles := bundledProfiles(t)
	long := strings.Repeat("A long paragraph for a language model to translate. ", 120) // ~1,600 tokens
	for top, tp := range profiles {
		for backup, bp := range profiles {
			if top == backup {
				continue
			}
			for _, honour := range []bool{true, false} {
				text := "hello world"
				if top == "openai" && honour {
					text = long // its timeout grows with the text: still capped for the backup
				}
				name := fmt.Sprintf("%s hangs (honours ctx %v), %s answers", top, honour, backup)
				synctest.Test(t, func(t *testing.T) {
					hung := newHang(top, honour)
					hung.sleep = 30 * time.Second
					c, err := translate.New(translate.WithEngine(hung, tp), translate.WithEngine(fake.New(backup), bp))
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					t0 := time.Now()
					res, err := c.Translate(context.Background(), translate.Request{Text: text, Source: "en", Target: "es", Engine: top, AllowFallback: true})
					took := time.Since(t0)
					if err != nil || res.Engine != backup || took > 8*time.Second {
						t.Errorf("%s: %v, %v after %v; want %s's answer within 8s", name, res, err, took, backup)
					}
					time.Sleep(30 * time.Second) // the engine that ignores ctx returns
				})
			}
		}
	}
}

// TestLLMTimeoutGrowsWithLength: the openai profile's attempt timeout is 5s plus 15s per
// 1,000 tokens, inside the request's deadline: a hung call on a short text times out after
// 5s, on a 1,000-token text after 20s (with a 60s deadline and no other engine), and never
// past an 8s deadline.
func TestLLMTimeoutGrowsWithLength(t *testing.T) {
	p := bundledProfiles(t)["openai"]
	for _, tc := range []struct {
		text     string
		deadline time.Duration
		want     time.Duration
	}{
		{"hello world", 60 * time.Second, 5*time.Second + 45*time.Millisecond}, // 3 tokens
		{strings.Repeat("abcd", 1000), 60 * time.Second, 20 * time.Second},     // 1,000 tokens
		{strings.Repeat("abcd", 1000), 8 * time.Second, 8 * time.Second},
	} {
		synctest.Test(t, func(t *testing.T) {
			c, err := translate.New(translate.WithDeadline(tc.deadline), translate.WithEngine(newHang("llm", true), p))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Translate(context.Background(), req(tc.text))
			var te *translate.Error
			if !errors.As(err, &te) || len(te.Attempts) == 0 {
				t.Fatalf("%d chars: err %v, want an error with attempts", len(tc.text), err)
			}
			if got := te.Attempts[0].Latency; got != tc.want {
				t.Errorf("%d chars, deadline %v: first attempt timed out after %v, want %v", len(tc.text), tc.deadline, got, tc.want)
			}
		})
	}
}

// TestFirstCallsOfCtxIgnoringEngineKeepTheDeadline: an engine that ignores ctx (it sleeps
// 5s, or 30s) cannot hold a request past min(deadline, ctx's deadline) plus the Client's
// 20ms grace, from its very first calls: 20 concurrent first requests with an 800ms caller
// ctx over a 1s deadline all return by 820ms with the caller's KindTimeout; with a 2s
// deadline and no caller deadline, by 2.02s. Virtual time (synctest).
func TestFirstCallsOfCtxIgnoringEngineKeepTheDeadline(t *testing.T) {
	for _, tc := range []struct {
		sleep, deadline, ctx time.Duration
		want                 time.Duration
		callers              bool // the error is the caller's
	}{
		{5 * time.Second, time.Second, 800 * time.Millisecond, 820 * time.Millisecond, true},
		{30 * time.Second, 2 * time.Second, 0, 2020 * time.Millisecond, false},
	} {
		synctest.Test(t, func(t *testing.T) {
			slow := newHang("slow", false)
			slow.sleep = tc.sleep
			c, err := translate.New(translate.WithDeadline(tc.deadline), translate.WithEngine(slow, translate.Profile{}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var wg sync.WaitGroup
			for i := range 20 {
				wg.Go(func() {
					ctx := context.Background()
					if tc.ctx > 0 {
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, tc.ctx)
						defer cancel()
					}
					t0 := time.Now()
					res, err := c.Translate(ctx, req(fmt.Sprintf("text %d", i)))
					took := time.Since(t0)
					if took > tc.want || err == nil || translate.KindOf(err) != translate.KindTimeout ||
						errors.Is(err, context.DeadlineExceeded) != tc.callers {
						t.Errorf("sleep %v, deadline %v, ctx %v: %v, %v after %v; want KindTimeout (the caller's: %v) by %v",
							tc.sleep, tc.deadline, tc.ctx, res, err, took, tc.callers, tc.want)
					}
				})
			}
			wg.Wait()
			if slow.Calls() != 20 {
				t.Errorf("%d calls, want 20 (one per request)", slow.Calls())
			}
			time.Sleep(tc.sleep) // the abandoned calls return
		})
	}
}

// TestBundledTimeoutsFitTheDeadline: every bundled Profile's Timeout (an LLM's before it grows
// with the text) leaves a backup at least a quarter of the default 8s deadline, as seed 000
// §4.1 sizes them: DeepL 6s, Google 5s, language models 5s plus 15s per 1,000 tokens.
func TestBundledTimeoutsFitTheDeadline(t *testing.T) {
	got := map[string][2]time.Duration{}
	for name, p := range bundledProfiles(t) {
		got[name] = [2]time.Duration{p.Timeout, p.TimeoutPerKTokens}
		if p.Timeout > 6*time.Second {
			t.Errorf("%s: Timeout %v leaves a backup less than 2s of the default 8s deadline", name, p.Timeout)
		}
	}
	want := map[string][2]time.Duration{
		"deepl": {6 * time.Second}, "google": {5 * time.Second}, "microsoft": {5 * time.Second},
		"baidu": {6 * time.Second}, "libretranslate": {6 * time.Second}, "apertium": {5 * time.Second},
		"openai": {5 * time.Second, 15 * time.Second},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("bundled timeouts (-want +got):\n%s", d)
	}
}

// TestHedgedCallsOfCtxIgnoringEnginesKeepTheDeadline: with hedging on, two engines that
// ignore ctx (they sleep 30s) cannot hold a request past its 2s deadline plus the grace.
func TestHedgedCallsOfCtxIgnoringEnginesKeepTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := newHang("a", false), newHang("b", false)
		a.sleep, b.sleep = 30*time.Second, 30*time.Second
		c, err := translate.New(translate.WithDeadline(2*time.Second), translate.WithRetry(translate.RetryPolicy{HedgeAfter: 300 * time.Millisecond}),
			translate.WithEngine(a, translate.Profile{Quality: 90}), translate.WithEngine(b, translate.Profile{Quality: 80}))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		t0 := time.Now()
		res, err := c.Translate(context.Background(), req("hello"))
		if took := time.Since(t0); err == nil || took > 2020*time.Millisecond {
			t.Errorf("%v, %v after %v; want a KindTimeout error by 2.02s", res, err, took)
		}
		time.Sleep(30 * time.Second) // the abandoned calls return
	})
}

// turncoat answers at once until slow is set; then each call takes 5s, honouring ctx or not.
type turncoat struct {
	honour bool
	slow   atomic.Bool
}

func (*turncoat) Name() string { return "turncoat" }

func (e *turncoat) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	if e.slow.Load() {
		t := time.NewTimer(5 * time.Second)
		defer t.Stop()
		if e.honour {
			select {
			case <-t.C:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		} else {
			<-t.C
		}
	}
	return &translate.EngineResult{Texts: []string{"hola"}}, nil
}

// TestEarnedInlineCallsLoseItAtTheFirstSlowCall: an engine whose calls return at once is
// called inline, on the caller's goroutine, once it earned it (deadline.Earn instant calls
// in a row: until then its calls run on the Client's pool and keep the deadline). When it
// then hangs honouring ctx, its inline calls keep the deadline (the attempt's context ends
// by its own alarm). When it hangs ignoring ctx, the one call that found it hanging returns
// when the engine does (5s over a 1s deadline: the breach the README states), and every call
// after it runs on the pool again and returns by the deadline plus the 20ms grace.
// Virtual time (synctest).
func TestEarnedInlineCallsLoseItAtTheFirstSlowCall(t *testing.T) {
	for _, honour := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			e := &turncoat{honour: honour}
			c, err := translate.New(translate.WithDeadline(time.Second), translate.WithoutCache(),
				translate.WithEngine(e, translate.Profile{}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for i := range 100 {
				if _, err := c.Translate(context.Background(), req(fmt.Sprint("warm ", i))); err != nil {
					t.Fatal(err)
				}
			}
			e.slow.Store(true)
			var took []time.Duration
			for i := range 4 {
				t0 := time.Now()
				_, err := c.Translate(context.Background(), req(fmt.Sprint("slow ", i)))
				took = append(took, time.Since(t0))
				if translate.KindOf(err) != translate.KindTimeout && (honour || i > 0) {
					t.Errorf("honour %v, call %d: %v, want KindTimeout", honour, i, err)
				}
			}
			want := []time.Duration{time.Second, time.Second, time.Second, time.Second}
			if !honour {
				want[0] = 5 * time.Second
			}
			within := cmp.Comparer(func(a, b time.Duration) bool { return (a - b).Abs() <= 20*time.Millisecond })
			if diff := cmp.Diff(want, took, within); diff != "" {
				t.Errorf("honour %v: calls took (-want +got):\n%s", honour, diff)
			}
			time.Sleep(5 * time.Second) // the abandoned calls return
		})
	}
}

// TestHungInlineEngineHoldsOnlyTheCallsInFlight: when an engine that earned inline calls
// hangs ignoring ctx under concurrent load, the calls already in it wait for it (the breach
// the README states), but calls that start once no call of it returned at once for 10ms
// (deadline.Stall) run on the Client's pool and keep the deadline, though none of the hung
// calls has returned yet to say the engine is slow. Virtual time (synctest).
func TestHungInlineEngineHoldsOnlyTheCallsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := &turncoat{}
		c, err := translate.New(translate.WithDeadline(time.Second), translate.WithoutCache(),
			translate.WithEngine(e, translate.Profile{}))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for i := range 100 {
			if _, err := c.Translate(context.Background(), req(fmt.Sprint("warm ", i))); err != nil {
				t.Fatal(err)
			}
		}
		e.slow.Store(true)
		var mu sync.Mutex
		took := map[string][]time.Duration{}
		var wg sync.WaitGroup
		wave := func(name string) {
			for i := range 4 {
				wg.Go(func() {
					t0 := time.Now()
					c.Translate(context.Background(), req(fmt.Sprint(name, i)))
					mu.Lock()
					took[name] = append(took[name], time.Since(t0))
					mu.Unlock()
				})
			}
		}
		wave("in flight")
		time.Sleep(20 * time.Millisecond)
		wave("after")
		wg.Wait()
		want := map[string][]time.Duration{
			"in flight": {5 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second},
			"after":     {time.Second, time.Second, time.Second, time.Second},
		}
		within := cmp.Comparer(func(a, b time.Duration) bool { return (a - b).Abs() <= 20*time.Millisecond })
		if diff := cmp.Diff(want, took, within); diff != "" {
			t.Errorf("calls took (-want +got):\n%s", diff)
		}
		time.Sleep(5 * time.Second) // the abandoned calls return
	})
}

// farDeadline is a context whose deadline is d but that never ends by itself, as a context
// implementation of the caller's own may be.
type farDeadline struct {
	context.Context
	d time.Time
}

func (c farDeadline) Deadline() (time.Time, bool) { return c.d, true }

// TestCallerDeadlineCenturiesAway: a caller's ctx that reports a deadline in year 1 (and
// is not done) fails the request at once with the caller's KindTimeout, no engine called,
// as any deadline already past; one in year 9999 leaves the Client's deadline in charge:
// the request is served. Instants that far out do not fit the walk's clock (int64
// nanoseconds), and must not wrap around.
func TestCallerDeadlineCenturiesAway(t *testing.T) {
	e := fake.New("a")
	c := newClient(t, translate.WithEngine(e, translate.Profile{}))
	_, err := c.Translate(farDeadline{context.Background(), time.Time{}}, req("hello"))
	if msg := callerErrorWant(err, true); msg != "" {
		t.Errorf("deadline in year 1: %s", msg)
	}
	if n := e.Calls(); n != 0 {
		t.Errorf("deadline in year 1: %d engine calls, want 0", n)
	}
	res, err := c.Translate(farDeadline{context.Background(), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}, req("hello"))
	if err != nil || res.Engine != "a" {
		t.Errorf("deadline in year 9999: %v, %v; want served by a", res, err)
	}
}
