package health

import "time"

// Folds is how many folds a Standing's window of calls and failures spans.
const Folds = 6

// Standing is an engine's standing from fold to fold: the calls and failures of the last
// Folds folds, and whether its availability demoted it. An availability drop over 15% two
// folds in a row, or availability under the minimum, demotes; two good folds (or passing
// probes) bring it back. The zero value is an empty window, not demoted. It is not safe for
// concurrent use.
type Standing struct {
	calls, fails [Folds]int64
	pos          int
	drops        int // consecutive folds with an availability drop over 15%
	good         int // consecutive good folds (or passing probes) while demoted
	demoted      bool
}

// Push adds a fold's calls and failures to the window, in place of the oldest fold's.
func (s *Standing) Push(calls, fails int64) {
	s.pos = (s.pos + 1) % Folds
	s.calls[s.pos], s.fails[s.pos] = calls, fails
}

// Window returns the calls and failures in the window.
func (s *Standing) Window() (calls, fails int64) {
	for i := range s.calls {
		calls += s.calls[i]
		fails += s.fails[i]
	}
	return calls, fails
}

// Judge updates the demotion after a fold with enough calls that moved availability from
// was to now (0..1), against the minimum minHealth.
func (s *Standing) Judge(was, now, minHealth float64) {
	if was > 0 && (was-now)/was > 0.15 {
		s.drops++
	} else {
		s.drops = 0
	}
	switch {
	case s.drops >= 2 || now < minHealth:
		s.demoted, s.good = true, 0
	case s.demoted:
		s.Promote()
	}
}

// Promote counts one good fold or passing probe of a demoted engine and reports whether
// it brought the engine back (the second in a row does); it does nothing when not demoted.
func (s *Standing) Promote() (back bool) {
	if !s.demoted {
		return false
	}
	if s.good++; s.good >= 2 {
		s.demoted, s.good, s.drops = false, 0, 0
		return true
	}
	return false
}

// Demoted reports whether the standing is demoted.
func (s *Standing) Demoted() bool { return s.demoted }

// ClearWindow empties the window of calls and failures.
func (s *Standing) ClearWindow() { s.calls, s.fails = [Folds]int64{}, [Folds]int64{} }

// Reset empties the window and ends any demotion.
func (s *Standing) Reset() {
	s.ClearWindow()
	s.drops, s.good, s.demoted = 0, 0, false
}

// EWMAAlpha weights the newest fold's mean latency in EWMA.
const EWMAAlpha = 0.3

// EWMA blends a fold's mean latency into the running average old; when seen is false (old
// is only an assumption, not measured) the mean replaces it.
func EWMA(old, mean time.Duration, seen bool) time.Duration {
	if !seen {
		return mean
	}
	return time.Duration(EWMAAlpha*float64(mean) + (1-EWMAAlpha)*float64(old))
}
