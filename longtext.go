package translate

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fanyi-go/translate/internal/longtext"
	"github.com/fanyi-go/translate/internal/segment"
)

// textChars is the most characters of one text in a call of p: MaxTextChars, capped by
// MaxChars; 0 means unlimited.
func textChars(p *Profile) int { return longtext.TextChars(p.MaxTextChars, p.MaxChars) }

// callChars is the most characters one call of p carries: MaxChars, or else MaxTexts texts
// of MaxTextChars; 0 means unlimited.
func callChars(p *Profile) int { return longtext.CallChars(p.MaxChars, p.MaxTextChars, p.MaxTexts) }

// longText is a text longer than one call of the engine its walk picked, translated as
// several walks at once, one per call's worth of text (a unit). The walks start on the
// engine the last successful one ended on, leaving out the engines it left: the units stay
// on one engine as long as it serves, and when it fails the rest follow the failover.
type longText struct {
	// base is what every unit's walk shares: the request, its plan, deadline and clocks.
	base  walk
	parts []longtext.Part[Attempt]    // each unit's outcome
	start *longtext.Cursor[unitStart] // where the next unit's walk starts; the first error
}

// unitStart is where a unit's walk starts: its engine, stage, plan position and the
// engines left.
type unitStart struct {
	cur   *engine
	stage stage
	at    int
	tried set
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
	for e != nil && tooManyUnits(w.r.chars, callChars(&e.prof)) {
		w.skip(e, &Error{Kind: KindTextTooLong, Engine: e.name, Message: "skipped: the text needs more than " +
			strconv.Itoa(maxUnits) + " calls of MaxChars"})
		e, _ = w.next()
	}
	if e == nil {
		return nil, nil, false
	}
	unit := callChars(&e.prof)
	if unit == 0 || w.r.chars <= unit {
		return nil, nil, false
	}
	split := w.r.fid.whole(w.r.Text, segment.Split(w.r.Text, unit))
	lt := &longText{parts: make([]longtext.Part[Attempt], len(split.Parts)),
		start: longtext.NewCursor(unitStart{cur: e, stage: w.stage, at: w.at, tried: w.tried.clone()}),
		base:  walk{c: w.c, r: w.r, plan: w.plan, deadline: w.deadline, now: w.now, start: w.start, ended: w.start}}
	conc := w.c.batchConc
	if m := e.prof.MaxConcurrency; m > 0 {
		conc = min(conc, m)
	}
	longtext.Run(w.ctx, len(split.Parts), conc, func(ctx context.Context, i int) bool {
		return lt.translate(ctx, i, split.Parts[i])
	})
	res, err := w.joinLong(res, split, lt)
	return res, err, true
}

// maxUnits bounds the calls one engine may need for a text: a 1 MiB text cut for an
// engine with MaxChars 1 took a million units, 400 MB and 1.8 s. Such an engine is skipped
// (KindTextTooLong) and the text goes to one that takes it in fewer calls.
const maxUnits = 10_000

// tooManyUnits reports whether a text of chars code points needs more than maxUnits calls
// of unit characters (0: unlimited).
func tooManyUnits(chars, unit int) bool { return unit > 0 && chars > maxUnits*unit }

// translate walks unit i through the engines and reports whether it was translated.
func (lt *longText) translate(ctx context.Context, i int, text string) bool {
	c := lt.base.c
	sc := c.getScratch(len(lt.base.r.s.engines))
	defer c.putScratch(sc)
	w := lt.base
	w.ctx, w.sc, w.called = ctx, sc, true // called: its first call reads the time
	st := lt.start.Load()
	w.cur, w.stage, w.at, w.tried = st.cur, st.stage, st.at, st.tried.clone()
	sc.part[0] = text
	sc.j = job{split: segment.Segments{Parts: sc.part[:], Seps: sc.sep[:]}, out: sc.out[:0], by: sc.eng[:0]}
	if f := w.r.fid; f != nil {
		sc.j.fid = &contentJob{c: f, src: text}
	}
	w.j = &sc.j
	err := w.run()
	p := &lt.parts[i]
	p.Attempts = w.attempts
	if err == nil {
		p.Text, err = w.j.text()
	}
	if err != nil {
		lt.start.Fail(err)
		return false
	}
	p.By, p.Cost, p.Source = slices.Clone(w.j.by), w.j.cost, w.j.srcTag
	p.Degraded, p.Ended = w.stage.degraded(), w.ended
	if w.last != nil {
		lt.start.Update(func(st *unitStart) {
			if w.last != st.cur { // the walk failed over: the next units start there
				*st = unitStart{cur: w.last, stage: w.stage, at: w.at, tried: w.tried.clone()}
			}
		})
	}
	return true
}

// joinLong builds the request's answer from its units: their texts stitched, their engines
// in order, their costs and attempts; or the first unit's error, or the stale entry.
func (w *walk) joinLong(res *Result, split segment.Segments, lt *longText) (*Result, error) {
	sum := longtext.Sum(lt.parts, res.Attempts)
	res.Attempts = sum.Attempts
	w.j.cost += sum.Cost
	for _, name := range sum.By {
		w.j.credit(name)
	}
	w.j.srcTag = cmp.Or(w.j.srcTag, sum.Source)
	w.ended = max(w.ended, sum.Ended)
	w.attempts = res.Attempts
	if err := lt.start.Err(); err != nil {
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
	text, err := split.Join(sum.Texts)
	if err != nil {
		return nil, &Error{Kind: KindBadOutput, Message: "stitching segments: " + err.Error(), Attempts: res.Attempts}
	}
	res.Text, res.Engine, res.Cost = text, strings.Join(w.j.by, "+"), w.j.cost
	if sum.Degraded {
		w.c.obs.degraded(howFallbackEngine)
	}
	res.Degraded = sum.Degraded
	res.Source = w.sourceOf(w.r)
	res.Latency = time.Duration(w.ended - w.start)
	return res, nil
}

// clone returns a copy of s that shares no memory with it.
func (s set) clone() set {
	s.Set = s.Set.Clone()
	return s
}
