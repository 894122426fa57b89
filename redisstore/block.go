package redisstore

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
	"time"
)

// BlockTTL is how long a leased block holds without a renewal: a replica renews its blocks
// with every refill (about every 5 s under steady load) and at least every BlockTTL/3 while
// it admits; a block not renewed within BlockTTL (its holder was SIGKILLed, or cut off from
// Redis) is charged as spent in full by the next refill of any replica.
const BlockTTL = 30 * time.Second

// demandWindow is how much of its own demand a replica leases at once: a block is sized to
// about this long of the replica's recent rate, and refilled when half of it is used.
const demandWindow = 10 * time.Second

// dryWait is how long a replica whose refill found nothing left refuses without asking
// Redis again: other replicas may return or be charged blocks meanwhile.
const dryWait = time.Second

// errNoBlock: the block is used up and Redis could not be asked for more.
var errNoBlock = errors.New("redisstore: leased block used up and redis unreachable")

// block is one lease of a budget or quota from Redis. granted and reported are the
// cumulative figures Redis keeps for it (granted, and spent as last reported); spent and
// inflight are this replica's own: settled spend and reservations of calls in flight.
type block struct {
	id       string
	granted  float64
	reported float64
	spent    float64
	inflight float64
	calls    int       // in flight: inflight is 0 exactly when none is (a float sum of reservations and releases leaves residue)
	expires  time.Time // when Redis charges it as spent unless renewed
}

func (b *block) free() float64 { return b.granted - b.spent - b.inflight }

func (b *block) reserveCall(amount float64) {
	b.inflight += amount
	b.calls++
}

// limit is one budget day or one quota period as this replica sees it: the block it holds,
// blocks it can no longer renew (orphans: Redis charged them as spent in full, or lost
// them), its demand, and the last figures Redis reported.
type limit struct {
	key   string
	start time.Time // of the period
	end   time.Time
	quota bool
	grp   *group // the blocks' zset and epoch when not the prefix's (a tenant's: tenant.go)

	mu      sync.Mutex
	cur     *block
	orphans []*block
	demand  float64 // exponentially decayed sum of admitted amounts, time constant demandWindow
	at      time.Time
	lim     float64   // the limit last asked for
	unit    float64   // the last call's amount: blocks are granted in whole calls
	target  float64   // the block's free part right after its last refill
	lost    bool      // Redis lost the figures: serve only from held blocks until the period ends
	held    *block    // the block held when the figures were lost: still counted in them
	retryAt time.Time // no refill before: the last ones failed
	fails   int       // refills failed in a row
	refill  bool      // an asynchronous refill is under way
	dry     time.Time // until then a refill is not asked for: the last one found nothing left
	dryLim  float64   // of this limit; a higher limit asks at once
	spent   float64
	reserve float64     // the figures at the last refill
	writes  int64       // the figure key's write count (v) in the last reply: lower later means lost writes
	nextID  string      // the id a new block gets: kept until a reply names it
	pending bool        // a grant was not acknowledged by Redis's replicas: Redis may hold it under nextID (or cur's id) until adopted or returned
	rmu     refillLock  // one refill at a time
	timer   *time.Timer // renews or returns the block when the replica goes quiet
	stopped bool        // by Flush: no timer until the next block
}

// want is the block this replica aims to hold: demandWindow of its demand.
func (l *limit) want(now time.Time, amount float64) float64 {
	if !l.at.IsZero() {
		switch x := now.Sub(l.at).Seconds() / demandWindow.Seconds(); {
		case x > 1e-4:
			l.demand *= math.Exp(-x)
		case x > 0: // calls a few µs apart: exp(-x) to 1e-12 without math.Exp
			l.demand *= 1 - x + x*x/2
		}
	}
	l.at = now
	l.demand += amount
	return max(l.demand, 2*amount)
}

