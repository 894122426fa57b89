package drill

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// Report is what a drill recorded. Times are offsets from the start of the load.
type Report struct {
	Config  Config       // with defaults applied
	Engines []EngineInfo // in the order given to the Client
	Target  string       // the engine the fault hit; "" if the run ended before the fault
	FaultAt time.Duration
	End     time.Duration // when the last request finished
	Budget  float64       // the daily budget in credits; 0 when the run had none

	Requests    []Request    // in the order they were started
	Calls       []Call       // every engine call, in the order they returned
	Transitions []Transition // breaker transitions, in order
	Notes       []Note       // other events the Client logged: pool moves, quota outs
	Snapshots   []Snapshot   // Client.Engines once a second
	Final       []translate.EngineStatus
	Interrupted bool // the load was stopped before Duration
}

// Request is one caller's request.
type Request struct {
	Start    time.Duration
	Latency  time.Duration // as the caller saw it
	OK       bool
	Err      translate.Kind // when !OK
	Engine   string         // the engine that answered, when OK
	Cost     float64        // credits charged
	Attempts int            // engine calls and skipped engines
	Tried    []string       // the engine of each attempt, in order
}

// tried reports whether q made an attempt on engine.
func (q *Request) tried(engine string) bool {
	for _, e := range q.Tried {
		if e == engine {
			return true
		}
	}
	return false
}

// Call is one call the Client made to an engine, as the engine saw it.
type Call struct {
	Engine     string
	Start, End time.Duration
	OK         bool
	Err        translate.Kind // when !OK
	Chars      int
}

// Transition is a breaker moving from one state to another.
type Transition struct {
	At       time.Duration
	Engine   string
	From, To translate.BreakerState
}

// Note is another event the Client logged, such as "pool fallback" or "engine out: quota
// exhausted".
type Note struct {
	At      time.Duration
	Engine  string
	Message string
}

// Snapshot is Client.Engines at one moment.
type Snapshot struct {
	At      time.Duration
	Engines []translate.EngineStatus
}

// recorder collects calls and events from many goroutines.
type recorder struct {
	t0    time.Time
	index map[string]int // engine name -> position; read-only once the load starts

	mu          sync.Mutex
	calls       []Call
	transitions []Transition
	notes       []Note
	snapshots   []Snapshot
}

func (r *recorder) since(t time.Time) time.Duration { return t.Sub(r.t0) }

func (r *recorder) snapshot(s []translate.EngineStatus) {
	at := time.Since(r.t0)
	r.mu.Lock()
	r.snapshots = append(r.snapshots, Snapshot{At: at, Engines: s})
	r.mu.Unlock()
}

// tap is a fake engine that records every call with its start and end.
type tap struct {
	*fake.Engine
	rec *recorder
}

func (t *tap) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	start := time.Now()
	res, err := t.Engine.Translate(ctx, req)
	end := time.Now()
	c := Call{Engine: t.Name(), Start: t.rec.since(start), End: t.rec.since(end), OK: err == nil}
	for _, s := range req.Texts {
		c.Chars += len([]rune(s))
	}
	if err != nil {
		c.Err = translate.KindOf(err)
	}
	t.rec.mu.Lock()
	t.rec.calls = append(t.rec.calls, c)
	t.rec.mu.Unlock()
	return res, err
}

// eventLog is a slog.Handler that keeps the Client's warnings about engines: breaker
// transitions ("translate: breaker open", with engine, from and to), pool moves and quota
// outs. The Client has no listener for these; its log is where it reports them.
type eventLog struct{ rec *recorder }

func (h *eventLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h *eventLog) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *eventLog) WithGroup(string) slog.Handler                { return h }

func (h *eventLog) Handle(_ context.Context, r slog.Record) error {
	at := time.Since(h.rec.t0)
	if !r.Time.IsZero() {
		at = h.rec.since(r.Time)
	}
	var engine, from, to string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "engine":
			engine = a.Value.String()
		case "from":
			from = a.Value.String()
		case "to":
			to = a.Value.String()
		}
		return true
	})
	msg := strings.TrimPrefix(r.Message, "translate: ")
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	if strings.HasPrefix(msg, "breaker ") {
		f, okf := parseBreaker(from)
		t, okt := parseBreaker(to)
		if okf && okt {
			h.rec.transitions = append(h.rec.transitions, Transition{At: at, Engine: engine, From: f, To: t})
			return nil
		}
	}
	h.rec.notes = append(h.rec.notes, Note{At: at, Engine: engine, Message: msg})
	return nil
}

func parseBreaker(s string) (translate.BreakerState, bool) {
	for _, b := range []translate.BreakerState{translate.BreakerClosed, translate.BreakerOpen, translate.BreakerHalfOpen} {
		if b.String() == s {
			return b, true
		}
	}
	return 0, false
}

// engineIndex returns the position of the engine called name, -1 if none.
func (r *Report) engineIndex(name string) int {
	for i, e := range r.Engines {
		if e.Name == name {
			return i
		}
	}
	return -1
}

// Interval is a stretch of time an engine's breaker spent in one state other than closed.
type Interval struct {
	Engine   string
	State    translate.BreakerState
	From, To time.Duration
}

