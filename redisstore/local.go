package redisstore

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fanyi-go/translate"
)

// maxRequestIDs bounds the request ids a Client remembers while Redis is unreachable;
// maxAnswers bounds the answers and claims it keeps to push.
const (
	maxRequestIDs = 100_000
	maxAnswers    = 10_000
)

// holdRefresh is how often a Client reads an engine's shared hold while it admits calls to
// it: a hold set on one replica reaches the others within about this long.
const holdRefresh = time.Second

// local is what a Client keeps in process besides its blocks: holds, request ids it saw
// while Redis was unreachable, the calls in flight, and what waits to be pushed. Every map
// in it is bounded: by the engines, by maxRequestIDs, by the calls in flight.
type local struct {
	deg atomic.Bool // mirrors degraded for the fast path

	mu        sync.Mutex
	degraded  bool
	nextProbe time.Time

	holds    map[string]heldEngine
	holdRead map[string]time.Time // engine -> when its shared hold was last read (or asked for)

	rids     map[string]map[string]string // request key -> engine -> stored answer
	ridOrder []ridSeen

	strict bool   // WithStrictRequestIDs
	own    ownIDs // with strict: the request ids this Client admitted, by Redis or alone

	// operations waiting for Redis
	pushing chan struct{} // non-nil while a push is under way; closed when it ends
	holdOps map[string]pendingHold
	answers []pendingAnswer
}

type heldEngine struct {
	kind  translate.Kind
	until time.Time
}

type ridSeen struct {
	key string
	at  time.Time
}

type pendingHold struct {
	value string
	until time.Time
}

// pendingAnswer is a claim ("" answer) or an answer for a request id's key, made while
// Redis was unreachable; ttl is how long the key must live when it is created.
type pendingAnswer struct {
	key, engine, answer string
	ttl                 time.Duration
}

func (l *local) init(strict bool) {
	l.strict = strict
	l.own.at = map[string]time.Time{}
	l.holds = map[string]heldEngine{}
	l.holdRead = map[string]time.Time{}
	l.rids = map[string]map[string]string{}
	l.holdOps = map[string]pendingHold{}
}

func (l *local) isDegraded() bool { return l.deg.Load() }

// degrade switches to local decisions; true when it was not already.
func (l *local) degrade(now time.Time, every time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.degraded {
		return false
	}
	l.degraded = true
	l.deg.Store(true)
	l.nextProbe = now.Add(every)
	return true
}

// probeDue answers true for one caller per probe period while degraded: that caller tries
// Redis again.
func (l *local) probeDue(now time.Time, every time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.degraded || now.Before(l.nextProbe) {
		return false
	}
	l.nextProbe = now.Add(every)
	return true
}

// recover returns to the shared state; true when it was degraded.
func (l *local) recover() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.degraded {
		return false
	}
	l.degraded = false
	l.deg.Store(false)
	clear(l.rids)
	l.ridOrder = nil
	return true
}

// held is the engine's hold at now that refuses admissions, as last known here: a vendor's
// refusal. An engine held down (a breaker opened) is kept out of routing by the Clients'
// hold watch instead (WatchHolds), which lets it back in as soon as a probe passes anywhere.
func (l *local) held(engine string, now time.Time) (heldEngine, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h, ok := l.holds[engine]
	return h, ok && h.until.After(now) && h.kind != translate.KindUnavailable
}

// holdNow is held, under the same lock, with whether the engine's shared hold should be
// read again (first: it never was; never when read is false), which it then marks read.
func (l *local) holdNow(engine string, now time.Time, read bool) (first, due bool, h heldEngine, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h, ok = l.holds[engine]
	ok = ok && h.until.After(now) && h.kind != translate.KindUnavailable
	if !read {
		return false, false, h, ok
	}
	last, seen := l.holdRead[engine]
	if seen && now.Sub(last) < holdRefresh {
		return false, false, h, ok
	}
	l.holdRead[engine] = now
	return !seen, true, h, ok
}

// learnHold keeps a hold read from Redis, or set here.
func (l *local) learnHold(engine string, kind translate.Kind, until time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h, ok := l.holds[engine]; !ok || h.until.Before(until) {
		l.holds[engine] = heldEngine{kind, until}
	}
}

// replaceHold keeps what Redis holds for the engine (ok false: no hold), except a hold set
// here that waits to be pushed; it returns the engine's hold as now known.
func (l *local) replaceHold(key, engine string, h heldEngine, ok bool) (heldEngine, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, pending := l.holdOps[key]; pending {
		kind, until := parseHold(p.value)
		if !ok || h.until.Before(until) {
			h, ok = heldEngine{kind, until}, true
		}
	}
	if !ok {
		delete(l.holds, engine)
		return heldEngine{}, false
	}
	l.holds[engine] = h
	return h, true
}

// unhold forgets the engine's hold, here and in what waits to be pushed.
func (l *local) unhold(key, engine string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.holds, engine)
	delete(l.holdOps, key)
}

// hold keeps a hold set here and queues it for Redis.
func (l *local) hold(key, engine string, kind translate.Kind, until time.Time) {
	l.learnHold(engine, kind, until)
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.holds[engine]
	l.holdOps[key] = pendingHold{formatHold(h.kind, h.until), h.until}
}

