package redisstore

import (
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
)

// Option configures a Store.
type Option func(*options)

type options struct {
	prefix     string
	replicas   int
	cacheTTL   time.Duration
	memoryTTL  time.Duration
	timeout    time.Duration
	strictIDs  bool
	holdPoll   time.Duration
	acks       int           // WithReplicaAcks: replicas that acknowledge a grant
	ackTimeout time.Duration // WithReplicaAcks: WAIT's timeout
	acksSet    bool          // WithReplicaAcks given: no automatic choice
	logger     *slog.Logger
	meter      metric.MeterProvider
	now        func() time.Time // wall clock for Hold and the server-side deadline; tests replace it
}

func defaultOptions() options {
	return options{prefix: "translate:", replicas: 1, timeout: 100 * time.Millisecond, memoryTTL: DefaultMemoryTTL, holdPoll: defaultHoldPoll, now: time.Now}
}

// WithPrefix namespaces every key the store writes. Default "translate:". Clients share
// state exactly when they use the same Redis and the same prefix. It must be valid UTF-8,
// at most 200 bytes, without NUL or line breaks; with a cluster client it must carry a hash
// tag ("{svc}:"), so that the tenant's figures land in one slot (New refuses it otherwise).
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithReplicas is kept for compatibility and changes nothing: a replica spends only the
// blocks it leased (see the package documentation), whatever the number of replicas. n must
// be at least 1.
func WithReplicas(n int) Option { return func(o *options) { o.replicas = n } }

// WithCache enables a second-level cache in Redis behind each Client's in-process cache:
// text answers are kept for ttl. Default: off.
func WithCache(ttl time.Duration) Option { return func(o *options) { o.cacheTTL = ttl } }

// WithTimeout bounds every call to Redis, whatever the caller's context allows (a call
// returns when that context ends first; a block refill started in it goes on). Default
// 100ms; any positive duration. A refill that takes longer is retried a probe period later
// (4 timeouts, at least 250ms) while the replica spends what its blocks hold.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithStrictRequestIDs puts request-id de-duplication before availability while Redis
// cannot be reached. Default: off, availability first: a Client then de-duplicates request
// ids on its own only, so a request id retried on another replica during an outage may
// reach an engine once through each replica.
//
// With it, while Redis cannot be reached, an admission whose RequestID this Client did not
// itself admit within translate.RequestWindow (through Redis or alone) is refused with
// translate.KindUnavailable and no Until: another replica may already have sent it, and
// only Redis could tell. The Client skips the engine without a call and keeps it in for
// other requests. Admissions without a RequestID, and ids this Client admitted itself (a
// failover to another engine, say), are decided as without the option. The cost: during an
// outage every request that carries a request id new to the replica fails; the counter translate.store.request_id_refused counts them. The
// option keeps up to 100,000 recent request ids per Client in memory.
func WithStrictRequestIDs() Option { return func(o *options) { o.strictIDs = true } }

// WithLogger receives a warning when Redis becomes unreachable and a notice when it answers
// again. Default: slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithMeterProvider records the counters translate.store.fallback (request ids decided
// without Redis), translate.store.unreachable (calls to Redis that failed or timed out) and
// translate.store.request_id_refused (see WithStrictRequestIDs). Default: the global
// MeterProvider.
func WithMeterProvider(mp metric.MeterProvider) Option { return func(o *options) { o.meter = mp } }

func (o *options) validate() error {
	switch {
	case o.replicas < 1:
		return errors.New("redisstore: WithReplicas: n must be at least 1")
	case o.timeout <= 0:
		return errors.New("redisstore: WithTimeout: must be positive")
	case o.holdPoll < minHoldPoll || o.holdPoll > maxHoldPoll:
		return errors.New("redisstore: WithHoldPoll: must be between 10ms and 10s")
	case o.cacheTTL < 0:
		return errors.New("redisstore: WithCache: ttl must not be negative")
	case o.memoryTTL < minMemoryTTL || o.memoryTTL > maxMemoryTTL:
		return errors.New("redisstore: WithMemoryTTL: must be between 1 minute and 365 days")
	case o.acks < 0 || (o.acks > 0 && o.ackTimeout < time.Millisecond):
		return errors.New("redisstore: WithReplicaAcks: n must not be negative, and the timeout at least 1ms when n is positive")
	case o.now == nil:
		return errors.New("redisstore: nil clock")
	}
	return nil
}
