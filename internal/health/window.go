package health

import "time"

// Span is how far back a Window looks: the availability window of seed 000 §3.4.
const Span = 5 * time.Minute

// Buckets is how many buckets a Window's Span is cut into; each covers Span/Buckets (10s).
const Buckets = 30

const bucketWidth = int64(Span / Buckets)

// Window sums the folds of the last Span: each fold's Sample goes into the bucket of its
// time, and the buckets older than Span drop out. Folds further apart than Span leave only
// the last fold in it. The zero value is empty; it is not safe for concurrent use (the
// fold's lock guards it).
type Window struct {
	b    [Buckets]Sample
	last int64 // the newest bucket's number (unix nanos / bucket width)
}

// Add adds a fold's sample s at now (unix nanos). A time before the newest bucket's goes into
// the newest bucket.
func (w *Window) Add(now int64, s Sample) {
	w.advance(now / bucketWidth)
	b := &w.b[w.last%Buckets]
	b.Calls += s.Calls
	b.Fails += s.Fails
	b.OKCalls += s.OKCalls
	b.LatNanos += s.LatNanos
}

// advance makes n the newest bucket, emptying the buckets it passes.
func (w *Window) advance(n int64) {
	if n <= w.last {
		return
	}
	if n-w.last >= Buckets {
		w.b = [Buckets]Sample{}
	} else {
		for i := w.last + 1; i <= n; i++ {
			w.b[i%Buckets] = Sample{}
		}
	}
	w.last = n
}

// Sum returns the sum of the buckets within Span of now.
func (w *Window) Sum(now int64) Sample {
	w.advance(now / bucketWidth)
	var t Sample
	for _, b := range w.b {
		t.Calls += b.Calls
		t.Fails += b.Fails
		t.OKCalls += b.OKCalls
		t.LatNanos += b.LatNanos
	}
	return t
}

// Reset empties the window.
func (w *Window) Reset() { w.b = [Buckets]Sample{} }

// Availability is an engine's availability 0..1 from a window's sample s and its per-call
// timeout: the success rate (1 - the error rate: failed calls over calls) times a latency
// factor 1 - ½·m/(m+timeout), where m is the mean latency of the successful calls. The factor
// is 1 for an instant engine, 0.996 at 40ms and 0.988 at 120ms with a 5s timeout, 0.75 when
// the mean reaches the timeout. ok is false when s has no calls.
func Availability(s Sample, timeout time.Duration) (avail float64, ok bool) {
	if s.Calls <= 0 {
		return 0, false
	}
	success := 1 - float64(s.Fails)/float64(s.Calls)
	return success * LatencyFactor(s.MeanLatency(), timeout), true
}

// LatencyFactor is Availability's latency factor: 1 - ½·m/(m+timeout), 1 when timeout is
// not positive.
func LatencyFactor(m, timeout time.Duration) float64 {
	if timeout <= 0 || m <= 0 {
		return 1
	}
	return 1 - 0.5*float64(m)/float64(m+timeout)
}
