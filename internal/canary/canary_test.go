package canary

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// move is what a test checks of a Step.
type move struct {
	From, To float64
	Reason   string
	At       time.Duration // since t0
}

// baseRatio is how many baseline calls drive records beside each canary call: the canary
// at a 5% share.
const baseRatio = 20

// drive records calls on a and on base every tick, one on the canary and baseRatio on the
// baseline: the canary's outcome from canaryAt(i), the baseline's from baseAt(i) with
// latency baseLat, for n ticks, and returns the steps taken.
func drive(a *Analysis, base *Baseline, n int, tick time.Duration, canaryAt func(int) (Outcome, time.Duration),
	baseAt func(int) Outcome, baseLat time.Duration) []move {
	var out []move
	for i := range n {
		now := t0.Add(time.Duration(i+1) * tick)
		for j := range baseRatio {
			base.Record(uint64(i*baseRatio+j), baseAt(i), baseLat)
		}
		o, lat := canaryAt(i)
		if st, ok := a.Record(o, lat, now); ok {
			out = append(out, move{st.From, st.To, st.Reason.String(), st.At.Sub(t0)})
		}
	}
	return out
}

func good(int) (Outcome, time.Duration) { return OK, 2 * time.Millisecond }
func allOK(int) Outcome                 { return OK }

// every returns an outcome function that gives o on every k-th call and OK otherwise.
func every(k int, o Outcome) func(int) (Outcome, time.Duration) {
	return func(i int) (Outcome, time.Duration) {
		if i%k == k-1 {
			return o, 0
		}
		return OK, 2 * time.Millisecond
	}
}

