// Package redisstore is a translate.Store over Redis (go-redis v9): Clients on several
// replicas that use the same Redis and prefix share the daily budget, every engine's quota,
// request-id de-duplication, vendor-reported holds and, with WithCache, a second-level
// cache. Breakers and health stay in each Client.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "redis:6379", ContextTimeoutEnabled: true})
//	st, err := redisstore.New(rdb, redisstore.WithPrefix("mysvc:"), redisstore.WithReplicas(4))
//	c, err := translate.New(..., translate.WithStore(st))
//
// # Atomic reservations
//
// Admit is one Lua script and one round trip: it sweeps expired leases, looks the request
// up in the second-level cache, checks the request id and the engine's hold, and reserves
// the credits and characters, all or nothing. Settle is one round trip too: it charges
// what the call cost and frees the rest of the reservation.
//
// # Leases
//
// A reservation is a lease that ends LeaseTTL after its admission (DefaultLeaseTTL when the
// Admission gives none; the Client passes the attempt's timeout plus a margin). A lease
// that was never settled, because its holder died, is charged as spent at its end: the call
// may have been sent. A Settle that arrives after that corrects the charge to what the call
// cost; settling a lease twice changes nothing.
//
// # When Redis does not answer
//
// Every call to Redis waits at most WithTimeout. A Client that gets no answer serves from
// its share, 1/n (WithReplicas) of what remained at its last answer from Redis, logs a
// warning and counts translate.store.fallback; one call per probe period (Admit, Settle,
// Hold or Budget, so Client.Budget finds Redis back even when no engine call is made) tries
// Redis again and, when it answers, pushes what the Client did meanwhile. For a few probe
// periods after that it holds back, of each limit it served a share of, the other replicas'
// shares: they may have spent them and not pushed yet. The budget and quotas hold across
// an outage as long as every replica that served from its share reaches Redis within that
// time; a replica that dies while serving from its share takes its spend with it, and one
// that stops gracefully should call Store.Flush first. A Client whose figures for a limited
// budget or quota are older than a minute (it never reached Redis, or was idle before the
// outage; Client.Budget keeps the budget's figure fresh) refuses admissions against it with
// an error.
//
// While Redis is away, request ids are de-duplicated per Client only: by default a request
// id retried on another replica during an outage may reach an engine once through each
// (availability first). With WithStrictRequestIDs a Client instead refuses, with
// translate.KindUnavailable, an admission whose request id it did not itself admit within
// translate.RequestWindow, since another replica may have sent it; admissions without a
// request id, and ids it admitted itself, are served from its share as by default. No
// request id then reaches an engine twice, at the cost of failing, during an outage, every
// request that carries an id new to the replica.
//
// The shares assume Redis is away for every replica at once. A replica cut off alone (its
// own network, or a process stalled past WithTimeout) while the others still reach Redis may
// spend its share after they spent the rest: the limit can then be overrun by up to that
// share.
//
// # Keys
//
// Every key lives under the prefix and expires: see the layout in keys.go. In a Redis
// Cluster, give the prefix a hash tag ("{mysvc}:") so all keys land in one slot.
package redisstore
