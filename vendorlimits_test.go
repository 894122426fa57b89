package translate_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
)

// limitsEngine answers every call, reporting the vendor limits set with report on the next
// answer only (later answers report nothing).
type limitsEngine struct {
	name  string
	mu    sync.Mutex
	next  *translate.VendorLimits
	calls int
}

func (e *limitsEngine) Name() string { return e.name }

func (e *limitsEngine) Translate(_ context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	out := &translate.EngineResult{Limits: e.next}
	e.next = nil
	for _, t := range req.Texts {
		out.Texts = append(out.Texts, e.name+":"+t)
	}
	return out, nil
}

func (e *limitsEngine) report(l translate.VendorLimits) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.next = &l
}

// limitStep advances the clock, then sends one request and names the engine expected to
// serve it.
type limitStep struct {
	advance time.Duration
	want    string
}

// TestVendorLimits: a vendor's report of its remaining requests or tokens keeps its engine
// out, or resting, until the window resets; the other engine serves meanwhile. Garbage is
// ignored.
func TestVendorLimits(t *testing.T) {
	for _, tc := range vendorLimitCases {
		t.Run(tc.name, func(t *testing.T) { testVendorLimits(t, tc) })
	}
}

// testVendorLimits: the preferred engine "vendor" serves a first request, reports
// tc.limits with its second answer, and then serves or rests as tc.steps say.
func testVendorLimits(t *testing.T, tc vendorLimitCase) {
	clk := newClock()
	vendor, other := &limitsEngine{name: "vendor"}, &limitsEngine{name: "other"}
	c := newClient(t, translate.WithClock(clk), sharp,
		translate.WithEngine(vendor, primary), translate.WithEngine(other, secondary))
	if got := servedBy(t, c, req("first")); got != "vendor" {
		t.Fatalf("first request served by %s, want vendor (the preferred engine)", got)
	}
	vendor.report(tc.limits)
	servedBy(t, c, req("report")) // the vendor answers with its limits
	var got, want []string
	for i, s := range tc.steps {
		clk.Advance(s.advance)
		got = append(got, servedBy(t, c, req("after "+string(rune('a'+i)))))
		want = append(want, s.want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("engines serving after the report (-want +got):\n%s", diff)
	}
}

// notReported is a remaining count the vendor did not report.
const notReported = -1

// vendorLimitCase is what a vendor reports and which engine serves at each step after.
type vendorLimitCase struct {
	name   string
	limits translate.VendorLimits
	steps  []limitStep
}

var vendorLimitCases = []vendorLimitCase{
	{"no requests left: out until the reset",
		translate.VendorLimits{RemainingRequests: 0, RemainingTokens: notReported, ResetRequests: 30 * time.Second},
		[]limitStep{{0, "other"}, {29 * time.Second, "other"}, {time.Second, "vendor"}}},
	{"no tokens left: out until the tokens reset",
		translate.VendorLimits{RemainingRequests: 100, RemainingTokens: 0, ResetRequests: time.Second, ResetTokens: 20 * time.Second},
		[]limitStep{{0, "other"}, {19 * time.Second, "other"}, {time.Second, "vendor"}}},
	{"both windows: the later reset",
		translate.VendorLimits{RemainingRequests: 0, RemainingTokens: 0, ResetRequests: 5 * time.Second, ResetTokens: 20 * time.Second},
		[]limitStep{{0, "other"}, {10 * time.Second, "other"}, {10 * time.Second, "vendor"}}},
	{"few requests left: spread over the window (40s / (3+1))",
		translate.VendorLimits{RemainingRequests: 3, RemainingTokens: notReported, ResetRequests: 40 * time.Second},
		[]limitStep{{0, "other"}, {9 * time.Second, "other"}, {time.Second, "vendor"}}},
	{"one request left: half the window",
		translate.VendorLimits{RemainingRequests: 1, RemainingTokens: notReported, ResetRequests: 10 * time.Second},
		[]limitStep{{0, "other"}, {4 * time.Second, "other"}, {time.Second, "vendor"}}},
	{"plenty left: no rest",
		translate.VendorLimits{RemainingRequests: 6, RemainingTokens: 10, ResetRequests: time.Minute, ResetTokens: time.Minute},
		[]limitStep{{0, "vendor"}}},
	{"an absurd reset counts as 5 minutes",
		translate.VendorLimits{RemainingRequests: 0, RemainingTokens: notReported, ResetRequests: 1000 * time.Hour},
		[]limitStep{{0, "other"}, {5*time.Minute - time.Second, "other"}, {time.Second, "vendor"}}},
	{"garbage: negative remaining",
		translate.VendorLimits{RemainingRequests: -5, RemainingTokens: -7, ResetRequests: time.Minute, ResetTokens: time.Minute},
		[]limitStep{{0, "vendor"}}},
	{"remaining not reported, resets reported",
		translate.VendorLimits{RemainingRequests: notReported, RemainingTokens: notReported, ResetRequests: time.Minute, ResetTokens: time.Minute},
		[]limitStep{{0, "vendor"}}},
	{"garbage: negative reset",
		translate.VendorLimits{RemainingRequests: 0, RemainingTokens: 0, ResetRequests: -time.Minute, ResetTokens: -time.Second},
		[]limitStep{{0, "vendor"}}},
	{"unknown reset",
		translate.VendorLimits{RemainingRequests: 0, RemainingTokens: 0},
		[]limitStep{{0, "vendor"}}},
	{"nothing reported",
		translate.VendorLimits{RemainingRequests: notReported, RemainingTokens: notReported},
		[]limitStep{{0, "vendor"}}},
}

// TestVendorLimitsWarns: going out on an exhausted window is logged (warn) with the
// engine's name; the only engine being out, requests fail at once without a call.
func TestVendorLimitsWarns(t *testing.T) {
	clk := newClock()
	var log telemetryLog
	vendor := &limitsEngine{name: "vendor"}
	c := newClient(t, translate.WithClock(clk), translate.WithLogger(newWarnLogger(&log)),
		translate.WithEngine(vendor, primary))
	out := translate.VendorLimits{RemainingRequests: 0, RemainingTokens: -1, ResetRequests: 10 * time.Second}
	vendor.report(out)
	if _, err := c.Translate(context.Background(), req("a")); err != nil {
		t.Fatal(err)
	}
	// The only engine is out: the request fails at once, no call.
	if _, err := c.Translate(context.Background(), req("b")); translate.KindOf(err) != translate.KindNoEngine {
		t.Fatalf("request while the only engine is out: %v, want KindNoEngine", err)
	}
	clk.Advance(10 * time.Second)
	vendor.report(out)
	if _, err := c.Translate(context.Background(), req("c")); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), "rate-limit window resets"); n != 2 || !strings.Contains(log.String(), "engine=vendor") {
		t.Errorf("%d warnings naming the engine, want 2 (one per time out):\n%s", n, log.String())
	}
	if vendor.calls != 2 {
		t.Errorf("vendor called %d times, want 2", vendor.calls)
	}
}

// newWarnLogger logs warnings and above as text into w.
func newWarnLogger(w *telemetryLog) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
