package translate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

func TestNewRejectsBadConfigNamingTheField(t *testing.T) {
	e := fake.New("a")
	cases := []struct {
		name  string
		opts  []translate.Option
		field string
	}{
		{"no engines", nil, "WithEngine"},
		{"duplicate names", []translate.Option{translate.WithEngine(e, translate.Profile{}), translate.WithEngine(fake.New("a"), translate.Profile{})}, "duplicate"},
		{"quality", []translate.Option{translate.WithEngine(e, translate.Profile{Quality: 101})}, "Quality"},
		{"negative quality", []translate.Option{translate.WithEngine(e, translate.Profile{Quality: -1})}, "Quality"},
		{"scene quality", []translate.Option{translate.WithEngine(e, translate.Profile{SceneQuality: map[translate.Scene]float64{translate.SceneLegal: 120}})}, "SceneQuality"},
		{"rate", []translate.Option{translate.WithEngine(e, translate.Profile{RateLimit: -1})}, "RateLimit"},
		{"concurrency", []translate.Option{translate.WithEngine(e, translate.Profile{MaxConcurrency: -1})}, "MaxConcurrency"},
		{"quota", []translate.Option{translate.WithEngine(e, translate.Profile{Quota: -5})}, "Quota"},
		{"max chars", []translate.Option{translate.WithEngine(e, translate.Profile{MaxChars: -5})}, "MaxChars"},
		{"timeout", []translate.Option{translate.WithEngine(e, translate.Profile{Timeout: -time.Second})}, "Timeout"},
		{"languages", []translate.Option{translate.WithEngine(e, translate.Profile{Languages: []string{"en", "???"}})}, "Languages"},
		{"weight over 0.5", []translate.Option{translate.WithEngine(e, translate.Profile{}), translate.WithRouting(translate.RoutingPolicy{Weights: translate.Weights{Quality: 0.6, Availability: 0.2, Speed: 0.1, Cost: 0.1}})}, "Weights.Quality"},
		{"cost weight", []translate.Option{translate.WithEngine(e, translate.Profile{}), translate.WithRouting(translate.RoutingPolicy{Weights: translate.Weights{Quality: 0.3, Availability: 0.2, Speed: 0.15, Cost: 0.35}})}, "Weights.Cost"},
		{"weights sum", []translate.Option{translate.WithEngine(e, translate.Profile{}), translate.WithRouting(translate.RoutingPolicy{Weights: translate.Weights{Quality: 0.4, Availability: 0.4}})}, "Weights"},
		{"failure ratio", []translate.Option{translate.WithEngine(e, translate.Profile{}), translate.WithBreaker(translate.BreakerPolicy{FailureRatio: 0.95})}, "FailureRatio"},
		{"failure ratio low", []translate.Option{translate.WithEngine(e, translate.Profile{}), translate.WithBreaker(translate.BreakerPolicy{FailureRatio: 0.1})}, "FailureRatio"},
		{"deadline", []translate.Option{translate.WithEngine(e, translate.Profile{}), translate.WithDeadline(0)}, "WithDeadline"},
		{"budget", []translate.Option{translate.WithEngine(e, translate.Profile{}), translate.WithBudget(translate.Budget{Daily: -1})}, "Budget.Daily"},
		{"cache", []translate.Option{translate.WithEngine(e, translate.Profile{}), translate.WithCache(0, time.Hour)}, "WithCache"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := translate.New(tc.opts...)
			if err == nil {
				c.Close()
				t.Fatal("New accepted the configuration")
			}
			if !strings.Contains(err.Error(), tc.field) || translate.KindOf(err) != translate.KindInvalidInput {
				t.Errorf("err = %v, want KindInvalidInput naming %s", err, tc.field)
			}
		})
	}
}

