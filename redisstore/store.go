package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/fanyi-go/translate"
)

// DefaultLeaseTTL is how long a call's reservation holds when an Admission gives no
// LeaseTTL: a call never settled is then counted as spent.
const DefaultLeaseTTL = 10 * time.Second

// Store is a translate.Store over Redis. It is safe for concurrent use. Build it with New;
// call Flush when the replica stops.
type Store struct {
	rdb redis.UniversalClient
	k   keys
	o   options
	sc  scripts
	log *slog.Logger

	// offset is the Redis server clock minus ours, in µs, learned from every block reply; it
	// turns our timeout into a deadline the server checks, so a refill that reaches a paused
	// server after we gave up does nothing.
	offset      atomic.Int64
	offsetKnown atomic.Bool
	epochV      atomic.Value // string: the epoch this Store last saw
	cfgErr      atomic.Pointer[error]
	foreign     [keyKinds]atomic.Bool // a key of another type was found at a request's key of this kind: logged once

	blocks  limits
	days    dayCache     // the Client's day, worked out once a day
	tenants tenantGroups // the groups of tenants' figures (tenant.go)
	loc     local

	callsMu   sync.Mutex
	calls     map[string]*call // lease token -> the call's reservations; bounded by the calls in flight
	seq       atomic.Uint64    // numbers the lease tokens
	nextPrune time.Time

	fallbacks     metric.Int64Counter
	unreachable   metric.Int64Counter
	strictRefused metric.Int64Counter
	unacked       metric.Int64Counter

	acks acks // WithReplicaAcks (acks.go)
}

var _ translate.Store = (*Store)(nil)

// call is a granted admission: what it reserved of which blocks.
type call struct {
	engine        string
	budget, quota *limit
	bb, qb        *block
	credits       float64
	chars         float64
	rkey          string
	expires       time.Time
	at            time.Time // admitted: the store's clock, read once per admission
	more          heldSet   // the Client's month, the tenant's day and month (tenant.go)
}

