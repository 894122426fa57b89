package drill

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fanyi-go/translate"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// short is the configuration of the short drills: 200 requests per second for 3s with the
// fault at 1s, latencies scaled down tenfold (5 to 80ms) and the attempt timeout with them,
// so that the 5s engine of SlowEngine still times out and costs a caller 250ms, ten times
// the healthy p99.
func short(s Scenario) Config {
	return Config{Scenario: s, Rate: 200, Duration: 3 * time.Second, At: time.Second,
		LatencyScale: 0.1, Timeout: 250 * time.Millisecond, Deadline: 2 * time.Second}
}

// TestScenarios plays each scenario for 3s of real time and holds it to CountVerdict: the
// checks that machine load cannot move (the wall-clock ones, p99 and drain time, are logged
// but not judged: on a busy 2-core machine they failed runs that were correct).
func TestScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("plays 12s of real-time load")
	}
	for _, s := range Scenarios {
		t.Run(s.String(), func(t *testing.T) {
			r, err := Run(context.Background(), short(s))
			if err != nil {
				t.Fatal(err)
			}
			checkRun(t, r)
			checkChart(t, r)
			if s == QuotaOut {
				checkBudgetPressed(t, r)
			}
		})
	}
}

// checkRun holds a run to CountVerdict, and checks that every request started and the
// fault was injected.
func checkRun(t *testing.T, r *Report) {
	t.Helper()
	ok, lines := CountVerdict(r)
	t.Logf("verdict:\n%s", strings.Join(lines, "\n"))
	if !ok {
		var table strings.Builder
		WriteTable(&table, r)
		t.Errorf("verdict failed:\n%s\n\n%s", strings.Join(lines, "\n"), table.String())
	}
	if want := int(r.Config.Rate * r.Config.Duration.Seconds()); len(r.Requests) != want {
		t.Errorf("%d requests started, want %d", len(r.Requests), want)
	}
	if r.Target == "" {
		t.Fatal("no fault injected")
	}
}

// checkChart: the chart of a run has one share path per engine and, except in QuotaOut,
// shades the breaker of the engine at fault open.
func checkChart(t *testing.T, r *Report) {
	t.Helper()
	var svg bytes.Buffer
	if err := WriteSVG(&svg, r); err != nil {
		t.Fatal(err)
	}
	paths, opened := checkSVG(t, svg.Bytes())
	for _, e := range r.Engines {
		if paths[e.Name] != 1 {
			t.Errorf("chart has %d share paths for %s, want 1", paths[e.Name], e.Name)
		}
	}
	if r.Config.Scenario != QuotaOut && opened[r.Target] == 0 {
		t.Errorf("chart shades no breaker-open interval for %s; transitions: %v", r.Target, r.Transitions)
	}
}

// checkBudgetPressed: the engines billed at least 90% of QuotaOut's budget, or "the budget
// holds" proves nothing.
func checkBudgetPressed(t *testing.T, r *Report) {
	t.Helper()
	billed := 0.0
	for _, c := range r.Calls {
		if c.OK {
			billed += float64(c.Chars) * r.Engines[r.engineIndex(c.Engine)].Profile.CostPerMillion / 1e6
		}
	}
	if billed < 0.9*r.Budget {
		t.Errorf("engines billed %.6f of a budget of %.6f: the drill never pressed on the budget", billed, r.Budget)
	}
}

// checkSVG decodes a chart as XML and counts the share paths and breaker-open rectangles by
// engine.
func checkSVG(t *testing.T, data []byte) (paths, opened map[string]int) {
	t.Helper()
	paths, opened = map[string]int{}, map[string]int{}
	d := xml.NewDecoder(bytes.NewReader(data))
	root := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("chart is not well-formed XML: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = el.Name.Local
		}
		attr := map[string]string{}
		for _, a := range el.Attr {
			attr[a.Name.Local] = a.Value
		}
		switch {
		case el.Name.Local == "path" && attr["class"] == "share":
			paths[attr["data-engine"]]++
			if !strings.HasPrefix(attr["d"], "M") {
				t.Errorf("share path of %s is empty", attr["data-engine"])
			}
		case el.Name.Local == "rect" && attr["class"] == "breaker-open":
			opened[attr["data-engine"]]++
		}
	}
	if root != "svg" {
		t.Fatalf("chart's root element is %q, want svg", root)
	}
	return paths, opened
}

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	for _, tc := range []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 0.99, 0},
		{ms(5), 0.5, 5 * time.Millisecond},
		{ms(4, 1, 3, 2), 0.5, 2 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.99, 10 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.9, 9 * time.Millisecond},
	} {
		if got := Percentile(tc.in, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.in, tc.p, got, tc.want)
		}
	}
}

