package redisstore

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate"
)

// Admit implements translate.Store. The budget and the engine's quota are reserved from
// this replica's leased blocks, in process; Redis is asked only when a block runs low (in
// the background) or out (then once, in the call), for the second-level cache when the
// admission has a CacheKey and WithCache is set, and for the request id when it has one.
func (s *Store) Admit(ctx context.Context, a translate.Admission) (translate.Admitted, error) {
	if err := s.checkAdmission(&a); err != nil {
		return translate.Admitted{}, err
	}
	parent := ctx // a refill in the call bounds itself once it is its turn
	if a.RequestID != "" || (s.o.cacheTTL > 0 && a.CacheKey != "") {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.o.timeout)
		defer cancel()
	}
	if got, ok := s.cached(ctx, a); ok {
		return got, nil
	}
	now := s.o.now()
	if h, ok := s.admitHold(parent, a.Engine, now); ok {
		return translate.Admitted{Refused: h.kind, Until: h.until, QuotaLeft: -1}, nil
	}
	c := &call{engine: a.Engine, expires: now.Add(a.LeaseTTL), at: now}
	got, err := s.reserveAll(parent, a, c)
	if err != nil || got.Refused != translate.KindUnknown {
		return got, err
	}
	if a.RequestID != "" {
		c.rkey = s.k.request(a.RequestID)
		prior, refused, err := s.claim(ctx, c.rkey, a.Engine, now)
		if err != nil || prior != nil || refused {
			s.release(c)
			got.Prior = prior
			if refused {
				got.Refused = translate.KindUnavailable
			}
			return got, err
		}
	}
	got.Lease = s.register(c, now)
	return got, nil
}

// checkAdmission validates a and fills its defaults; a configuration error found earlier
// is returned for every admission.
func (s *Store) checkAdmission(a *translate.Admission) error {
	if err := checkAdmission(a); err != nil {
		return err
	}
	if err := checkTenant(a); err != nil {
		return err
	}
	if err := s.stickyErr(); err != nil {
		return err
	}
	if a.LeaseTTL <= 0 {
		a.LeaseTTL = DefaultLeaseTTL
	}
	return nil
}

func checkSettlement(st *translate.Settlement) error {
	switch {
	case !strings.HasPrefix(st.Lease, "B"):
		return invalid("settlement without a lease of this store")
	case st.Credits < 0 || math.IsNaN(st.Credits) || math.IsInf(st.Credits, 0) || st.Chars < 0:
		return invalid("settlement: credits and chars must be finite and not negative")
	}
	return nil
}

// unlimited stands for an unlimited budget: blocks of it are leased like any other, so
// that every replica's spend is shared.
const unlimited = 1e300

// reserveAll reserves the admission's credits and characters, both or neither.
func (s *Store) reserveAll(ctx context.Context, a translate.Admission, c *call) (translate.Admitted, error) {
	got := translate.Admitted{QuotaLeft: -1}
	if a.Daily > 0 || a.Credits > 0 {
		if err := s.reserveBudgets(ctx, &a, c, &got); err != nil || got.Refused != translate.KindUnknown {
			s.release(c)
			return got, err
		}
	}
	if a.Quota > 0 {
		start, end := quotaPeriod(a.Now, a.QuotaPeriod)
		c.quota = s.quotaLimit(a.Engine, start, end)
		if a.Chars > 0 {
			b, exhausted, err := s.reserve(ctx, c.quota, float64(a.Chars), float64(a.Quota), c.at)
			if err != nil {
				s.release(c)
				return got, s.blockErr(err)
			}
			if b == nil {
				s.release(c)
				got.Refused = translate.KindQuotaExhausted
				if exhausted || c.quota.left(a.Quota) < a.Chars {
					got.Until = end // nothing left anywhere but calls in flight
				}
				got.QuotaLeft = c.quota.left(a.Quota)
				return got, nil
			}
			c.qb, c.chars = b, float64(a.Chars)
		}
		got.QuotaLeft = c.quota.left(a.Quota)
	}
	return got, nil
}

