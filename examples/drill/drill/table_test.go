package drill

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
)

// TestTable: the per-second table of a QuotaOut report with a budget: the heading groups,
// a row per second with shares, breaker states, requests, latency and budget spent, the
// fault marked in its second, and repeated notes folded into one line.
func TestTable(t *testing.T) {
	r := synthetic(QuotaOut, true)
	r.Transitions = []Transition{
		{At: 1200 * time.Millisecond, Engine: "b", From: translate.BreakerClosed, To: translate.BreakerOpen},
		{At: 2200 * time.Millisecond, Engine: "b", From: translate.BreakerOpen, To: translate.BreakerHalfOpen},
	}
	r.Notes = []Note{
		{At: 1101 * time.Millisecond, Engine: "b", Message: "engine out: quota exhausted"},
		{At: 1102 * time.Millisecond, Engine: "b", Message: "engine out: quota exhausted"},
		{At: 1202 * time.Millisecond, Engine: "a", Message: "pool fallback"},
	}
	for i := range 50 {
		r.Requests[i].Cost = 0.01
	}
	r.Requests[399] = Request{Start: r.Requests[399].Start, Latency: time.Millisecond, Err: translate.KindBudgetExceeded}
	var buf strings.Builder
	if err := WriteTable(&buf, r); err != nil {
		t.Fatal(err)
	}
	want := `scenario 3 (quota-out): the free engine's quota drops to zero
100 requests/s for 4s; fault at 1.00s on b
daily budget 1.000000 credits

         share of engine calls |  breaker        |
t             a       b |       a       b |    ok  fail     p50     p99   budget
0s          50%     50% |       C       C |   100     0   100ms   100ms    50.0%
1s         100%      0% |       C     C>O |   100     0   200ms   200ms    50.0%  <- fault
2s         100%      0% |       C     O>H |   100     0   200ms   200ms    50.0%
3s         100%      0% |       C       H |    99     1   200ms   200ms    50.0%
breaker: C closed, O open, H half-open; C>O: opened during that second

  1.10s  b: engine out: quota exhausted (2 times until 1.10s)
  1.20s  a: pool fallback
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}
