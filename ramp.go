package translate

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/fanyi-go/translate/internal/canary"
)

// Ramp makes a canary ramp itself (Profile.Ramp; seed 002's gray release): the engine
// serves a stable share of the UserIDs as a canary (see Profile.Canary), and the Client
// moves that share through Steps on its own, judging the canary against the engines it
// replaces, and rolls it back to 0 at once when it does worse.
//
// The ramp starts at Profile.Canary, or at the first step when Canary is 0 and the engine
// is not Staged (a staged engine at 0, "canary": 0 in a file, stays stopped). At each step
// the Client counts the canary's own calls and, over the same window, the calls of the
// engines it replaces: the engines that are neither canaries nor FallbackOnly. A call
// counts as an error when it fails for a reason of the engine's (as for breakers: not the
// caller's cancellation, not an unsupported pair or a bad request), and as a bad answer
// when its output fails the Client's checks (an echo of the source, an empty text, a lost
// placeholder). After MinRequests calls and StepEvery at the step, a canary within every
// tolerance below moves to the next step; a canary out of one falls to 0 at once: at its
// MinRequests-th call, or earlier when its errors or bad answers already exceed what
// MinRequests calls may hold (then only beside at least MinRequests calls of the others;
// with fewer, a canary is held to no errors and no bad answers, and its latency is not
// judged). A canary that its health takes out of routing while it ramps (demoted to the
// fallback pool: see Routing in the package doc), where no call could judge it any more,
// falls to 0 too.
//
// The last step ends the analysis: the engine stays a canary at that share (at 100, every
// request with a UserID) until a configuration promotes it (leave "canary" and "ramp" out).
// A rollback ends it too: the share stays 0 until the engine's profile changes. The share
// in force overrides Profile.Canary without changing the configuration: Client.Engines
// reports it (EngineStatus.Canary). A Reconfigure (or a WatchConfig reload) that leaves
// the engine's profile as it was keeps the analysis where it stands; one that changes any
// field of the profile starts it again from the start. Each Client judges its own calls:
// replicas ramp apart.
//
// Every step is logged (info for an advance, warn for a rollback), counted in the
// translate.canary.step metric (attributes engine, from, to, reason) and passed to the
// listeners of Client.OnCanaryStep. Zero fields mean the default written beside them.
type Ramp struct {
	// Steps are the shares, in percent, the canary goes through: rising, each above 0 and
	// at most 100, at most 10 of them. nil means 1, 5, 20, 100.
	Steps []float64
	// MinRequests is how many calls of its own the canary makes at a step before it may
	// move on, 1..1e6; 0 means 100.
	MinRequests int
	// StepEvery is the least time the canary stays at a step before it moves on,
	// 1ns..24h; 0 means 1m. A rollback does not wait for it.
	StepEvery time.Duration
	// MaxErrorRateDelta is how much the canary's error rate may exceed the other engines'
	// over the step, 0..1; 0 means 0.05 (5 points).
	MaxErrorRateDelta float64
	// MinQualityRatio is the least the canary's share of good answers (answers that pass
	// the output checks) may be, as a ratio of the other engines', 0..1; 0 means 0.95.
	MinQualityRatio float64
	// MaxLatencyRatio is the most the canary's mean latency (of its successful calls) may
	// be, as a ratio of the other engines', 1..100; 0 means 1.5. Means under 10ms count as
	// 10ms: differences there are noise.
	MaxLatencyRatio float64
}

// validate checks the ramp; field names are prefixed with prefix ("...Profile.Ramp.").
func (r *Ramp) validate(prefix string) error {
	if r == nil {
		return nil
	}
	if at, problem := canary.CheckSteps(r.Steps); problem != "" {
		return configError(prefix+"Steps"+at, problem)
	}
	return checkLimits(prefix, *r)
}

func (r *Ramp) settings() canary.Settings {
	return canary.Settings{Steps: slices.Clone(r.Steps), MinRequests: r.MinRequests, StepEvery: r.StepEvery,
		MaxErrorRateDelta: r.MaxErrorRateDelta, MinQualityRatio: r.MinQualityRatio, MaxLatencyRatio: r.MaxLatencyRatio}
}

// CanaryStep is a move of a ramping canary's share (see Ramp): an advance after a step
// within every tolerance (Reason "healthy"), or a rollback to 0 (Reason "error_rate",
// "quality", "latency" or "health"), with what the Client compared.
type CanaryStep struct {
	Engine   string
	From, To float64 // shares in percent; To is 0 for a rollback
	// Reason is "healthy" for an advance, else the tolerance the canary was out of:
	// "error_rate", "quality" or "latency"; or "health" when its health took it out of
	// routing.
	Reason string
	At     time.Time     // the Client's clock at the call that decided the step
	Held   time.Duration // how long the canary was at From
	// The canary's calls at From, and the other engines' over the same window.
	Requests, BaseRequests   int64
	ErrorRate, BaseErrorRate float64
	Quality, BaseQuality     float64 // share of answers that passed the output checks
	Latency, BaseLatency     time.Duration
}