// reserveBudgets reserves the admission's credits from the Client's day, then from its
// month and the tenant's budgets (tenant.go). On a refusal or an error the caller releases
// what c holds.
func (s *Store) reserveBudgets(ctx context.Context, a *translate.Admission, c *call, got *translate.Admitted) error {
	start, end := s.days.of(a.Now)
	c.budget = s.blocks.period("b", start, end, nil, s.k.budget) // the key is made for a new day only
	lim := a.Daily
	if lim == 0 {
		lim = unlimited // the spend is still shared, for Client.Budget
	}
	if a.Credits > 0 {
		b, _, err := s.reserve(ctx, c.budget, a.Credits, lim, c.at)
		if err != nil {
			return s.blockErr(err)
		}
		if b == nil {
			got.Refused = translate.KindBudgetExceeded
			got.Spent = c.budget.figure(a.Daily)
			return nil
		}
		c.bb, c.credits = b, a.Credits
	}
	got.Spent = c.budget.figure(a.Daily)
	return s.reserveMore(ctx, a, c, got)
}

func (s *Store) blockErr(err error) error {
	if cerr := s.configError(err); cerr != nil {
		return cerr
	}
	return err
}

// figure is the budget spent and reserved as last known: Redis's figures, with this
// replica's own block counted as what it spent and holds in flight.
func (l *limit) figure(lim float64) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.spent + l.reserve
	if c := l.counted(); c != nil {
		f += (c.spent - c.reported) + c.inflight - (c.granted - c.reported)
	}
	return min(max(f, 0), max(lim, 0)+l.spent)
}

func (l *limit) left(quota int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	left := float64(quota) - l.spent - l.reserve
	if c := l.cur; c != nil {
		left += max(c.free(), 0)
	}
	return int64(max(math.Floor(left), 0))
}

func (s *Store) release(c *call) {
	c.settleMore(false, 0)
	if c.bb != nil {
		c.budget.settle(c.bb, c.credits, 0)
		c.bb = nil
	}
	if c.qb != nil {
		c.quota.settle(c.qb, c.chars, 0)
		c.qb = nil
	}
}

func (s *Store) register(c *call, now time.Time) string {
	var buf [16]byte                                                          // "B" and at most 13 base-36 digits: one allocation, the string's
	tok := string(strconv.AppendUint(append(buf[:0], 'B'), s.seq.Add(1), 36)) // unique in s.calls
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	if now.After(s.nextPrune) {
		s.nextPrune = now.Add(time.Second)
		for t, old := range s.calls {
			if now.After(old.expires) { // never settled: its holder may have sent it
				s.finish(old, true, old.credits, old.chars)
				delete(s.calls, t)
			}
		}
	}
	s.calls[tok] = c
	return tok
}

func (s *Store) finish(c *call, sent bool, credits, chars float64) {
	if !sent {
		credits, chars = 0, 0
	}
	c.settleMore(sent, credits)
	if c.bb != nil {
		c.budget.settle(c.bb, c.credits, credits)
	}
	if c.qb != nil {
		c.quota.settle(c.qb, c.chars, chars)
	}
}

// cached looks the admission up in the second-level cache.
func (s *Store) cached(ctx context.Context, a translate.Admission) (translate.Admitted, bool) {
	if s.o.cacheTTL <= 0 || a.CacheKey == "" || !s.reachable() {
		return translate.Admitted{}, false
	}
	v, err := s.rdb.Get(ctx, s.k.cache(a.CacheKey)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		s.recovered()
		return translate.Admitted{}, false
	case err != nil && !isWrongType(err):
		if s.configError(err) == nil {
			s.failed(err)
		}
		return translate.Admitted{}, false
	}
	s.recovered()
	// Not written by Settle (v is "" with a key of another type): a miss, overwritten by
	// this request's Settle.
	got, ok := decodeCached(v)
	if !ok {
		s.foreignKey(keyCache)
		return translate.Admitted{}, false
	}
	return translate.Admitted{Cached: got, QuotaLeft: -1}, true
}

