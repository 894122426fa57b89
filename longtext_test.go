package translate_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/deepl"
	"github.com/fanyi-go/translate/engines/fake"
)

// longDoc returns a text of n code points: sentences of 50, a paragraph break every 10.
func longDoc(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		sep := " "
		if i%10 == 9 {
			sep = "\n\n"
		}
		fmt.Fprintf(&b, "Sentence %05d is one of many in this long text.%s", i, sep)
	}
	return b.String()[:n]
}

// counted is a fake engine that counts its calls in flight.
type counted struct {
	*fake.Engine
	f inflight
}

func (e *counted) Translate(ctx context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	e.f.enter()
	defer e.f.leave()
	return e.Engine.Translate(ctx, r)
}

func upper(text string, _, _ languageTagT) string { return strings.ToUpper(text) }

// longRun translates longDoc(chars) in virtual time on one engine that takes 100 ms per
// call, with the given Profile and options, and returns the Result, the time it took, the
// engine's calls and the most calls in flight at once.
func longRun(t *testing.T, chars int, p translate.Profile, opts ...translate.Option) (res *translate.Result, took time.Duration, calls, peak int) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		eng := &counted{Engine: fake.New("e", fake.WithLatency(100*time.Millisecond), fake.WithTranslator(upper))}
		f := &eng.f
		c := newClient(t, append([]translate.Option{translate.WithEngine(eng, p)}, opts...)...)
		doc := longDoc(chars)
		t0 := time.Now()
		var err error
		res, err = c.Translate(context.Background(), req(doc))
		took = time.Since(t0)
		if err != nil {
			t.Fatalf("Translate of %d characters: %v", chars, err)
		}
		if res.Text != strings.ToUpper(doc) {
			t.Errorf("Translate of %d characters: text is not the stitched translation", chars)
		}
		synctest.Wait()
		calls, peak = eng.Calls(), int(f.peak.Load())
	})
	return res, took, calls, peak
}

// Issue 20 item 1: 20,000 characters on an engine with MaxChars 500 and 100 ms per call
// take at most 1.0 s (4.9 s one call at a time), 40,000 well inside the default 8 s
// deadline; the segments run WithBatchConcurrency (8 by default) at a time.
func TestLongTextRunsSegmentsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		chars   int
		maxTook time.Duration
	}{{20_000, time.Second}, {40_000, 2 * time.Second}} {
		res, took, calls, peak := longRun(t, tc.chars, translate.Profile{MaxChars: 500})
		t.Logf("%d characters: %v, %d calls, %d at once", tc.chars, took, calls, peak)
		if took > tc.maxTook {
			t.Errorf("%d characters took %v, want at most %v", tc.chars, took, tc.maxTook)
		}
		if calls < tc.chars/500 || calls > tc.chars/500*5/4 {
			t.Errorf("%d characters: %d calls, want about %d", tc.chars, calls, tc.chars/500)
		}
		if peak != 8 {
			t.Errorf("%d characters: %d calls at once, want 8 (WithBatchConcurrency's default)", tc.chars, peak)
		}
		if res.Engine != "e" || len(res.Attempts) != calls {
			t.Errorf("%d characters: Engine %q, %d attempts for %d calls", tc.chars, res.Engine, len(res.Attempts), calls)
		}
	}
}

// The caller's bound holds: WithBatchConcurrency(3) makes at most 3 calls at once; 1 makes
// them one at a time.
func TestLongTextConcurrencyBound(t *testing.T) {
	for _, conc := range []int{1, 3} {
		_, _, calls, peak := longRun(t, 10_000, translate.Profile{MaxChars: 500}, translate.WithBatchConcurrency(conc))
		if peak != conc || calls < 20 {
			t.Errorf("WithBatchConcurrency(%d): %d calls, %d at once", conc, calls, peak)
		}
	}
}

// An engine that takes several texts per call gets the segments packed: 20,000 characters
// with MaxTextChars 500 and MaxTexts 50 are one call of 40 or so texts.
func TestLongTextPacksSegments(t *testing.T) {
	_, took, calls, _ := longRun(t, 20_000, translate.Profile{MaxTextChars: 500, MaxTexts: 50})
	if calls != 1 || took > 150*time.Millisecond {
		t.Errorf("MaxTextChars 500, MaxTexts 50: %d calls in %v, want 1 call", calls, took)
	}
	// MaxChars still caps each call: 4 calls of at most 5,000 characters, at once.
	_, took, calls, _ = longRun(t, 20_000, translate.Profile{MaxChars: 5000, MaxTextChars: 500, MaxTexts: 50})
	if calls < 4 || calls > 5 || took > 150*time.Millisecond {
		t.Errorf("MaxChars 5000, MaxTextChars 500, MaxTexts 50: %d calls in %v, want 4 or 5 at once", calls, took)
	}
}