// synthetic builds a report by hand: healthy traffic of 100 requests a second on two
// engines, each request one call of 100ms (200ms on "b" after the fault when slow is set).
func synthetic(s Scenario, slow bool) *Report {
	r := &Report{
		Config:  Config{Scenario: s, Rate: 100, Duration: 4 * time.Second, Timeout: time.Second},
		Engines: []EngineInfo{{Name: "a", Profile: translate.Profile{CostPerMillion: 10}}, {Name: "b", Profile: translate.Profile{Class: translate.ClassFree}}},
		Target:  "b", FaultAt: time.Second, End: 4 * time.Second, Budget: 1,
	}
	for i := range 400 {
		start := time.Duration(i) * 10 * time.Millisecond
		lat := 100 * time.Millisecond
		if slow && start >= r.FaultAt {
			lat = 200 * time.Millisecond
		}
		engine := "a"
		if i%2 == 0 && start < r.FaultAt {
			engine = "b"
		}
		r.Requests = append(r.Requests, Request{Start: start, Latency: lat, OK: true, Engine: engine, Tried: []string{engine}})
		r.Calls = append(r.Calls, Call{Engine: engine, Start: start, End: start + lat, OK: true, Chars: 10})
	}
	return r
}

func TestVerdictKill(t *testing.T) {
	r := synthetic(KillTop, false)
	r.Transitions = []Transition{{At: 1100 * time.Millisecond, Engine: "b", From: translate.BreakerClosed, To: translate.BreakerOpen}}
	if ok, lines := Verdict(r); !ok {
		t.Fatalf("clean failover judged a failure:\n%s", strings.Join(lines, "\n"))
	}

	// A half-open trial call later on is the breaker probing, not routed traffic.
	trial := synthetic(KillTop, false)
	trial.Transitions = append(r.Transitions,
		Transition{At: 3 * time.Second, Engine: "b", From: translate.BreakerOpen, To: translate.BreakerHalfOpen},
		Transition{At: 3200 * time.Millisecond, Engine: "b", From: translate.BreakerHalfOpen, To: translate.BreakerOpen})
	trial.Calls = append(trial.Calls, Call{Engine: "b", Start: 3001 * time.Millisecond, End: 3100 * time.Millisecond, Err: translate.KindUnavailable})
	if ok, lines := Verdict(trial); !ok {
		t.Errorf("a half-open trial judged as routed traffic:\n%s", strings.Join(lines, "\n"))
	}

	// A call routed while the breaker is closed, more than 1s after the kill, fails it.
	late := synthetic(KillTop, false)
	late.Calls = append(late.Calls, Call{Engine: "b", Start: 2100 * time.Millisecond, End: 2200 * time.Millisecond, Err: translate.KindUnavailable})
	if ok, _ := Verdict(late); ok {
		t.Error("traffic 1.1s after the kill judged a success")
	}

	failed := synthetic(KillTop, false)
	failed.Requests[300] = Request{Start: 3 * time.Second, Latency: time.Second, Err: translate.KindNoEngine}
	if ok, _ := Verdict(failed); ok {
		t.Error("a failed request judged a success")
	}
	if ok, _ := CountVerdict(failed); ok {
		t.Error("CountVerdict: a failed request judged a success")
	}

	// The drain time is wall-clock: CountVerdict shows it and does not judge it. Here the
	// breaker opens 1.05s after the kill, and a call routed just before counts as late.
	slowDrain := synthetic(KillTop, false)
	slowDrain.Transitions = []Transition{{At: 2050 * time.Millisecond, Engine: "b", From: translate.BreakerClosed, To: translate.BreakerOpen}}
	slowDrain.Calls = append(slowDrain.Calls, Call{Engine: "b", Start: 2020 * time.Millisecond, End: 2040 * time.Millisecond, Err: translate.KindUnavailable})
	if ok, _ := Verdict(slowDrain); ok {
		t.Error("a call routed 1s after the kill judged a success")
	}
	if ok, lines := CountVerdict(slowDrain); !ok {
		t.Errorf("CountVerdict judged the drain time:\n%s", strings.Join(lines, "\n"))
	} else if lines := strings.Join(lines, "\n"); !strings.Contains(lines, "~ no") {
		t.Errorf("CountVerdict does not show the drain time:\n%s", lines)
	}

	// A request that started with the breaker open and tried the dead engine fails both.
	leak := synthetic(KillTop, false)
	leak.Transitions = r.Transitions
	leak.Requests[250].Tried = []string{"b", "a"}
	for name, judge := range map[string]func(*Report) (bool, []string){"Verdict": Verdict, "CountVerdict": CountVerdict} {
		if ok, _ := judge(leak); ok {
			t.Errorf("%s: a request routed past the open breaker judged a success", name)
		}
	}
}

