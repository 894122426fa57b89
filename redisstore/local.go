package redisstore

import (
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fanyi-go/translate"
)

// errNoFigures: Redis has not answered this Client for that budget or quota within
// maxFigureAge, so it knows no share it could serve from.
var errNoFigures = errors.New("redisstore: redis unreachable and no recent shared figures known")

// maxFigureAge is how old the figures a local share is cut from may be: a Client that has
// not heard from Redis for longer (it was idle before the outage) refuses limited budgets
// and quotas rather than serve 1/n of what remained long ago, which the other replicas may
// have spent since.
const maxFigureAge = time.Minute

// maxRequestIDs bounds the request ids a Client remembers while Redis is unreachable;
// maxAnswers bounds the answers it keeps to push.
const (
	maxRequestIDs = 100_000
	maxAnswers    = 10_000
)

// local is what a Client decides alone while Redis is unreachable: a share of what remained
// at the last answer from Redis, holds, request ids, and the operations to push when Redis
// answers again. Every map in it is bounded: by the engines, by maxRequestIDs, by the leases
// in flight, or by the counter keys of one day and one period per engine.
type local struct {
	deg atomic.Bool // mirrors degraded for the fast path

	mu        sync.Mutex
	k         keys
	replicas  float64
	degraded  bool
	nextProbe time.Time
	contact   bool // Redis has answered an admission at least once

	budgetKnown knownFigure            // the day's figure at the last answer
	quotaKnown  map[string]knownFigure // engine -> the period's figure at the last answer
	budgetShare share
	quotaShare  map[string]*share
	holds       map[string]heldEngine

	rids     map[string]map[string]string // request key -> engine -> stored answer
	ridOrder []ridSeen

	strict bool   // WithStrictRequestIDs
	own    ownIDs // with strict: the request ids this Client admitted, by Redis or alone

	leases map[string]*localLease // token -> lease granted from the local share, not adopted yet

	held holdback // after an outage: the other replicas' shares, perhaps spent and not pushed yet

	// operations waiting for Redis
	pushing chan struct{} // non-nil while a push is under way; closed when it ends
	retry   []op          // sent in a push whose outcome is unknown; sent again first
	settles []op
	spends  map[string]op // counter key -> charge, one guard each
	holdOps map[string]op
	answers []op
}

type knownFigure struct {
	key            string
	spent, reserve float64
	at             time.Time // when Redis answered with it
}

type share struct {
	key         string
	allow, used float64
}

type heldEngine struct {
	kind  translate.Kind
	until time.Time
}

type ridSeen struct {
	key string
	at  time.Time
}

// holdback is what the other replicas may have spent from their local shares during an
// outage and not pushed yet: for a while after Redis answers again, this Client admits
// only up to the limits less it, so it does not spend their shares a second time.
type holdback struct {
	until  time.Time
	budget keyAmount
	quota  map[string]keyAmount // engine -> its quota period's holdback
}

type keyAmount struct {
	key    string
	amount float64
}

// add is k plus amount held back for key; a holdback for another key (a day or a period
// that has ended) is dropped.
func (k keyAmount) add(key string, amount float64) keyAmount {
	if k.key != key {
		return keyAmount{key, amount}
	}
	return keyAmount{key, k.amount + amount}
}

// heldFor is the amount held back for key at now; 0 when none is.
func (h *holdback) heldFor(k keyAmount, key string, now time.Time) float64 {
	if k.key != key || !now.Before(h.until) {
		return 0
	}
	return k.amount
}

type localLease struct {
	ad   *admission
	sent bool // in a push already: settles as a Redis lease
}

type op map[string]any

func (l *local) init(keysOf keys, replicas int, strict bool) {
	l.k = keysOf
	l.replicas = float64(replicas)
	l.strict = strict
	l.own.at = map[string]time.Time{}
	l.quotaKnown = map[string]knownFigure{}
	l.quotaShare = map[string]*share{}
	l.holds = map[string]heldEngine{}
	l.rids = map[string]map[string]string{}
	l.leases = map[string]*localLease{}
	l.spends = map[string]op{}
	l.holdOps = map[string]op{}
}

func (l *local) isDegraded() bool { return l.deg.Load() }

// degrade switches to the local share; true when it was not already.
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

