package drill

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fanyi-go/translate"
)

// The thresholds of the verdicts, from the issue that asked for the drill.
const (
	// MaxDrain is how long after the kill the killed engine may still get new traffic.
	MaxDrain = time.Second
	// MaxP99Rise is how far p99 latency may rise over the healthy baseline once the
	// breaker has opened.
	MaxP99Rise = 50 * time.Millisecond
	// MaxFailureRate is the share of requests that may fail in SlowEngine and ServerErrors.
	MaxFailureRate = 0.001
	// QuotaGrace is how long after the first quota error a call to the exhausted engine
	// may still start: the Client marks the engine out right after the error returns, and
	// a request that had already reserved its call goes ahead.
	QuotaGrace = 10 * time.Millisecond
)

// Verdict judges a report against its scenario's expectations and explains the judgement
// line by line, each check starting with "PASS" or "FAIL".
//
// Some checks are about wall-clock time (how soon the killed engine was drained, p99
// latency); a busy machine moves them, since the engines' latencies and the Client's
// timeouts are real timers. [CountVerdict] judges only the rest.
func Verdict(r *Report) (ok bool, lines []string) { return judge(r, true) }

// CountVerdict judges what machine load cannot move: counts, shares and breaker states,
// such as "no request that started once the breaker was open was routed to the engine at
// fault" (the count behind the p99 check: a request that never waits on the slow engine
// cannot be slow because of it). The wall-clock checks of [Verdict] are still computed and
// shown, with "~" instead of PASS or FAIL, and do not count. Tests use it: they must pass on
// a busy machine.
func CountVerdict(r *Report) (ok bool, lines []string) { return judge(r, false) }

func judge(r *Report, wallClock bool) (ok bool, lines []string) {
	v := &verdict{ok: true, wallClock: wallClock}
	if r.Target == "" {
		v.check(false, "the run ended before the fault was injected")
		return v.ok, v.lines
	}
	switch r.Config.Scenario {
	case KillTop:
		verdictKill(r, v)
	case SlowEngine, ServerErrors:
		verdictLatency(r, v)
	case QuotaOut:
		verdictQuota(r, v)
	}
	if r.Interrupted {
		v.check(false, "the run was interrupted")
	}
	return v.ok, v.lines
}

type verdict struct {
	ok        bool
	wallClock bool // judge the wall-clock checks too
	lines     []string
}

// timed is a check about wall-clock time: judged only in Verdict.
func (v *verdict) timed(ok bool, format string, args ...any) {
	if v.wallClock {
		v.check(ok, format, args...)
		return
	}
	word := "~ ok"
	if !ok {
		word = "~ no"
	}
	v.lines = append(v.lines, word+"  "+fmt.Sprintf(format, args...)+" (wall clock: not judged)")
}

// leaks counts the requests that started once engine's breaker was open and stayed open
// until they finished, among them those that tried engine anyway: the breaker should have
// kept every one of them away.
func (r *Report) leaks(engine string) (eligible, leaked int) {
	for i := range r.Requests {
		q := &r.Requests[i]
		if !r.steadyOpen(engine, q.Start, q.Start+q.Latency) {
			continue
		}
		eligible++
		if q.tried(engine) {
			leaked++
		}
	}
	return eligible, leaked
}

// checkLeaks is the count check of the breaker scenarios.
func (r *Report) checkLeaks(v *verdict) {
	eligible, leaked := r.leaks(r.Target)
	v.check(eligible > 0 && leaked == 0,
		"no request routed to %s while its breaker was open: %d of %d requests started then tried it",
		r.Target, leaked, eligible)
}

func (v *verdict) check(ok bool, format string, args ...any) {
	word := "PASS"
	if !ok {
		word, v.ok = "FAIL", false
	}
	v.lines = append(v.lines, word+"  "+fmt.Sprintf(format, args...))
}

func (v *verdict) info(format string, args ...any) {
	v.lines = append(v.lines, "      "+fmt.Sprintf(format, args...))
}