// take reserves amount from a held block: orphans first, then the current one. nil when
// none has enough.
func (l *limit) take(amount float64, now time.Time) *block {
	l.dropSpentOrphans()
	for _, b := range l.orphans {
		if b.free() >= amount-1e-9 {
			b.reserveCall(amount)
			return b
		}
	}
	if b := l.cur; b != nil {
		if !now.Before(b.expires) { // not renewed in time: Redis charges it in full
			l.orphans = append(l.orphans, b)
			l.cur = nil
			if b.free() >= amount-1e-9 {
				b.reserveCall(amount)
				return b
			}
			return nil
		}
		if b.free() >= amount-1e-9 {
			b.reserveCall(amount)
			return b
		}
	}
	return nil
}

func (l *limit) dropSpentOrphans() {
	n := 0
	for _, b := range l.orphans {
		if b.free() > 1e-9 || b.inflight > 0 {
			l.orphans[n] = b
			n++
		}
	}
	clear(l.orphans[n:])
	l.orphans = l.orphans[:n]
}

// limits are the limits this replica holds blocks of: one budget day and one quota period
// per engine (a limit of an ended period is replaced).
type limits struct {
	mu sync.Mutex
	m  map[string]*limit // "b" or "q:ENGINE" -> the current period's limit
	qs map[string]string // ENGINE -> "q:ENGINE", made once: as many as the engines admitted to
	wg sync.WaitGroup    // asynchronous refills
}

func (ls *limits) get(slot, key string, start, end time.Time, quota bool) *limit {
	return ls.getIn(slot, key, start, end, quota, nil)
}

// getIn is get for a limit whose blocks live in g (nil: the prefix's).
func (ls *limits) getIn(slot, key string, start, end time.Time, quota bool, g *group) *limit {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.m == nil {
		ls.m = map[string]*limit{}
	}
	l := ls.m[slot]
	if l == nil || l.key != key {
		if l != nil && start.Before(l.start) {
			return &limit{key: key, start: start, end: end, quota: quota, grp: g} // an old period: no block
		}
		l = &limit{key: key, start: start, end: end, quota: quota, grp: g}
		ls.m[slot] = l
	}
	return l
}

// quotaLimit returns the engine's quota limit for the period [start, end), making its slot
// and key only for a period it does not hold yet (no allocation on the hot path).
func (s *Store) quotaLimit(engine string, start, end time.Time) *limit {
	ls := &s.blocks
	ls.mu.Lock()
	slot, ok := ls.qs[engine]
	if !ok {
		if ls.qs == nil {
			ls.qs = map[string]string{}
		}
		slot = "q:" + engine
		ls.qs[engine] = slot
	}
	l := ls.m[slot]
	ls.mu.Unlock()
	if l != nil && l.start.Equal(start) {
		return l
	}
	return ls.get(slot, s.k.quota(engine, start), start, end, true)
}

func (ls *limits) all() []*limit {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	out := make([]*limit, 0, len(ls.m))
	for _, l := range ls.m {
		out = append(out, l)
	}
	return out
}

// reserve takes amount of l for one call admitted at now: from a held block, else from a
// block refilled now, within WithTimeout of its turn. A nil block with a nil error is a refusal (the limit is reached); exhausted reports
// whether nothing of it remains anywhere (for the quota's Until).
func (s *Store) reserve(ctx context.Context, l *limit, amount, lim float64, now time.Time) (b *block, exhausted bool, err error) {
	l.mu.Lock()
	l.lim, l.unit = lim, amount
	want := l.want(now, amount)
	b = l.take(amount, now)
	if b != nil {
		s.maybeRefill(l, want, now)
		l.mu.Unlock()
		return b, false, nil
	}
	l.mu.Unlock()
	for range 3 { // calls on the fast path may take a refill before this one does
		if !l.rmu.lockWithin(ctx) { // one refill at a time: wait for one under way, then look again
			return nil, false, context.Cause(ctx)
		}
		if b, exhausted, err = s.refillFor(ctx, l, amount, lim, want, now); b != nil || exhausted || err != nil {
			return b, exhausted, err
		}
	}
	return nil, false, nil
}