// Every call carries at most MaxTexts texts of at most MaxTextChars characters each, and
// at most MaxChars in all.
func TestLongTextCallsKeepTheLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var bad []string
		eng := fake.New("e", fake.WithTranslator(upper), fake.WithHook(func(_ context.Context, r *translate.EngineRequest) error {
			sum := 0
			for _, s := range r.Texts {
				n := utf8.RuneCountInString(s)
				sum += n
				if n > 300 {
					bad = append(bad, fmt.Sprintf("text of %d", n))
				}
			}
			if len(r.Texts) > 7 || sum > 2000 {
				bad = append(bad, fmt.Sprintf("%d texts, %d characters", len(r.Texts), sum))
			}
			return nil
		}))
		c := newClient(t, translate.WithEngine(eng, translate.Profile{MaxChars: 2000, MaxTextChars: 300, MaxTexts: 7}),
			translate.WithBatchConcurrency(1)) // one call at a time: bad needs no lock
		doc := longDoc(30_000)
		res, err := c.Translate(context.Background(), req(doc))
		if err != nil || res.Text != strings.ToUpper(doc) {
			t.Fatalf("Translate: %v", err)
		}
		if diff := cmp.Diff([]string(nil), bad); diff != "" {
			t.Errorf("calls over the limits (-want +got):\n%s", diff)
		}
	})
}

// When the engine fails mid-way, the units left fail over and follow the engine that
// answered: a's first calls, then b's; the Result names both. Only the units in flight when
// a went down fail on it: the next ones start on b.
func TestLongTextFailsOverMidWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := fake.New("a", fake.WithLatency(100*time.Millisecond), fake.WithTranslator(upper))
		b := fake.New("b", fake.WithLatency(100*time.Millisecond), fake.WithTranslator(upper))
		c := newClient(t, sharp,
			translate.WithEngine(a, translate.Profile{Quality: 100, MaxChars: 500}),
			translate.WithEngine(b, translate.Profile{Quality: 1, MaxChars: 500}))
		doc := longDoc(20_000)
		go func() {
			time.Sleep(250 * time.Millisecond) // a answers its first rounds, then fails
			a.Down(translate.KindUnavailable)
		}()
		res, err := c.Translate(context.Background(), req(doc))
		if err != nil {
			t.Fatalf("Translate: %v", err)
		}
		if res.Text != strings.ToUpper(doc) || res.Engine != "a+b" {
			t.Errorf("Engine %q; text right: %v", res.Engine, res.Text == strings.ToUpper(doc))
		}
		failed := 0
		for _, at := range res.Attempts {
			if at.Engine == "a" && at.Err != nil {
				failed++
			}
		}
		if failed == 0 || failed > 8 {
			t.Errorf("%d failed calls on a, want 1 to 8 (the units in flight when it went down)", failed)
		}
	})
}

// deeplProfile is the bundled DeepL adapter's Profile.
func deeplProfile(t testing.TB) translate.Profile {
	e, err := deepl.New("key")
	if err != nil {
		t.Fatal(err)
	}
	return e.Profile()
}

// Issue 16 item 14: a stream of 1 MiB of "x\n\n\n" (262,144 paragraphs) was 262k segments,
// 223k engine calls and 579 MB allocated. Short paragraphs merge into segments of up to
// 1,000 code points: at most 1,100 segments and calls (one per 1,000 code points, and a
// few), and at most 12 bytes allocated per input byte, with the bundled DeepL Profile, with
// the defaults and with the cache off (every segment a call).
func TestStreamTinyParagraphsMerge(t *testing.T) {
	const maxAllocPerByte = 12
	for _, opts := range [][]translate.Option{nil, {translate.WithoutCache()}} {
		eng := fake.New("deepl")
		c, err := translate.New(append(opts, translate.WithEngine(eng, deeplProfile(t)))...)
		if err != nil {
			t.Fatal(err)
		}
		doc := strings.Repeat("x\n\n\n", 1<<20/4)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		segments := 0
		for ch, err := range c.TranslateStream(context.Background(), req(doc)) {
			if err != nil {
				t.Fatal(err)
			}
			if !ch.Partial {
				segments++
			}
		}
		runtime.ReadMemStats(&after)
		c.Close()
		perByte := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(doc))
		t.Logf("%d options: %d bytes, %d segments, %d engine calls, %.1f bytes allocated per input byte",
			len(opts), len(doc), segments, eng.Calls(), perByte)
		if eng.Calls() > 1100 || segments > 1100 {
			t.Errorf("%d segments, %d engine calls, want at most 1,100", segments, eng.Calls())
		}
		if perByte > maxAllocPerByte {
			t.Errorf("%.1f bytes allocated per input byte, want at most %d", perByte, maxAllocPerByte)
		}
	}
}