// TestGoodCanaryRampsToTheEnd: a canary as good as its baseline advances 1 -> 5 -> 20 ->
// 100, each step after MinRequests calls and StepEvery, then is done and counts nothing.
func TestGoodCanaryRampsToTheEnd(t *testing.T) {
	var base Baseline
	a := New(Settings{MinRequests: 50, StepEvery: 10 * time.Second}, &base, 0, t0)
	if got := a.Share(); got != 1 {
		t.Fatalf("start share = %v, want 1 (the first step)", got)
	}
	// One call a second: 50 calls take 50s > StepEvery, so MinRequests decides.
	got := drive(a, &base, 300, time.Second, good, allOK, time.Millisecond)
	want := []move{{1, 5, "healthy", 50 * time.Second}, {5, 20, "healthy", 100 * time.Second}, {20, 100, "healthy", 150 * time.Second}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if a.State() != Done || a.Share() != 100 {
		t.Errorf("after the last step: state %v share %v, want Done at 100", a.State(), a.Share())
	}
}

// TestStepEveryHoldsAStep: with enough calls in less than StepEvery, the canary waits for
// StepEvery and advances at its first call after it.
func TestStepEveryHoldsAStep(t *testing.T) {
	var base Baseline
	a := New(Settings{MinRequests: 10, StepEvery: time.Minute, Steps: []float64{2, 50}}, &base, 0, t0)
	got := drive(a, &base, 200, time.Second, good, allOK, time.Millisecond)
	want := []move{{2, 50, "healthy", 60 * time.Second}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
}

// TestErrorsRollBack: a canary failing 30% of its calls beside a baseline that does not
// fail falls to 0 once its errors exceed what MinRequests calls may hold (5% of 100: at
// the 6th error, its 19th call), and counts nothing after.
func TestErrorsRollBack(t *testing.T) {
	var base Baseline
	a := New(Settings{}, &base, 0, t0) // defaults: 100 calls, 0.05
	// Errors on calls 3, 6, 9, 13, 16, 19...: the sixth error is call 19, at 19s.
	got := drive(a, &base, 500, time.Second, func(i int) (Outcome, time.Duration) {
		if i%10 == 2 || i%10 == 5 || i%10 == 8 {
			return Failed, 0
		}
		return OK, time.Millisecond
	}, allOK, time.Millisecond)
	if d := cmp.Diff([]move{{1, 0, "error_rate", 19 * time.Second}}, got); d != "" {
		t.Fatalf("steps (-want +got):\n%s", d)
	}
	if a.State() != Stopped || a.Share() != 0 {
		t.Errorf("state %v share %v, want Stopped at 0", a.State(), a.Share())
	}
}

// TestErrorsWithinToleranceAdvance: a canary failing as often as its baseline (10%)
// advances.
func TestErrorsWithinToleranceAdvance(t *testing.T) {
	var base Baseline
	a := New(Settings{MinRequests: 100, StepEvery: time.Second, Steps: []float64{1, 100}}, &base, 0, t0)
	got := drive(a, &base, 100, time.Second, every(10, Failed), func(i int) Outcome {
		if i%10 == 0 {
			return Failed
		}
		return OK
	}, time.Millisecond)
	if d := cmp.Diff([]move{{1, 100, "healthy", 100 * time.Second}}, got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
}

// TestBadOutputRollsBack: a canary that echoes every text never fails a call but falls to
// 0 on quality, after a handful of calls.
func TestBadOutputRollsBack(t *testing.T) {
	var base Baseline
	a := New(Settings{}, &base, 0, t0)
	got := drive(a, &base, 500, time.Second, func(int) (Outcome, time.Duration) { return BadOutput, 0 }, allOK, time.Millisecond)
	// 1 - bad/100 < 0.95 at the 6th bad answer.
	if d := cmp.Diff([]move{{1, 0, "quality", 6 * time.Second}}, got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
}

// TestSomeBadOutputRollsBackAtMinRequests: 30% bad answers: out at the quality check.
func TestSomeBadOutputRollsBack(t *testing.T) {
	var base Baseline
	a := New(Settings{}, &base, 0, t0)
	got := drive(a, &base, 500, time.Second, every(3, BadOutput), allOK, time.Millisecond)
	if len(got) != 1 || got[0].Reason != "quality" || got[0].To != 0 || got[0].At > 20*time.Second {
		t.Errorf("steps %+v, want one rollback on quality within 20 calls", got)
	}
}

// TestLatencyRollsBack: a canary three times as slow as its baseline is judged at
// MinRequests and falls to 0; one 1.2 times as slow advances; latencies under the floor
// are not compared.
func TestLatencyRollsBack(t *testing.T) {
	for _, c := range []struct {
		name         string
		canary, base time.Duration
		want         move
	}{
		{"3x", 300 * time.Millisecond, 100 * time.Millisecond, move{1, 0, "latency", 100 * time.Second}},
		{"1.2x", 120 * time.Millisecond, 100 * time.Millisecond, move{1, 5, "healthy", 100 * time.Second}},
		{"under the floor", 5 * time.Millisecond, time.Millisecond, move{1, 5, "healthy", 100 * time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var base Baseline
			a := New(Settings{StepEvery: time.Second}, &base, 0, t0)
			got := drive(a, &base, 100, time.Second, func(int) (Outcome, time.Duration) { return OK, c.canary }, allOK, c.base)
			if d := cmp.Diff([]move{c.want}, got); d != "" {
				t.Errorf("steps (-want +got):\n%s", d)
			}
		})
	}
}

// TestThinBaselineHoldsToNoErrors: with fewer than MinRequests baseline calls in the
// window, the canary is held to no errors (within MaxErrorRateDelta) whatever the few
// baseline calls did.
func TestThinBaselineHoldsToNoErrors(t *testing.T) {
	var base Baseline
	a := New(Settings{MinRequests: 100, StepEvery: time.Second}, &base, 0, t0)
	var got []move
	for i := range 100 {
		if i < 10 {
			base.Record(uint64(i), Failed, 0) // a baseline failing everything, but thin
		}
		o, lat := every(10, Failed)(i) // 10% errors: > 0 + 0.05
		if st, ok := a.Record(o, lat, t0.Add(time.Duration(i+1)*time.Second)); ok {
			got = append(got, move{st.From, st.To, st.Reason.String(), st.At.Sub(t0)})
		}
	}
	if len(got) != 1 || got[0].Reason != "error_rate" {
		t.Errorf("steps %+v, want a rollback on error_rate", got)
	}
}

// TestStartShares: a start between steps goes to the next step above it; a start at the
// last step is done at once.
func TestStartShares(t *testing.T) {
	var base Baseline
	a := New(Settings{MinRequests: 1, StepEvery: time.Nanosecond}, &base, 3, t0)
	st, ok := a.Record(OK, 0, t0.Add(time.Second))
	if !ok || st.From != 3 || st.To != 5 {
		t.Errorf("from 3: step %+v %v, want 3 -> 5", st, ok)
	}
	d := New(Settings{}, &base, 100, t0)
	if d.State() != Done || d.Share() != 100 {
		t.Errorf("from 100: state %v share %v, want Done at 100", d.State(), d.Share())
	}
	if _, ok := d.Record(Failed, 0, t0); ok {
		t.Error("a Done analysis took a step")
	}
}

// TestWindowsAreTheStep's: the baseline's calls before a step began do not count in it.
func TestBaselineWindowStartsWithTheStep(t *testing.T) {
	var base Baseline
	for i := range 1000 {
		base.Record(uint64(i), Failed, 0) // a bad past that must not excuse the canary
	}
	a := New(Settings{MinRequests: 100, StepEvery: time.Second}, &base, 0, t0)
	got := drive(a, &base, 100, time.Second, every(5, Failed), allOK, time.Millisecond)
	if len(got) != 1 || got[0].Reason != "error_rate" {
		t.Errorf("steps %+v, want a rollback on error_rate (20%% errors against a clean window)", got)
	}
}

// TestConcurrentRecords: many goroutines recording at once take each step exactly once.
func TestConcurrentRecords(t *testing.T) {
	var base Baseline
	a := New(Settings{MinRequests: 50, StepEvery: time.Nanosecond}, &base, 0, t0)
	var mu sync.Mutex
	var steps []float64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				base.Record(uint64(g*1000+i), OK, time.Millisecond)
				if st, ok := a.Record(OK, time.Millisecond, t0.Add(time.Duration(i+1)*time.Second)); ok {
					mu.Lock()
					steps = append(steps, st.To)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if d := cmp.Diff([]float64{5, 20, 100}, steps); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
}

func TestReasonString(t *testing.T) {
	got := []string{Healthy.String(), ErrorRate.String(), Quality.String(), Latency.String(), Reason(9).String()}
	want := []string{"healthy", "error_rate", "quality", "latency", "reason(9)"}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}

// BenchmarkBaselineRecordParallel is the cost every call of an engine that is not a canary
// pays while a canary ramps.
func BenchmarkBaselineRecordParallel(b *testing.B) {
	var base Baseline
	b.RunParallel(func(pb *testing.PB) {
		k := uint64(0x9e3779b97f4a7c15)
		for pb.Next() {
			k = k*6364136223846793005 + 1442695040888963407
			base.Record(k>>32, OK, time.Millisecond)
		}
	})
}

// BenchmarkBaselineRecordOneStripe is the plain version BenchmarkBaselineRecordParallel is
// measured against: every call on the same counters (key 0).
func BenchmarkBaselineRecordOneStripe(b *testing.B) {
	var base Baseline
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			base.Record(0, OK, time.Millisecond)
		}
	})
}

// TestStop: Stop rolls a running analysis back to 0 with the counts of its step, once; a
// Done analysis cannot be stopped, and a stopped one records nothing.
func TestStop(t *testing.T) {
	var base Baseline
	a := New(Settings{}, &base, 5, t0)
	a.Record(Failed, 0, t0.Add(time.Second))
	st, ok := a.Stop(Health, t0.Add(10*time.Second))
	if !ok || st.From != 5 || st.To != 0 || st.Reason != Health || st.Canary.Errors != 1 || st.At.Sub(st.Since) != 10*time.Second {
		t.Errorf("Stop = %+v, %v; want 5 -> 0 for health after 10s with the one error", st, ok)
	}
	if _, ok := a.Stop(Health, t0); ok || a.Share() != 0 || a.State() != Stopped {
		t.Errorf("a second Stop moved (%v), or share %v state %v", ok, a.Share(), a.State())
	}
	if _, ok := a.Record(OK, 0, t0.Add(time.Hour)); ok {
		t.Error("a stopped analysis took a step")
	}
	if _, ok := New(Settings{}, &base, 100, t0).Stop(Health, t0); ok {
		t.Error("a done analysis was stopped")
	}
}