// refillFor refills l for a call of amount that its block cannot take, and takes it. The
// caller holds l.rmu, which refillFor releases. exhausted: Redis has nothing left for it
// (then this replica waits dryWait before asking again). It returns when ctx ends, the
// refill going on without it.
func (s *Store) refillFor(ctx context.Context, l *limit, amount, lim, want float64, now time.Time) (*block, bool, error) {
	l.mu.Lock()
	if b := l.take(amount, now); b != nil || l.lost {
		l.mu.Unlock()
		l.rmu.Unlock()
		return b, l.lost, nil
	}
	switch {
	case now.Before(l.retryAt):
		l.mu.Unlock()
		l.rmu.Unlock()
		return nil, false, errNoBlock
	case now.Before(l.dry) && lim <= l.dryLim:
		l.mu.Unlock()
		l.rmu.Unlock()
		return nil, true, nil
	}
	need := amount
	if l.cur != nil {
		need -= max(l.cur.free(), 0)
	}
	l.mu.Unlock()
	select {
	case err := <-s.refillInCall(ctx, l, want, need):
		if err != nil {
			return nil, false, err
		}
	case <-ctx.Done():
		return nil, false, context.Cause(ctx)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.take(amount, now); b != nil {
		return b, false, nil
	}
	if l.lim-l.spent-l.reserve < amount { // nothing left to lease: ask again in a while
		l.dry, l.dryLim = now.Add(dryWait), lim
		return nil, l.lim-l.spent < amount, nil
	}
	return nil, false, nil // the grant went to calls on the fast path: try again
}

// refillInCall refills l for a call on a goroutine of its own, which releases l.rmu when
// the refill ends, and reports its error on the channel returned: the call waits for it
// within its ctx, and the callers queued behind it get the block even when it gave up. The
// refill is bounded by refillTimeout from now. The caller holds l.rmu.
func (s *Store) refillInCall(ctx context.Context, l *limit, want, need float64) <-chan error {
	done := make(chan error, 1)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.refillTimeout())
	s.blocks.wg.Add(1)
	go func() {
		defer s.blocks.wg.Done()
		defer l.rmu.Unlock()
		defer cancel()
		done <- s.refillLocked(rctx, l, want, need, false)
	}()
	return done
}

// maybeRefill starts an asynchronous refill when the current block is down to half of
// what this replica wants, or is due for renewal. l.mu is held.
func (s *Store) maybeRefill(l *limit, want float64, now time.Time) {
	if l.refill || l.lost || now.Before(l.retryAt) {
		return
	}
	c := l.cur
	renew := c != nil && now.After(c.expires.Add(-2*BlockTTL/3))
	if c != nil && c.free() >= min(want, l.target)/2 && !renew { // a capped block refills at half of its cap
		return
	}
	l.refill = true
	s.blocks.wg.Add(1)
	go func() {
		defer s.blocks.wg.Done()
		l.rmu.Lock()
		defer l.rmu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), s.refillTimeout())
		defer cancel()
		_ = s.refillLocked(ctx, l, want, 0, false)
		l.mu.Lock()
		l.refill = false
		l.mu.Unlock()
	}()
}

// release undoes a reservation (Sent false) or charges what the call cost.
func (l *limit) settle(b *block, reserved, cost float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b.inflight = max(b.inflight-reserved, 0)
	if b.calls--; b.calls <= 0 { // the last call in flight: no residue keeps Flush from returning the block
		b.calls, b.inflight = 0, 0
	}
	b.spent += cost
}

