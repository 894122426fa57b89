package drill

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
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

// TestScenarios plays each scenario for 3s of real time and holds it to the verdicts of the
// issue. They run one after the other: each measures latency, and a neighbour's load would
// blur it.
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
			ok, lines := Verdict(r)
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
			switch s {
			case KillTop, SlowEngine, ServerErrors:
				// The breaker of the engine at fault opened: the chart shades it.
				if opened[r.Target] == 0 {
					t.Errorf("chart shades no breaker-open interval for %s; transitions: %v", r.Target, r.Transitions)
				}
			case QuotaOut:
				// The budget was under pressure, or "the budget holds" proves nothing.
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
		})
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
		r.Requests = append(r.Requests, Request{Start: start, Latency: lat, OK: true, Engine: engine})
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
	r := synthetic(QuotaOut, false)
	r.Calls = append(r.Calls, quotaErr)
	if ok, lines := Verdict(r); !ok {
		t.Fatalf("clean quota failover judged a failure:\n%s", strings.Join(lines, "\n"))
	}

	late := synthetic(QuotaOut, false)
	late.Calls = append(late.Calls, quotaErr, Call{Engine: "b", Start: 1200 * time.Millisecond, End: 1300 * time.Millisecond, Err: translate.KindQuotaExhausted})
	if ok, _ := Verdict(late); ok {
		t.Error("a call 100ms after the first quota error judged a success")
	}

	over := synthetic(QuotaOut, false)
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
