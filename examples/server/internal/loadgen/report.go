package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// snapshot is what the counters read at one edge of the measured window.
type snapshot struct {
	cpu, selfCPU   time.Duration // the target process's; the load tool's (with the vendor)
	opened, closed int64         // vendor connections
	dials          int64         // load-tool connections to the target
}

func take(pid int, v *vendor, d *countingDialer) (snapshot, error) {
	cpu, err := processCPU(pid)
	self, selfErr := processCPU(os.Getpid())
	opened, closed := v.conns()
	return snapshot{cpu: cpu, selfCPU: self, opened: opened, closed: closed, dials: d.dials.Load()}, errors.Join(err, selfErr)
}

// result is one target's measured window.
type result struct {
	name           string
	requests       int // answered 200
	errors         int
	firstErr       string
	perSecond      float64
	p50, p99       time.Duration
	cpu, selfCPU   time.Duration // per request
	opened, closed int64         // vendor connections during the window
	dials          int64         // load-tool connections opened during the window
}

func newResult(name string, w window, from, to snapshot) result {
	r := result{
		name: name, requests: len(w.latencies), errors: w.errors, firstErr: w.firstErr,
		p50: percentile(w.latencies, 50), p99: percentile(w.latencies, 99),
		opened: to.opened - from.opened, closed: to.closed - from.closed, dials: to.dials - from.dials,
	}
	if w.elapsed > 0 {
		r.perSecond = float64(r.requests) / w.elapsed.Seconds()
	}
	if r.requests > 0 {
		r.cpu = (to.cpu - from.cpu) / time.Duration(r.requests)
		r.selfCPU = (to.selfCPU - from.selfCPU) / time.Duration(r.requests)
	}
	return r
}

// summary is the line printed on stderr as each target finishes.
func (r result) summary() string {
	s := fmt.Sprintf("%d requests, %.0f/s, p50 %s, p99 %s, CPU %s/request (load tool and vendor %s), "+
		"vendor connections +%d -%d, load-tool connections +%d, %d errors",
		r.requests, r.perSecond, ms(r.p50), ms(r.p99), us(r.cpu), us(r.selfCPU), r.opened, r.closed, r.dials, r.errors)
	if r.firstErr != "" {
		s += "; first: " + r.firstErr
	}
	return s
}

// writeReport prints the table, the ratios and the verdicts; it returns 1 when a target
// failed more than 1% of its requests (the figures then mean nothing), else 0.
func writeReport(w io.Writer, rs []result) int {
	fmt.Fprintln(w, "| target | requests/s | p50 ms | p99 ms | CPU µs/request | vendor conns opened | closed | errors |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	code := 0
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d | %d | %d |\n", r.name, thousands(r.perSecond),
			strconv.FormatFloat(msf(r.p50), 'f', 1, 64), strconv.FormatFloat(msf(r.p99), 'f', 1, 64),
			strconv.FormatFloat(usf(r.cpu), 'f', 0, 64), r.opened, r.closed, r.errors)
		if r.errors*100 > r.requests+r.errors {
			code = 1
		}
	}
	if len(rs) == 2 {
		tput, cpu := ratios(rs[0], rs[1])
		fmt.Fprintf(w, "| %s / %s | %.2fx | | | %.2fx | | | |\n", rs[0].name, rs[1].name, tput, cpu)
	}
	fmt.Fprintln(w)
	for _, v := range verdicts(rs) {
		fmt.Fprintln(w, "- "+v)
	}
	return code
}

// ratios are a's throughput and CPU per request against b's.
func ratios(a, b result) (throughput, cpu float64) {
	if b.perSecond > 0 {
		throughput = a.perSecond / b.perSecond
	}
	if b.cpu > 0 {
		cpu = float64(a.cpu) / float64(b.cpu)
	}
	return throughput, cpu
}

// verdicts are issue 20's targets for examples/server (rs[0]): at least 3x Portkey's
// (rs[1]) throughput in the same run, and no vendor connection opened or closed in the
// measured (steady-state) window.
func verdicts(rs []result) []string {
	var out []string
	if len(rs) == 0 {
		return nil
	}
	if len(rs) == 2 {
		tput, _ := ratios(rs[0], rs[1])
		out = append(out, fmt.Sprintf("at least 3x %s's throughput: %s (%.2fx)", rs[1].name, yes(tput >= 3), tput))
	}
	s := rs[0]
	out = append(out, fmt.Sprintf("%s: 0 vendor connections opened and 0 closed in steady state: %s (%d opened, %d closed)",
		s.name, yes(s.opened == 0 && s.closed == 0), s.opened, s.closed))
	return out
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func usf(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func ms(d time.Duration) string   { return strconv.FormatFloat(msf(d), 'f', 1, 64) + "ms" }
func us(d time.Duration) string   { return strconv.FormatFloat(usf(d), 'f', 0, 64) + "µs" }

// thousands formats f rounded to an integer with commas between groups of three digits.
func thousands(f float64) string {
	s := strconv.FormatFloat(f, 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
