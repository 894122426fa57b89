package translate

import (
	"context"
	"crypto/sha256"
	"regexp"
	"time"

	"golang.org/x/text/language"

	"github.com/fanyi-go/translate/fidelity"

	"github.com/fanyi-go/translate/internal/deadline"
	"github.com/fanyi-go/translate/internal/echo"
	"github.com/fanyi-go/translate/internal/lazyctx"
	"github.com/fanyi-go/translate/internal/quota"
	"github.com/fanyi-go/translate/internal/storekey"
)

// storeWait bounds how long a request waits on its Store for one step (Admit, Settle, Hold,
// Budget), whatever the Store's own timeout: past it the call is refused, never made blind.
const storeWait = 250 * time.Millisecond

// leaseMargin is added to an attempt's timeout to bound a Store lease: a reservation whose
// holder vanished counts as spent once the attempt cannot be running any more.
const leaseMargin = 2 * time.Second

// unauthorizedHold is how long an engine whose key the vendor rejected stays out for every
// Client of a Store. A rotated key brings the engine back on this Client (at once with
// Reconfigure, at the next key check with the adapter's key function: probe.go) and on the
// others when the hold ends.
const unauthorizedHold = 5 * time.Minute

// storeAdmit asks the Store for the call on e after the local gates passed. It fills
// l.store with the granted lease, or l.served with an answer that needs no call (a
// second-level cache hit, or the request id's first answer from this engine), or returns
// why the call is refused.
func (c *Client) storeAdmit(w *walk, e *engine, l *lease) error {
	r := w.r
	// The request's clock (one clock per request, as its local budget reads it), and the
	// real time for the wait.
	a := Admission{Now: time.Unix(0, w.now), Engine: e.name, RequestID: storeRequestID(r), Chars: l.chars,
		Quota: e.prof.Quota, QuotaPeriod: e.prof.QuotaPeriod, LeaseTTL: e.prof.Timeout + leaseMargin}
	if !e.free {
		a.Credits = l.cost
		c.fillBudgets(&a, r)
	}
	if w.j.next == 0 && len(w.j.split.Parts) == 1 {
		a.CacheKey = c.storeKey(r)
	}
	got, err := c.askStore(w, e, a)
	if err != nil {
		c.obs.warn("store unreachable: call refused", e.name)
		return &Error{Kind: KindUnavailable, Engine: e.name, Message: "skipped: shared state unreachable"}
	}
	c.learnShared(r, &got)
	switch {
	case got.Cached != nil:
		l.served, l.fromCache = got.Cached, true
	case got.Prior != nil:
		return c.priorAnswer(r, e, l, got.Prior)
	case got.Refused != KindUnknown:
		return c.refused(e, got)
	case got.Lease == "":
		return &Error{Kind: KindUnavailable, Engine: e.name, Message: "skipped: the store granted no lease"}
	default:
		l.store = got.Lease
	}
	return nil
}

// askStore admits a within the request's store wait (storeWait at most). A cached answer
// that no engine's answer could have been (storedUsable) is no hit: the Store is asked
// again without the cache key, and this call's Settle replaces the entry.
func (c *Client) askStore(w *walk, e *engine, a Admission) (Admitted, error) {
	end := min(w.deadline, deadline.Now()+int64(storeWait))
	ctx := lazyctx.New(w.ctx, deadline.Time(end))
	defer ctx.Release()
	got, err := c.store.Admit(ctx, a)
	if err == nil && got.Cached != nil && !storedUsable(w.r, got.Cached) {
		c.obs.warn("store: a cached answer with no text, or the source text, ignored", e.name)
		a.CacheKey = ""
		got, err = c.store.Admit(ctx, a)
	}
	return got, err
}

// storedUsable reports whether a Store's answer may serve r as an engine's would: a text,
// and not r's own text where a translation must change it (echoed).
func storedUsable(r *request, a *StoredAnswer) bool {
	if a.Text == "" {
		return false
	}
	if !echo.Same(r.Text, a.Text) {
		return true
	}
	out := &EngineResult{}
	if tag, err := language.Parse(a.Source); err == nil {
		out.Source = tag // a detected source that is the target already: the text stays
	}
	return !echoed(r.Text, a.Text, r, out)
}