// refillLocked asks Redis to renew l's current block, report its spend and grow it by what
// this replica wants (want: demandWindow of demand; need: at least this much now), or,
// with ret, to return it. The caller holds l.rmu.
func (s *Store) refillLocked(ctx context.Context, l *limit, want, need float64, ret bool) error {
	now := s.o.now()
	l.mu.Lock()
	id, spent, free := "", 0.0, 0.0
	if l.cur != nil {
		id, spent, free = l.cur.id, l.cur.spent, l.cur.free()
	}
	if ret && ((l.cur == nil && !l.pending) || (l.cur != nil && l.cur.inflight > 0)) {
		l.mu.Unlock()
		return nil // nothing to return (not even a grant not acknowledged), or calls in flight: renewed later, or swept
	}
	returned := l.cur
	if ret {
		l.cur = nil // returned: no admission takes from it any more
	}
	lim, ttl, unit, writes := l.lim, ms(l.end.Sub(now)+24*time.Hour), l.unit, l.writes
	if l.nextID == "" {
		l.nextID = newLeaseID()
	}
	nextID := l.nextID // the same until a reply names it: a grant whose reply was lost is adopted, not stranded
	l.mu.Unlock()
	mode := "r"
	if ret {
		mode = "x"
	}
	add := max(want-free, need, 0)
	sent := time.Now() // the deadline is in real time, whatever clock the store runs on
	var deadline int64
	if s.offsetKnown.Load() {
		deadline = sent.UnixMicro() + s.o.timeout.Microseconds() + s.offset.Load()
	}
	bx, ek, known := s.groupKeys(l)
	r, err := s.runBlock(ctx, !ret, []string{l.key, bx, ek},
		now.UnixMilli(), deadline, known, id, fnum(spent), fnum(add), fnum(need), fnum(want),
		fnum(lim), now.Add(BlockTTL).UnixMilli(), ttl, l.start.UnixMilli(), mode, nextID,
		fnum(unit), fnum(max(free, 0)), writes)
	if err == nil {
		err = s.applyBlock(l, r, sent, now)
	}
	if err != nil {
		s.refillFailed(l, err, ret, returned, now)
		return err
	}
	return nil
}

// refillFailed records a refill or return of l that failed: a block not returned is kept,
// for the next Flush or a renewal; a grant not acknowledged is pending, to be adopted or
// returned; the next refill waits a probe period after two failures in a row.
func (s *Store) refillFailed(l *limit, err error, ret bool, returned *block, now time.Time) {
	l.mu.Lock()
	if ret && l.cur == nil {
		l.cur = returned
	}
	if errors.Is(err, errNotAcked) {
		l.pending = true
	}
	if l.fails++; l.fails > 1 { // one timeout on a busy host is not an outage yet
		l.retryAt = now.Add(s.probeEvery())
	}
	l.mu.Unlock()
	if !errors.Is(err, errNotAcked) {
		s.unreachable.Add(context.Background(), 1)
	}
}

func (s *Store) applyBlock(l *limit, r []any, sent, now time.Time) error {
	bad := errors.New("redisstore: malformed reply from the block script")
	if len(r) != 9 {
		if len(r) == 2 { // late: learn the clock again
			srv, _ := r[1].(int64)
			s.learnOffset(sent, time.Now(), srv)
			return errors.New("redisstore: redis answered after the deadline")
		}
		return bad
	}
	code, _ := r[0].(int64)
	id, _ := r[1].(string)
	g, sp, fs, fr := str(r[2]), str(r[3]), str(r[4]), str(r[5])
	srv, _ := r[6].(int64)
	epoch, _ := r[7].(string)
	writes, _ := r[8].(int64)
	s.learnOffset(sent, time.Now(), srv)
	s.learnEpoch(l, epoch)
	l.mu.Lock()
	defer l.mu.Unlock()
	if code != codeLost { // figures of a lost period are Redis's empty ones: keep the last known
		l.spent, l.reserve = fs, fr
	}
	l.retryAt, l.fails, l.pending = time.Time{}, 0, false
	l.writes = max(l.writes, writes)
	if id == l.nextID {
		l.nextID = ""
	}
	switch {
	case code == codeLost:
		l.lost = true
		if l.cur != nil {
			l.orphans = append(l.orphans, l.cur)
			l.held, l.cur = l.cur, nil
		}
	case l.cur == nil && id == "":
	case l.cur != nil && l.cur.id == id:
		l.cur.granted = max(g, l.cur.granted)
		l.cur.reported = sp
		l.cur.expires = now.Add(BlockTTL)
	default: // a new block: the old one, if any, was charged in full
		if l.cur != nil {
			l.orphans = append(l.orphans, l.cur)
		}
		l.cur = &block{id: id, granted: g, reported: sp, expires: now.Add(BlockTTL)}
	}
	if l.cur != nil {
		l.target = l.cur.free()
		s.arm(l)
	}
	return nil
}