// admitID decides a request id while Redis is unreachable: a prior answer or call of this
// Client, a refusal under WithStrictRequestIDs, or a claim (queued for Redis).
func (l *local) admitID(rkey, engine string, now time.Time) (prior *translate.StoredAnswer, refused bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pruneRequests(now)
	if p := priorAnswer(l.rids[rkey], engine); p != nil {
		return p, false
	}
	if l.strict && !l.own.has(rkey, now) {
		return nil, true // another replica may have sent it: only Redis could tell
	}
	l.remember(rkey, engine, "", now)
	if l.strict {
		l.own.add(rkey, now)
	}
	l.queueAnswer(pendingAnswer{rkey, engine, "", translate.RequestWindow})
	return nil, false
}

// claimed records a claim Redis granted, for WithStrictRequestIDs.
func (l *local) claimed(rkey string, now time.Time) {
	if !l.strict {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.own.add(rkey, now)
}

func priorAnswer(byEngine map[string]string, engine string) *translate.StoredAnswer {
	for _, v := range byEngine {
		if strings.HasPrefix(v, "T") {
			return decodeAnswer(v)
		}
	}
	if v, ok := byEngine[engine]; ok {
		return decodeAnswer(v)
	}
	return nil
}

func (l *local) remember(rkey, engine, answer string, now time.Time) {
	m := l.rids[rkey]
	if m == nil {
		if len(l.rids) >= maxRequestIDs {
			oldest := l.ridOrder[0]
			l.ridOrder = l.ridOrder[1:]
			delete(l.rids, oldest.key)
		}
		m = map[string]string{}
		l.rids[rkey] = m
		l.ridOrder = append(l.ridOrder, ridSeen{rkey, now})
	}
	m[engine] = answer
}

func (l *local) pruneRequests(now time.Time) {
	n := 0
	for n < len(l.ridOrder) && now.Sub(l.ridOrder[n].at) > translate.RequestWindow {
		delete(l.rids, l.ridOrder[n].key)
		n++
	}
	l.ridOrder = l.ridOrder[n:]
}

// answerLocal remembers an answer for a request id and queues it for Redis.
func (l *local) answerLocal(a pendingAnswer, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, seen := l.rids[a.key]; seen {
		l.remember(a.key, a.engine, a.answer, now)
	}
	l.queueAnswer(a)
}

func (l *local) queueAnswer(a pendingAnswer) {
	if len(l.answers) < maxAnswers {
		l.answers = append(l.answers, a)
	}
}

// ownIDs are the request ids a Client admitted within RequestWindow, each with the time of
// its last admission; at most maxRequestIDs, the oldest forgotten first (a forgotten id is
// refused while Redis is unreachable: the safe side).
type ownIDs struct {
	at    map[string]time.Time
	order []ridSeen // in admission order; an entry whose time at no longer holds is stale
}

func (o *ownIDs) add(key string, now time.Time) {
	o.prune(now)
	if len(o.order) >= maxRequestIDs {
		o.drop(o.order[0])
		o.order = o.order[1:]
	}
	o.at[key] = now
	o.order = append(o.order, ridSeen{key, now})
}

// has reports whether key was admitted within RequestWindow before now.
func (o *ownIDs) has(key string, now time.Time) bool {
	t, ok := o.at[key]
	return ok && now.Sub(t) <= translate.RequestWindow
}

func (o *ownIDs) prune(now time.Time) {
	n := 0
	for n < len(o.order) && now.Sub(o.order[n].at) > translate.RequestWindow {
		o.drop(o.order[n])
		n++
	}
	o.order = o.order[n:]
}

// drop forgets e's id unless it was admitted again since.
func (o *ownIDs) drop(e ridSeen) {
	if o.at[e.key].Equal(e.at) {
		delete(o.at, e.key)
	}
}

// pending reports whether operations wait for Redis and, when a push is under way, a
// channel closed when it ends.
func (l *local) pending() (bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pushing != nil {
		return true, l.pushing
	}
	return len(l.holdOps)+len(l.answers) > 0, nil
}

// take collects the operations waiting for Redis; done reports whether Redis applied them.
// take returns nothing when nothing waits or a push is already under way.
func (l *local) take() (holds map[string]pendingHold, answers []pendingAnswer, done func(ok bool)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pushing != nil || len(l.holdOps)+len(l.answers) == 0 {
		return nil, nil, nil
	}
	holds, answers = l.holdOps, l.answers
	l.holdOps, l.answers = map[string]pendingHold{}, nil
	pushing := make(chan struct{})
	l.pushing = pushing
	return holds, answers, func(ok bool) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.pushing = nil
		close(pushing)
		if ok {
			return
		}
		for k, h := range holds {
			if cur, ok := l.holdOps[k]; !ok || cur.until.Before(h.until) {
				l.holdOps[k] = h
			}
		}
		l.answers = append(answers, l.answers...)
		if len(l.answers) > maxAnswers {
			l.answers = l.answers[:maxAnswers]
		}
	}
}
