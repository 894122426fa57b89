package telemetry

import (
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/fanyi-go/translate/internal/tally"
)

// Span attribute keys. Metric attributes use the same names without the "translate."
// prefix (the metric name scopes them).
const (
	attrEngine    = attribute.Key("translate.engine")
	attrAttempt   = attribute.Key("translate.attempt")
	attrAttempts  = attribute.Key("translate.attempts")
	attrOutcome   = attribute.Key("translate.outcome")
	attrCacheHit  = attribute.Key("translate.cache_hit")
	attrDegraded  = attribute.Key("translate.degraded")
	attrFallback  = attribute.Key("translate.fallback")
	attrRequestID = attribute.Key("translate.request_id")
	attrTextLen   = attribute.Key("translate.text_len")
	attrErrorType = attribute.Key("error.type")
)

// Sets is one precomputed attribute set, ready to pass to Add, Record or Observe, so that
// recording allocates nothing.
type Sets struct {
	add []metric.AddOption
	rec []metric.RecordOption
	obs []metric.ObserveOption
}

func newSets(kvs ...attribute.KeyValue) Sets {
	o := metric.WithAttributeSet(attribute.NewSet(kvs...))
	return Sets{add: []metric.AddOption{o}, rec: []metric.RecordOption{o}, obs: []metric.ObserveOption{o}}
}

// Engine is what the Recorder precomputes for one engine, and its counters. The caller
// keeps it as long as the engine's name stays in its configuration, so that the counters,
// read by the observable instruments at each collection, stay cumulative.
type Engine struct {
	engine   Sets              // engine=<name>
	attempts [NumOutcomes]Sets // engine=<name>, outcome=<ok|kind>
	span     attribute.KeyValue

	ok      tally.Counter              // successful calls (translate.attempts, outcome=ok)
	failed  [NumOutcomes]atomic.Uint64 // failed calls by outcome: rarer, not striped
	credits tally.Float                // translate.cost
	chars   tally.Counter              // translate.chars
}

// NewEngine precomputes the attribute sets of the engine named name.
func (t *Recorder) NewEngine(name string) *Engine {
	e := &Engine{engine: newSets(attribute.String("engine", name)), span: attrEngine.String(name)}
	for k := range e.attempts {
		e.attempts[k] = newSets(attribute.String("engine", name), attribute.String("outcome", t.outcomes[k]))
	}
	return e
}

// Cost adds a successful call's credits and standard characters to e's counters, on the
// stripe of the caller's key (see tally.Counter.AddAt).
func (e *Engine) Cost(stripe uint64, credits float64, chars int) {
	e.credits.AddAt(stripe, credits)
	e.chars.AddAt(stripe, uint64(max(chars, 0)))
}

// Stripe returns what stripe i (0 <= i < tally.Stripes) of e's counters holds: successful
// calls, characters and credits. For tests of who adds where.
func (e *Engine) Stripe(i int) (ok, chars uint64, credits float64) {
	return e.ok.Stripe(i), e.chars.Stripe(i), e.credits.Stripe(i)
}

// count counts a call on e with outcome oc, a success on the stripe of the caller's key.
func (e *Engine) count(oc int, stripe uint64) {
	if oc == 0 {
		e.ok.AddAt(stripe, 1)
	} else {
		e.failed[oc].Add(1)
	}
}

// initAttrs precomputes the attribute sets recording uses and the span attributes that
// depend only on the outcome, so that recording allocates nothing and builds no set.
func (t *Recorder) initAttrs() {
	for k := range t.req {
		for h := range 2 {
			for d := range 2 {
				t.req[k][h][d] = newSets(attribute.String("outcome", t.outcomes[k]),
					attribute.Bool("cache_hit", h == 1), attribute.Bool("degraded", d == 1))
			}
		}
	}
	t.hit[0] = newSets(attribute.Bool("hit", false))
	t.hit[1] = newSets(attribute.Bool("hit", true))
	t.how[0] = newSets(attribute.String("how", HowStaleCache))
	t.how[1] = newSets(attribute.String("how", HowFallbackEngine))
	t.noAttrs = newSets()
	for k := range t.reqSpan {
		t.outcomeSpan[k] = []attribute.KeyValue{attrOutcome.String(t.outcomes[k])}
		if k != 0 {
			t.outcomeSpan[k] = append(t.outcomeSpan[k], attrErrorType.String(t.outcomes[k]))
		}
		for h := range 2 {
			for d := range 2 {
				t.reqSpan[k][h][d] = append(trueOnly(attrCacheHit.Bool(h == 1), attrDegraded.Bool(d == 1),
					attrFallback.Bool(d == 1 && h == 0)), t.outcomeSpan[k]...)
			}
		}
	}
}

// trueOnly returns the boolean attributes of kvs that are true: a span carries
// translate.cache_hit, translate.degraded and translate.fallback only when they hold, as
// OpenTelemetry's semantic conventions do with such flags (absent means false). Each
// attribute costs a span 64 bytes and a copy; on a plain miss these three would be three of
// its eight.
func trueOnly(kvs ...attribute.KeyValue) []attribute.KeyValue {
	var out []attribute.KeyValue
	for _, kv := range kvs {
		if kv.Value.AsBool() {
			out = append(out, kv)
		}
	}
	return out
}