// OnCanaryStep calls fn with every step of every ramping canary (see Ramp) and returns a
// function that stops it. fn runs on the goroutine of the request whose call decided the
// step, once the Client holds no lock; it must return quickly. A panic in fn is recovered
// and logged. OnCanaryStep is safe for concurrent use.
func (c *Client) OnCanaryStep(fn func(CanaryStep)) (stop func()) {
	return c.ramps.listeners.Add(fn)
}

// rampState is the Client's part of the canary analysis: the calls of the engines canaries
// are compared with, and the listeners of OnCanaryStep.
type rampState struct {
	base      canary.Baseline
	listeners canary.Listeners[CanaryStep]
}

// rampFor gives e its canary analysis: old's when e stays with the same profile, a new
// one when its profile gained a Ramp or changed, none without a Ramp or for a staged
// engine at 0.
func (c *Client) rampFor(e, old *engine, now time.Time) {
	p := &e.prof
	if p.Ramp == nil || (p.Staged && p.Canary == 0) {
		return
	}
	e.s.ramped = true
	if old != nil && old.ramp != nil && reflect.DeepEqual(old.prof, e.prof) {
		e.ramp = old.ramp
		return
	}
	r := *p.Ramp // the Client's own copy: a later change to the caller's Ramp is a new profile
	r.Steps = slices.Clone(r.Steps)
	p.Ramp = &r
	e.ramp = canary.New(r.settings(), &c.ramps.base, p.Canary, now)
}

// canaryShare is the share of UserIDs e serves as a canary: its ramp's, else its profile's.
func (e *engine) canaryShare() float64 {
	if e.ramp != nil {
		return e.ramp.Share()
	}
	return e.prof.Canary
}

// rampRecord feeds a settled call to the canary analysis, while an engine of the
// configuration ramps: a canary's call to its analysis, another engine's to the baseline.
func (c *Client) rampRecord(w *walk, e *engine, err error, kind Kind, caller bool) {
	if !e.s.ramped {
		return
	}
	o, counted := canary.OutcomeOf(err != nil, !caller && breakerFailure(kind), kind == KindBadOutput)
	if !counted {
		return
	}
	lat := time.Duration(w.ended - w.callStart())
	switch {
	case e.ramp != nil:
		if st, moved := e.ramp.Record(o, lat, time.Unix(0, w.now)); moved {
			c.canaryStepped(e.name, st)
		}
	case !e.canary && !e.fallback:
		c.ramps.base.Record(w.spread(), o, lat)
	}
}

// canaryStepped reports a step: a log line, the metric, the listeners.
func (c *Client) canaryStepped(engine string, st canary.Step) {
	ev := CanaryStep{Engine: engine, From: st.From, To: st.To, Reason: st.Reason.String(), At: st.At,
		Held: st.At.Sub(st.Since), Requests: st.Canary.Calls, BaseRequests: st.Base.Calls,
		ErrorRate: st.Canary.ErrorRate(), BaseErrorRate: st.Base.ErrorRate(),
		Quality: st.Canary.Quality(), BaseQuality: st.Base.Quality(),
		Latency: st.Canary.Latency(), BaseLatency: st.Base.Latency()}
	c.obs.canaryStep(ev)
	c.ramps.listeners.Call(ev, func(p any) {
		c.obs.warn(fmt.Sprintf("an OnCanaryStep listener panicked (%T)", p), ev.Engine)
	})
}

// canaryStep counts and logs a step: info for an advance, warn for a rollback.
func (o *observer) canaryStep(ev CanaryStep) {
	share := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	o.canarySteps.Add(context.Background(), 1, metric.WithAttributes(attribute.String("engine", ev.Engine),
		attribute.String("from", share(ev.From)), attribute.String("to", share(ev.To)), attribute.String("reason", ev.Reason)))
	if o.log == nil {
		return
	}
	level, msg := slog.LevelInfo, "translate: canary advanced"
	if ev.To == 0 {
		level, msg = slog.LevelWarn, "translate: canary rolled back"
	}
	o.log.LogAttrs(context.Background(), level, msg, slog.String("engine", ev.Engine),
		slog.Float64("from", ev.From), slog.Float64("to", ev.To), slog.String("reason", ev.Reason),
		slog.Duration("held", ev.Held), slog.Int64("requests", ev.Requests), slog.Int64("base_requests", ev.BaseRequests),
		slog.Float64("error_rate", ev.ErrorRate), slog.Float64("base_error_rate", ev.BaseErrorRate),
		slog.Float64("quality", ev.Quality), slog.Float64("base_quality", ev.BaseQuality),
		slog.Duration("latency", ev.Latency), slog.Duration("base_latency", ev.BaseLatency))
}

// rampDemotion appends e to demoted when it is a ramping canary that its health just
// demoted (to the fallback pool, where it gets no traffic to be judged by).
func rampDemotion(demoted []*engine, e *engine, to Pool) []*engine {
	if e.ramp != nil && to == PoolFallback {
		demoted = append(demoted, e)
	}
	return demoted
}

// rampDemoted rolls back the ramping canaries a fold demoted: their health fell under
// MinHealth (or dropped two folds in a row), which says more than the calls the
// analysis could still count.
func (c *Client) rampDemoted(demoted []*engine, now int64) {
	for _, e := range demoted {
		if st, moved := e.ramp.Stop(canary.Health, time.Unix(0, now)); moved {
			c.canaryStepped(e.name, st)
		}
	}
}