// BreakerIntervals returns every stretch of time a breaker was open or half-open, in order
// of engine and time. A breaker still open at the end of the run is open until Report.End.
func (r *Report) BreakerIntervals() []Interval {
	var out []Interval
	for _, e := range r.Engines {
		state, since := translate.BreakerClosed, time.Duration(0)
		for _, t := range r.Transitions {
			if t.Engine != e.Name || t.To == state {
				continue
			}
			if state != translate.BreakerClosed {
				out = append(out, Interval{Engine: e.Name, State: state, From: since, To: t.At})
			}
			state, since = t.To, t.At
		}
		if state != translate.BreakerClosed {
			out = append(out, Interval{Engine: e.Name, State: state, From: since, To: max(since, r.End)})
		}
	}
	return out
}

// breakerAt returns the state of engine's breaker at t, from the recorded transitions.
func (r *Report) breakerAt(engine string, t time.Duration) translate.BreakerState {
	s := translate.BreakerClosed
	for _, tr := range r.Transitions {
		if tr.At > t {
			break
		}
		if tr.Engine == engine {
			s = tr.To
		}
	}
	return s
}

// steadyOpen reports whether engine's breaker was open from t to u with no transition in
// between: a request that ran from t to u then could not be routed to the engine, not even
// for a half-open trial.
func (r *Report) steadyOpen(engine string, t, u time.Duration) bool {
	if r.breakerAt(engine, t) != translate.BreakerOpen {
		return false
	}
	for _, tr := range r.Transitions {
		if tr.Engine == engine && tr.At > t && tr.At <= u {
			return false
		}
	}
	return true
}

// firstOpen returns when engine's breaker first opened at or after t.
func (r *Report) firstOpen(engine string, t time.Duration) (time.Duration, bool) {
	for _, tr := range r.Transitions {
		if tr.Engine == engine && tr.To == translate.BreakerOpen && tr.At >= t {
			return tr.At, true
		}
	}
	return 0, false
}

// Bucket is what happened in one stretch of time. Requests and engine calls belong to the
// bucket in which they started.
type Bucket struct {
	Start, Width time.Duration
	Requests     int
	OK, Failed   int
	Calls        []int // engine calls started, by engine (Report.Engines order)
	Served       []int // successful requests, by the engine that answered
	P50, P99     time.Duration
	Breakers     [][]translate.BreakerState // states each breaker was in during the bucket
	Spent        float64                    // credits charged up to the end of the bucket
}

// TotalCalls returns the number of engine calls started in the bucket.
func (b *Bucket) TotalCalls() int {
	n := 0
	for _, c := range b.Calls {
		n += c
	}
	return n
}

// Share returns engine i's share of the bucket's engine calls, 0..1, and false when the
// bucket has no calls.
func (b *Bucket) Share(i int) (float64, bool) {
	n := b.TotalCalls()
	if n == 0 {
		return 0, false
	}
	return float64(b.Calls[i]) / float64(n), true
}

// Buckets cuts the run into stretches of width.
func (r *Report) Buckets(width time.Duration) []Bucket {
	span := r.Config.Duration
	if r.Interrupted {
		span = r.End
	}
	n := max(1, int(math.Ceil(float64(span)/float64(width))))
	bs := make([]Bucket, n)
	lat := make([][]time.Duration, n)
	for i := range bs {
		bs[i] = Bucket{Start: time.Duration(i) * width, Width: width,
			Calls: make([]int, len(r.Engines)), Served: make([]int, len(r.Engines)),
			Breakers: make([][]translate.BreakerState, len(r.Engines))}
	}
	at := func(t time.Duration) int { return min(n-1, max(0, int(t/width))) }
	spent := make([]float64, n)
	for _, q := range r.Requests {
		b := &bs[at(q.Start)]
		b.Requests++
		lat[at(q.Start)] = append(lat[at(q.Start)], q.Latency)
		if q.OK {
			b.OK++
			if i := r.engineIndex(q.Engine); i >= 0 {
				b.Served[i]++
			}
		} else {
			b.Failed++
		}
		spent[at(q.Start+q.Latency)] += q.Cost
	}
	for _, c := range r.Calls {
		if i := r.engineIndex(c.Engine); i >= 0 {
			bs[at(c.Start)].Calls[i]++
		}
	}
	total := 0.0
	for k := range bs {
		total += spent[k]
		bs[k].Spent = total
		bs[k].P50, bs[k].P99 = Percentile(lat[k], 0.50), Percentile(lat[k], 0.99)
		for i, e := range r.Engines {
			from, to := bs[k].Start, bs[k].Start+width
			states := []translate.BreakerState{r.breakerAt(e.Name, from)}
			for _, t := range r.Transitions {
				if t.Engine == e.Name && t.At > from && t.At < to && t.To != states[len(states)-1] {
					states = append(states, t.To)
				}
			}
			bs[k].Breakers[i] = states
		}
	}
	return bs
}

// Percentile returns the p-quantile (0..1) of ds by nearest rank, 0 for none. It sorts a
// copy.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(len(s)-1, max(0, i))]
}

// latencies returns the latencies of the requests started in [from, to).
func (r *Report) latencies(from, to time.Duration) []time.Duration {
	var out []time.Duration
	for _, q := range r.Requests {
		if q.Start >= from && q.Start < to {
			out = append(out, q.Latency)
		}
	}
	return out
}