// claim checks the request id for the engine and claims it: in Redis, or locally while
// Redis is unreachable.
func (s *Store) claim(ctx context.Context, rkey, engine string, now time.Time) (*translate.StoredAnswer, bool, error) {
	if s.reachable() {
		r, err := s.claimShared(ctx, rkey, engine)
		if err == nil && len(r) == 2 {
			s.recovered()
			if code, _ := r[0].(int64); code == codePrior {
				v, _ := r[1].(string)
				return decodeAnswer(v), false, nil
			}
			s.loc.claimed(rkey, now)
			return nil, false, nil
		}
		if isWrongType(err) { // still: refused, for this request id only
			s.recovered()
			return nil, true, nil
		}
		if cerr := s.configError(err); cerr != nil {
			return nil, false, cerr
		}
		if cerr := context.Cause(ctx); cerr != nil && !errors.Is(cerr, context.DeadlineExceeded) {
			return nil, false, cerr
		}
		if err == nil {
			err = errors.New("redisstore: malformed reply from the request script")
		}
		s.failed(err)
	}
	s.fallbacks.Add(context.Background(), 1)
	prior, refused := s.loc.admitID(rkey, engine, now)
	if refused {
		s.strictRefused.Add(context.Background(), 1)
	}
	return prior, refused, nil
}

// claimShared runs the request script on rkey. A key of another type there (not the
// hash the store makes) is no request id's: it is deleted and the claim made again, once.
func (s *Store) claimShared(ctx context.Context, rkey, engine string) ([]any, error) {
	run := func() ([]any, error) {
		return s.sc.request.Run(ctx, s.rdb, []string{rkey}, engine, translate.RequestWindow.Milliseconds()).Slice()
	}
	r, err := run()
	if !isWrongType(err) {
		return r, err
	}
	s.foreignKey(keyRequest)
	if err := s.rdb.Del(ctx, rkey).Err(); err != nil {
		return nil, err
	}
	return run()
}

// admitHold reports the engine's hold that refuses an admission at now, as last known here.
// It reads the engine's shared hold from Redis in the call (within ctx) the first time this
// Client admits to the engine, then in the background at most once per holdRefresh.
func (s *Store) admitHold(ctx context.Context, engine string, now time.Time) (heldEngine, bool) {
	first, due, h, ok := s.loc.holdNow(engine, now, !s.loc.isDegraded())
	switch {
	case first:
		s.readHold(ctx, engine)
		return s.loc.held(engine, now)
	case due:
		s.blocks.wg.Add(1)
		go func() {
			defer s.blocks.wg.Done()
			s.readHold(context.Background(), engine)
		}()
	}
	return h, ok
}

// readHold reads the engine's shared hold from Redis, within ctx and WithTimeout.
func (s *Store) readHold(ctx context.Context, engine string) {
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	v, err := s.rdb.Get(ctx, s.k.hold(engine)).Result()
	if err != nil {
		return
	}
	kind, until := parseHold(v)
	s.loc.learnHold(engine, kind, until)
}

// Settle implements translate.Store: it charges the call's blocks in process; it remembers
// the answer under the request id and in the second-level cache in one round trip.
// Settling a lease twice changes nothing.
func (s *Store) Settle(ctx context.Context, st translate.Settlement) error {
	if err := checkSettlement(&st); err != nil {
		return err
	}
	s.callsMu.Lock()
	c, ok := s.calls[st.Lease]
	delete(s.calls, st.Lease)
	s.callsMu.Unlock()
	if !ok {
		return nil // settled before, or counted as spent at its end
	}
	s.finish(c, st.Sent, st.Credits, float64(st.Chars))
	cache := s.o.cacheTTL > 0 && st.CacheKey != "" && st.Answer != nil && st.Answer.Text != ""
	if st.Answer == nil || c.rkey == "" && !cache {
		return nil // nothing to remember: no JSON made
	}
	answer := encodeAnswer(st.Answer)
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	if !s.reachable() {
		s.answerLater(c, answer)
		return nil
	}
	s.pushSoon(ctx)
	err := s.settleAnswer(ctx, c, st.CacheKey, answer, cache)
	if isNoScript(err) { // a pipeline does not load the script itself
		if err = s.loadScripts(ctx); err == nil {
			err = s.settleAnswer(ctx, c, st.CacheKey, answer, cache)
		}
	}
	if err != nil {
		s.failed(err)
		s.answerLater(c, answer)
		return nil
	}
	s.recovered()
	return nil
}