// recover returns to the shared state; true when it was degraded. Until now+hold it holds
// back, of every limit it served a share of, what the other replicas' shares allowed.
func (l *local) recover(now time.Time, hold time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.degraded {
		return false
	}
	l.degraded = false
	l.deg.Store(false)
	others := l.replicas - 1
	prev := l.held // still in force: the other replicas may not have pushed that either
	if !now.Before(prev.until) {
		prev = holdback{}
	}
	l.held = holdback{until: now.Add(hold), budget: prev.budget, quota: map[string]keyAmount{}}
	maps.Copy(l.held.quota, prev.quota)
	if l.budgetShare.key != "" {
		l.held.budget = prev.budget.add(l.budgetShare.key, others*l.budgetShare.allow)
	}
	for engine, qs := range l.quotaShare {
		if qs.key != "" {
			l.held.quota[engine] = prev.quota[engine].add(qs.key, others*qs.allow)
		}
	}
	l.budgetShare = share{}
	clear(l.quotaShare)
	clear(l.rids)
	l.ridOrder = nil
	return true
}

// limits are ad's daily budget and quota less the holdback while it lasts; a limit held back
// entirely becomes the smallest one, which admits nothing that costs. quotaHeld is when the
// quota's holdback ends, zero when none applies to ad's quota.
func (l *local) limits(ad *admission, now time.Time) (daily float64, quota int64, quotaHeld time.Time) {
	daily, quota = ad.Daily, ad.Quota
	l.mu.Lock()
	defer l.mu.Unlock()
	if !now.Before(l.held.until) {
		return daily, quota, quotaHeld
	}
	if b := l.held.budget; daily > 0 && b.amount > 0 && b.key == ad.lease.Budget {
		daily = max(daily-b.amount, math.SmallestNonzeroFloat64)
	}
	if q, ok := l.held.quota[ad.Engine]; ok && quota > 0 && q.amount > 0 && q.key == ad.lease.Quota {
		quota = max(quota-int64(math.Ceil(q.amount)), 0)
		quotaHeld = l.held.until
	}
	return daily, quota, quotaHeld
}

// learn keeps the shared figures of an answer from Redis: the local share is cut from them.
// With strict request ids it also remembers a request id Redis granted to this Client.
func (l *local) learn(ad *admission, rep admitReply, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.contact = true
	if l.strict && rep.code == codeGranted && ad.lease.Request != "" {
		l.own.add(ad.lease.Request, ad.Now)
	}
	l.budgetKnown = knownFigure{ad.lease.Budget, rep.spent, rep.reserved, now}
	if ad.lease.Quota != "" {
		l.quotaKnown[ad.Engine] = knownFigure{ad.lease.Quota, float64(rep.qSpent), float64(rep.qReserved), now}
	}
}

// learnBudget keeps a budget figure read by Budget, when it is the figure of the day this
// Client last admitted against.
func (l *local) learnBudget(key string, spent, reserved float64, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.budgetKnown.key == key {
		l.budgetKnown = knownFigure{key, spent, reserved, now}
	}
}

// shareOf is the local share of the limit on key: 1/n of what remained at the last answer
// from Redis, less what is held back after an earlier outage.
func (l *local) shareOf(cur *share, known knownFigure, seen bool, key string, limit, held float64, now time.Time) (*share, error) {
	if cur.key == key {
		return cur, nil
	}
	remaining := math.Inf(1)
	if limit > 0 {
		switch {
		case now.Sub(known.at) > maxFigureAge:
			return nil, errNoFigures
		case known.key == key:
			remaining = limit - known.spent - known.reserve - held
		case seen:
			remaining = limit // a period Redis has not told us about has just begun
		default:
			return nil, errNoFigures
		}
	}
	*cur = share{key: key, allow: max(remaining, 0) / l.replicas}
	return cur, nil
}