func TestBadRequestsNeverReachAnEngine(t *testing.T) {
	a := fake.New("a")
	c := newClient(t, translate.WithEngine(a, translate.Profile{}))
	for name, r := range map[string]translate.Request{
		"empty text":      {Target: "es"},
		"blank text":      {Text: "  \n", Target: "es"},
		"no target":       {Text: "hello"},
		"bad target":      {Text: "hello", Target: "español!"},
		"bad source":      {Text: "hello", Source: "xx_yy_zz!", Target: "es"},
		"same language":   {Text: "hello", Source: "en-US", Target: "en-GB"},
		"invalid utf8":    {Text: "hi \xff", Target: "es"},
		"unknown scene":   {Text: "hello", Target: "es", Scene: 42},
		"unknown engine":  {Text: "hello", Target: "es", Engine: "zzz"},
		"unknown style":   {Text: "hello", Target: "es", Style: 9},
		"unknown priorit": {Text: "hello", Target: "es", Priority: 9},
	} {
		_, err := c.Translate(context.Background(), r)
		if translate.KindOf(err) != translate.KindInvalidInput || !errors.Is(err, translate.ErrInvalidInput) {
			t.Errorf("%s: err = %v, want KindInvalidInput", name, err)
		}
	}
	if a.Calls() != 0 {
		t.Errorf("engine called %d times for invalid requests", a.Calls())
	}
}

func TestResultContract(t *testing.T) {
	a := fake.New("a", fake.WithDetected(languageTag("fr")))
	c := newClient(t, translate.WithEngine(a, translate.Profile{CostPerMillion: 200000}))
	res, err := c.Translate(context.Background(), translate.Request{Text: "héllo", Target: "es"})
	if err != nil {
		t.Fatal(err)
	}
	// 5 code points x 200000 / 1e6 = 1 credit.
	want := translate.Result{Text: "[es] héllo", Engine: "a", Source: "fr", Cost: 1}
	got := *res
	got.Latency, got.RequestID, got.Attempts = 0, "", nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if len(res.RequestID) != 32 || len(res.Attempts) != 1 || res.Attempts[0].Err != nil || res.Latency <= 0 {
		t.Errorf("request id %q, attempts %+v, latency %v", res.RequestID, res.Attempts, res.Latency)
	}
	reqs := a.Requests()
	if len(reqs) != 1 || reqs[0].RequestID != res.RequestID || reqs[0].Source != languageTag("und") {
		t.Errorf("engine saw %+v", reqs)
	}
}

func TestQuotaCountsCodePoints(t *testing.T) {
	a, b := fake.New("a"), fake.New("b")
	pa := primary
	pa.Quota = 12
	c := newClient(t, translate.WithClock(newClock()), sharp, translate.WithEngine(a, pa), translate.WithEngine(b, secondary))
	for i, want := range []string{"a", "a", "b"} {
		res, err := c.Translate(context.Background(), req(fmt.Sprint("日本語", i, "x"))) // 5 code points
		if err != nil {
			t.Fatal(err)
		}
		if res.Engine != want {
			t.Errorf("request %d went to %s, want %s", i, res.Engine, want)
		}
	}
	if got := c.Engines()[0].QuotaLeft; got != 2 {
		t.Errorf("QuotaLeft = %d, want 2", got)
	}
}

func TestBudgetNeverExceededUnderConcurrency(t *testing.T) {
	paid, free := fake.New("paid"), fake.New("free")
	// Each 10-character request costs 0.1 credit on paid; the day allows 1.
	c := newClient(t, translate.WithClock(newClock()), sharp, translate.WithBudget(translate.Budget{Daily: 1}),
		translate.WithEngine(paid, translate.Profile{Quality: 100, CostPerMillion: 10000}),
		translate.WithEngine(free, translate.Profile{Quality: 1, Class: translate.ClassFree}))
	var wg sync.WaitGroup
	var mu sync.Mutex
	spent, n := 0.0, 0
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res, err := c.Translate(context.Background(), req(fmt.Sprintf("text %05d", i)))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			spent += res.Cost
			if res.Engine == "paid" {
				n++
			}
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	if spent > 1+1e-9 {
		t.Errorf("spent %.3f of a budget of 1", spent)
	}
	if n > 10 {
		t.Errorf("paid served %d requests; the budget allows 10", n)
	}
}

func TestEconomyModeDropsPremium(t *testing.T) {
	// 10 characters at 100 000 credits per million: 1 credit a call on prem, a budget of 10.
	// Premium serves high priority until 80% (the default EconomyAt) is spent, although its
	// next call would still fit the budget: economy mode, not the budget, leaves it out.
	prem, std := fake.New("prem"), fake.New("std")
	c := newClient(t, translate.WithClock(newClock()), sharp, translate.WithBudget(translate.Budget{Daily: 10}),
		translate.WithEngine(prem, translate.Profile{Quality: 100, Class: translate.ClassPremium, CostPerMillion: 100_000}),
		translate.WithEngine(std, translate.Profile{Quality: 1, CostPerMillion: 100}))
	high := func(i int) translate.Request {
		r := req(fmt.Sprintf("text %05d", i))
		r.Priority = translate.PriorityHigh
		return r
	}
	var got []string
	for i := 0; i < 10; i++ {
		res, err := c.Translate(context.Background(), high(i))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res.Engine)
	}
	want := []string{"prem", "prem", "prem", "prem", "prem", "prem", "prem", "prem", "std", "std"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("engines (-want +got):\n%s", diff)
	}
}

