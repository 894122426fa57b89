package translate_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	translate "github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
	"github.com/fanyi-go/translate/engines/deepl"
	"github.com/fanyi-go/translate/engines/fake"
	"github.com/fanyi-go/translate/engines/openai"
)

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// TestQuotaLowMovesTrafficAway: seed 000 §2.2. Of two otherwise equal engines with the same
// quota, the one with 20% or less of its quota left loses traffic smoothly (its weight times
// left/20%) before it runs out.
func TestQuotaLowMovesTrafficAway(t *testing.T) {
	const quota = 10000
	got := map[string]float64{}
	for _, left := range []int{100, 20, 15, 5} {
		a, b := fake.New("a"), fake.New("b")
		p := translate.Profile{Quota: quota}
		c := newClient(t, translate.WithClock(newClock()), translate.WithEngine(a, p), translate.WithEngine(b, p))
		if used := quota * (100 - left) / 100; used > 0 { // spend a's quota with one pinned request
			r := req(strings.Repeat("x", used))
			r.Engine = "a"
			if _, err := c.Translate(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
		got[strings.Repeat(" ", 3-len(itoa(left)))+itoa(left)+"% left"] = round4(translate.SharesForTest(c, req("hello"))["a"])
	}
	want := map[string]float64{"100% left": 0.5, " 20% left": 0.5, " 15% left": round4(0.75 / 1.75), "  5% left": round4(0.25 / 1.25)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a's share (-want +got):\n%s", diff)
	}
}

func itoa(n int) string {
	return strings.TrimSpace(strings.Replace(time.Duration(n).String(), "ns", "", 1))
}

// TestStylePrefersEnginesThatRestyle: seed 000 §2.1. With the bundled profiles and no
// options, a Formal or Casual request moves traffic to the LLM (openai's Profile restyles)
// by styleBonus, 10 score points: its odds against DeepL grow by exp(10/T).
func TestStylePrefersEnginesThatRestyle(t *testing.T) {
	llm, err := openai.New("sk-test", "gpt-test")
	if err != nil {
		t.Fatal(err)
	}
	mt, err := deepl.New("key:fx")
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, translate.WithClock(newClock()),
		translate.WithEngine(fake.New("llm"), llm.Profile()), translate.WithEngine(fake.New("mt"), mt.Profile()))
	share := map[string]float64{}
	for _, st := range []translate.Style{translate.StyleDefault, translate.StyleFormal, translate.StyleCasual} {
		r := req("hello")
		r.Style = st
		share[st.String()] = translate.SharesForTest(c, r)["llm"]
	}
	p0, k := share["default"], math.Exp(10/translate.DefaultTemperature)
	p1 := p0 * k / (p0*k + 1 - p0)
	want := map[string]float64{"default": p0, "formal": p1, "casual": p1}
	if diff := cmp.Diff(want, share, cmpopts.EquateApprox(0, 1e-9)); diff != "" || p1-p0 < 0.05 {
		t.Errorf("the LLM's share by style (-want +got):\n%s\n(default %.4f, formal %.4f)", diff, p0, p1)
	}
	t.Logf("LLM's share: default %.4f, formal and casual %.4f", p0, p1)
}

// peakEngines are a paid engine the router prefers and a free one.
func peakEngines() []translate.Option {
	return []translate.Option{sharp,
		translate.WithEngine(fake.New("paid"), translate.Profile{Quality: 95, CostPerMillion: 20}),
		translate.WithEngine(fake.New("free"), translate.Profile{Quality: 60, Class: translate.ClassFree})}
}

// TestPeakHoursSendNormalRequestsToFreeEngines: seed 000 §2.1. Within a peak window (UTC,
// wrapping past midnight too) normal-priority requests go to the free engine; high-priority
// ones, and everything outside the windows, go by score.
func TestPeakHoursSendNormalRequestsToFreeEngines(t *testing.T) {
	clk := newClock() // 12:00 UTC
	rp := translate.RoutingPolicy{Temperature: 0.5, PeakHours: []translate.Window{{From: 11 * time.Hour, To: 13 * time.Hour}, {From: 22 * time.Hour, To: 6 * time.Hour}}}
	c := newClient(t, append(peakEngines(), translate.WithClock(clk), translate.WithRouting(rp))...)
	got := map[string]string{}
	for _, at := range []struct {
		name    string
		advance time.Duration
	}{{"12:00", 0}, {"13:00", time.Hour}, {"23:00", 10 * time.Hour}, {"05:59", 6*time.Hour + 59*time.Minute}, {"06:00", time.Minute}} {
		clk.Advance(at.advance)
		for _, pr := range []translate.Priority{translate.PriorityNormal, translate.PriorityHigh} {
			r := req("hello at " + at.name)
			r.Priority = pr
			res, err := c.Translate(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			got[at.name+" "+pr.String()] = res.Engine
		}
	}
	want := map[string]string{"12:00 normal": "free", "12:00 high": "paid", "13:00 normal": "paid", "13:00 high": "paid",
		"23:00 normal": "free", "23:00 high": "paid", "05:59 normal": "free", "05:59 high": "paid", "06:00 normal": "paid", "06:00 high": "paid"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("engine by time and priority (-want +got):\n%s", diff)
	}
}

// TestFreeWhenBusy: with FreeWhenBusy, once the paid engine's traffic gate closes (its rate
// past 70% of its SafeRate at a fold), normal requests go to the free engine.
func TestFreeWhenBusy(t *testing.T) {
	clk := newClock()
	rp := translate.RoutingPolicy{Temperature: 0.5, HealthEvery: time.Second, FreeWhenBusy: true}
	c := newClient(t, translate.WithClock(clk), translate.WithRouting(rp),
		translate.WithEngine(fake.New("paid"), translate.Profile{Quality: 95, CostPerMillion: 20, SafeRate: 5}),
		translate.WithEngine(fake.New("free"), translate.Profile{Quality: 60, Class: translate.ClassFree}))
	engineOf := func(text string) string {
		res, err := c.Translate(context.Background(), req(text))
		if err != nil {
			t.Fatal(err)
		}
		return res.Engine
	}
	var got []string
	got = append(got, engineOf("calm"))
	clk.Advance(time.Second)
	for i := range 20 { // 20 requests in a second: 4x the safe rate
		engineOf("busy " + itoa(i))
	}
	clk.Advance(time.Second)
	got = append(got, engineOf("after the fold"))
	if diff := cmp.Diff([]string{"paid", "free"}, got); diff != "" {
		t.Errorf("engines (-want +got):\n%s", diff)
	}
}

// TestPeakHoursRanges: windows are validated against their documented ranges, in code and
// in the configuration file, which reads them too.
func TestPeakHoursRanges(t *testing.T) {
	for _, w := range []translate.Window{{From: 25 * time.Hour}, {To: -time.Second}} {
		_, err := translate.New(translate.WithEngine(fake.New("a"), translate.Profile{}),
			translate.WithRouting(translate.RoutingPolicy{PeakHours: []translate.Window{w}}))
		if translate.KindOf(err) != translate.KindInvalidInput || !strings.Contains(err.Error(), "RoutingPolicy.PeakHours[0].") {
			t.Errorf("window %+v: err = %v, want KindInvalidInput naming the window", w, err)
		}
	}
	all.Register()
	cfg, err := translate.ParseConfig([]byte(`{"engines": [{"name": "a", "type": "fake"}], "routing": {"peak_hours": [{"from": "9h", "to": "11h30m"}], "free_when_busy": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(translate.RoutingPolicy{PeakHours: []translate.Window{{From: 9 * time.Hour, To: 11*time.Hour + 30*time.Minute}}, FreeWhenBusy: true}, cfg.Routing); diff != "" {
		t.Errorf("routing (-want +got):\n%s", diff)
	}
	_, err = translate.ParseConfig([]byte(`{"engines": [{"name": "a", "type": "fake"}], "routing": {"peak_hours": [{"from": "9h", "to": "30h"}]}}`))
	if err == nil || !strings.Contains(err.Error(), "peak_hours") {
		t.Errorf("a window to 30h: err = %v, want one naming peak_hours", err)
	}
}

// TestTelemetrySwitchesAttemptsAndCost: seeds 002 and 003 §8. Switches between engines are
// counted (by the engine left), and each request's engine calls and cost are histograms.
func TestTelemetrySwitchesAttemptsAndCost(t *testing.T) {
	tel, opts := newTelemetry(t)
	a, b := fake.New("a"), fake.New("b")
	a.Script(fake.Fail(translate.KindUnavailable))
	c := newClient(t, append(opts, translate.WithClock(newClock()), sharp,
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		translate.WithEngine(a, primary), translate.WithEngine(b, translate.Profile{Quality: 1, CostPerMillion: 10}))...)
	var engines []string
	for _, text := range []string{"hello", "again"} { // a fails, b answers; then a answers
		res, err := c.Translate(context.Background(), req(text))
		if err != nil {
			t.Fatal(err)
		}
		engines = append(engines, res.Engine)
	}
	ms := tel.metrics(t)
	got := map[string]float64{"switches": values(ms)["translate.switches{engine=a}"]}
	if h, ok := ms["translate.request.attempts"].Data.(metricdata.Histogram[int64]); ok && len(h.DataPoints) == 1 {
		got["attempts.count"], got["attempts.sum"] = float64(h.DataPoints[0].Count), float64(h.DataPoints[0].Sum)
	}
	if h, ok := ms["translate.request.cost"].Data.(metricdata.Histogram[float64]); ok && len(h.DataPoints) == 1 {
		got["cost.count"], got["cost.sum"] = float64(h.DataPoints[0].Count), round4(h.DataPoints[0].Sum*1e6)
	}
	want := map[string]float64{"switches": 1, "attempts.count": 2, "attempts.sum": 3, "cost.count": 2, "cost.sum": 50}
	if diff := cmp.Diff(want, got); diff != "" || engines[0] != "b" || engines[1] != "a" {
		t.Errorf("engines %v; metrics (-want +got; cost in micro-credits):\n%s", engines, diff)
	}
}