// admit decides an admission from the local share.
func (l *local) admit(ad *admission, now time.Time) (translate.Admitted, error) {
	ad.lease.ID = "L" + ad.lease.ID
	ad.token = ad.lease.token()
	l.mu.Lock()
	defer l.mu.Unlock()
	var bs *share // nil: this admission has no budget (a free engine, or unlimited)
	if ad.Daily > 0 {
		var err error
		held := l.held.heldFor(l.held.budget, ad.lease.Budget, now)
		if bs, err = l.shareOf(&l.budgetShare, l.budgetKnown, l.contact, ad.lease.Budget, ad.Daily, held, now); err != nil {
			return translate.Admitted{}, err
		}
	}
	var qs *share
	if ad.lease.Quota != "" {
		known, seen := l.quotaKnown[ad.Engine]
		cur := l.quotaShare[ad.Engine]
		if cur == nil {
			cur = new(share)
			l.quotaShare[ad.Engine] = cur
		}
		var err error
		held := l.held.heldFor(l.held.quota[ad.Engine], ad.lease.Quota, now)
		if qs, err = l.shareOf(cur, known, seen, ad.lease.Quota, float64(ad.Quota), held, now); err != nil {
			return translate.Admitted{}, err
		}
	}
	got := translate.Admitted{QuotaLeft: -1}
	if l.budgetShare.key == ad.lease.Budget {
		got.Spent = l.budgetShare.used
	}
	if l.budgetKnown.key == ad.lease.Budget {
		got.Spent += l.budgetKnown.spent + l.budgetKnown.reserve
	}
	if qs != nil {
		got.QuotaLeft = max(int64(qs.allow-qs.used), 0)
	}
	l.pruneRequests(ad.Now)
	rkey := ad.lease.Request
	if rkey != "" {
		if prior := priorAnswer(l.rids[rkey], ad.Engine); prior != nil {
			got.Prior = prior
			return got, nil
		}
	}
	if l.strict && rkey != "" && !l.own.has(rkey, ad.Now) {
		// Another replica may have sent it: only Redis could tell. No Until: the engine
		// stays in for other requests.
		got.Refused = translate.KindUnavailable
		return got, nil
	}
	if h, ok := l.holds[ad.Engine]; ok && h.until.After(ad.Now) {
		got.Refused, got.Until = h.kind, h.until
		return got, nil
	}
	if bs != nil && ad.Credits > 0 && bs.used+ad.Credits > bs.allow+1e-9 {
		got.Refused = translate.KindBudgetExceeded
		return got, nil
	}
	if qs != nil && qs.used+float64(ad.Chars) > qs.allow {
		got.Refused = translate.KindQuotaExhausted // no Until: only this Client's share ran out
		return got, nil
	}
	if bs != nil {
		bs.used += ad.Credits
		got.Spent += ad.Credits
	}
	if qs != nil {
		qs.used += float64(ad.Chars)
		got.QuotaLeft = max(int64(qs.allow-qs.used), 0)
	}
	if rkey != "" {
		l.remember(rkey, ad.Engine, "", ad.Now)
		if l.strict {
			l.own.add(rkey, ad.Now)
		}
	}
	l.leases[ad.token] = &localLease{ad: ad}
	got.Lease = ad.token
	return got, nil
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

// settleLocal settles a lease granted from the local share: false when tok is not one (or
// was adopted by Redis since), and the caller settles it in Redis.
func (l *local) settleLocal(st translate.Settlement, le *lease, answer string, now time.Time) bool {
	if !strings.HasPrefix(le.ID, "L") {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ll, ok := l.leases[st.Lease]
	if !ok {
		return false
	}
	delete(l.leases, st.Lease)
	ad := ll.ad
	if l.budgetShare.key == ad.lease.Budget {
		l.budgetShare.used += st.Credits - ad.Credits
	}
	if qs := l.quotaShare[ad.Engine]; qs != nil && qs.key == ad.lease.Quota {
		qs.used += float64(st.Chars - ad.lease.Chars)
	}
	if ll.sent {
		l.settles = append(l.settles, settleOp(st))
	} else {
		l.charge(ad.lease.Budget, "l", formatCredits(st.Credits), 0, ms(ad.dayEnd.Sub(now)+24*time.Hour))
		if ad.lease.Quota != "" {
			l.charge(ad.lease.Quota, "m", "", st.Chars, ms(ad.qEnd.Sub(now)+quotaLen(ad.QuotaPeriod)))
		}
	}
	if answer != "" && ad.lease.Request != "" {
		l.remember(ad.lease.Request, ad.Engine, answer, ad.Now)
		l.answer(ad.lease.Request, ad.Engine, answer, ad.Now.Add(translate.RequestWindow).Sub(now))
	}
	return true
}

// charge adds spend made from the local share to the counter key's pending charge.
func (l *local) charge(key, kind, credits string, chars int64, ttl int64) {
	if credits == "0" || (kind == "m" && chars == 0) {
		return
	}
	o, ok := l.spends[key]
	if !ok {
		o = op{"o": kind, "g": l.k.prefix + "f:" + newLeaseID(), "k": key, "kt": ttl, "c": "0", "n": int64(0)}
		l.spends[key] = o
	}
	if kind == "l" {
		o["c"] = addDecimal(o["c"].(string), credits)
	} else {
		o["n"] = o["n"].(int64) + chars
	}
}

func addDecimal(a, b string) string {
	x, y := parseFloat(a), parseFloat(b)
	return formatCredits(x + y)
}

func (l *local) answer(rkey, engine, answer string, left time.Duration) {
	if left <= 0 || len(l.answers) >= maxAnswers {
		return
	}
	l.answers = append(l.answers, op{"o": "r", "k": rkey, "e": engine, "a": answer, "p": ms(left)})
}

func settleOp(st translate.Settlement) op {
	return op{"o": "s", "t": st.Lease, "x": sentFlag(st.Sent), "c": formatCredits(st.Credits), "n": st.Chars}
}

// queueRelease queues the release of a lease whose Admit got no answer: if the script ran
// after all, the reservation is freed when Redis answers again; if not, nothing happens.
func (l *local) queueRelease(tok string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.settles = append(l.settles, op{"o": "s", "t": tok, "x": 0, "c": "0", "n": int64(0)})
}

// queueSettle queues the settlement of a Redis lease that could not be sent.
func (l *local) queueSettle(st translate.Settlement, le *lease, answer string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.settles = append(l.settles, settleOp(st))
	if answer != "" && le.Request != "" {
		l.answer(le.Request, le.Engine, answer, translate.RequestWindow)
	}
}

func (l *local) hold(key, engine string, kind translate.Kind, until, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h, ok := l.holds[engine]; !ok || h.until.Before(until) {
		l.holds[engine] = heldEngine{kind, until}
	}
	h := l.holds[engine]
	l.holdOps[key] = op{"o": "h", "k": key, "v": formatHold(h.kind, h.until),
		"u": h.until.UnixMilli(), "p": ms(h.until.Sub(now))}
}

// budget is the day's figure as this Client knows it while Redis is unreachable.
func (l *local) budget(key string) (spent, reserved float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.budgetKnown.key == key {
		spent, reserved = l.budgetKnown.spent, l.budgetKnown.reserve
	}
	if l.budgetShare.key == key {
		spent += l.budgetShare.used
	}
	return max(spent, 0), max(reserved, 0)
}

// pending reports whether operations wait for Redis and, when a push is under way, a
// channel closed when it ends.
func (l *local) pending() (bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pushing != nil {
		return true, l.pushing
	}
	waiting := len(l.retry)+len(l.settles)+len(l.spends)+len(l.holdOps)+len(l.answers) > 0
	for _, ll := range l.leases {
		waiting = waiting || !ll.sent
	}
	return waiting, nil
}

func opRank(o op) int {
	return strings.Index("asmlhr", o["o"].(string))
}

// take collects the operations waiting for Redis, leases granted locally and still in
// flight first (adopted as Redis leases, so their reservation counts for every replica).
// done reports whether Redis applied them. take returns nil when nothing waits or a push is
// already under way.
func (l *local) take(now time.Time) (ops []op, done func(ok bool)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pushing != nil {
		return nil, nil
	}
	ops = l.retry
	l.retry = nil
	var adopted []string
	for tok, ll := range l.leases {
		if ll.sent {
			continue
		}
		ll.sent = true
		ad := ll.ad
		ops = append(ops, op{"o": "a", "g": l.k.prefix + "f:" + ad.lease.ID, "t": tok,
			"x": ad.expires.UnixMilli(), "lt": ms(ad.LeaseTTL),
			"bt": ms(ad.dayEnd.Sub(now) + 24*time.Hour),
			"qt": ms(ad.qEnd.Sub(now) + quotaLen(ad.QuotaPeriod)),
			"rt": max(ad.Now.Add(translate.RequestWindow).Sub(now).Milliseconds(), 0)})
		adopted = append(adopted, tok)
	}
	ops = append(ops, l.settles...)
	l.settles = nil
	for _, o := range l.spends {
		ops = append(ops, o)
	}
	clear(l.spends)
	for _, o := range l.holdOps {
		ops = append(ops, o)
	}
	clear(l.holdOps)
	ops = append(ops, l.answers...)
	l.answers = nil
	if len(ops) == 0 {
		return nil, nil
	}
	slices.SortStableFunc(ops, func(a, b op) int { return opRank(a) - opRank(b) })
	pushing := make(chan struct{})
	l.pushing = pushing
	return ops, func(ok bool) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.pushing = nil
		close(pushing)
		if !ok {
			l.retry = append(ops, l.retry...)
			return
		}
		for _, tok := range adopted {
			delete(l.leases, tok) // a Redis lease now: settled there
		}
	}
}
