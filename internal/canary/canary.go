// Package canary judges a canary engine against the engines it replaces and ramps its
// share of the traffic step by step (seed 002's gray release: 1% -> 5% -> 20% -> 100%).
//
// It exists so that the request path carries one call per engine call: the Client records
// each call's outcome, on the canary in its Analysis and on the other engines in the shared
// Baseline, and acts on the Step an Analysis returns (logs, metrics, listeners). The
// policy — which engines ramp, what a share means to the router — stays in the root
// package.
//
// An Analysis is a small state machine: running at a share, it counts the canary's calls
// at that share and compares them with what the Baseline counted over the same window.
// After at least MinRequests calls and StepEvery at the share, a canary within every
// tolerance advances to the next step; a canary outside one falls to 0 at once (and
// earlier than MinRequests when its failures already exceed what MinRequests calls may
// hold beside a baseline of MinRequests calls). The last step ends the analysis (done); so does a rollback (stopped).
package canary

import (
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fanyi-go/translate/internal/tally"
)

// Defaults of Settings' zero fields.
var DefaultSteps = []float64{1, 5, 20, 100}

const (
	DefaultMinRequests       = 100
	DefaultStepEvery         = time.Minute
	DefaultMaxErrorRateDelta = 0.05
	DefaultMinQualityRatio   = 0.95
	DefaultMaxLatencyRatio   = 1.5
)

// LatencyFloor is the latency below which differences are noise: mean latencies are
// compared as max(mean, LatencyFloor), so a canary at 2ms beside engines at 1ms passes.
const LatencyFloor = 10 * time.Millisecond

// Settings are an analysis' steps and tolerances. Zero fields mean the defaults above. The
// root package validates them (ranges in its Ramp type); Settings are not changed after
// New.
type Settings struct {
	Steps             []float64 // shares in percent, rising, each in (0, 100]
	MinRequests       int       // the canary's calls at a step before it may advance
	StepEvery         time.Duration
	MaxErrorRateDelta float64 // canary error rate minus the baseline's, at most
	MinQualityRatio   float64 // canary good-output rate over the baseline's, at least
	MaxLatencyRatio   float64 // canary mean latency over the baseline's, at most
}

// WithDefaults returns s with its zero fields set to the defaults.
func (s Settings) WithDefaults() Settings {
	if len(s.Steps) == 0 {
		s.Steps = DefaultSteps
	}
	if s.MinRequests == 0 {
		s.MinRequests = DefaultMinRequests
	}
	if s.StepEvery == 0 {
		s.StepEvery = DefaultStepEvery
	}
	if s.MaxErrorRateDelta == 0 {
		s.MaxErrorRateDelta = DefaultMaxErrorRateDelta
	}
	if s.MinQualityRatio == 0 {
		s.MinQualityRatio = DefaultMinQualityRatio
	}
	if s.MaxLatencyRatio == 0 {
		s.MaxLatencyRatio = DefaultMaxLatencyRatio
	}
	return s
}

// Outcome is what one engine call came to, for the analysis.
type Outcome uint8

const (
	OK        Outcome = iota // answered, and the answer passed the checks
	Failed                   // failed for a reason of the engine's (not the caller's)
	BadOutput                // answered, but the answer was bad (echo, empty, lost placeholder...)
)

// Counts are calls counted over a window.
type Counts struct {
	Calls    int64 // OK + Errors + Bad
	Errors   int64
	Bad      int64
	OK       int64
	LatNanos int64 // sum of the OK calls' latencies
}

func (c *Counts) add(o Outcome, lat time.Duration) {
	c.Calls++
	switch o {
	case OK:
		c.OK++
		c.LatNanos += int64(lat)
	case Failed:
		c.Errors++
	default:
		c.Bad++
	}
}

// sub returns c minus d.
func (c Counts) sub(d Counts) Counts {
	return Counts{Calls: c.Calls - d.Calls, Errors: c.Errors - d.Errors, Bad: c.Bad - d.Bad,
		OK: c.OK - d.OK, LatNanos: c.LatNanos - d.LatNanos}
}

// ErrorRate is Errors over Calls, 0 without calls.
func (c Counts) ErrorRate() float64 {
	if c.Calls == 0 {
		return 0
	}
	return float64(c.Errors) / float64(c.Calls)
}

