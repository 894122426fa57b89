package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/fanyi-go/translate"
)

// DefaultLeaseTTL is how long a lease holds when an Admission gives no LeaseTTL.
const DefaultLeaseTTL = 10 * time.Second

// Store is a translate.Store over Redis. It is safe for concurrent use and needs no Close:
// it starts no goroutines. Build it with New.
type Store struct {
	rdb redis.UniversalClient
	k   keys
	o   options
	sc  scripts
	log *slog.Logger

	// offset is the Redis server clock minus ours, in µs, learned from every reply; it turns
	// our timeout into a deadline the server checks, so a call that reaches a paused server
	// after we gave up does nothing.
	offset      atomic.Int64
	offsetKnown atomic.Bool

	loc local

	fallbacks     metric.Int64Counter
	unreachable   metric.Int64Counter
	strictRefused metric.Int64Counter
}

var _ translate.Store = (*Store)(nil)

// New returns a Store over rdb. rdb must honour context deadlines
// (redis.Options.ContextTimeoutEnabled, likewise for cluster and ring clients): the store
// bounds every call by WithTimeout.
func New(rdb redis.UniversalClient, opts ...Option) (*Store, error) {
	if rdb == nil {
		return nil, errors.New("redisstore: nil redis client")
	}
	if !honoursDeadlines(rdb) {
		return nil, errors.New("redisstore: the redis client must set ContextTimeoutEnabled: the store bounds every call by its own timeout")
	}
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	if o.meter == nil {
		o.meter = otel.GetMeterProvider()
	}
	s := &Store{rdb: rdb, k: keys{o.prefix}, o: o, sc: newScripts(), log: o.logger}
	s.loc.init(s.k, o.replicas, o.strictIDs)
	m := o.meter.Meter("github.com/fanyi-go/translate/redisstore")
	var err error
	if s.fallbacks, err = m.Int64Counter("translate.store.fallback",
		metric.WithDescription("Admissions decided from the local share while Redis was unreachable")); err != nil {
		return nil, fmt.Errorf("redisstore: metric: %w", err)
	}
	if s.unreachable, err = m.Int64Counter("translate.store.unreachable",
		metric.WithDescription("Calls to Redis that failed or timed out")); err != nil {
		return nil, fmt.Errorf("redisstore: metric: %w", err)
	}
	if s.strictRefused, err = m.Int64Counter("translate.store.request_id_refused",
		metric.WithDescription("Admissions refused while Redis was unreachable because their request id may have reached an engine through another replica (WithStrictRequestIDs)")); err != nil {
		return nil, fmt.Errorf("redisstore: metric: %w", err)
	}
	return s, nil
}

func honoursDeadlines(rdb redis.UniversalClient) bool {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return true // another implementation: trust it
}

func invalid(msg string) error {
	return &translate.Error{Kind: translate.KindInvalidInput, Message: "redisstore: " + msg}
}

func checkAdmission(a *translate.Admission) error {
	switch {
	case a.Engine == "":
		return invalid("admission without an engine")
	case a.Credits < 0 || math.IsNaN(a.Credits) || math.IsInf(a.Credits, 0):
		return invalid("credits must be a finite number, not negative")
	case a.Daily < 0 || math.IsNaN(a.Daily) || math.IsInf(a.Daily, 0):
		return invalid("daily budget must be a finite number, not negative")
	case a.Chars < 0 || a.Quota < 0:
		return invalid("chars and quota must not be negative")
	}
	return nil
}

// admission is an Admission with its keys and lease worked out once.
type admission struct {
	translate.Admission
	lease   lease
	token   string
	dayEnd  time.Time
	qEnd    time.Time
	expires time.Time // the lease's end
}

func (s *Store) prepare(a translate.Admission) (*admission, error) {
	if err := checkAdmission(&a); err != nil {
		return nil, err
	}
	if a.LeaseTTL <= 0 {
		a.LeaseTTL = DefaultLeaseTTL
	}
	ad := &admission{Admission: a, expires: a.Now.Add(a.LeaseTTL)}
	dayStart, dayEnd := day(a.Now)
	ad.dayEnd = dayEnd
	ad.lease = lease{ID: newLeaseID(), Engine: a.Engine, Budget: s.k.budget(dayStart),
		Credits: formatCredits(a.Credits), Chars: a.Chars}
	if a.Quota > 0 {
		var qStart time.Time
		qStart, ad.qEnd = quotaPeriod(a.Now, a.QuotaPeriod)
		ad.lease.Quota = s.k.quota(a.Engine, qStart)
	} else {
		ad.lease.Chars = 0 // nothing to reserve against
	}
	if a.RequestID != "" {
		ad.lease.Request = s.k.request(a.RequestID)
	}
	ad.token = ad.lease.token()
	return ad, nil
}