// settleAnswer keeps the answer under the request id and in the second-level cache: one
// pipeline, which a cluster client splits by slot.
func (s *Store) settleAnswer(ctx context.Context, c *call, cacheKey, answer string, cache bool) error {
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if c.rkey != "" {
			s.sc.answer.Run(ctx, p, []string{c.rkey}, c.engine, answer, 0)
		}
		if cache {
			p.Set(ctx, s.k.cache(cacheKey), answer, s.o.cacheTTL)
		}
		return nil
	})
	return s.answersErr(cmds, err)
}

// answersErr is err, the first failure of a pipeline's cmds, unless each failure is the
// answer script finding a key of another type at a request id's key: that answer is
// dropped (the request id is not remembered), the rest of the pipeline stands.
func (s *Store) answersErr(cmds []redis.Cmder, err error) error {
	if !isWrongType(err) {
		return err
	}
	for _, c := range cmds {
		if e := c.Err(); e != nil && (!isWrongType(e) || !s.isAnswer(c)) {
			return e
		}
	}
	s.foreignKey(keyRequest)
	return nil
}

// isAnswer reports whether c runs the answer script.
func (s *Store) isAnswer(c redis.Cmder) bool {
	args := c.Args()
	return len(args) > 1 && args[1] == s.sc.answer.Hash()
}

// answerLater keeps the answer for the request id to push when Redis answers again.
func (s *Store) answerLater(c *call, answer string) {
	if c.rkey != "" {
		s.loc.answerLocal(pendingAnswer{key: c.rkey, engine: c.engine, answer: answer, ttl: translate.RequestWindow}, s.o.now())
	}
}

// Hold implements translate.Store: the hold applies to this Client at once and reaches
// the others within about a second (they read it while admitting to the engine); while
// Redis is unreachable it is pushed when Redis answers again. A hold never shortens a longer
// one.
func (s *Store) Hold(ctx context.Context, engine string, kind translate.Kind, until time.Time) error {
	if engine == "" || kind == translate.KindUnknown {
		return invalid("hold needs an engine and a kind")
	}
	now := s.o.now()
	if !until.After(now) {
		return nil
	}
	s.loc.hold(s.k.hold(engine), engine, kind, until)
	if !s.reachable() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	if err := s.pushIfPending(ctx); err != nil {
		s.failed(err)
	}
	return nil
}

// Budget implements translate.Store: one round trip for the day's figures. Spent is what
// Redis counts as spent plus this replica's own spend not reported yet; Reserved is what
// the other replicas' blocks hold plus this replica's calls in flight. While Redis is
// unreachable it reports the figures of the last refill the same way. Economy is left for
// the Client to decide. See BudgetOf for the month's figures and a tenant's.
func (s *Store) Budget(ctx context.Context, now time.Time, daily float64) (translate.BudgetStatus, error) {
	return s.BudgetOf(ctx, now, "", daily, 0)
}

// readBudget reads the day's figures into l. The caller holds l.rmu.
func (s *Store) readBudget(ctx context.Context, l *limit) error {
	if s.reachable() {
		ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
		defer cancel()
		v, err := s.rdb.HMGet(ctx, l.key, "s", "r").Result()
		if err == nil {
			s.recovered()
			l.mu.Lock()
			if !l.lost { // a lost period's figures in Redis are not its own: keep the last known
				l.spent, l.reserve = num(v[0]), num(v[1])
			}
			l.mu.Unlock()
		} else {
			if cerr := context.Cause(ctx); cerr != nil && !errors.Is(cerr, context.DeadlineExceeded) {
				return cerr
			}
			s.failed(err)
		}
	}
	return nil
}