// Stream chunks never exceed the engine's per-call limit: a paragraph of 3,000 code points
// on an engine with MaxChars 500 comes as 6 or more segments, each one call of at most 500.
func TestStreamChunksFitOneCall(t *testing.T) {
	eng := fake.New("e", fake.WithTranslator(upper))
	c := newClient(t, translate.WithEngine(eng, translate.Profile{MaxChars: 500}))
	doc := strings.ReplaceAll(longDoc(3000), "\n\n", " ")
	chs, err := collect(c.TranslateStream(context.Background(), req(doc)))
	if err != nil {
		t.Fatal(err)
	}
	if got := joined(chs); got != strings.ToUpper(doc) {
		t.Errorf("joined chunks are not the translation")
	}
	f := finals(chs)
	if len(f) < 6 || eng.Calls() != len(f) {
		t.Errorf("%d segments in %d calls, want 6 or more, one call each", len(f), eng.Calls())
	}
	for _, r := range eng.Requests() {
		for _, s := range r.Texts {
			if n := utf8.RuneCountInString(s); n > 500 {
				t.Errorf("a call of %d code points, want at most 500", n)
			}
		}
	}
}

// BenchmarkLongText is issue 20's long text in real time: 20,000 (and 40,000) characters
// on an engine with MaxChars 500 that takes 100 ms per call, defaults otherwise (cache off
// so that every iteration calls the engine). ms/op is the time of one Translate.
func BenchmarkLongText(b *testing.B) {
	for _, chars := range []int{20_000, 40_000} {
		b.Run(fmt.Sprintf("chars=%d", chars), func(b *testing.B) {
			c, err := translate.New(translate.WithSeed(1), translate.WithoutCache(),
				translate.WithEngine(benchEngine(100*time.Millisecond), translate.Profile{MaxChars: 500}))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			doc := longDoc(chars)
			var total time.Duration
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				if _, err := c.Translate(context.Background(), req(doc)); err != nil {
					b.Fatal(err)
				}
				total += time.Since(t0)
			}
			b.ReportMetric(total.Seconds()*1e3/float64(b.N), "ms/op")
		})
	}
}

// TestLongTextBoundsTheCalls: an engine that would need more than 10,000 calls for a text
// (MaxChars 1 cut a 1 MiB text into a million units: 400 MB, 1.8 s) is skipped as too
// long for it, and the text goes to an engine that takes it; 10,000 calls are still made.
func TestLongTextBoundsTheCalls(t *testing.T) {
	tiny, whole := fake.New("tiny"), fake.New("whole")
	c := newClient(t, sharp, translate.WithEngine(tiny, translate.Profile{Quality: 100, MaxChars: 2}),
		translate.WithEngine(whole, translate.Profile{Quality: 1}))
	text := strings.Repeat("ab", 10_001) // 20,002 characters: 10,001 calls of 2
	res, err := c.Translate(context.Background(), translate.Request{Text: text, Source: "en", Target: "es"})
	if err != nil || res.Engine != "whole" || tiny.Calls() != 0 {
		t.Fatalf("%d characters: %v after %d calls of tiny; want whole's answer", len(text), err, tiny.Calls())
	}
	if got := kinds(res.Attempts); !cmp.Equal(got, []string{"text_too_long", "ok"}) {
		t.Errorf("attempts %v, want tiny skipped as too long, then whole", got)
	}
	res, err = c.Translate(context.Background(), translate.Request{Text: text[2:], Source: "en", Target: "es"})
	if err != nil || res.Engine != "tiny" || tiny.Calls() != 10_000 {
		t.Errorf("%d characters: %v after %d calls of tiny; want tiny's, in 10,000 calls", len(text)-2, err, tiny.Calls())
	}
}
