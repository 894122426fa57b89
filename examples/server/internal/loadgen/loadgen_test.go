package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var d []time.Duration
		for _, n := range ns {
			d = append(d, time.Duration(n)*time.Millisecond)
		}
		return d
	}
	hundred := make([]time.Duration, 100) // 1ms .. 100ms
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"none", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"p50 of 100", hundred, 50, 50 * time.Millisecond},
		{"p99 of 100", hundred, 99, 99 * time.Millisecond},
		{"p100 of 100", hundred, 100, 100 * time.Millisecond},
		{"p50 of 4 is the 2nd", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p99 of 4 is the last", ms(1, 2, 3, 4), 99, 4 * time.Millisecond},
		{"p99 of 1000 is the 990th", ramp(1000), 99, 990 * time.Microsecond},
		{"tiny p is the first", ms(1, 2, 3, 4), 0.1, time.Millisecond},
	}
	for _, tc := range tests {
		if got := percentile(tc.sorted, tc.p); got != tc.want {
			t.Errorf("%s: percentile(%v) = %v, want %v", tc.name, tc.p, got, tc.want)
		}
	}
}

// ramp is 1µs, 2µs, ... nµs.
func ramp(n int) []time.Duration {
	d := make([]time.Duration, n)
	for i := range d {
		d[i] = time.Duration(i+1) * time.Microsecond
	}
	return d
}

func TestStatTicks(t *testing.T) {
	// Field 14 (utime) 1234 and field 15 (stime) 56; the command name holds spaces and a ')'.
	const line = "4242 (node) main) S 1 4242 4242 0 -1 4194560 9 0 0 0 1234 56 7 8 20 0 11 0 50456 3133440 393 18446744073709551615\n"
	got, err := statTicks(line)
	if err != nil || got != 1290 {
		t.Errorf("statTicks = %d, %v; want 1290 (utime 1234 + stime 56), nil", got, err)
	}
	for _, bad := range []string{
		"",
		"4242 node S 1 2 3",                    // no parentheses
		"4242 (node) S 1 4242 4242 0 -1 4 9 0", // too few fields
		"4242 (node) S 1 4242 4242 0 -1 4194560 9 0 0 0 x 56 7",
	} {
		if n, err := statTicks(bad); err == nil {
			t.Errorf("statTicks(%q) = %d, nil; want an error", bad, n)
		}
	}
}

func TestProcessCPUOfItself(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if _, err := processCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if _, err := processCPU(-1); err == nil {
		t.Error("processCPU(-1): no error")
	}
}

// TestVendorCountsConnections: requests over one keep-alive connection count one opened.
func TestVendorCountsConnections(t *testing.T) {
	v, err := startVendor(0)
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	for range 3 {
		resp, err := c.Post(v.baseURL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != vendorAnswer {
			t.Fatalf("status %d, body %s", resp.StatusCode, b)
		}
	}
	if opened, _ := v.conns(); opened != 1 || v.served.Load() != 3 {
		t.Errorf("3 requests on one client: %d connections opened, %d served; want 1 and 3", opened, v.served.Load())
	}
}

// answerFunc is an http.RoundTripper answering without a network.
type answerFunc func(*http.Request) (*http.Response, error)

func (f answerFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestLoadWindow: only requests answered inside the window are counted, failures apart from
// latencies, with the first failure kept, and mark sees the window open and close in order.
func TestLoadWindow(t *testing.T) {
	var n atomic.Int64
	c := &http.Client{Transport: answerFunc(func(r *http.Request) (*http.Response, error) {
		if n.Add(1)%4 == 0 {
			return &http.Response{StatusCode: 503, Body: io.NopCloser(strings.NewReader("busy")), Request: r}, nil
		}
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
	})}
	var marks []int32
	var atOpen, atClose int64
	l := &load{
		client: c, conc: 3, warmup: 20 * time.Millisecond, duration: 200 * time.Millisecond,
		newReq: func(ctx context.Context, seq uint64) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, "http://target/", nil)
		},
		mark: func(p int32) {
			marks = append(marks, p)
			if p == phaseMeasure {
				atOpen = n.Load()
			} else {
				atClose = n.Load()
			}
		},
	}
	w := l.run(context.Background())
	if diff := cmp.Diff([]int32{phaseMeasure, phaseDone}, marks); diff != "" {
		t.Errorf("marks (-want +got):\n%s", diff)
	}
	got := int64(len(w.latencies) + w.errors)
	// Answered inside the window: at most the requests sent between the marks plus the
	// conc in flight as it opened.
	if got == 0 || got > atClose-atOpen+int64(l.conc) || w.errors == 0 || len(w.latencies) == 0 {
		t.Errorf("window: %d answers (%d failed) of %d sent during it", got, w.errors, atClose-atOpen)
	}
	if w.firstErr != "status 503: busy" {
		t.Errorf("first error %q, want %q", w.firstErr, "status 503: busy")
	}
	for i := 1; i < len(w.latencies); i++ {
		if w.latencies[i] < w.latencies[i-1] {
			t.Fatal("latencies not sorted")
		}
	}
	if w.elapsed < l.duration {
		t.Errorf("elapsed %v, shorter than the window %v", w.elapsed, l.duration)
	}
}

