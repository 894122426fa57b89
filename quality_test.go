package translate_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/text/language"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// isJa reports whether a target is Japanese.
func isJa(t language.Tag) bool { b, _ := t.Base(); return b.String() == "ja" }

// shareOf is engine name's share of a request's traffic from src to tgt.
func shareOf(c *translate.Client, name, src, tgt string) float64 {
	return translate.SharesForTest(c, translate.Request{Text: "hello world", Source: src, Target: tgt})[name]
}

// TestBadOutputOnOnePairMovesThatPairOnly: engine a starts echoing its en-ja texts (bad
// output) while it translates en-de well. Within one fold it loses en-ja to b and keeps its
// share of en-de; once it translates en-ja again it regains its share of it.
func TestBadOutputOnOnePairMovesThatPairOnly(t *testing.T) {
	t.Run("en-de 2:1 en-ja, 30 a fold", func(t *testing.T) { testBadOutputOnOnePair(t, 30, []string{"de", "de", "ja"}) })
	// Half of a's calls go bad: were bad output a breaker failure, a's breaker would open
	// (FailureRatio 0.5) and cut en-de too.
	t.Run("en-de 1:1 en-ja, 100 a fold", func(t *testing.T) { testBadOutputOnOnePair(t, 100, []string{"de", "ja"}) })
}

func testBadOutputOnOnePair(t *testing.T, perFold int, targets []string) {
	const fold = 10 * time.Second // RoutingPolicy.HealthEvery's default
	clk := newClock()
	var broken atomic.Bool
	a := fake.New("a", fake.WithTranslator(func(text string, _, tgt language.Tag) string {
		if broken.Load() && isJa(tgt) {
			return text // an echo: KindBadOutput
		}
		return "[" + tgt.String() + "] " + text
	}))
	b := fake.New("b")
	c := newClient(t, translate.WithClock(clk),
		translate.WithEngine(a, translate.Profile{Quality: 80}), translate.WithEngine(b, translate.Profile{Quality: 80}))
	n := 0
	round := func() (aJa, aDe int) { // perFold requests over targets, then a fold
		t.Helper()
		served := map[string]int{}
		for i := range perFold {
			tgt := targets[i%len(targets)]
			n++
			res, err := c.Translate(context.Background(), translate.Request{Text: fmt.Sprint("hello world ", n), Source: "en", Target: tgt})
			if err != nil {
				t.Fatalf("request %d: %v", n, err)
			}
			served[res.Engine+"-"+tgt]++
		}
		clk.Advance(fold)
		c.Engines() // folds
		return served["a-ja"], served["a-de"]
	}
	round()
	// a and b differ only by their measured latencies (microseconds): 0.5 to within 1e-3.
	deBefore, jaBefore := shareOf(c, "a", "en", "de"), shareOf(c, "a", "en", "ja")
	if math.Abs(deBefore-0.5) > 1e-3 || math.Abs(jaBefore-0.5) > 1e-3 {
		t.Fatalf("a's shares before: en-de %.6f, en-ja %.6f; want 0.5 each", deBefore, jaBefore)
	}

	broken.Store(true)
	round() // a's en-ja answers are echoes and fail over to b; the fold marks the pair down
	de, ja := shareOf(c, "a", "en", "de"), shareOf(c, "a", "en", "ja")
	t.Logf("after one fold of bad en-ja output: a's share en-de %.6f, en-ja %.6f", de, ja)
	if math.Abs(de-deBefore) > 1e-3 {
		t.Errorf("a's en-de share %.6f, want %.6f as before: bad en-ja output must not move en-de", de, deBefore)
	}
	if ja > 1e-3 {
		t.Errorf("a's en-ja share %.6f one fold after its output went bad, want below 0.001", ja)
	}
	aJa, aDe := round()
	deRequests := perFold * strings.Count(strings.Join(targets, ","), "de") / len(targets)
	if aJa != 0 || aDe < deRequests/4 {
		t.Errorf("the next fold a served %d en-ja and %d en-de requests of %d en-de, want 0 and about half", aJa, aDe, deRequests)
	}

	broken.Store(false)
	var shares []float64
	for range 8 {
		round()
		shares = append(shares, shareOf(c, "a", "en", "ja"))
	}
	t.Logf("a's en-ja share by fold after it recovered: %.3f", shares)
	if shares[2] < 0.45 {
		t.Errorf("a's en-ja share %.3f three folds after it recovered, want at least 0.45", shares[2])
	}
	if math.Abs(shares[7]-0.5) > 1e-3 {
		t.Errorf("a's en-ja share %.6f eight folds after it recovered, want 0.5 as before", shares[7])
	}
}

// TestKnownAnswerProbeMarksThePairDownAtOnce: a known-answer probe of en-ja that comes back
// without Japanese script marks a's en-ja down at once (no fold), while its en-de stays;
// a passing probe lifts the mark.
func TestKnownAnswerProbeMarksThePairDownAtOnce(t *testing.T) {
	clk := newClock()
	var latin atomic.Bool
	a := fake.New("a", fake.WithTranslator(func(text string, _, tgt language.Tag) string {
		if isJa(tgt) && !latin.Load() {
			return "翻訳 " + text
		}
		return "[" + tgt.String() + "] " + text // passes the request checks, but not in Japanese script
	}))
	b := fake.New("b", fake.WithTranslator(func(text string, _, tgt language.Tag) string {
		if isJa(tgt) {
			return "翻訳 " + text
		}
		return "[" + tgt.String() + "] " + text
	}))
	c := newClient(t, translate.WithClock(translate.ManualProbesForTest(clk)),
		translate.WithProbes(translate.ProbePolicy{}),
		translate.WithEngine(a, translate.Profile{Quality: 80}), translate.WithEngine(b, translate.Profile{Quality: 80}))
	for i := range 10 { // en-ja carries traffic
		if _, err := c.Translate(context.Background(), translate.Request{Text: fmt.Sprint("hello world ", i), Source: "en", Target: "ja"}); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(10 * time.Second)
	c.Engines() // folds: the pairs that carried traffic are the probes'

	latin.Store(true)
	translate.ProbeRoundForTest(c)
	got := []float64{shareOf(c, "a", "en", "ja"), shareOf(c, "a", "en", "de")}
	// The pair down: a thousandth of its weight; 0.2% apart for the measured latencies.
	want := []float64{1e-3 / (1 + 1e-3), 0.5}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0.002, 0)); diff != "" {
		t.Errorf("a's shares of en-ja and en-de after a failed probe (-want +got):\n%s", diff)
	}
	latin.Store(false)
	translate.ProbeRoundForTest(c)
	if got := shareOf(c, "a", "en", "ja"); math.Abs(got-0.5) > 1e-3 {
		t.Errorf("a's en-ja share %.6f after a passing probe, want 0.5", got)
	}
}