// Admit implements translate.Store: one round trip to Redis, two when it first pushes what
// it did while Redis was unreachable. See the package documentation for what it decides.
func (s *Store) Admit(ctx context.Context, a translate.Admission) (translate.Admitted, error) {
	ad, err := s.prepare(a)
	if err != nil {
		return translate.Admitted{}, err
	}
	if s.loc.isDegraded() && !s.loc.probeDue(s.o.now(), s.probeEvery()) {
		return s.admitLocal(ad)
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	if err := s.pushIfPending(ctx); err != nil {
		return s.afterFailure(ctx, ad, err)
	}
	got, err := s.admitShared(ctx, ad)
	if err != nil {
		return s.afterFailure(ctx, ad, err)
	}
	return got, nil
}

// Degraded reports whether the store is serving from its local share because Redis did
// not answer.
func (s *Store) Degraded() bool { return s.loc.isDegraded() }

func (s *Store) probeEvery() time.Duration { return max(4*s.o.timeout, 250*time.Millisecond) }

// holdFor is how long a Client holds back the other replicas' shares after an outage: long
// enough for every replica that served from its share to probe, find Redis and push.
func (s *Store) holdFor() time.Duration { return 3*s.probeEvery() + s.o.timeout }

// afterFailure handles an Admit whose call to Redis failed: the script may still run (a
// paused server reads it later), so a release of the lease is queued, then the admission
// is decided from the local share. A caller that gave up gets its own error.
func (s *Store) afterFailure(ctx context.Context, ad *admission, err error) (translate.Admitted, error) {
	s.loc.queueRelease(ad.token)
	if cerr := context.Cause(ctx); cerr != nil && !errors.Is(cerr, context.DeadlineExceeded) {
		return translate.Admitted{}, cerr // the caller canceled
	}
	s.failed(err)
	return s.admitLocal(ad)
}

func (s *Store) admitLocal(ad *admission) (translate.Admitted, error) {
	got, err := s.loc.admit(ad, s.o.now())
	if err == nil {
		s.fallbacks.Add(context.Background(), 1)
	}
	if got.Refused == translate.KindUnavailable { // only WithStrictRequestIDs refuses so
		s.strictRefused.Add(context.Background(), 1)
	}
	return got, err
}

// failed records a failed call to Redis and switches to the local share.
func (s *Store) failed(err error) {
	s.unreachable.Add(context.Background(), 1)
	if s.loc.degrade(s.o.now(), s.probeEvery()) {
		s.log.Warn("redisstore: redis unreachable; serving from the local share",
			slog.Int("replicas", s.o.replicas), slog.String("error", err.Error()))
	}
}

func (s *Store) admitShared(ctx context.Context, ad *admission) (translate.Admitted, error) {
	none := s.k.none()
	qKey := ad.lease.Quota
	if qKey == "" {
		qKey = none
	}
	cacheKey := none
	if s.o.cacheTTL > 0 {
		cacheKey = s.k.cache(ad.CacheKey)
	}
	keys := []string{s.k.leases(), s.k.swept(), cacheKey, s.k.request(ad.RequestID),
		s.k.hold(ad.Engine), ad.lease.Budget, qKey}
	sent := s.o.now()
	var deadline int64
	if s.offsetKnown.Load() {
		deadline = sent.UnixMicro() + s.o.timeout.Microseconds() + s.offset.Load()
	}
	period := ad.qEnd.Sub(ad.Now) // what is left of the quota period
	daily, quota, quotaHeld := s.loc.limits(ad, sent)
	r, err := s.sc.admit.Run(ctx, s.rdb, keys,
		ad.Now.UnixMilli(), deadline, ad.Engine, ad.token, ad.lease.Credits,
		formatCredits(daily), ad.lease.Chars, quota, ad.expires.UnixMilli(),
		translate.RequestWindow.Milliseconds(), ms(ad.dayEnd.Sub(ad.Now)+24*time.Hour),
		ms(period+quotaLen(ad.QuotaPeriod)), ad.qEnd.UnixMilli(), none).Slice()
	if err != nil {
		return translate.Admitted{}, err
	}
	rep, err := parseAdmitReply(r)
	if err != nil {
		return translate.Admitted{}, err
	}
	s.learnOffset(sent, s.o.now(), rep.server)
	if rep.code == codeLate {
		return translate.Admitted{}, errors.New("redisstore: redis answered after the deadline")
	}
	s.loc.learn(ad, rep, s.o.now())
	s.recovered()
	got := rep.admitted(ad)
	if got.Refused == translate.KindQuotaExhausted && !quotaHeld.IsZero() &&
		rep.qSpent+rep.qReserved+ad.lease.Chars <= ad.Quota {
		got.Until = quotaHeld // refused by the holdback alone: out no longer than it lasts
	}
	return got, nil
}

func quotaLen(p time.Duration) time.Duration {
	if p <= 0 {
		return 24 * time.Hour
	}
	return p
}

func ms(d time.Duration) int64 { return max(d.Milliseconds(), 1) }

// recovered returns from the local share to the shared state after Redis answered.
func (s *Store) recovered() {
	if s.loc.recover(s.o.now(), s.holdFor()) {
		s.log.Info("redisstore: redis answers again; serving from the shared state")
	}
}

func (s *Store) learnOffset(sent, got time.Time, server int64) {
	mid := sent.UnixMicro() + got.Sub(sent).Microseconds()/2
	s.offset.Store(server - mid)
	s.offsetKnown.Store(true)
}

type admitReply struct {
	code              int64
	value             string
	spent, reserved   float64
	qSpent, qReserved int64
	until, server     int64
}

func parseAdmitReply(r []any) (admitReply, error) {
	bad := errors.New("redisstore: malformed reply from the admit script")
	if len(r) != 8 {
		return admitReply{}, bad
	}
	var rep admitReply
	var ok [8]bool
	rep.code, ok[0] = r[0].(int64)
	rep.value, ok[1] = r[1].(string)
	var s, res string
	s, ok[2] = r[2].(string)
	res, ok[3] = r[3].(string)
	rep.qSpent, ok[4] = r[4].(int64)
	rep.qReserved, ok[5] = r[5].(int64)
	rep.until, ok[6] = r[6].(int64)
	rep.server, ok[7] = r[7].(int64)
	for _, b := range ok {
		if !b {
			return admitReply{}, bad
		}
	}
	rep.spent, _ = strconv.ParseFloat(s, 64)
	rep.reserved, _ = strconv.ParseFloat(res, 64)
	return rep, nil
}

func (rep admitReply) admitted(ad *admission) translate.Admitted {
	got := translate.Admitted{Spent: max(rep.spent+rep.reserved, 0), QuotaLeft: -1}
	if ad.Quota > 0 {
		got.QuotaLeft = max(ad.Quota-rep.qSpent-rep.qReserved, 0)
	}
	switch rep.code {
	case codeGranted:
		got.Lease = ad.token
	case codeCached:
		got.Cached = decodeAnswer(rep.value)
	case codePrior:
		got.Prior = decodeAnswer(rep.value)
	case codeBudget:
		got.Refused = translate.KindBudgetExceeded
	case codeQuota:
		got.Refused = translate.KindQuotaExhausted
		got.Until = time.UnixMilli(rep.until)
	case codeHold:
		got.Refused, got.Until = parseHold(rep.value)
	}
	return got
}

// A hold is stored as "KIND:UNTILMS".
func formatHold(k translate.Kind, until time.Time) string {
	return strconv.Itoa(int(k)) + ":" + strconv.FormatInt(until.UnixMilli(), 10)
}

func parseHold(v string) (translate.Kind, time.Time) {
	var k, u int64
	if _, err := fmt.Sscanf(v, "%d:%d", &k, &u); err != nil || k <= 0 {
		return translate.KindUnauthorized, time.Time{} // unreadable: hold, conservatively
	}
	return translate.Kind(k), time.UnixMilli(u)
}

// Settle implements translate.Store: one round trip. A lease granted while Redis was
// unreachable is settled locally and its spend pushed to Redis when it answers again; a
// Settle that cannot reach Redis is queued and pushed the same way (settling is idempotent).
func (s *Store) Settle(ctx context.Context, st translate.Settlement) error {
	if st.Lease == "" {
		return invalid("settlement without a lease")
	}
	if st.Credits < 0 || math.IsNaN(st.Credits) || math.IsInf(st.Credits, 0) || st.Chars < 0 {
		return invalid("settlement: credits and chars must be finite and not negative")
	}
	l, err := parseLease(st.Lease)
	if err != nil {
		return invalid("settlement: malformed lease")
	}
	if l.Quota == "" {
		st.Chars = 0
	}
	if !st.Sent {
		st.Credits, st.Chars = 0, 0
	}
	answer := encodeAnswer(st.Answer)
	if s.loc.settleLocal(st, l, answer, s.o.now()) {
		s.pushSoon(ctx)
		return nil
	}
	if s.loc.isDegraded() && !s.loc.probeDue(s.o.now(), s.probeEvery()) {
		s.loc.queueSettle(st, l, answer)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	if err := s.pushIfPending(ctx); err != nil {
		s.loc.queueSettle(st, l, answer)
		s.failed(err)
		return nil
	}
	none := s.k.none()
	cacheKey := none
	if s.o.cacheTTL > 0 && st.CacheKey != "" {
		cacheKey = s.k.cache(st.CacheKey)
	}
	err = s.sc.settle.Run(ctx, s.rdb, []string{s.k.leases(), s.k.swept(), cacheKey},
		st.Lease, sentFlag(st.Sent), formatCredits(st.Credits), st.Chars, answer,
		s.o.cacheTTL.Milliseconds(), none).Err()
	if err != nil {
		s.loc.queueSettle(st, l, answer)
		s.failed(err)
		return nil
	}
	s.recovered()
	return nil
}

func sentFlag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pushSoon pushes what was settled locally when Redis is reachable.
func (s *Store) pushSoon(ctx context.Context) {
	if s.loc.isDegraded() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	if err := s.pushIfPending(ctx); err != nil {
		s.failed(err)
	}
}

// Hold implements translate.Store: one round trip; while Redis is unreachable the hold
// applies to this Client at once and is pushed when Redis answers again. A hold never
// shortens a longer one.
func (s *Store) Hold(ctx context.Context, engine string, kind translate.Kind, until time.Time) error {
	if engine == "" || kind == translate.KindUnknown {
		return invalid("hold needs an engine and a kind")
	}
	now := s.o.now()
	if !until.After(now) {
		return nil
	}
	s.loc.hold(s.k.hold(engine), engine, kind, until, now)
	if s.loc.isDegraded() && !s.loc.probeDue(now, s.probeEvery()) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	if err := s.pushIfPending(ctx); err != nil { // the hold is among the pending ops
		s.failed(err)
	}
	return nil
}

// Budget implements translate.Store: one round trip. While Redis is unreachable it reports
// the figures of the last answer plus what this Client spent since, and, once per probe
// period, tries Redis again: a Client whose engines are all out makes no admissions, yet
// must find Redis back and push what it spent alone, or the other replicas would count its
// share as still free. That probe takes two round trips (the push, then the figures).
// Economy is left for the Client to decide.
func (s *Store) Budget(ctx context.Context, now time.Time, daily float64) (translate.BudgetStatus, error) {
	dayStart, _ := day(now)
	key := s.k.budget(dayStart)
	st := translate.BudgetStatus{Daily: daily}
	if !s.loc.isDegraded() || s.loc.probeDue(s.o.now(), s.probeEvery()) {
		ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
		defer cancel()
		err := s.pushIfPending(ctx)
		var v []any
		if err == nil {
			v, err = s.rdb.HMGet(ctx, key, "s", "r").Result()
		}
		if err == nil {
			s.recovered()
			st.Spent, st.Reserved = num(v[0]), num(v[1])
			s.loc.learnBudget(key, st.Spent, st.Reserved, s.o.now())
			return st, nil
		}
		if cerr := context.Cause(ctx); cerr != nil && !errors.Is(cerr, context.DeadlineExceeded) {
			return st, cerr
		}
		s.failed(err)
	}
	st.Spent, st.Reserved = s.loc.budget(key)
	return st, nil
}

func num(v any) float64 {
	str, _ := v.(string)
	f, _ := strconv.ParseFloat(str, 64)
	return max(f, 0)
}