func TestReport(t *testing.T) {
	server := result{name: "examples/server", requests: 20000, perSecond: 1966.4, p50: 25300 * time.Microsecond,
		p99: 40200 * time.Microsecond, cpu: 334 * time.Microsecond}
	portkey := result{name: "Portkey", requests: 2300, perSecond: 640.6, p50: 76 * time.Millisecond,
		p99: 180 * time.Millisecond, cpu: 1850 * time.Microsecond, opened: 14}
	var b bytes.Buffer
	code := writeReport(&b, []result{server, portkey})
	want := `| target | requests/s | p50 ms | p99 ms | CPU µs/request | vendor conns opened | closed | errors |
|---|---:|---:|---:|---:|---:|---:|---:|
| examples/server | 1,966 | 25.3 | 40.2 | 334 | 0 | 0 | 0 |
| Portkey | 641 | 76.0 | 180.0 | 1850 | 14 | 0 | 0 |
| examples/server / Portkey | 3.07x | | | 0.18x | | | |

- at least 3x Portkey's throughput: yes (3.07x)
- examples/server: 0 vendor connections opened and 0 closed in steady state: yes (0 opened, 0 closed)
`
	if diff := cmp.Diff(want, b.String()); diff != "" || code != 0 {
		t.Errorf("report, exit code %d (-want +got):\n%s", code, diff)
	}

	server.perSecond, server.closed, server.errors = 1900, 2, 203 // 2.97x; churn; 1.01% failed
	got := verdicts([]result{server, portkey})
	wantV := []string{
		"at least 3x Portkey's throughput: **no** (2.97x)",
		"examples/server: 0 vendor connections opened and 0 closed in steady state: **no** (0 opened, 2 closed)",
	}
	if diff := cmp.Diff(wantV, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if code := writeReport(io.Discard, []result{server, portkey}); code != 1 {
		t.Errorf("more than 1%% of requests failed: exit code %d, want 1", code)
	}
}

func TestTextsDiffer(t *testing.T) {
	seen := map[string]bool{}
	for seq := range uint64(20000) {
		s := text(seq)
		if seen[s] || strings.ContainsAny(s, "0123456789\"\\") {
			t.Fatalf("text(%d) = %q: repeated, or holds a digit or a JSON special", seq, s)
		}
		seen[s] = true
	}
}

func TestThousands(t *testing.T) {
	for f, want := range map[float64]string{0: "0", 999.4: "999", 1000: "1,000", 1966.4: "1,966", 1234567: "1,234,567", -4321: "-4,321"} {
		if got := thousands(f); got != want {
			t.Errorf("thousands(%v) = %q, want %q", f, got, want)
		}
	}
}
