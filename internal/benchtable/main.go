// Command benchtable reads `go test -bench` output on stdin and prints the README's
// performance table: the median of every benchmark's runs, each read against the baseline
// the project's targets name (the floor, golang-lru's Get, the same path without
// telemetry), with the target and whether the run met it. scripts/perf runs it.
//
// Medians, because the machines are shared and a mean follows the worst neighbour.
package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// sample is one benchmark's runs: the standard figures, and any other the benchmark
// reported (b.ReportMetric) by unit.
type sample struct {
	ns, bytes, allocs []float64
	other             map[string][]float64
}

// row is a line of the table: bench read against base (a ratio when base is set), with a
// target on the ratio (maxRatio, 0 for none) and on allocations (allocs, when checkAllocs).
type row struct {
	label, bench, base string
	maxRatio           float64
	checkAllocs        bool
	allocs             float64
	note               string
}

// rows is the table. A row whose benchmark did not run is left out.
var rows = []row{
	{label: "Floor (no-op engine via the interface)", bench: "Floor"},
	{label: "Decision8 (filter + score + pick, 8 engines)", bench: "Decision8", base: "Floor", maxRatio: 60, checkAllocs: true},
	{label: "Decision100 (100 engines)", bench: "Decision100", base: "Decision8", maxRatio: 15, checkAllocs: true},
	{label: "CacheHit (`Translate`, fresh entry)", bench: "CacheHit", base: "Floor", maxRatio: 30, checkAllocs: true},
	{label: "CacheHit against golang-lru's Get (same key shape)", bench: "CacheHit", base: "LRUGet/key", maxRatio: 1.5},
	{label: "Miss (`Translate`, no-op engine, cache off)", bench: "Miss", base: "Floor", maxRatio: 450, checkAllocs: true, allocs: 1},
	{label: "Miss, engine reads ctx.Done()", bench: "MissCtxEngine", base: "Miss", maxRatio: 1.2, checkAllocs: true, allocs: 3},
	{label: "MissEngines/8", bench: "MissEngines/8", base: "Floor", checkAllocs: true, allocs: 1},
	{label: "MissEngines/32", bench: "MissEngines/32", base: "Floor", checkAllocs: true, allocs: 1},
	{label: "MissEngines/1000", bench: "MissEngines/1000", base: "Floor", checkAllocs: true, allocs: 1},
	{label: "Miss with the OTel SDK, against no-op providers", bench: "MissSDK", base: "MissNoProvider", maxRatio: 2},
	{label: "the SDK's span alone (started and ended, no attribute), against the miss without telemetry", bench: "SpanSDK", base: "MissNoProvider"},
	{label: "Miss with the SDK's meter only (no tracer), against no-op providers", bench: "MissSDKMeter", base: "MissNoProvider"},
	{label: "Miss with the SDK, 1 trace in 100 sampled, against no-op providers", bench: "MissSDKSampled", base: "MissNoProvider"},
	{label: "CacheHit with the OTel SDK, against no-op providers", bench: "CacheHitSDK", base: "CacheHitNoProvider", maxRatio: 3},
	{label: "peer: golang-lru/v2 Get", bench: "LRUGet/key", base: "Floor"},
	{label: "peer: failsafe-go executor (retry, breaker, timeout)", bench: "PeerFailsafe", base: "Floor"},
	{label: "Miss against the failsafe-go executor", bench: "Miss", base: "PeerFailsafe", note: "the whole miss (routing, cache, quota, budget, failover) against a bare executor"},
}

// line matches a benchmark result line: name, iterations, then value-unit pairs.
var line = regexp.MustCompile(`^Benchmark(\S+?)(-\d+)?\s+\d+\s+(.*)$`)

func main() {
	scaling := len(os.Args) > 1 && os.Args[1] == "-scaling"
	samples, err := read(os.Stdin, scaling)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if len(samples) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no benchmark lines on stdin")
		os.Exit(1)
	}
	if scaling {
		writeScaling(os.Stdout, samples)
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "-load" {
		writeLoad(os.Stdout, samples)
		return
	}
	missed := write(os.Stdout, samples)
	if missed > 0 {
		fmt.Printf("\n%d target(s) not met in this run.\n", missed)
	}
}

// read collects every result line's ns/op, B/op and allocs/op by benchmark name. The
// -GOMAXPROCS suffix is removed (one table is one -cpu setting), unless keepProcs: then
// the name is name@procs, procs 1 for a line without the suffix.
func read(r io.Reader, keepProcs bool) (map[string]*sample, error) {
	out := map[string]*sample{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name := m[1]
		if keepProcs {
			name += "@" + cmp.Or(strings.TrimPrefix(m[2], "-"), "1")
		}
		s := out[name]
		if s == nil {
			s = &sample{}
			out[name] = s
		}
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch f[i+1] {
			case "ns/op":
				s.ns = append(s.ns, v)
			case "B/op":
				s.bytes = append(s.bytes, v)
			case "allocs/op":
				s.allocs = append(s.allocs, v)
			default:
				if s.other == nil {
					s.other = map[string][]float64{}
				}
				s.other[f[i+1]] = append(s.other[f[i+1]], v)
			}
		}
	}
	return out, sc.Err()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// write prints the table and returns how many targets the run missed.
