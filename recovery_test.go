package translate_test

// Tests of what the Client remembers and how engines come back, with the bundled profiles
// and the defaults (issue 16, items 9 to 12).

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/deepl"
	"github.com/fanyi-go/translate/engines/fake"
	"github.com/fanyi-go/translate/engines/google"
)

// bundled returns the bundled Profile()s of DeepL and Google, for fakes that stand in for
// them: the adapters are built only to read their profiles, never called.
func bundled(t *testing.T) (dl, gg translate.Profile) {
	t.Helper()
	d, err := deepl.New("k")
	if err != nil {
		t.Fatal(err)
	}
	g, err := google.New("k")
	if err != nil {
		t.Fatal(err)
	}
	return d.Profile(), g.Profile()
}

// share sends n requests, one every 100ms of (virtual) time, each with a text of its own,
// and returns the share of them the engine named best answered.
func share(t *testing.T, c *translate.Client, tag string, n int, best string, every time.Duration) float64 {
	t.Helper()
	got := 0
	for i := range n {
		res, err := c.Translate(context.Background(), req(fmt.Sprintf("%s %d", tag, i)))
		if err != nil {
			t.Fatalf("%s: request %d: %v", tag, i, err)
		}
		if res.Engine == best {
			got++
		}
		time.Sleep(every)
	}
	return float64(got) / float64(n)
}

// TestRecoveryWithDefaults is the drill's blip: the best engine fails for 20s, then
// recovers. With the bundled profiles and no option, no probe is made while all is well,
// the backup answers every request during the blip, and the best engine is back at half
// its normal share or more within 90s of its recovery (measured over the 60s after that).
func TestRecoveryWithDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const every = 500 * time.Millisecond
		dl, gg := bundled(t)
		a, b := fake.New("deepl"), fake.New("google")
		c, err := translate.New(translate.WithEngine(a, dl), translate.WithEngine(b, gg))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		normal := share(t, c, "before", 600, "deepl", every)
		if normal < 0.3 {
			t.Fatalf("deepl's normal share %.2f; the test needs it to be the best engine", normal)
		}
		if n := a.Calls() + b.Calls(); n != 600 {
			t.Errorf("%d engine calls for 600 requests while all is well, want 600: no probe", n)
		}
		a.Down(translate.KindUnavailable)
		share(t, c, "blip", 40, "deepl", every) // 20s (40 x 500ms); every request answered (share fails on errors)
		a.Up()
		back := a.Calls()
		share(t, c, "recovering", 180, "deepl", every) // 90s
		after := share(t, c, "recovered", 120, "deepl", every)
		t.Logf("deepl's share: %.2f before the blip, %.2f from 90s to 150s after it; %d calls to deepl while recovering",
			normal, after, a.Calls()-back)
		if after < normal/2 {
			t.Errorf("deepl's share %.2f from 90s after its recovery, want at least half its normal %.2f", after, normal)
		}
		for _, st := range c.Engines() {
			if st.Pool != translate.PoolNormal {
				t.Errorf("%s in pool %v 2 minutes after the blip", st.Name, st.Pool)
			}
		}
		c.Close()
		synctest.Wait()
	})
}

// idCall is what a test checks of one request with a RequestID: the answer or the error's
// Kind, and the engine calls it made.
type idCall struct {
	Text  string
	Kind  translate.Kind
	Calls int
}

func callWithID(t *testing.T, c *translate.Client, a *failing, r translate.Request) idCall {
	t.Helper()
	before := a.textCalls(r.Text)
	res, err := c.Translate(context.Background(), r)
	got := idCall{Kind: translate.KindOf(err), Calls: a.textCalls(r.Text) - before}
	if err == nil {
		got.Text = res.Text
	}
	return got
}

// failing is a fake whose translation is "A:" + text and whose calls for a text fail with
// the Kinds queued for it (fail), in order: a probe ("hello") never takes another text's.
type failing struct {
	*fake.Engine
	mu    sync.Mutex
	queue map[string][]translate.Kind
}

func newFailing(name string) *failing {
	f := &failing{queue: map[string][]translate.Kind{}}
	f.Engine = prefixed(name, "A:", fake.WithHook(func(_ context.Context, r *translate.EngineRequest) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		q := f.queue[r.Texts[0]]
		if len(q) == 0 {
			return nil
		}
		f.queue[r.Texts[0]] = q[1:]
		return &translate.Error{Kind: q[0], Engine: name, Message: "scripted"}
	}))
	return f
}

// textCalls counts the calls made for text.
func (f *failing) textCalls(text string) int {
	n := 0
	for _, r := range f.Requests() {
		if r.Texts[0] == text {
			n++
		}
	}
	return n
}

func (f *failing) fail(text string, kinds ...translate.Kind) {
	f.mu.Lock()
	f.queue[text] = append(f.queue[text], kinds...)
	f.mu.Unlock()
}

// TestRequestIDRetriesWhatBilledNothing: with a caller's RequestID and the only engine (the
// bundled DeepL profile, defaults), a 503 and a 429 are retried, by the Client and by the
// caller 2s later; an answer is remembered (no call), and so is a timeout, which may have
// been billed. The same id with another text or target is a new request with its own
// translation.
func TestRequestIDRetriesWhatBilledNothing(t *testing.T) {
	dl, _ := bundled(t)
	clk := newClock()
	a := newFailing("deepl")
	c, err := translate.New(translate.WithClock(clk), translate.WithEngine(a, dl))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	withID := func(id, text, target string) translate.Request {
		return translate.Request{Text: text, Source: "en", Target: target, RequestID: id}
	}
	const unavailable, limited, timeout = translate.KindUnavailable, translate.KindRateLimited, translate.KindTimeout
	steps := []struct {
		name string
		fail []translate.Kind // the next calls for the step's text
		r    translate.Request
		want idCall
	}{
		{"503 then OK: the Client's own retry", []translate.Kind{unavailable}, withID("r1", "one", "es"), idCall{Text: "A:one", Calls: 2}},
		{"two 429s: the request fails", []translate.Kind{limited, limited}, withID("r2", "two", "es"), idCall{Kind: limited, Calls: 2}},
		{"the caller's retry 2s later", nil, withID("r2", "two", "es"), idCall{Text: "A:two", Calls: 1}},
		{"and again: the answer, remembered", nil, withID("r2", "two", "es"), idCall{Text: "A:two"}},
		{"two 503s: the request fails", []translate.Kind{unavailable, unavailable}, withID("r3", "three", "es"), idCall{Kind: unavailable, Calls: 2}},
		{"the caller's retry 2s later", nil, withID("r3", "three", "es"), idCall{Text: "A:three", Calls: 1}},
		{"a timeout, which may have been billed", []translate.Kind{timeout}, withID("r4", "four", "es"), idCall{Kind: timeout, Calls: 1}},
		{"the caller's retry 2s later: the timeout, remembered", nil, withID("r4", "four", "es"), idCall{Kind: timeout}},
		{"r2 reused with another text", nil, withID("r2", "other", "es"), idCall{Text: "A:other", Calls: 1}},
		{"r2 reused with another target", nil, withID("r2", "two", "de"), idCall{Text: "A:two", Calls: 1}},
	}
	for _, st := range steps {
		a.fail(st.r.Text, st.fail...)
		if diff := cmp.Diff(st.want, callWithID(t, c, a, st.r)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", st.name, diff)
		}
		clk.Advance(2 * time.Second)
	}
}