func TestBatchKeepsOrderAndBoundsConcurrency(t *testing.T) {
	var mu sync.Mutex
	inflight, peak := 0, 0
	gate := make(chan struct{})
	a := fake.New("a", fake.WithHook(func(ctx context.Context, _ *translate.EngineRequest) error {
		mu.Lock()
		inflight++
		peak = max(peak, inflight)
		mu.Unlock()
		<-gate
		mu.Lock()
		inflight--
		mu.Unlock()
		return nil
	}))
	c := newClient(t, translate.WithBatchConcurrency(3), translate.WithEngine(a, translate.Profile{}))
	var reqs []translate.Request
	for i := 0; i < 12; i++ {
		reqs = append(reqs, req(fmt.Sprint("item ", i)))
	}
	reqs[5].Target = ""
	go func() {
		for i := 0; i < 11; i++ {
			gate <- struct{}{}
		}
	}()
	out := c.TranslateBatch(context.Background(), reqs)
	for i, br := range out {
		if i == 5 {
			if translate.KindOf(br.Err) != translate.KindInvalidInput {
				t.Errorf("item 5: err = %v, want invalid input", br.Err)
			}
			continue
		}
		if br.Err != nil || br.Result.Text != fmt.Sprint("[es] item ", i) {
			t.Errorf("item %d: %v %v", i, br.Err, br.Result)
		}
	}
	if peak > 3 {
		t.Errorf("peak concurrency %d, want at most 3", peak)
	}
}

func TestCloseIsIdempotentAndRejectsLaterCalls(t *testing.T) {
	c, err := translate.New(translate.WithEngine(fake.New("a"), translate.Profile{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Translate(context.Background(), req("hello")); !errors.Is(err, translate.ErrClosed) {
		t.Errorf("Translate after Close: %v", err)
	}
	if out := c.TranslateBatch(context.Background(), []translate.Request{req("x")}); !errors.Is(out[0].Err, translate.ErrClosed) {
		t.Errorf("TranslateBatch after Close: %v", out[0].Err)
	}
}

func TestHealthFoldMovesEngineToFallbackPoolAndBack(t *testing.T) {
	clk := newClock()
	a, b := fake.New("a"), fake.New("b")
	// Probes run by hand (never here): no recovery probe reaches a (TestRecoveryWithDefaults).
	c := newClient(t, translate.WithClock(translate.ManualProbesForTest(clk)), translate.WithProbes(translate.ProbePolicy{}), sharp, translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		translate.WithBreaker(translate.BreakerPolicy{FailureRatio: 0.9, MinCalls: 40}),
		translate.WithEngine(a, primary), translate.WithEngine(b, secondary))
	a.FailRate(translate.KindUnavailable, 0.5, 3)
	translateN(t, c, 20)
	// Engines() shows the failures at once; the pool moves only at the fold.
	if st := c.Engines()[0]; st.Pool != translate.PoolNormal || st.Health > 0.7 || st.Health < 0.3 {
		t.Fatalf("before the fold: %+v; want the normal pool and health near 0.5 at once", st)
	}
	clk.Advance(10 * time.Second)
	st := c.Engines()[0]
	if st.Pool != translate.PoolFallback || st.Health > 0.7 || st.Health < 0.3 {
		t.Fatalf("after a fold at ~50%% failures: %+v, want the fallback pool", st)
	}
	// In the fallback pool a gets no normal traffic.
	a.Up()
	a.Reset()
	translateN(t, c, 10)
	if a.Calls() != 0 {
		t.Errorf("fallback-pool engine got %d normal calls", a.Calls())
	}
	// Back: as the last resort while b is down, a answers well; two good folds in a row
	// bring it back to the normal pool, not one.
	b.Down(translate.KindUnavailable)
	translateN(t, c, 40)
	clk.Advance(10 * time.Second)
	if st := c.Engines()[0]; st.Pool != translate.PoolFallback {
		t.Fatalf("after one good fold: %+v, want still the fallback pool", st)
	}
	translateN(t, c, 40)
	clk.Advance(10 * time.Second)
	if st := c.Engines()[0]; st.Pool != translate.PoolNormal {
		t.Fatalf("after two good folds: %+v, want the normal pool", st)
	}
}

func TestSegmentsLongTextAndStitches(t *testing.T) {
	// Upper-cases Latin letters and shifts the others by one code point: a change the echo
	// check sees in every segment, and one that does not depend on where the text is cut.
	shift := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case !unicode.IsLetter(r):
				return r
			case r < 128:
				return unicode.ToUpper(r)
			}
			return r + 1
		}, s)
	}
	a := fake.New("a", fake.WithTranslator(func(s string, _, _ languageTagT) string { return shift(s) }))
	c := newClient(t, translate.WithEngine(a, translate.Profile{MaxChars: 20, MaxTexts: 2}))
	text := "First sentence here. Second one is here.\n\nNew paragraph now! 最後の文です。もう一つ。"
	res, err := c.Translate(context.Background(), req(text))
	if err != nil {
		t.Fatal(err)
	}
	if want := shift(text); res.Text != want {
		t.Errorf("text = %q, want %q", res.Text, want)
	}
	for _, r := range a.Requests() {
		if len(r.Texts) > 2 {
			t.Errorf("call with %d texts, MaxTexts is 2", len(r.Texts))
		}
		for _, s := range r.Texts {
			if n := len([]rune(s)); n > 20 {
				t.Errorf("segment %q has %d chars, MaxChars is 20", s, n)
			}
		}
	}
	if len(a.Requests()) < 2 {
		t.Errorf("only %d calls for a text of %d chars", len(a.Requests()), len([]rune(text)))
	}
}