// verdictKill: the killed engine receives no new traffic within 1s and no request fails.
func verdictKill(r *Report, v *verdict) {
	var routed, trials int
	var lastRouted time.Duration = -1
	for _, c := range r.Calls {
		if c.Engine != r.Target || c.Start < r.FaultAt {
			continue
		}
		if r.breakerAt(r.Target, c.Start) != translate.BreakerClosed {
			// An open breaker lets no call through; a call that starts while it is not
			// closed is a half-open trial (or raced the log of the half-open transition).
			if c.Start > r.FaultAt+MaxDrain {
				trials++
			}
			continue
		}
		lastRouted = max(lastRouted, c.Start)
		if c.Start > r.FaultAt+MaxDrain {
			routed++
		}
	}
	if open, ok := r.firstOpen(r.Target, r.FaultAt); ok {
		v.info("%s killed at %s; its breaker opened %s later", r.Target, secs(r.FaultAt), ms(open-r.FaultAt))
	} else {
		v.info("%s killed at %s; its breaker never opened", r.Target, secs(r.FaultAt))
	}
	if lastRouted >= 0 {
		v.info("the last call routed to %s started %s after the kill", r.Target, ms(lastRouted-r.FaultAt))
	}
	v.timed(routed == 0, "%s gets no new traffic from %s after the kill: %d routed calls started later",
		r.Target, MaxDrain, routed)
	r.checkLeaks(v)
	if trials > 0 {
		v.info("besides, %d half-open trial calls probed %s later on (the breaker's own probes, %d at most per cooldown)",
			trials, r.Target, halfOpenCalls)
	}
	failed := failures(r.Requests)
	v.check(len(failed) == 0, "no request fails: %d of %d failed%s", len(failed), len(r.Requests), kinds(failed))
}

// halfOpenCalls is the library default for BreakerPolicy.HalfOpenCalls, which the drill
// keeps.
const halfOpenCalls = 5

// p99Windows holds the latency windows of SlowEngine and ServerErrors: the healthy baseline
// (requests started before the fault) and the requests started once the breaker of the
// engine at fault had opened.
type p99Windows struct {
	base, after       []time.Duration
	baseP99, afterP99 time.Duration
	open              time.Duration // when the breaker opened
	opened            bool
}

func (r *Report) p99Windows() p99Windows {
	w := p99Windows{base: r.latencies(0, r.FaultAt)}
	w.baseP99 = Percentile(w.base, 0.99)
	w.open, w.opened = r.firstOpen(r.Target, r.FaultAt)
	if w.opened {
		w.after = r.latencies(w.open, r.End+time.Nanosecond)
		w.afterP99 = Percentile(w.after, 0.99)
	}
	return w
}

// verdictLatency: once the breaker has opened, p99 stays within 50ms of the healthy
// baseline and callers see fewer than 0.1% failures.
func verdictLatency(r *Report, v *verdict) {
	w := r.p99Windows()
	v.info("healthy baseline (requests started before the fault at %s): %d requests, p50 %s, p99 %s",
		secs(r.FaultAt), len(w.base), ms(Percentile(w.base, 0.5)), ms(w.baseP99))
	if !w.opened {
		v.check(false, "%s's breaker never opened after the fault", r.Target)
	} else {
		detect := r.latencies(r.FaultAt, w.open)
		v.info("detection (requests started between the fault and the breaker opening %s later): %d requests, p99 %s",
			ms(w.open-r.FaultAt), len(detect), ms(Percentile(detect, 0.99)))
		if r.Config.Scenario == SlowEngine {
			v.info("  those sent to %s waited for its %s attempt timeout before failing over", r.Target, r.Config.Timeout)
		} else {
			v.info("  those sent to %s failed there in %.0f%% of cases and failed over", r.Target, 100*ServerErrorRate)
		}
		r.checkLeaks(v)
		v.timed(len(w.after) > 0 && w.afterP99 <= w.baseP99+MaxP99Rise,
			"p99 once the breaker opened (requests started after %s): %s, %+d ms over the baseline (limit +%d ms); %d requests",
			secs(w.open), ms(w.afterP99), (w.afterP99 - w.baseP99).Milliseconds(), MaxP99Rise.Milliseconds(), len(w.after))
	}
	failed := failures(r.Requests)
	rate := 0.0
	if len(r.Requests) > 0 {
		rate = float64(len(failed)) / float64(len(r.Requests))
	}
	v.check(len(r.Requests) > 0 && rate < MaxFailureRate, "callers see %.3f%% failures (limit %.1f%%): %d of %d%s",
		100*rate, 100*MaxFailureRate, len(failed), len(r.Requests), kinds(failed))
}

// verdictQuota: the exhausted engine is left alone after its first quota error, and the
// budget holds.
func verdictQuota(r *Report, v *verdict) {
	r.checkLeftAlone(v)
	r.checkTakenOut(v)
	for _, s := range r.Final {
		if s.Name == r.Target {
			v.info("the Client now counts %d characters left on %s", s.QuotaLeft, r.Target)
		}
	}
	r.checkBudget(v)
	r.checkRefusals(v)
}

