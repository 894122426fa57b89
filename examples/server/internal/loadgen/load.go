package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Phases of a run: requests completed during phaseMeasure are counted.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseDone
)

// load is one closed-loop run: conc workers, each sending its next request as soon as the
// previous one answered, for warmup and then for duration.
type load struct {
	client   *http.Client
	newReq   func(ctx context.Context, seq uint64) (*http.Request, error)
	conc     int
	warmup   time.Duration
	duration time.Duration
	// mark is called as the measured window opens (phaseMeasure) and closes (phaseDone), so
	// that the caller reads its counters at the same instants.
	mark func(phase int32)
}

// window is what the measured window saw.
type window struct {
	elapsed   time.Duration
	latencies []time.Duration // of the successful requests, sorted
	errors    int
	firstErr  string
}

// worker is one worker's share of the window.
type worker struct {
	latencies []time.Duration
	errors    int
	firstErr  string
}

// run drives the load and returns the measured window. It stops early when ctx ends.
func (l *load) run(ctx context.Context) window {
	var phase atomic.Int32
	var seq atomic.Uint64
	workers := make([]worker, l.conc)
	var wg sync.WaitGroup
	for i := range workers {
		w := &workers[i]
		wg.Go(func() {
			for ctx.Err() == nil && phase.Load() != phaseDone {
				start := time.Now()
				err := l.once(ctx, seq.Add(1))
				if phase.Load() == phaseMeasure {
					w.record(time.Since(start), err)
				}
			}
		})
	}
	sleep(ctx, l.warmup)
	l.mark(phaseMeasure)
	phase.Store(phaseMeasure)
	start := time.Now()
	sleep(ctx, l.duration)
	phase.Store(phaseDone)
	elapsed := time.Since(start)
	l.mark(phaseDone)
	wg.Wait()
	return merge(workers, elapsed)
}

func (w *worker) record(d time.Duration, err error) {
	if err == nil {
		w.latencies = append(w.latencies, d)
		return
	}
	w.errors++
	if w.firstErr == "" {
		w.firstErr = err.Error()
	}
}

// merge joins the workers' samples into one window.
func merge(workers []worker, elapsed time.Duration) window {
	w := window{elapsed: elapsed}
	for _, k := range workers {
		w.latencies = append(w.latencies, k.latencies...)
		w.errors += k.errors
		if w.firstErr == "" {
			w.firstErr = k.firstErr
		}
	}
	slices.Sort(w.latencies)
	return w
}

// once sends one request and reads the answer to the end; a status other than 200 is an error.
func (l *load) once(ctx context.Context, seq uint64) error {
	req, err := l.newReq(ctx, seq)
	if err != nil {
		return err
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// percentile returns the p-th percentile (0 < p <= 100) of sorted by the nearest-rank
// method: the smallest sample with at least p% of the samples at or below it; 0 for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// countingDialer counts the connections a client opens.
type countingDialer struct {
	net.Dialer
	dials atomic.Int64
}

func (d *countingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.dials.Add(1)
	return d.Dialer.DialContext(ctx, network, addr)
}

// newClient is the load's HTTP client: keep-alive, with room for every worker's connection
// in the idle pool, so that the load generator never closes and reopens connections itself.
func newClient(conc int) (*http.Client, *countingDialer) {
	d := &countingDialer{Dialer: net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}}
	tr := &http.Transport{
		DialContext:         d.DialContext,
		MaxIdleConns:        2 * conc,
		MaxIdleConnsPerHost: 2 * conc,
		IdleConnTimeout:     2 * time.Minute,
		DisableCompression:  true, // neither target compresses; no Accept-Encoding for either
		ForceAttemptHTTP2:   false,
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}, d
}