// Quality is the share of answers that passed the checks, OK over OK + Bad; 1 without
// answers.
func (c Counts) Quality() float64 {
	if c.OK+c.Bad == 0 {
		return 1
	}
	return float64(c.OK) / float64(c.OK+c.Bad)
}

// Latency is the mean latency of the OK calls, 0 without any.
func (c Counts) Latency() time.Duration {
	if c.OK == 0 {
		return 0
	}
	return time.Duration(c.LatNanos / c.OK)
}

// Baseline counts the calls of the engines a canary is compared with, since it was made;
// an Analysis subtracts what it read when its step started. Every call of every engine that
// is not a canary records there, on every core at once, while a canary ramps: its counters
// are striped tallies (internal/tally). The zero value is ready; it is safe for concurrent
// use and must not be copied.
type Baseline struct {
	calls, errors, bad, ok, lat tally.Counter
}

// Record counts one call, in the stripes chosen by key (a well-mixed hash).
func (b *Baseline) Record(key uint64, o Outcome, lat time.Duration) {
	b.calls.AddAt(key, 1)
	switch o {
	case OK:
		b.ok.AddAt(key, 1)
		b.lat.AddAt(key, uint64(max(lat, 0)))
	case Failed:
		b.errors.AddAt(key, 1)
	default:
		b.bad.AddAt(key, 1)
	}
}

// Total returns every call counted so far.
func (b *Baseline) Total() Counts {
	return Counts{Calls: int64(b.calls.Load()), Errors: int64(b.errors.Load()), Bad: int64(b.bad.Load()),
		OK: int64(b.ok.Load()), LatNanos: int64(b.lat.Load())}
}

// Reason says why a Step was taken.
type Reason uint8

const (
	Healthy   Reason = iota // within every tolerance: advanced
	ErrorRate               // error rate above the baseline's by more than MaxErrorRateDelta
	Quality                 // good-output rate below MinQualityRatio of the baseline's
	Latency                 // mean latency above MaxLatencyRatio of the baseline's
	Health                  // taken out of routing by its health (Stop)
)

var reasonNames = [...]string{"healthy", "error_rate", "quality", "latency", "health"}

// String returns "healthy", "error_rate", "quality", "latency" or "health".
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}

// Step is a move of the canary's share: an advance, or a rollback to 0.
type Step struct {
	From, To float64   // shares in percent
	Reason   Reason    // Healthy for an advance
	At       time.Time // the time of the call that decided it
	Since    time.Time // when the step it leaves began
	Canary   Counts    // the canary's calls at the step it leaves
	Base     Counts    // the baseline's calls over the same window
}

// State is where an Analysis stands.
type State uint8

const (
	Running State = iota // judging the current step
	Done                 // reached the last step
	Stopped              // rolled back to 0
)

// Analysis ramps one canary. It is safe for concurrent use.
type Analysis struct {
	set   Settings
	base  *Baseline
	share atomic.Uint64 // float64 bits: the share the router reads
	over  atomic.Bool   // Done or Stopped: Record returns without the lock

	mu    sync.Mutex
	state State
	next  int       // index in set.Steps of the next share
	since time.Time // the current step began
	own   Counts    // the canary's calls at the current step
	base0 Counts    // base.Total() when the current step began
}

// New starts an analysis at share start (percent; 0 means the first step) at time now,
// comparing with base. A start at or above the last step is Done at once.
func New(s Settings, base *Baseline, start float64, now time.Time) *Analysis {
	s = s.WithDefaults()
	a := &Analysis{set: s, base: base, since: now, base0: base.Total()}
	if start <= 0 {
		start = s.Steps[0]
	}
	for a.next < len(s.Steps) && s.Steps[a.next] <= start {
		a.next++
	}
	if a.next == len(s.Steps) {
		a.state = Done
		a.over.Store(true)
	}
	a.share.Store(math.Float64bits(start))
	return a
}

// Share is the canary's share now, in percent: one atomic load.
func (a *Analysis) Share() float64 { return math.Float64frombits(a.share.Load()) }

// State returns where the analysis stands.
func (a *Analysis) State() State {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state
}