func write(w io.Writer, samples map[string]*sample) int {
	fmt.Fprintln(w, "| benchmark | ns/op | runs | against | ratio | B/op | allocs/op | target | met |")
	fmt.Fprintln(w, "|---|---:|---:|---|---:|---:|---:|---|---|")
	missed := 0
	for _, r := range rows {
		s := samples[r.bench]
		if s == nil || len(s.ns) == 0 {
			continue
		}
		ns, allocs := median(s.ns), median(s.allocs)
		ratio, against := "", ""
		ok := true
		b := samples[r.base]
		if r.base != "" && (b == nil || median(b.ns) == 0) {
			continue // its baseline did not run
		}
		if r.base != "" {
			x := ns / median(b.ns)
			ratio, against = fmt.Sprintf("%.2fx", x), r.base
			if r.maxRatio > 0 && x > r.maxRatio {
				ok = false
			}
		}
		if r.checkAllocs && allocs > r.allocs {
			ok = false
		}
		met := ""
		if t := target(r); t != "" {
			met = map[bool]string{true: "yes", false: "**no**"}[ok]
			if !ok {
				missed++
			}
		}
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %.0f | %.0f | %s | %s |\n",
			r.label, num(ns), len(s.ns), against, ratio, median(s.bytes), allocs, target(r), met)
	}
	return missed
}

// target states a row's targets.
func target(r row) string {
	var t []string
	if r.maxRatio > 0 {
		t = append(t, fmt.Sprintf("≤ %gx", r.maxRatio))
	}
	if r.checkAllocs {
		t = append(t, fmt.Sprintf("≤ %g allocs", r.allocs))
	}
	if r.note != "" {
		t = append(t, r.note)
	}
	return strings.Join(t, ", ")
}

// num prints ns with about three significant figures.
func num(ns float64) string {
	switch {
	case ns >= 100:
		return strconv.FormatFloat(ns, 'f', 0, 64)
	case ns >= 10:
		return strconv.FormatFloat(ns, 'f', 1, 64)
	}
	return strconv.FormatFloat(ns, 'f', 2, 64)
}

// scalingRows are the benchmarks read from one core to two.
var scalingRows = []struct {
	bench, label string
	min          float64
}{
	{"FloorParallel", "FloorParallel (the machine's own scaling)", 0},
	{"MissParallel", "MissParallel (varied texts, WithSeed)", 1.5},
	{"MissParallelUnseeded", "MissParallelUnseeded (varied texts)", 1.5},
	{"MissParallelHot", "MissParallelHot (one hot text, cache off)", 1.3},
	{"CacheHitParallel", "CacheHitParallel (one hot entry, fresh hits)", 0},
}

// writeScaling prints, for each benchmark run at -cpu 1,2, its median ns/op at each and
// the speed-up.
func writeScaling(w io.Writer, samples map[string]*sample) {
	fmt.Fprintln(w, "| benchmark | ns/op, 1 core | ns/op, 2 cores | scaling | target | met |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---|")
	for _, r := range scalingRows {
		one, two := samples[r.bench+"@1"], samples[r.bench+"@2"]
		if one == nil || two == nil || median(two.ns) == 0 {
			continue
		}
		x := median(one.ns) / median(two.ns)
		t, met := "", ""
		if r.min > 0 {
			t = fmt.Sprintf("≥ %gx", r.min)
			met = map[bool]string{true: "yes", false: "**no**"}[x >= r.min]
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.2fx | %s | %s |\n", r.label, num(median(one.ns)), num(median(two.ns)), x, t, met)
	}
}

// writeLoad prints BenchmarkLoad's figures: direct calls, the Client, the Client with the
// OpenTelemetry SDK, each a median, with the targets.
func writeLoad(w io.Writer, samples map[string]*sample) {
	d, c, sdk := samples["Load/direct"], samples["Load/client"], samples["Load/client-sdk"]
	if d == nil || c == nil {
		return
	}
	get := func(s *sample, unit string) float64 {
		if s == nil {
			return 0
		}
		return median(s.other[unit])
	}
	fmt.Fprintln(w, "| per request | direct | Client | Client + OTel SDK | target | met |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---|")
	yes := map[bool]string{true: "yes", false: "**no**"}
	cpu := func(s *sample) float64 { return get(s, "cpu-us/req") }
	fmt.Fprintf(w, "| CPU, µs | %.2f | %.2f (%.2fx) | %.2f (%.2fx the Client) | Client ≤ 2x direct; SDK ≤ 1.3x | %s; %s |\n",
		cpu(d), cpu(c), cpu(c)/cpu(d), cpu(sdk), cpu(sdk)/cpu(c), yes[cpu(c) <= 2*cpu(d)], yes[sdk != nil && cpu(sdk) <= 1.3*cpu(c)])
	al := func(s *sample) float64 { return get(s, "allocs/req") }
	fmt.Fprintf(w, "| allocations | %.1f | %.1f | %.1f | Client ≤ direct + 5 | %s |\n", al(d), al(c), al(sdk), yes[al(c) <= al(d)+5])
	by := func(s *sample) float64 { return get(s, "B/req") }
	fmt.Fprintf(w, "| bytes | %.0f | %.0f | %.0f | | |\n", by(d), by(c), by(sdk))
	p := func(s *sample) float64 { return get(s, "p99-added-ms") }
	fmt.Fprintf(w, "| p99 beyond the engine's delay, ms | %.2f | %.2f | %.2f | Client ≤ direct + 2 ms | %s |\n", p(d), p(c), p(sdk), yes[p(c) <= p(d)+2])
	rps := func(s *sample) float64 { return get(s, "req/s") }
	fmt.Fprintf(w, "| requests per second | %.0f | %.0f | %.0f | | |\n", rps(d), rps(c), rps(sdk))
}
