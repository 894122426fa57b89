package translate_test

// Tests of what the Client remembers and how engines come back, with the bundled profiles
// and the defaults (issue 16, items 9 to 12).

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

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
// recovers. With the bundled profiles and no option, the backup answers every request
// during the blip, and the best engine is back at half its normal share or more within 90s
// of its recovery (measured over the 30s after that).
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
		a.Down(translate.KindUnavailable)
		share(t, c, "blip", 40, "deepl", every) // 20s; every request answered (share fails on errors)
		a.Up()
		back := a.Calls()
		share(t, c, "recovering", 180, "deepl", every) // 90s
		after := share(t, c, "recovered", 120, "deepl", every)
		t.Logf("deepl's share: %.2f before the blip, %.2f from 90s to 120s after it; %d calls to deepl while recovering",
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
