package telemetry

import (
	"context"
	"iter"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
)

// registerObserved registers the callback of the observable instruments: the tallies of
// requests and cache lookups, each engine's attempts, credits and characters, and the
// quota left of every engine engines yields with a quota. A counter that is still 0 has no
// series, as a synchronous counter never added to has none.
func (t *Recorder) registerObserved(engines iter.Seq2[*Engine, int64]) error {
	var err error
	t.quotaReg, err = t.meter.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		t.observeRequests(obs)
		if engines == nil {
			return nil
		}
		for e, left := range engines {
			t.observeEngine(obs, e)
			if left >= 0 { // unlimited: no series, so that sums over engines stay right
				obs.ObserveInt64(t.quotaLeft, left, e.engine.obs...)
			}
		}
		return nil
	}, t.quotaLeft, t.requests, t.cacheLookups, t.attempts, t.credits, t.chars)
	return err
}

// observeRequests reports the request and cache lookup counters.
func (t *Recorder) observeRequests(obs metric.Observer) {
	for k := range t.reqN {
		for h := range 2 {
			for d := range 2 {
				n := t.reqN[k][h][d].Load()
				if k == 0 && h == 1 {
					n += t.freshN[d].Load()
				}
				if n > 0 {
					obs.ObserveInt64(t.requests, int64(n), t.req[k][h][d].obs...)
				}
			}
		}
	}
	for h := range t.hitN {
		n := t.hitN[h].Load()
		if h == 1 {
			n += t.freshN[0].Load() + t.freshN[1].Load()
		}
		if n > 0 {
			obs.ObserveInt64(t.cacheLookups, int64(n), t.hit[h].obs...)
		}
	}
}

// observeEngine reports an engine's attempts, credits and characters.
func (t *Recorder) observeEngine(obs metric.Observer, e *Engine) {
	if n := e.ok.Load(); n > 0 {
		obs.ObserveInt64(t.attempts, int64(n), e.attempts[0].obs...)
	}
	for k := 1; k < NumOutcomes; k++ {
		if n := e.failed[k].Load(); n > 0 {
			obs.ObserveInt64(t.attempts, int64(n), e.attempts[k].obs...)
		}
	}
	if e.ok.Load() == 0 {
		return // no answer yet: no cost or characters series, as before the first Add
	}
	obs.ObserveFloat64(t.credits, e.credits.Load(), e.engine.obs...)
	obs.ObserveInt64(t.chars, int64(e.chars.Load()), e.engine.obs...)
}

// frozen is a recording of one observation of the counters, replayed at every collection
// once the Recorder is closed.
type frozen struct {
	embedded.Observer
	ints   []frozenInt
	floats []frozenFloat
}

type frozenInt struct {
	inst metric.Int64Observable
	v    int64
	opts []metric.ObserveOption
}

type frozenFloat struct {
	inst metric.Float64Observable
	v    float64
	opts []metric.ObserveOption
}

func (f *frozen) ObserveInt64(inst metric.Int64Observable, v int64, opts ...metric.ObserveOption) {
	f.ints = append(f.ints, frozenInt{inst, v, opts})
}

func (f *frozen) ObserveFloat64(inst metric.Float64Observable, v float64, opts ...metric.ObserveOption) {
	f.floats = append(f.floats, frozenFloat{inst, v, opts})
}

func (f *frozen) replay(_ context.Context, obs metric.Observer) error {
	for _, x := range f.ints {
		obs.ObserveInt64(x.inst, x.v, x.opts...)
	}
	for _, x := range f.floats {
		obs.ObserveFloat64(x.inst, x.v, x.opts...)
	}
	return nil
}
