package drill

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fanyi-go/translate"
)

// WriteTable writes the per-second table of a report: each engine's share of the engine
// calls started in that second, the states its breaker went through, the requests started
// that second that succeeded and failed, and their p50 and p99 latency.
func WriteTable(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	tableTitle(ew, r)
	tableHead(ew, r)
	for _, b := range r.Buckets(time.Second) {
		tableRow(ew, r, b)
	}
	ew.printf("breaker: C closed, O open, H half-open; C>O: opened during that second\n")
	tableNotes(ew, r)
	return ew.err
}

// cell is the width of a column of the share and breaker groups.
const cell = 8

// pad right-aligns s in a column of the share and breaker groups.
func pad(s string) string { return fmt.Sprintf("%*s", cell, s) }

// tableTitle writes the scenario, the run's settings and the budget, if any.
func tableTitle(ew *errWriter, r *Report) {
	cfg := r.Config
	ew.printf("scenario %d (%s): %s\n", int(cfg.Scenario), cfg.Scenario, cfg.Scenario.Title())
	ew.printf("%g requests/s for %s; fault at %s on %s\n", cfg.Rate, cfg.Duration, secs(r.FaultAt), orNone(r.Target))
	if r.Budget > 0 {
		ew.printf("daily budget %.6f credits\n", r.Budget)
	}
	ew.printf("\n")
}

// tableHead writes the two heading lines: the column groups (shares, breakers, requests),
// then the engines and the request columns.
func tableHead(ew *errWriter, r *Report) {
	var head1, head2 strings.Builder
	head1.WriteString(fmt.Sprintf("%-7s", ""))
	head2.WriteString(fmt.Sprintf("%-7s", "t"))
	share := "share of engine calls"
	head1.WriteString(fmt.Sprintf("%-*s", cell*len(r.Engines), "  "+share))
	for _, e := range r.Engines {
		head2.WriteString(pad(e.Name))
	}
	head1.WriteString(" |" + fmt.Sprintf("%-*s", cell*len(r.Engines), "  breaker"))
	head2.WriteString(" |")
	for _, e := range r.Engines {
		head2.WriteString(pad(e.Name))
	}
	head1.WriteString(" |")
	head2.WriteString(" |" + fmt.Sprintf("%6s%6s%8s%8s", "ok", "fail", "p50", "p99"))
	if r.Budget > 0 {
		head2.WriteString(fmt.Sprintf("%9s", "budget"))
	}
	ew.printf("%s\n%s\n", head1.String(), head2.String())
}

// tableRow writes one second: each engine's share and breaker states, the requests that
// succeeded and failed with their p50 and p99, the budget spent, and a mark at the fault.
func tableRow(ew *errWriter, r *Report, b Bucket) {
	ew.printf("%-7s", fmt.Sprintf("%gs", b.Start.Seconds()))
	for i := range r.Engines {
		if s, ok := b.Share(i); ok {
			ew.printf("%s", pad(fmt.Sprintf("%.0f%%", 100*s)))
		} else {
			ew.printf("%s", pad("-"))
		}
	}
	ew.printf(" |")
	for i := range r.Engines {
		ew.printf("%s", pad(breakerCell(b.Breakers[i])))
	}
	ew.printf(" |%6d%6d%8s%8s", b.OK, b.Failed, ms(b.P50), ms(b.P99))
	if r.Budget > 0 {
		ew.printf("%8.1f%%", 100*b.Spent/r.Budget)
	}
	mark := ""
	if r.Target != "" && r.FaultAt >= b.Start && r.FaultAt < b.Start+b.Width {
		mark = "  <- fault"
	}
	ew.printf("%s\n", mark)
}

// tableNotes writes the other events the Client logged, after a blank line. Repeats of one
// note (every call in flight reports the same quota error) are folded.
func tableNotes(ew *errWriter, r *Report) {
	if len(r.Notes) > 0 {
		ew.printf("\n")
	}
	for i := 0; i < len(r.Notes); {
		n, k := r.Notes[i], i+1
		for k < len(r.Notes) && r.Notes[k].Engine == n.Engine && r.Notes[k].Message == n.Message {
			k++
		}
		if k-i > 1 {
			ew.printf("%7s  %s: %s (%d times until %s)\n", secs(n.At), n.Engine, n.Message, k-i, secs(r.Notes[k-1].At))
		} else {
			ew.printf("%7s  %s: %s\n", secs(n.At), n.Engine, n.Message)
		}
		i = k
	}
}

// breakerCell renders the states a breaker went through in one bucket: "C", "C>O", "O>H>O".
func breakerCell(states []translate.BreakerState) string {
	parts := make([]string, len(states))
	for i, s := range states {
		switch s {
		case translate.BreakerOpen:
			parts[i] = "O"
		case translate.BreakerHalfOpen:
			parts[i] = "H"
		default:
			parts[i] = "C"
		}
	}
	return strings.Join(parts, ">")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// errWriter remembers the first write error and skips every later write.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