// priorAnswer handles a request id that already reached e on some replica: its text is the
// answer, its failure is this call's failure, and a call still running keeps e out. A
// text no engine's answer could have been (storedUsable) is a failure: the id is not sent
// again.
func (c *Client) priorAnswer(r *request, e *engine, l *lease, p *StoredAnswer) error {
	switch {
	case p.Text != "" && storedUsable(r, p):
		l.served = p
		return nil
	case p.Text != "":
		return &Error{Kind: KindBadOutput, Engine: e.name, Message: "skipped: request id already sent to this engine, whose stored answer is unusable"}
	case p.Kind != KindUnknown:
		return &Error{Kind: p.Kind, Engine: e.name, Message: "skipped: request id already sent to this engine, which failed"}
	}
	return &Error{Kind: KindUnavailable, Engine: e.name, Message: "skipped: request id already sent to this engine"}
}

// refused turns a Store's refusal into the skip's error and keeps e out locally while a
// vendor hold lasts.
func (c *Client) refused(e *engine, got Admitted) error {
	switch {
	case got.Until.IsZero():
	case got.Refused == KindQuotaExhausted:
		e.outFor(&e.outUntil, got.Until.UnixNano())
	case got.Refused == KindUnauthorized: // another replica's key was refused: out for a while, not set aside
		e.outFor(&e.coolUntil, got.Until.UnixNano())
	}
	msg := "skipped: shared budget exhausted"
	switch got.Refused {
	case KindQuotaExhausted:
		msg = "skipped: shared quota exhausted"
	case KindUnauthorized:
		msg = "skipped: held out: unauthorized"
	case KindUnavailable:
		msg = "skipped: shared state unreachable and the request id may have reached this engine through another replica"
	}
	return &Error{Kind: got.Refused, Engine: e.name, Message: msg}
}

// storeSettle settles a granted lease after the call: what it cost when it may have been
// sent, nothing otherwise, and the answer for the request id and the second-level cache.
func (c *Client) storeSettle(w *walk, e *engine, l *lease, out *EngineResult, err error, sent bool, chars int64, cost float64) {
	if l.store == "" {
		return
	}
	now, real := c.storeClock()
	s := Settlement{Lease: l.store, Now: now, Sent: sent}
	if sent {
		s.Credits, s.Chars = cost, chars
	}
	s.Answer, s.CacheKey = c.storedAnswer(w, e, out, err)
	ctx := lazyctx.New(nil, real.Add(storeWait))
	if err := c.store.Settle(ctx, s); err != nil {
		c.obs.warn("store unreachable: settlement left to the lease's expiry", e.name)
	}
	ctx.Release()
	l.store = ""
}

// storedAnswer is what a settlement asks the Store to remember of the call, and under
// which second-level cache key: the text of a single answer (cached unless a fallback made
// it), or the failure's kind for a request id; nil when there is nothing to remember.
func (c *Client) storedAnswer(w *walk, e *engine, out *EngineResult, err error) (*StoredAnswer, string) {
	rid := w.r.RequestID != ""
	if err != nil {
		if rid {
			return &StoredAnswer{Kind: KindOf(err), Engine: e.name}, ""
		}
		return nil, ""
	}
	key := ""
	if !w.stage.degraded() { // a fallback's answer is not shared as a fresh one (cache.go: degradedTTL)
		key = c.storeKey(w.r)
	}
	if !rid && key == "" {
		return nil, "" // no StoredAnswer made
	}
	text, single := w.storedText(out)
	if !single {
		return nil, ""
	}
	a := &StoredAnswer{Text: text, Engine: e.name, Source: out.Source.String()}
	if w.r.src != nil {
		a.Source = w.r.src.Canon
	}
	return a, key
}

// storeClock reads the Client's clock and the real time for a Store call: once when the
// Client runs on the system clock.
func (c *Client) storeClock() (now, real time.Time) {
	real = time.Now()
	if _, sys := c.clock.(systemClock); sys {
		return real, real
	}
	return c.clock.Now(), real
}

