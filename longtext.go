package translate

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fanyi-go/translate/internal/segment"
)

// textChars is the most characters of one text in a call of p: MaxTextChars, capped by
// MaxChars; 0 means unlimited.
func textChars(p *Profile) int {
	t := p.MaxTextChars
	if t == 0 || p.MaxChars > 0 && t > p.MaxChars {
		t = p.MaxChars
	}
	return t
}

// callChars is the most characters one call of p carries: MaxChars, or else MaxTexts texts
// of MaxTextChars; 0 means unlimited.
func callChars(p *Profile) int {
	switch {
	case p.MaxChars > 0:
		return p.MaxChars
	case p.MaxTextChars > 0 && p.MaxTextChars <= math.MaxInt32/max(1, p.MaxTexts):
		return p.MaxTextChars * max(1, p.MaxTexts)
	}
	return 0
}

// longText is a text longer than one call of the engine its walk picked, translated as
// several walks at once, one per call's worth of text (a unit). The walks start on the
// engine the last successful one ended on, leaving out the engines it left: the units stay
// on one engine as long as it serves, and when it fails the rest follow the failover.
type longText struct {
	base  walk // what every unit's walk shares: the request, its plan, deadline and clocks
	parts []longPart

	mu    sync.Mutex
	cur   *engine // where the next unit's walk starts
	stage stage
	at    int
	tried set
	err   error // the first unit's error
}

// longPart is one unit's outcome.
type longPart struct {
	text     string
	by       []string
	cost     float64
	src      string
	attempts []Attempt
	degraded bool
	ended    int64 // when its last call returned, on deadline.Now's clock
}

// mayGoLong reports whether r may be translated as several walks at once: not for a
// streamed segment (the stream runs its segments at once already), a request with an id of
// its own (it reaches each engine at most once) or a Client with a Store (its lease covers
// one call of the whole text), nor with WithBatchConcurrency 1.
func (c *Client) mayGoLong(r *request) bool {
	return r.sink == nil && r.RequestID == "" && r.prior == nil && c.store == nil && c.batchConc > 1 && r.fid.inUnits()
}

// runLong translates the walk's text as units of one call each of the engine the walk
// picks, at most WithBatchConcurrency (and the engine's MaxConcurrency) at a time, within
// the request's deadline; each unit has the attempt budget of a request. It reports false,
// having made at most the pick (w.cur), when the text fits one call or no engine serves.
func (w *walk) runLong(res *Result) (*Result, error, bool) {
	if !w.c.mayGoLong(w.r) {
		return nil, nil, false
	}
	if a := w.r.avoid; a != "" {
		if e := w.r.s.byName[a]; e != nil {
			w.tried.add(e.idx)
		}
	}
	e, _ := w.next()
	if e == nil {
		return nil, nil, false
	}
	unit := callChars(&e.prof)
	if unit == 0 || w.r.chars <= unit {
		return nil, nil, false
	}
	split := segment.Split(w.r.Text, unit)
	lt := &longText{parts: make([]longPart, len(split.Parts)), cur: e, stage: w.stage, at: w.at, tried: w.tried.clone(),
		base: walk{c: w.c, r: w.r, plan: w.plan, deadline: w.deadline, now: w.now, start: w.start, ended: w.start}}
	conc := min(w.c.batchConc, len(split.Parts))
	if m := e.prof.MaxConcurrency; m > 0 {
		conc = min(conc, m)
	}
	ctx, cancel := context.WithCancel(w.ctx)
	defer cancel()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(split.Parts) && ctx.Err() == nil; i = int(next.Add(1)) - 1 {
				if !lt.translate(ctx, i, split.Parts[i]) {
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	res, err := w.joinLong(res, split, lt)
	return res, err, true
}

// translate walks unit i through the engines and reports whether it was translated.
func (lt *longText) translate(ctx context.Context, i int, text string) bool {
	c := lt.base.c
	sc := c.getScratch(len(lt.base.r.s.engines))
	defer c.putScratch(sc)
	w := lt.base
	w.ctx, w.sc, w.called = ctx, sc, true // called: its first call reads the time
	lt.mu.Lock()
	w.cur, w.stage, w.at, w.tried = lt.cur, lt.stage, lt.at, lt.tried.clone()
	lt.mu.Unlock()
	sc.part[0] = text
	sc.j = job{split: segment.Segments{Parts: sc.part[:], Seps: sc.sep[:]}, out: sc.out[:0], by: sc.eng[:0]}
	if f := w.r.fid; f != nil {
		sc.j.fid = &contentJob{c: f, src: text}
	}
	w.j = &sc.j
	err := w.run()
	p := &lt.parts[i]
	p.attempts = w.attempts
	if err == nil {
		p.text, err = w.j.text()
	}
	if err != nil {
		lt.mu.Lock()
		if lt.err == nil {
			lt.err = err
		}
		lt.mu.Unlock()
		return false
	}
	p.by, p.cost, p.src = slices.Clone(w.j.by), w.j.cost, w.j.srcTag
	p.degraded, p.ended = w.stage.degraded(), w.ended
	lt.mu.Lock()
	if w.last != nil && w.last != lt.cur { // the walk failed over: the next units start there
		lt.cur, lt.stage, lt.at, lt.tried = w.last, w.stage, w.at, w.tried.clone()
	}
	lt.mu.Unlock()
	return true
}

// joinLong builds the request's answer from its units: their texts stitched, their engines
// in order, their costs and attempts; or the first unit's error, or the stale entry.
func (w *walk) joinLong(res *Result, split segment.Segments, lt *longText) (*Result, error) {
	texts := make([]string, len(lt.parts))
	degraded := false
	for i := range lt.parts {
		p := &lt.parts[i]
		res.Attempts = append(res.Attempts, p.attempts...)
		texts[i] = p.text
		w.j.cost += p.cost
		for _, name := range p.by {
			w.j.credit(name)
		}
		w.j.srcTag = cmp.Or(w.j.srcTag, p.src)
		degraded = degraded || p.degraded
		w.ended = max(w.ended, p.ended)
	}
	w.attempts = res.Attempts
	if err := lt.err; err != nil {
		if err := w.ctx.Err(); err != nil {
			return nil, err
		}
		w.lastErr = err
		if w.staleServes() {
			return w.serveStale(res, w.stale), nil
		}
		var ae *Error
		if errors.As(err, &ae) {
			e := *ae
			e.Attempts = res.Attempts
			return nil, &e
		}
		return nil, err
	}
	text, err := split.Join(texts)
	if err != nil {
		return nil, &Error{Kind: KindBadOutput, Message: "stitching segments: " + err.Error(), Attempts: res.Attempts}
	}
	res.Text, res.Engine, res.Cost = text, strings.Join(w.j.by, "+"), w.j.cost
	if degraded {
		w.c.obs.degraded(howFallbackEngine)
	}
	res.Degraded = degraded
	res.Source = w.sourceOf(w.r)
	res.Latency = time.Duration(w.ended - w.start)
	return res, nil
}

// clone returns a copy of s that shares no memory with it.
func (s set) clone() set {
	s.Set = s.Set.Clone()
	return s
}
