package translate_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// refuseOne makes a call that carries text fail with an error of kind, or panic when panics.
func refuseOne(text string, kind translate.Kind, panics bool) fake.Option {
	return fake.WithHook(func(_ context.Context, r *translate.EngineRequest) error {
		if !slices.Contains(r.Texts, text) {
			return nil
		}
		if panics {
			panic("engine bug on " + text)
		}
		return &translate.Error{Kind: kind, StatusCode: 400, Message: "refused"}
	})
}

// Issue 16 item 13: in a packed batch of 50, one item the vendor refuses (400 for that
// text, too long, a 503 tied to it, an engine panic on it) failed all 50, every time. Only
// that item fails, with its own error; the 49 others are translated, within the default
// deadline, on the engine's bundled-like Profile (50 texts a call) and the defaults.
func TestBatchOneBadItemFailsAlone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kind   translate.Kind
		panics bool
		want   translate.Kind
	}{
		{"400", translate.KindInvalidInput, false, translate.KindInvalidInput},
		{"too long", translate.KindTextTooLong, false, translate.KindTextTooLong},
		{"503", translate.KindUnavailable, false, translate.KindUnavailable},
		{"panic", 0, true, translate.KindUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reqs := shortTexts(50)
				const bad = 37
				a := fake.New("a", fake.WithLatency(50*time.Millisecond), refuseOne(reqs[bad].Text, tc.kind, tc.panics))
				c, err := translate.New(translate.WithEngine(a, packed))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				t0 := time.Now()
				out := c.TranslateBatch(context.Background(), reqs)
				took := time.Since(t0)
				for i, br := range out {
					if i == bad {
						if k := translate.KindOf(br.Err); k != tc.want {
							t.Errorf("the bad item: %v (%v), want %v", br.Err, k, tc.want)
						}
						continue
					}
					if br.Err != nil || br.Result.Text != "[es] "+reqs[i].Text {
						t.Errorf("item %d: %+v, %v", i, br.Result, br.Err)
					}
				}
				t.Logf("%d calls in %v", a.Calls(), took)
				if took > 8*time.Second || a.Calls() > 40 {
					t.Errorf("%d calls in %v, want at most 40 within the 8s deadline", a.Calls(), took)
				}
			})
		})
	}
}

// When every engine refuses the same text, only that item fails; each engine gets the
// pack's other texts in a few calls.
func TestBatchBadItemRefusedEverywhere(t *testing.T) {
	reqs := shortTexts(20)
	bad := reqs[5].Text
	a := fake.New("a", refuseOne(bad, translate.KindInvalidInput, false))
	b := fake.New("b", refuseOne(bad, translate.KindInvalidInput, false))
	c := newClient(t, sharp, translate.WithClock(newClock()), translate.WithEngine(a, packed),
		translate.WithEngine(b, translate.Profile{Quality: 1, MaxTexts: 50}))
	out := c.TranslateBatch(context.Background(), reqs)
	var failed []int
	for i, br := range out {
		if br.Err != nil {
			failed = append(failed, i)
		}
	}
	if d := cmp.Diff([]int{5}, failed); d != "" {
		t.Errorf("failed items (-want +got):\n%s", d)
	}
}

// A pack that fails because the engine is out (429, quota) is not split: the items fail
// (or fail over) together, in one call per engine.
func TestBatchEngineOutNotSplit(t *testing.T) {
	a := fake.New("a")
	a.Down(translate.KindQuotaExhausted)
	c := newClient(t, translate.WithClock(newClock()), translate.WithEngine(a, packed))
	out := c.TranslateBatch(context.Background(), shortTexts(50))
	for i, br := range out {
		if translate.KindOf(br.Err) != translate.KindQuotaExhausted {
			t.Fatalf("item %d: %v, want quota_exhausted", i, br.Err)
		}
	}
	if a.Calls() != 1 {
		t.Errorf("%d calls, want 1", a.Calls())
	}
}

// detector is an engine that detects the source of each text by its script and reports
// it per text (Sources), as DeepL, Google and Microsoft do; Source is the first text's.
type detector struct{ calls atomic.Int32 }

func (*detector) Name() string { return "detector" }

func (d *detector) Translate(_ context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	d.calls.Add(1)
	out := &translate.EngineResult{}
	for _, t := range r.Texts {
		out.Texts = append(out.Texts, "[es] "+t)
		tag := language.English
		switch {
		case strings.IndexFunc(t, func(c rune) bool { return unicode.Is(unicode.Han, c) }) >= 0:
			tag = language.Chinese
		case strings.IndexFunc(t, func(c rune) bool { return unicode.Is(unicode.Cyrillic, c) }) >= 0:
			tag = language.Russian
		}
		out.Sources = append(out.Sources, tag)
	}
	out.Source = out.Sources[0]
	return out, nil
}

// Each packed item reports its own detected source: zh and ru items in a pack with an en
// one said Source=en.
func TestBatchItemsOwnDetectedSource(t *testing.T) {
	d := &detector{}
	c := newClient(t, translate.WithEngine(d, packed))
	var reqs []translate.Request
	for _, text := range []string{"Hello there", "你好，世界", "Привет, мир", "Good morning"} {
		reqs = append(reqs, translate.Request{Text: text, Target: "es"}) // Source "": detect
	}
	var got []string
	for i, br := range c.TranslateBatch(context.Background(), reqs) {
		if br.Err != nil {
			t.Fatalf("item %d: %v", i, br.Err)
		}
		got = append(got, br.Result.Source)
	}
	if d := cmp.Diff([]string{"en", "zh", "ru", "en"}, got); d != "" {
		t.Errorf("sources (-want +got):\n%s", d)
	}
	if n := d.calls.Load(); n != 1 {
		t.Errorf("%d calls, want the 4 texts in one", n)
	}
}

// Items that share a text follow it through the halves: both copies of the refused text
// fail, both copies of the others are translated.
func TestBatchSplitKeepsSharedTexts(t *testing.T) {
	reqs := shortTexts(12)
	reqs = append(reqs, reqs[9], reqs[2], reqs[11]) // copies of the bad text (9) and two good ones
	a := fake.New("a", refuseOne(reqs[9].Text, translate.KindInvalidInput, false))
	c := newClient(t, translate.WithClock(newClock()), translate.WithEngine(a, packed))
	var failed []int
	for i, br := range c.TranslateBatch(context.Background(), reqs) {
		switch {
		case br.Err != nil:
			failed = append(failed, i)
		case br.Result.Text != "[es] "+reqs[i].Text:
			t.Errorf("item %d: %q", i, br.Result.Text)
		}
	}
	if d := cmp.Diff([]int{9, 12}, failed); d != "" {
		t.Errorf("failed items (-want +got):\n%s", d)
	}
}