// storeHold shares a vendor's refusal with every Client of the Store.
func (c *Client) storeHold(e *engine, kind Kind, until int64) {
	if c.store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	if err := c.store.Hold(ctx, e.name, kind, time.Unix(0, until)); err != nil {
		c.obs.warn("store unreachable: hold kept local", e.name)
	}
}

// storeKey is r's key in a Store's second-level cache: the same in every process, so it
// hashes the text with the full language keys (not this process's interned ids). "" when
// r may not use a shared entry: no cache, a pin without fallback (the entry may be another
// engine's), or a region rule (the entry's engine may be outside it).
func (c *Client) storeKey(r *request) string {
	if !c.cacheable(r) || (r.pinned != nil && !r.AllowFallback) || len(r.Regions) > 0 || !sharesCache(c.store) {
		return ""
	}
	return r.digest.key(r)
}

// contentDigest hashes r's text with the full language keys, scene and style, the format
// and glossary revision when they are not text and none, and the placeholder settings
// when they are not the default: the same in every process with the same settings.
func contentDigest(r *request) [sha256.Size]byte {
	c := storekey.Content{Target: r.tgt.Full, Scene: int64(r.Scene), Style: int64(r.Style), Text: r.Text}
	if r.s != nil {
		c.Placeholders = r.s.content.keyed.hex
	}
	if r.src != nil {
		c.Source = r.src.Key
	}
	if rev := r.revision(); r.key.format != FormatText || rev != "" { // content.go: markup and glossary change the answer
		c.Format, c.Revision = r.key.format.String(), rev
	}
	return c.Sum()
}

// storeRequestID is the request id a Store sees: the caller's, bound to the request's
// content (storekey.RequestID), so that an id reused with another text, language, scene or
// style is another id on every replica, and the Store never hands back the answer to other
// content. "" without a caller's id.
func storeRequestID(r *request) string {
	if r.RequestID == "" {
		return ""
	}
	return storekey.RequestID(r.RequestID, r.digest.key(r))
}

// storeDigest is a request's contentDigest in hex, computed at most once per request,
// source and glossary revision: Admit, Settle and the request id share it.
type storeDigest struct{ storekey.Digest }

func (d *storeDigest) key(r *request) string {
	if rev := r.revision(); d.Stale(r.src, rev) {
		d.Set(contentDigest(r), r.src, rev)
	}
	return d.Hex()
}

// learnSpent keeps the shared budget's last reported spend, for economy mode.
func (c *Client) learnSpent(spent float64) { quota.Learn(&c.sharedSpent, spent) }

// sharedFraction is the shared budget's fraction spent as last reported by the Store; 0
// without a Store or an unlimited budget.
func (c *Client) sharedFraction() float64 {
	if c.store == nil {
		return 0
	}
	return quota.SharedOf(&c.sharedSpent, c.budget.Daily())
}

// placeholderKey is what a configuration's placeholder settings (WithPlaceholders) add to
// the keys of its Store (contentDigest: the cache key and the request id) and of its
// memory (memorySubtags), made once per configuration: two Clients that protect different
// placeholders never share an answer, whose placeholders one of them may have let an
// engine translate. The zero value stands for the default settings (DefaultSyntaxes, no
// pattern), which add nothing: those keys stay as they were.
type placeholderKey struct {
	hex     string // 28 hex digits of a SHA-256 of the syntaxes and the pattern's source
	subtags string // hex as private-use subtags: "p" and 7 digits each
}

func newPlaceholderKey(syntax fidelity.Syntax, pattern *regexp.Regexp) placeholderKey {
	if syntax == 0 {
		syntax = fidelity.DefaultSyntaxes
	}
	if syntax == fidelity.DefaultSyntaxes && pattern == nil {
		return placeholderKey{}
	}
	src := ""
	if pattern != nil {
		src = pattern.String()
	}
	var k placeholderKey
	k.hex, k.subtags = storekey.Placeholders(uint64(syntax), src, pattern != nil)
	return k
}
