// Package redisstore is a translate.Store over Redis (go-redis v9): Clients on several
// replicas that use the same Redis and prefix share the daily budget, every engine's quota,
// request-id de-duplication, vendor-reported holds, the translation memory's exact entries
// (translate.MemoryStore, for Clients with translate.WithMemory; see WithMemoryTTL) and, with
// WithCache, a second-level cache. Breakers and health stay in each Client.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "redis:6379", ContextTimeoutEnabled: true})
//	st, err := redisstore.New(rdb, redisstore.WithPrefix("mysvc:"))
//	c, err := translate.New(..., translate.WithStore(st))
//	...
//	defer st.Flush(context.Background()) // after the last request: returns the leased blocks
//
// # Leased blocks
//
// A replica does not ask Redis for each call. It leases a block of the day's budget, and
// of each engine's quota period, sized from its own recent demand (about 10 s of it, an
// exponentially decayed sum of what it admitted), capped at its share of what remains by
// rate (what remains times its demand over its demand plus the other replicas' blocks),
// and granted in whole calls. Admit and Settle take from and charge the block in process.
// When the block is down to half (of its size, or of its cap), a refill runs in the
// background: one Lua script that reports what the replica spent, renews the block and
// grows it. A block runs out only when the refill cannot keep up; the Admit then refills
// in the call. A replica whose refill found nothing left refuses for a second before asking
// again. Under steady load a replica calls Redis for a limit about every 5 s: measured
// 2.7e-4 EVALSHA per call with 8 replicas at 8,000 calls/s (TestZipfReplicasSpendTheBudget),
// with 100% of the budget spent and nothing stranded once the replicas called Flush.
//
// A block not renewed within BlockTTL (30 s) is charged as spent in full by the next
// refill of any replica: a SIGKILLed replica's block counts as spent at most BlockTTL after
// its last renewal, and, until then, stays reserved. A replica renews its blocks at least
// every BlockTTL/3 while it admits, and a replica that admitted nothing for 10 s returns
// them. Flush returns every block with no call in flight; call it when a replica stops.
// What a block strands is at most the killed replica's unspent block, never more than the
// limit is spent.
//
// A call's reservation that is never settled (the Client lost it) counts as spent in its
// block once LeaseTTL has passed (DefaultLeaseTTL when the Admission gives none).
//
// # Months and tenants
//
// The Store is a translate.BudgetStore: an Admission's Monthly limit (a UTC calendar month)
// and its tenant's TenantDaily and TenantMonthly are leased in blocks like the day's budget,
// and an admission takes its credits from every block it needs, in process, all or nothing.
// The Client's month lives beside its day under the prefix; a tenant's day and month live
// under "t:{TENANT}:" (the prefix escaped before it), in the tenant's own slot of a cluster,
// with a zset of blocks and an epoch of their own. A month whose figures Redis lost grants
// nothing more until the month ends, as a lost day does until the day ends. The Store keeps
// blocks for at most 10,000 tenants; past that it forgets tenants whose blocks were all
// returned, and refuses (KindInvalidInput) an admission for a new tenant when it cannot.
//
// # When Redis does not answer
//
// Every call to Redis waits at most WithTimeout, and a call of Admit, Settle, Hold or the
// memory returns when its caller's context ends: a refill the admission started goes on in
// the background and serves the admissions after it. A replica that cannot reach Redis, alone
// (its own network, a stalled process) or with every other, spends what its blocks hold
// and nothing more: overrun 0 whatever the number of replicas. Its blocks expire in Redis
// and are charged as spent in full, so the other replicas never spend them too; the cut-off
// replica may spend them after that, since they are counted. When Redis answers again the
// block is renewed or, if it was charged meanwhile, kept to be spent and a new one leased.
//
// Request ids and holds are decided locally while Redis does not answer: one call per
// probe period tries again, and what was decided (holds, claims and answers of request ids)
// is pushed when Redis answers. By default a request id retried on another replica during
// an outage may reach an engine once through each (availability first). With
// WithStrictRequestIDs a Client instead refuses, with translate.KindUnavailable, an
// admission whose request id it did not itself admit within translate.RequestWindow.
//
// # Shared engine holds
//
// Store is a translate.HoldStore. An engine that one replica finds down (its breaker
// opens), out of quota or unauthorized is held under the key h:ENGINE until the hold ends;
// each Client reads its configured engines' holds with one MGET every WithHoldPoll (default
// 500ms) and keeps a held engine out of routing without touching its own breaker. A
// held-down engine is probed by one replica at a time: a probe first takes the engine's
// probe lock (SET NX PX, never released early), and one that passes deletes the hold for
// all. While Redis does not answer, each replica keeps to its own breakers.
//
// # Redis losing data
//
// The key E holds an epoch. A replica that knew an epoch and finds E gone (FLUSHALL, a
// restart without persistence, a failover to a replica that had not received the writes)
// or re-created by a replica that did not know it, knows the figures were lost: it writes a
// new epoch with the time of the loss, and every budget day and quota period that began
// before it is marked lost. From a lost figure no block is granted any more: each replica
// spends only the blocks it already held, until the period ends (the next day's budget
// starts afresh). A replica started after the loss gets nothing of a lost period. The
// overrun after a FLUSHALL is 0 (TestFlushAllMidRunOverrunsNothing); what the loss costs is
// the rest of the period. Only a replica started after the loss and before any replica
// that knew the epoch noticed it can be granted from the lost figures (at most its first
// blocks); persistence (appendonly yes) avoids all of this.
//
// A failover can also lose only the master's last writes (replication is asynchronous).
// Every figure key counts its writes, and a replica that finds a lower count than its last
// reply gave marks the period lost; but a replica that wrote nothing since the replica's
// link was cut would be granted from the promoted replica's older figures. So grants wait
// for replicas (WithReplicaAcks): WAIT follows the block script on its connection (in a
// cluster, on the master of the tenant's slot), and a grant not acknowledged in time is
// not spent from; it stays reserved in Redis, adopted by the next acknowledged refill or
// handed back by Flush. The cost: a master whose replicas are down or cut off grants
// nothing new, so replicas spend their held blocks and then fail admissions as during an
// outage.
//
// On by default when Redis has replicas, off for a lone Redis. With a plain client, once
// on it stays on: a master whose replica's link is cut reports no connected replica, the
// same as a master that has none. With a cluster client it follows the master now serving
// the tenant's slot: WAIT is sent exactly when that master's CLUSTER NODES lists replicas,
// failed or cut-off ones included (read when the store first grants on it, re-read in the
// background after a second or a redirection; a grant sent without WAIT is followed on its
// connection by INFO replication, and waits if a replica is attached by then). Why that
// is enough:
//
//   - A replica whose replication link is cut stays listed as its master's replica (and a
//     dead or unreachable one too, flagged fail, until CLUSTER FORGET), so grants keep
//     waiting and are not used: the lossy window stays closed
//     (TestClusterFailoverUnackedGrantOverrunsNothing, TestClusterLossyFailoverOverrunsNothing).
//     So does a master cut off on the minority side of a partition: it still lists its
//     replica, which the majority has promoted.
//   - A master that lists no replica has nothing a failover could promote: if it dies its
//     slot is down until it comes back (an outage, served from held blocks), never served
//     by a node that missed its grants. A promoted master lists none until the failed one
//     rejoins as its replica, so it grants without WAIT (TestClusterMasterFailsOverToReplica:
//     every store served again within seconds of the promotion).
//   - A replica is promoted only once its master is flagged FAIL (or, CLUSTER FAILOVER,
//     once it has caught up with its master: nothing lost), and until then that master
//     lists it, so its grants wait; a store whose view still names the old master cannot
//     reach it, is redirected, or (on its side of a partition) is not acknowledged.
//   - When the failed master rejoins as the promoted one's replica, grants wait again from
//     the first grant after it attaches (TestClusterGrantWaitsForAReplicaAttachedSinceTheLastRead).
//
// What is left: a replica that attaches after a grant's INFO replication and is promoted
// before the grant reaches it, which takes the master dying within its replication lag of
// that attachment.
//
// # Keys and cluster
//
// The figures of a tenant (budget days, quota periods, blocks, epoch, holds) live under
// the prefix, in one slot when the prefix carries a hash tag; request ids and cache entries
// are single keys with a hash tag of their own, spread over the slots. Every key expires:
// see the layout in keys.go. With a Redis Cluster:
//
//	rdb := redis.NewClusterClient(&redis.ClusterOptions{
//		Addrs:                      []string{"redis-0:6379", "redis-1:6379", "redis-2:6379"},
//		ContextTimeoutEnabled:      true,
//		ClusterStateReloadInterval: time.Second, // find a failed-over master within a second
//	})
//	st, err := redisstore.New(rdb, redisstore.WithPrefix("{tenant-a}:"))
//
// one hash tag per tenant (New refuses a cluster client whose prefix has none: its scripts
// would fail with CROSSSLOT), a replica per master (a second one keeps acknowledging
// grants while one is down or cut off), persistence (appendonly yes), and
// cluster-require-full-coverage no, so that one dead shard stops only its tenants. A
// CROSSSLOT, NOPERM, unknown-command or authentication error, or a WRONGTYPE at a figure
// key, is a configuration error: it is logged once and returned by every later Admit, never
// served from blocks as an outage would be. A key of another type or a value the store did
// not write at one request's key (its cache entry, request id or memory entry: another
// application's, or a damaged one) concerns that request alone: the lookup misses, a
// request id's key is deleted and claimed again, an answer for it is dropped; the first of
// each kind is logged at warn, naming the kind, never the key or its value.
package redisstore