// arm schedules the quiet-time renewal of l's block: BlockTTL/3 after its last renewal, a
// replica that admitted nothing for demandWindow returns it, any other renews it. l.mu is
// held.
func (s *Store) arm(l *limit) {
	l.stopped = false
	if l.timer != nil {
		l.timer.Reset(BlockTTL / 3)
		return
	}
	l.timer = time.AfterFunc(BlockTTL/3, func() { s.quiet(l) })
}

// quiet renews l's block, or returns it when this replica admitted nothing for
// demandWindow: the quiet-time renewal.
func (s *Store) quiet(l *limit) {
	l.rmu.Lock()
	defer l.rmu.Unlock()
	l.mu.Lock()
	if l.stopped || l.cur == nil {
		l.mu.Unlock()
		return
	}
	now := s.o.now()
	idle := now.Sub(l.at) > demandWindow
	want := l.want(now, 0)
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.refillTimeout())
	defer cancel()
	_ = s.refillLocked(ctx, l, want, 0, idle)
}

func str(v any) float64 {
	s, _ := v.(string)
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

func fnum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// returnBlocks gives back every block with no call in flight, after the last request.
func (s *Store) returnBlocks(ctx context.Context) error {
	s.blocks.wg.Wait()
	var first error
	for _, l := range s.blocks.all() {
		l.rmu.Lock()
		l.stop()
		pctx, cancel := context.WithTimeout(ctx, s.refillTimeout())
		err := s.refillLocked(pctx, l, 0, 0, true)
		cancel()
		l.rmu.Unlock()
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// stop cancels the quiet-time renewal until the next block.
func (l *limit) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	if l.timer != nil {
		l.timer.Stop()
	}
}

// counted is the block whose own figures the reports add to Redis's: the current one, or
// after a loss the one held then (its spend since its last report is in no figure Redis
// keeps). l.mu is held.
func (l *limit) counted() *block {
	if l.cur != nil {
		return l.cur
	}
	return l.held
}

// refillLock is a mutex that a caller can stop waiting for when its context ends: one
// refill of a limit at a time, and callers bounded by their own deadline while one runs.
// The zero value is unlocked.
type refillLock struct {
	mu   sync.Mutex
	held bool
	free chan struct{} // closed when the lock is released; nil while no one waits
}

// Lock waits for the lock.
func (q *refillLock) Lock() { q.lockWithin(context.Background()) }

// lockWithin waits for the lock until ctx ends; false when it ended first.
func (q *refillLock) lockWithin(ctx context.Context) bool {
	for {
		q.mu.Lock()
		if !q.held {
			q.held = true
			q.mu.Unlock()
			return true
		}
		if q.free == nil {
			q.free = make(chan struct{})
		}
		free := q.free
		q.mu.Unlock()
		select {
		case <-free:
		case <-ctx.Done():
			return false
		}
	}
}

// TryLock takes the lock if it is free.
func (q *refillLock) TryLock() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.held {
		return false
	}
	q.held = true
	return true
}

// Unlock releases the lock and wakes the callers waiting for it.
func (q *refillLock) Unlock() {
	q.mu.Lock()
	q.held = false
	free := q.free
	q.free = nil
	q.mu.Unlock()
	if free != nil {
		close(free)
	}
}