func TestVerdictLatency(t *testing.T) {
	open := []Transition{{At: 1300 * time.Millisecond, Engine: "b", From: translate.BreakerClosed, To: translate.BreakerOpen}}
	r := synthetic(SlowEngine, false)
	r.Transitions = open
	if ok, lines := Verdict(r); !ok {
		t.Fatalf("flat latency judged a failure:\n%s", strings.Join(lines, "\n"))
	}

	slow := synthetic(ServerErrors, true) // p99 100ms -> 200ms after the fault
	slow.Transitions = open
	if ok, _ := Verdict(slow); ok {
		t.Error("p99 100ms over the baseline judged a success")
	}
	// Latency is wall-clock: a loaded machine slows every request. CountVerdict judges the
	// count behind it instead: nobody routed to the engine once its breaker opened.
	if ok, lines := CountVerdict(slow); !ok {
		t.Errorf("CountVerdict judged p99:\n%s", strings.Join(lines, "\n"))
	}
	leak := synthetic(SlowEngine, false)
	leak.Transitions = open
	leak.Requests[350].Tried = []string{"b", "a"}
	if ok, _ := CountVerdict(leak); ok {
		t.Error("CountVerdict: a request routed past the open breaker judged a success")
	}
	// A request that ran while the breaker half-opened may be its trial call: not a leak.
	trial := synthetic(SlowEngine, false)
	trial.Transitions = append(append([]Transition{}, open...),
		Transition{At: 3500 * time.Millisecond, Engine: "b", From: translate.BreakerOpen, To: translate.BreakerHalfOpen})
	trial.Requests[345].Tried = []string{"b", "a"} // started 3.45s, ended 3.55s
	if ok, lines := CountVerdict(trial); !ok {
		t.Errorf("a half-open trial judged a leak:\n%s", strings.Join(lines, "\n"))
	}

	closed := synthetic(SlowEngine, false) // the breaker never opens
	if ok, _ := Verdict(closed); ok {
		t.Error("a breaker that never opened judged a success")
	}

	failing := synthetic(ServerErrors, false)
	failing.Transitions = open
	failing.Requests[200] = Request{Start: 2 * time.Second, Latency: 100 * time.Millisecond, Err: translate.KindUnavailable}
	if ok, _ := Verdict(failing); ok { // 1 of 400 is 0.25%
		t.Error("0.25% failures judged a success")
	}
}