// New returns a Store over rdb. rdb must honour context deadlines
// (redis.Options.ContextTimeoutEnabled, likewise for cluster and ring clients): the store
// bounds every call by WithTimeout. For a cluster client the prefix must carry a hash tag.
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
	if err := checkPrefix(rdb, o.prefix); err != nil {
		return nil, err
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	if o.meter == nil {
		o.meter = otel.GetMeterProvider()
	}
	s := &Store{rdb: rdb, k: newKeys(o.prefix), o: o, sc: newScripts(), log: o.logger, calls: map[string]*call{}}
	s.loc.init(o.strictIDs)
	m := o.meter.Meter("github.com/fanyi-go/translate/redisstore")
	var err error
	if s.fallbacks, err = m.Int64Counter("translate.store.fallback",
		metric.WithDescription("Admissions decided without Redis while it was unreachable")); err != nil {
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
	if s.unacked, err = m.Int64Counter("translate.store.grant_unacknowledged",
		metric.WithDescription("Block grants not used because too few Redis replicas acknowledged them in time (WithReplicaAcks)")); err != nil {
		return nil, fmt.Errorf("redisstore: metric: %w", err)
	}
	s.acks.init(&o)
	if o.acks > 0 && !acksSupported(rdb) {
		return nil, errors.New("redisstore: WithReplicaAcks needs a *redis.Client or a *redis.ClusterClient")
	}
	return s, nil
}

// checkPrefix refuses a prefix that is not valid UTF-8, is too long, or, for a cluster
// client, carries no hash tag (its figures would span slots: CROSSSLOT).
func checkPrefix(rdb redis.UniversalClient, p string) error {
	switch {
	case !utf8.ValidString(p):
		return errors.New("redisstore: WithPrefix: the prefix must be valid UTF-8")
	case len(p) > 200:
		return errors.New("redisstore: WithPrefix: the prefix must be at most 200 bytes")
	case strings.ContainsAny(p, "\x00\r\n"):
		return errors.New("redisstore: WithPrefix: the prefix must not contain NUL or line breaks")
	}
	if _, cluster := rdb.(*redis.ClusterClient); cluster && !hasHashTag(p) {
		return fmt.Errorf("redisstore: WithPrefix(%q): a cluster client needs a hash tag in the prefix, like \"{tenant}:\", so a tenant's figures share one slot", p)
	}
	return nil
}

// hasHashTag reports whether Redis Cluster hashes p by a non-empty {tag}.
func hasHashTag(p string) bool {
	i := strings.IndexByte(p, '{')
	if i < 0 {
		return false
	}
	j := strings.IndexByte(p[i+1:], '}')
	return j > 0
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

// configError reports whether err is Redis refusing the store's commands (CROSSSLOT, an
// unknown command, no permission, a wrong type at a figure key), which retrying cannot
// cure, rather than an outage. Such an error is kept and returned by every later call. A
// wrong type at one request's key (foreignKey) is no configuration error: callers on those
// keys check isWrongType first.
func (s *Store) configError(err error) error {
	var rerr redis.Error
	if err == nil || !errors.As(err, &rerr) {
		return nil
	}
	for _, p := range []string{"CROSSSLOT", "NOPERM", "WRONGTYPE", "ERR unknown command", "MOVED ", "ASK ", "NOAUTH", "WRONGPASS", "ERR Script attempted to access"} {
		if strings.HasPrefix(rerr.Error(), p) {
			e := fmt.Errorf("redisstore: redis refuses the store's commands (a configuration error, not an outage): %w", err)
			if s.cfgErr.CompareAndSwap(nil, &e) {
				s.log.Error("redisstore: configuration error", slog.String("error", err.Error()))
			}
			return e
		}
	}
	return nil
}

// The single keys one request names (keys.go, memory.go): its cache entry, its request
// id, its translation-memory entry.
const (
	keyCache = iota
	keyRequest
	keyMemory
	keyKinds
)

var keyKindNames = [keyKinds]string{keyCache: "cache", keyRequest: "request id", keyMemory: "memory"}

// isWrongType reports whether err is Redis finding a key of another type than the command
// expects (as a script's error too).
func isWrongType(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && strings.Contains(rerr.Error(), "WRONGTYPE")
}

// foreignKey records a key of another type or a value the store did not write (another
// application's, or a damaged one) found at one request's key of kind: that request misses, or its claim is refused, and nothing
// else changes. The first of each kind is logged at warn, with the kind only: never the
// key's name or value.
func (s *Store) foreignKey(kind int) {
	if s.foreign[kind].CompareAndSwap(false, true) {
		s.log.Warn("redisstore: a request's key holds what the store did not write there: that request skips it; keys under the store's prefix belong to the store",
			slog.String("kind", keyKindNames[kind]))
	}
}

func (s *Store) stickyErr() error {
	if p := s.cfgErr.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *Store) epoch() string {
	v, _ := s.epochV.Load().(string)
	return v
}

func (s *Store) setEpoch(e string) {
	if e != "" {
		s.epochV.Store(e)
	}
}

// SharedCache implements translate.CacheStore: true with WithCache. Without it the Client
// does not hash a request's content for a cache key the store would drop.
func (s *Store) SharedCache() bool { return s.o.cacheTTL > 0 }

// Degraded reports whether the store is deciding request ids and holds without Redis
// because Redis did not answer.
func (s *Store) Degraded() bool { return s.loc.isDegraded() }

func (s *Store) probeEvery() time.Duration { return max(4*s.o.timeout, 250*time.Millisecond) }

// reachable reports whether this call may try Redis for request ids, holds and the cache.
func (s *Store) reachable() bool {
	return !s.loc.isDegraded() || s.loc.probeDue(s.o.now(), s.probeEvery())
}

// failed records a failed call to Redis and decides request ids and holds locally for a
// probe period.
func (s *Store) failed(err error) {
	s.unreachable.Add(context.Background(), 1)
	if s.loc.degrade(s.o.now(), s.probeEvery()) {
		s.log.Warn("redisstore: redis unreachable; serving from leased blocks", slog.String("error", err.Error()))
	}
}

// recovered returns to the shared state after Redis answered.
func (s *Store) recovered() {
	if s.loc.recover() {
		s.log.Info("redisstore: redis answers again; serving from the shared state")
	}
}

func (s *Store) learnOffset(sent, got time.Time, server int64) {
	mid := sent.UnixMicro() + got.Sub(sent).Microseconds()/2
	s.offset.Store(server - mid)
	s.offsetKnown.Store(true)
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

func num(v any) float64 {
	str, _ := v.(string)
	f, _ := strconv.ParseFloat(str, 64)
	return max(f, 0)
}
