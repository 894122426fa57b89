package translate

import (
	"context"
	"time"

	"github.com/fanyi-go/translate/internal/health"
	"github.com/fanyi-go/translate/internal/lang"
	"github.com/fanyi-go/translate/internal/recovery"
)

// Live quality signals (seed 000 §3.4, §4.5): what traffic and known-answer probes say of an
// engine's translations per language pair moves its weight for that pair within a fold, and
// its availability folds the last five minutes. The mechanism (the bounded pair table, the
// five-minute window) is internal/health's; the policy is here.

// liveFactor is what e's weight for r is multiplied by for the live standing of r's pair:
// health.PairState.Factor with the pair's quality q (PairQuality, else SceneQuality, else
// Quality), Weights.Quality, Temperature and MinHealth. 1 for a clean pair.
func (e *engine) liveFactor(r *request) float64 {
	st, ok := e.pairs.State(lang.PairKey(r.srcID, r.tgt.ID))
	if !ok {
		return 1
	}
	rp := &e.s.routing
	q := e.quality[r.Scene]
	if e.pairQ != nil {
		if p, ok := e.pairQ.Find(r.srcID, r.tgt.ID, int(r.Scene)); ok {
			q = p.Q[r.Scene]
		}
	}
	return st.Factor(q, rp.Weights.Quality, rp.Temperature, rp.MinHealth)
}

// foldPairs folds e's pairs' bad-output rates.
func (e *engine) foldPairs() {
	e.pairs.Fold()
	e.syncLive()
}

// syncLive sets flagLive, which the router reads beside the engine's other flags (the pair
// table's own standing lies lines away), when some pair is not clean. Two updates at once
// may leave it stale until the next fold.
func (e *engine) syncLive() {
	if e.pairs.Clean() {
		e.clear(flagLive)
	} else {
		e.set(flagLive)
	}
}

// recordCall records a call that tells something about the engine: a bad answer counts
// against its pair's quality, any other failure against its availability, and a good
// answer for both. Bad output is the pair's, not the engine's: an engine that garbles en-ja
// keeps its availability, and its share of en-de.
func (c *Client) recordCall(w *walk, e *engine, ok bool, kind Kind) (pairBad bool) {
	if ok || kind == KindBadOutput {
		tracked := e.pairs.Record(w.spread(), lang.PairKey(w.r.srcID, w.r.tgt.ID), !ok)
		if !ok {
			return tracked
		}
	}
	e.h.Record(w.spread(), ok, time.Duration(w.ended-w.callStart()))
	return false
}

// availability is an engine's availability 0..1 at now (health.Blend) from its fold state:
// the last five minutes and health.Folds folds, and the calls not folded yet (extra). ok is
// false when there were no calls. f.mu is held.
func (f *foldState) availability(now int64, timeout time.Duration, extra health.Sample) (float64, bool) {
	wc, wf := f.window()
	return health.Blend(f.win.Sum(now), extra, wc, wf, timeout)
}

// knownProbes runs e's known-answer probes of this round.
func (c *Client) knownProbes(ctx context.Context, e *engine, now int64) {
	if e.flags.Load()&flagsOut != 0 {
		return
	}
	var buf [recovery.KnownPerRound]uint64
	for _, pair := range e.pairs.ToProbe(buf[:0], recovery.KnownPerRound) {
		if r := c.knownRequest(pair); r != nil && ctx.Err() == nil {
			c.knownProbe(ctx, e, r, pair, now)
		}
	}
}

// knownRequest is the known-answer probe of a pair (lang.PairKey), nil when it has none
// (recovery.Known).
func (c *Client) knownRequest(pair uint64) *request {
	src, tgt, text, ok := recovery.Known(c.langs, pair)
	if !ok {
		return nil
	}
	r := &request{Request: Request{Text: text, Target: tgt.Canon}, tgt: tgt, chars: runeCount(text)}
	if src != nil {
		r.Source, r.src, r.srcID = src.Canon, src, src.ID
	}
	r.id = c.newResult("").RequestID
	return r
}

// knownProbe makes one known-answer probe of e for pair and records its verdict: a wrong
// answer (bad output, or the check failed) marks the pair down, a right one lifts the mark;
// any other failure says nothing about the pair.
func (c *Client) knownProbe(ctx context.Context, e *engine, r *request, pair uint64, now int64) {
	out, err, _, ok := c.probeCall(ctx, e, r, now)
	switch {
	case !ok:
	case err == nil && recovery.KnownAnswer(r.Text, out.Texts[0], targetScript(r)):
		e.pairs.Passed(pair)
	case err == nil || KindOf(err) == KindBadOutput:
		if e.pairs.MarkDown(pair) {
			c.obs.warn("known-answer probe failed: the pair is marked down", e.name)
		}
	}
	e.syncLive()
}
