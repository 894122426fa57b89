package health

import (
	"math"
	"time"
)

// Blend is an engine's availability 0..1 from the last five minutes' sample s (a Window's
// Sum), the calls and failures of its last folds (calls, fails) and the calls not folded
// yet (extra): the smaller of Availability over s and extra, and one minus the folds' error
// rate (extra counted in) times the latency factor of the five minutes' mean latency
// against timeout. ok is false when there were no calls in s or extra.
func Blend(s, extra Sample, calls, fails int64, timeout time.Duration) (avail float64, ok bool) {
	s.Calls, s.Fails, s.OKCalls, s.LatNanos = s.Calls+extra.Calls, s.Fails+extra.Fails, s.OKCalls+extra.OKCalls, s.LatNanos+extra.LatNanos
	avail, ok = Availability(s, timeout)
	if !ok {
		return 0, false
	}
	calls, fails = calls+extra.Calls, fails+extra.Fails
	if calls > 0 {
		avail = min(avail, (1-float64(fails)/float64(calls))*LatencyFactor(s.MeanLatency(), timeout))
	}
	return avail, true
}

// PairDownFactor is what an engine's weight for a pair is multiplied by while the pair is
// down: its bad-output rate above 1 - minHealth, or a known-answer probe failed on it. Such
// an engine keeps a trickle of the pair's traffic (a thousandth of its weight), and all of
// it when nothing else serves the pair.
const PairDownFactor = 1e-3

// Factor is what an engine's weight for the pair is multiplied by for the pair's live
// standing: exp(-q·Bad·wq/temperature), the weight of the pair's quality q lowered to
// q·(1-Bad) with quality weight wq at temperature; times PairDownFactor while the pair is
// down (ProbeDown, or Bad above 1 - minHealth).
func (s PairState) Factor(q, wq, temperature, minHealth float64) float64 {
	f := math.Exp(-q * s.Bad * wq / temperature)
	if s.ProbeDown || s.Bad > 1-minHealth {
		f *= PairDownFactor
	}
	return f
}