func TestVerdictQuota(t *testing.T) {
	quotaErr := Call{Engine: "b", Start: 1000 * time.Millisecond, End: 1100 * time.Millisecond, Err: translate.KindQuotaExhausted, Chars: 10}
	out := []Note{{At: 1101 * time.Millisecond, Engine: "b", Message: "engine out: quota exhausted"}}
	r := synthetic(QuotaOut, false)
	r.Calls = append(r.Calls, quotaErr)
	r.Notes = out
	if ok, lines := Verdict(r); !ok {
		t.Fatalf("clean quota failover judged a failure:\n%s", strings.Join(lines, "\n"))
	}
	if ok, lines := CountVerdict(r); !ok {
		t.Fatalf("CountVerdict: clean quota failover judged a failure:\n%s", strings.Join(lines, "\n"))
	}
	leak := synthetic(QuotaOut, false)
	leak.Calls = append(leak.Calls, quotaErr)
	leak.Notes = out
	leak.Requests[150].Tried = []string{"b", "a"} // started at 1.5s
	if ok, _ := CountVerdict(leak); ok {
		t.Error("CountVerdict: a request routed to the engine after it was taken out judged a success")
	}
	noNote := synthetic(QuotaOut, false)
	noNote.Calls = append(noNote.Calls, quotaErr)
	if ok, _ := CountVerdict(noNote); ok {
		t.Error("CountVerdict: a run where the Client never took the engine out judged a success")
	}

	late := synthetic(QuotaOut, false)
	late.Notes = out
	late.Calls = append(late.Calls, quotaErr, Call{Engine: "b", Start: 1200 * time.Millisecond, End: 1300 * time.Millisecond, Err: translate.KindQuotaExhausted})
	if ok, _ := Verdict(late); ok {
		t.Error("a call 100ms after the first quota error judged a success")
	}

	over := synthetic(QuotaOut, false)
	over.Notes = out
	over.Calls = append(over.Calls, quotaErr)
	over.Budget = 0.001 // "a" billed 300 calls x 10 chars x 10/1e6 = 0.03 credits
	if ok, _ := Verdict(over); ok {
		t.Error("billing over the budget judged a success")
	}

	never := synthetic(QuotaOut, false)
	if ok, _ := Verdict(never); ok {
		t.Error("a run without a quota error judged a success")
	}
}

func TestRunStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	cfg := short(KillTop)
	cfg.Duration = 10 * time.Second
	r, err := Run(ctx, cfg)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run = %v, want the context's error", err)
	}
	if r == nil || !r.Interrupted || len(r.Requests) == 0 || len(r.Requests) > 100 {
		t.Fatalf("partial report %+v", r)
	}
	if ok, _ := Verdict(r); ok {
		t.Error("an interrupted run judged a success")
	}
	var svg bytes.Buffer
	if err := WriteSVG(&svg, r); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svg.Bytes())
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Scenario: 5},
		{Scenario: KillTop, Rate: -1},
		{Scenario: KillTop, Duration: time.Second, At: 2 * time.Second},
		{Scenario: QuotaOut, Budget: -1},
	} {
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("Run(%+v) succeeded", cfg)
		}
	}
}

// TestQuotaChart: the budget line is drawn against the left (share) axis and says so, and
// the refusals the budget causes are called expected under the title.
func TestQuotaChart(t *testing.T) {
	r := synthetic(QuotaOut, false)
	r.Calls = append(r.Calls, Call{Engine: "b", Start: 1000 * time.Millisecond, End: 1100 * time.Millisecond, Err: translate.KindQuotaExhausted})
	r.Notes = []Note{{At: 1101 * time.Millisecond, Engine: "b", Message: "engine out: quota exhausted"}}
	for i := range 50 {
		r.Requests[i].Cost = 0.01 // half the budget of 1
	}
	for i := 390; i < 400; i++ {
		r.Requests[i] = Request{Start: r.Requests[i].Start, Latency: time.Millisecond, Err: translate.KindBudgetExceeded}
	}
	if ok, lines := Verdict(r); !ok {
		t.Fatalf("verdict failed:\n%s", strings.Join(lines, "\n"))
	}
	var buf bytes.Buffer
	if err := WriteSVG(&buf, r); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	if !strings.Contains(svg, "10 of 400 requests refused with budget_exceeded: expected") {
		t.Error("the chart does not call the budget refusals expected")
	}
	if !strings.Contains(svg, "budget spent: 50% of 1 credits (left axis)") {
		t.Error("the budget line has no label naming its axis")
	}
	// The line ends at 50% on the share axis: plotB - (plotB-plotT)*0.5.
	m := regexp.MustCompile(`class="budget"[^>]* d="([^"]*)"`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatal("no budget path")
	}
	pts := strings.Fields(m[1])
	wantY := fmt.Sprintf("%.1f", plotB-float64(plotB-plotT)*0.5)
	if got := pts[len(pts)-1]; got != wantY {
		t.Errorf("budget line ends at y=%s, want %s (50%% on the left axis)", got, wantY)
	}

	// Failures of another kind are no longer "expected", and fail the verdict.
	r.Requests[0] = Request{Start: r.Requests[0].Start, Latency: time.Millisecond, Err: translate.KindTimeout}
	if ok, _ := Verdict(r); ok {
		t.Error("a timeout in the quota scenario judged a success")
	}
	buf.Reset()
	if err := WriteSVG(&buf, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "expected") {
		t.Error("a timeout called expected")
	}
}