// firstQuotaError returns when the first call to the target came back with a quota error,
// or -1 if none did.
func (r *Report) firstQuotaError() time.Duration {
	first := time.Duration(-1)
	for _, c := range r.Calls {
		if c.Engine == r.Target && c.Err == translate.KindQuotaExhausted && (first < 0 || c.End < first) {
			first = c.End
		}
	}
	return first
}

// checkLeftAlone: no call to the target starts more than QuotaGrace after its first quota
// error.
func (r *Report) checkLeftAlone(v *verdict) {
	first := r.firstQuotaError()
	if first < 0 {
		v.check(false, "%s never answered with a quota error after the fault", r.Target)
		return
	}
	var inFlight, late, grace int
	for _, c := range r.Calls {
		switch {
		case c.Engine != r.Target || c.Start < r.FaultAt:
		case c.Start <= first:
			inFlight++
		case c.Start <= first+QuotaGrace:
			grace++
		default:
			late++
		}
	}
	v.info("quota dropped to zero at %s; the first quota error came back %s later; %d calls had started by then and failed over",
		secs(r.FaultAt), ms(first-r.FaultAt), inFlight)
	v.timed(late == 0, "%s is left alone after its first quota error: %d calls started more than %s after it (%d within)",
		r.Target, late, QuotaGrace, grace)
}

// checkTakenOut: the Client took the target out for its quota, and no request started later
// tried it.
func (r *Report) checkTakenOut(v *verdict) {
	out, ok := r.quotaOut(r.Target)
	if !ok {
		v.check(false, "the Client never took %s out for its quota", r.Target)
		return
	}
	var after, leaked int
	for i := range r.Requests {
		if q := &r.Requests[i]; q.Start > out {
			after++
			if q.tried(r.Target) {
				leaked++
			}
		}
	}
	v.check(leaked == 0, "no request routed to %s once the Client took it out (%s): %d of %d requests started later tried it",
		r.Target, secs(out), leaked, after)
}

// checkBudget: what the engines billed (every successful call on a paid engine) stays
// within the budget.
func (r *Report) checkBudget(v *verdict) {
	billed := 0.0
	for _, c := range r.Calls {
		if i := r.engineIndex(c.Engine); c.OK && i >= 0 {
			billed += float64(c.Chars) * r.Engines[i].Profile.CostPerMillion / 1e6
		}
	}
	charged := 0.0
	for _, q := range r.Requests {
		charged += q.Cost
	}
	v.check(r.Budget > 0 && billed <= r.Budget*(1+1e-9),
		"the budget holds: engines billed %.6f credits of %.6f (%.1f%%); the Client charged callers %.6f",
		billed, r.Budget, 100*billed/r.Budget, charged)
}

// checkRefusals: every failed request was refused for the budget, which is then the
// expected outcome and said so.
func (r *Report) checkRefusals(v *verdict) {
	failed := failures(r.Requests)
	other := 0
	for _, q := range failed {
		if q.Err != translate.KindBudgetExceeded {
			other++
		}
	}
	v.check(other == 0, "every failed request was refused for the budget: %d failed otherwise%s", other, kinds(failed))
	switch {
	case len(failed) > 0 && other == 0:
		v.info("EXPECTED: %d of %d requests were refused, the first started at %s%s: with the free engine out, only paid engines were left, and the budget (planned with the free engine in) ran out; refusing is what the budget is for",
			len(failed), len(r.Requests), secs(r.firstFailed()), kinds(failed))
	case len(failed) == 0:
		v.info("every request was answered; the budget did not run out")
	}
}

// firstFailed returns when the first failed request started, or End if none failed.
func (r *Report) firstFailed() time.Duration {
	first := r.End
	for _, q := range r.Requests {
		if !q.OK {
			first = min(first, q.Start)
		}
	}
	return first
}

// quotaOut returns when the Client logged that it took engine out for its quota, after the
// fault.
func (r *Report) quotaOut(engine string) (time.Duration, bool) {
	for _, n := range r.Notes {
		if n.Engine == engine && n.At >= r.FaultAt && strings.Contains(n.Message, "quota") {
			return n.At, true
		}
	}
	return 0, false
}

func failures(qs []Request) []Request {
	var out []Request
	for _, q := range qs {
		if !q.OK {
			out = append(out, q)
		}
	}
	return out
}

// kinds summarises the error kinds of failed requests: " (12 budget_exceeded, 1 timeout)".
func kinds(failed []Request) string {
	if len(failed) == 0 {
		return ""
	}
	count := map[translate.Kind]int{}
	for _, q := range failed {
		count[q.Err]++
	}
	ks := make([]translate.Kind, 0, len(count))
	for k := range count {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%d %s", count[k], k)
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Round(time.Millisecond).Milliseconds()) }

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }
