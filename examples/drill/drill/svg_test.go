package drill

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
)

// TestChartParts: a chart draws its parts in order, back to front, and only the parts its
// report calls for: the verdict's p99 windows in SlowEngine once the breaker opened, the
// failed area and the budget line when there are failures and a budget.
func TestChartParts(t *testing.T) {
	slow := synthetic(SlowEngine, true)
	slow.Budget = 0
	slow.Transitions = []Transition{
		{At: 1300 * time.Millisecond, Engine: "b", From: translate.BreakerClosed, To: translate.BreakerOpen},
		{At: 2300 * time.Millisecond, Engine: "b", From: translate.BreakerOpen, To: translate.BreakerHalfOpen},
	}
	quota := synthetic(QuotaOut, false)
	quota.Requests[399] = Request{Start: quota.Requests[399].Start, Err: translate.KindBudgetExceeded}
	quiet := synthetic(KillTop, false)
	quiet.Target, quiet.Budget = "", 0

	for _, tc := range []struct {
		name string
		r    *Report
		want []string
	}{
		{"slow", slow, []string{"svg", "g#breakers", "rect.breaker-open", "rect.breaker-half-open",
			"g#axes", "g#labels", "g#shares", "path.share", "path.p99", "g#p99-verdict", "line.p99-baseline",
			"line.p99-limit", "line.p99-after", "line.fault", "g#lanes", "rect.lane-open", "rect.lane-half-open", "g#legend"}},
		{"quota", quota, []string{"svg", "text.verdict-note", "g#breakers", "g#axes", "g#labels", "g#shares", "path.share",
			"path.failed", "path.budget", "text.budget-label", "path.p99", "line.fault", "g#lanes", "g#legend"}},
		{"quiet", quiet, []string{"svg", "g#breakers", "g#axes", "g#labels", "g#shares", "path.share", "path.p99",
			"g#lanes", "g#legend"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteSVG(&buf, tc.r); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, chartParts(t, buf.Bytes())); diff != "" {
				t.Errorf("chart parts (-want +got):\n%s", diff)
			}
		})
	}
}

// chartParts lists the marked elements of a chart in document order, as "g#id" for groups
// and "element.class" for the rest, with repeats in a row folded into one.
func chartParts(t *testing.T, data []byte) []string {
	t.Helper()
	var parts []string
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return parts
		}
		if err != nil {
			t.Fatalf("chart is not well-formed XML: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		part := ""
		for _, a := range el.Attr {
			switch a.Name.Local {
			case "id":
				part = el.Name.Local + "#" + a.Value
			case "class":
				part = el.Name.Local + "." + a.Value
			}
		}
		if el.Name.Local == "svg" {
			part = "svg"
		}
		if part != "" && (len(parts) == 0 || parts[len(parts)-1] != part) {
			parts = append(parts, part)
		}
	}
}