// Record counts one call of the canary that ended with o after lat, at time now, and
// returns the Step it decided, if any. A Done or Stopped analysis counts nothing.
func (a *Analysis) Record(o Outcome, lat time.Duration, now time.Time) (Step, bool) {
	if a.over.Load() {
		return Step{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state != Running {
		return Step{}, false
	}
	a.own.add(o, lat)
	base := a.base.Total().sub(a.base0)
	from := a.Share()
	st := Step{From: from, At: now, Since: a.since, Canary: a.own, Base: base}
	if why, bad := a.judge(a.own, base); bad {
		a.state = Stopped
		a.over.Store(true)
		a.share.Store(0)
		st.Reason = why
		return st, true
	}
	if a.own.Calls < int64(a.set.MinRequests) || now.Sub(a.since) < a.set.StepEvery {
		return Step{}, false
	}
	st.To = a.set.Steps[a.next]
	a.next++
	if a.next == len(a.set.Steps) {
		a.state = Done
		a.over.Store(true)
	}
	a.share.Store(math.Float64bits(st.To))
	a.since, a.own, a.base0 = now, Counts{}, a.base.Total()
	return st, true
}

// Stop rolls a running analysis back to 0 for a reason found outside it (the engine's
// health took it out of routing, where it can no longer be judged) and returns the Step;
// false when the analysis is Done or Stopped already.
func (a *Analysis) Stop(why Reason, now time.Time) (Step, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state != Running {
		return Step{}, false
	}
	st := Step{From: a.Share(), Reason: why, At: now, Since: a.since, Canary: a.own, Base: a.base.Total().sub(a.base0)}
	a.state = Stopped
	a.over.Store(true)
	a.share.Store(0)
	return st, true
}

// judge compares the canary's calls with the baseline's: the first tolerance it is out of,
// and true, or false while it is within all (or too few calls tell). Before MinRequests
// calls, a canary is out only when its errors or bad answers so far already exceed what
// MinRequests calls may hold, and only beside a baseline of MinRequests calls. The
// baseline counts only with MinRequests calls of its own; with fewer, a canary of
// MinRequests calls is held to no errors and no bad output, and its latency is not judged.
func (a *Analysis) judge(own, base Counts) (Reason, bool) {
	min := int64(a.set.MinRequests)
	full := own.Calls >= min
	ref := Counts{}
	switch {
	case base.Calls >= min:
		ref = base
	case !full:
		return Healthy, false // nothing certain yet: too few calls on either side
	}
	// Error rate over max(calls, MinRequests): before MinRequests, the rate if every
	// call still to come succeeds.
	if float64(own.Errors)/float64(max(own.Calls, min)) > ref.ErrorRate()+a.set.MaxErrorRateDelta {
		return ErrorRate, true
	}
	answers := own.OK + own.Bad
	if !full {
		answers = max(answers, min-own.Errors)
	}
	if answers > 0 && 1-float64(own.Bad)/float64(answers) < a.set.MinQualityRatio*ref.Quality() {
		return Quality, true
	}
	if full && own.OK > 0 && ref.OK > 0 {
		c, b := max(own.Latency(), LatencyFloor), max(ref.Latency(), LatencyFloor)
		if float64(c) > a.set.MaxLatencyRatio*float64(b) {
			return Latency, true
		}
	}
	return Healthy, false
}

// MaxSteps bounds Settings.Steps.
const MaxSteps = 10

// CheckSteps checks a ramp's steps: rising, each above 0 and at most 100, at most MaxSteps
// of them. It returns what is wrong, "" when nothing is, and where: "" for the steps as a
// whole, else the index of the step at fault ("[2]").
func CheckSteps(steps []float64) (at, problem string) {
	if len(steps) > MaxSteps {
		return "", "must have at most 10 steps"
	}
	for i, x := range steps {
		switch {
		case !(x > 0 && x <= 100):
			return "[" + strconv.Itoa(i) + "]", "must be above 0 and at most 100"
		case i > 0 && x <= steps[i-1]:
			return "[" + strconv.Itoa(i) + "]", "must be above the step before"
		}
	}
	return "", ""
}

// OutcomeOf is a call's Outcome: OK when it did not fail, else BadOutput when its answer
// failed the checks, else Failed. counted is false for a failure that is not the engine's
// (engines false: the caller's cancellation, an unsupported pair, a bad request), which
// the analysis does not count.
func OutcomeOf(failed, engines, badOutput bool) (o Outcome, counted bool) {
	switch {
	case !failed:
		return OK, true
	case !engines:
		return OK, false
	case badOutput:
		return BadOutput, true
	}
	return Failed, true
}
