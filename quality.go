package translate

import (
	"context"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/fanyi-go/translate/internal/health"
	"github.com/fanyi-go/translate/internal/lang"
)

// Live quality signals (seed 000 §3.4, §4.5): what traffic and known-answer probes say of an
// engine's translations per language pair moves its weight for that pair within a fold, and
// its availability folds the last five minutes. The mechanism (the bounded pair table, the
// five-minute window) is internal/health's; the policy is here.

// pairDownFactor is what an engine's weight for a pair is multiplied by while the pair is
// down: its bad-output rate above 1 - MinHealth, or a known-answer probe failed on it. Such
// an engine keeps a trickle of the pair's traffic (a thousandth of its weight), and all of it
// when nothing else serves the pair.
const pairDownFactor = 1e-3

// liveFactor is what e's weight for r is multiplied by for the live standing of r's pair:
// exp(-q·b·Weights.Quality/Temperature), the weight of the pair's quality q (PairQuality,
// else SceneQuality, else Quality) lowered to q·(1-b), b its folded bad-output rate; times
// pairDownFactor while the pair is down. 1 for a clean pair.
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
	f := math.Exp(-q * st.Bad * rp.Weights.Quality / rp.Temperature)
	if st.ProbeDown || st.Bad > 1-rp.MinHealth {
		f *= pairDownFactor
	}
	return f
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

// availability is an engine's availability 0..1 at now from its fold state and the calls
// not folded yet (extra): the smaller of the success rate of the last five minutes
// (health.Span) and one minus the error rate of the last healthFolds folds, times the
// latency factor of the five minutes' mean latency against the engine's Timeout
// (health.Availability). ok is false when there were no calls. f.mu is held.
func (f *foldState) availability(now int64, timeout time.Duration, extra health.Sample) (float64, bool) {
	s := f.win.Sum(now)
	s.Calls, s.Fails, s.OKCalls, s.LatNanos = s.Calls+extra.Calls, s.Fails+extra.Fails, s.OKCalls+extra.OKCalls, s.LatNanos+extra.LatNanos
	avail, ok := health.Availability(s, timeout)
	if !ok {
		return 0, false
	}
	wc, wf := f.window()
	wc, wf = wc+extra.Calls, wf+extra.Fails
	if wc > 0 {
		avail = min(avail, (1-float64(wf)/float64(wc))*health.LatencyFactor(s.MeanLatency(), timeout))
	}
	return avail, true
}

// Known-answer probes. With WithProbes, each probe round also checks the pairs that carry an
// engine's traffic: up to knownPerRound pairs per engine and round (those a probe marked
// down first, then the busiest of the last fold), each one call of a short sentence whose
// answer must keep its placeholder and its number, must not echo the source, and must be
// written in the target's script. A wrong answer marks the pair down at once; a right one
// lifts the mark.
const knownPerRound = 4

// knownSentences are the known-answer probes' sentences by source language; a pair whose
// source has none (and is not detected) is not probed. A detected source is sent English.
var knownSentences = map[string]string{
	"en": "Your order {id} with 3 items ships today.",
	"de": "Ihre Bestellung {id} mit 3 Artikeln wird heute versandt.",
	"fr": "Votre commande {id} de 3 articles part aujourd'hui.",
	"es": "Su pedido {id} con 3 artículos se envía hoy.",
	"pt": "O seu pedido {id} com 3 itens é enviado hoje.",
	"it": "Il tuo ordine {id} con 3 articoli parte oggi.",
	"ru": "Ваш заказ {id} из 3 товаров отправляется сегодня.",
	"zh": "您的订单 {id} 共 3 件商品，今天发货。",
	"ja": "ご注文 {id} の商品 3 点は本日発送されます。",
}

// knownProbes runs e's known-answer probes of this round.
func (c *Client) knownProbes(ctx context.Context, e *engine, now int64) {
	if e.flags.Load()&flagsOut != 0 {
		return
	}
	var buf [knownPerRound]uint64
	for _, pair := range e.pairs.ToProbe(buf[:0], knownPerRound) {
		if r := c.knownRequest(pair); r != nil && ctx.Err() == nil {
			c.knownProbe(ctx, e, r, pair, now)
		}
	}
}

// knownRequest is the known-answer probe of a pair (lang.PairKey), nil when it has none.
func (c *Client) knownRequest(pair uint64) *request {
	src, tgt := int(pair>>32), int(uint32(pair))
	tgtIn := c.langByID(tgt)
	if tgtIn == nil {
		return nil
	}
	var srcIn *lang.Info
	text := knownSentences["en"]
	if src != 0 {
		if srcIn = c.langByID(src); srcIn == nil {
			return nil
		}
		base, _ := srcIn.Tag.Base()
		if text = knownSentences[base.String()]; text == "" {
			return nil
		}
	}
	r := &request{Request: Request{Text: text, Target: tgtIn.Canon}, tgt: tgtIn, chars: runeCount(text)}
	if srcIn != nil {
		r.Source, r.src, r.srcID = srcIn.Canon, srcIn, srcIn.ID
	}
	r.id = c.newResult("").RequestID
	return r
}

// langByID is the language interned as id: its base language's when that is the same key
// ("ja" for "ja-Jpan"), else the key's own ("zh-Hant").
func (c *Client) langByID(id int) *lang.Info {
	key, ok := c.langs.Key(id)
	if !ok {
		return nil
	}
	base, _, _ := strings.Cut(key, "-")
	if in, err := c.langs.Lookup(base); err == nil && in.ID == id {
		return in
	}
	if in, err := c.langs.Lookup(key); err == nil && in.ID == id {
		return in
	}
	return nil
}

// knownProbe makes one known-answer probe of e for pair and records its verdict: a wrong
// answer (bad output, or the check failed) marks the pair down, a right one lifts the mark;
// any other failure says nothing about the pair.
func (c *Client) knownProbe(ctx context.Context, e *engine, r *request, pair uint64, now int64) {
	out, err, _, ok := c.probeCall(ctx, e, r, now)
	switch {
	case !ok:
	case err == nil && knownAnswer(r, out.Texts[0]):
		e.pairs.Passed(pair)
	case err == nil || KindOf(err) == KindBadOutput:
		if e.pairs.MarkDown(pair) {
			c.obs.warn("known-answer probe failed: the pair is marked down", e.name)
		}
	}
	e.syncLive()
}

// knownAnswer checks a known-answer probe's answer beyond the usual output checks: every
// digit of the sentence is kept, and the answer has a letter of the target's script when
// the script is known.
func knownAnswer(r *request, got string) bool {
	for _, d := range r.Text {
		if unicode.IsDigit(d) && !strings.ContainsRune(got, d) {
			return false
		}
	}
	sc := targetScript(r)
	if sc == nil {
		return true
	}
	for _, ch := range got {
		if unicode.IsLetter(ch) && unicode.In(ch, sc...) {
			return true
		}
	}
	return false
}