func TestSegmentsFailOverMidway(t *testing.T) {
	a, b := fake.New("a"), fake.New("b")
	a.Script(fake.OK(), fake.Fail(translate.KindUnavailable), fake.Fail(translate.KindUnavailable))
	pa := primary
	pa.MaxChars = 12
	pb := secondary
	pb.MaxChars = 12
	// One call at a time: with several, which segment a's one good answer serves is a race
	// (TestLongTextFailsOverMidWay covers that case).
	c := newClient(t, translate.WithClock(newClock()), sharp, translate.WithEngine(a, pa), translate.WithEngine(b, pb),
		translate.WithBatchConcurrency(1))
	res, err := c.Translate(context.Background(), req("One two. Three four. Five six."))
	if err != nil {
		t.Fatal(err)
	}
	if res.Engine != "a+b" {
		t.Errorf("engine = %q, want a+b", res.Engine)
	}
	if res.Text != "[es] One two. [es] Three four. [es] Five six." {
		t.Errorf("text = %q", res.Text)
	}
}

func TestTextTooLongResegmentsSmaller(t *testing.T) {
	a := fake.New("a")
	a.Script(fake.Fail(translate.KindTextTooLong))
	c := newClient(t, translate.WithClock(newClock()), translate.WithEngine(a, translate.Profile{}))
	src := "Alpha beta gamma. Delta epsilon zeta." // 37 characters
	res, err := c.Translate(context.Background(), req(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.ReplaceAll(res.Text, "[es] ", ""); got != src {
		t.Errorf("stitched text %q does not rebuild the source %q", res.Text, src)
	}
	reqs := a.Requests()
	if len(reqs) < 3 {
		t.Fatalf("%d calls, want the refused one and at least two smaller ones", len(reqs))
	}
	for _, r := range reqs[1:] {
		if n := len([]rune(r.Texts[0])); n > 18 {
			t.Errorf("after TextTooLong a segment of %d chars was sent, want at most half (18)", n)
		}
	}
}

func TestSpentBudgetIsBudgetExceeded(t *testing.T) {
	paid := fake.New("paid")
	c := newClient(t, translate.WithClock(newClock()), translate.WithBudget(translate.Budget{Daily: 0.1}),
		translate.WithEngine(paid, translate.Profile{CostPerMillion: 10000}))
	if _, err := c.Translate(context.Background(), req("text 00001")); err != nil { // 0.1 credit
		t.Fatal(err)
	}
	_, err := c.Translate(context.Background(), req("text 00002"))
	if !errors.Is(err, translate.ErrBudgetExceeded) {
		t.Fatalf("err = %v, want ErrBudgetExceeded", err)
	}
}
