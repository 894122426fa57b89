package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Replica acknowledgements of grants (WithReplicaAcks). Redis replicates asynchronously: a
// master that dies right after running the block script may take the grant with it, and
// its promoted replica then grants the same budget again to a replica that wrote nothing
// since (the write count of a figure key catches only replicas that saw the lost writes).
// So a grant is used only once WAIT, sent on the same connection right after the script,
// reports it on enough replicas; a grant not acknowledged in time stays reserved in Redis
// under the block's id, and is adopted by the next acknowledged refill or handed back by
// Flush.

// ackRecheck is how often a store whose Redis showed no replica looks again (plain
// client). clusterRecheck is how often, while it grants, a store reads again which
// replicas the master of a tenant's slot has (cluster client).
const (
	ackRecheck     = time.Minute
	clusterRecheck = time.Second
)

// errNotAcked: Redis ran the block script but too few replicas acknowledged it in time.
var errNotAcked = errors.New("redisstore: grant not acknowledged by the redis replicas in time: not used")

// acks decides and holds whether grants wait for replicas.
type acks struct {
	forced  bool // WithReplicaAcks: n and timeout are fixed
	mu      sync.Mutex
	n       int                    // replicas that must acknowledge a grant; 0 none
	timeout time.Duration          // WAIT's timeout
	checked time.Time              // last look at the replication (auto mode)
	warned  bool                   // a warning for unacknowledged grants is out
	masters map[string]*masterAcks // cluster client, auto mode: by the master's address
}

// masterAcks is what the store last read of one cluster master's replicas.
type masterAcks struct {
	replicas int       // listed in its CLUSTER NODES, failed or cut-off ones included
	checked  time.Time // when read
	reading  bool      // a re-read is under way
}

// WithReplicaAcks makes every grant of a block (a refill that moves budget or quota from
// the shared figures into this replica's block) wait until n Redis replicas acknowledge
// it (WAIT n timeout, on the same connection right after the script; in a cluster, on the
// master of the tenant's slot) before the replica spends from it. n 0 turns it off.
//
// Default (n 1, timeout WithTimeout when on). A plain client: on when the master reports
// connected replicas (INFO replication), off for a lone Redis; a store that found none
// looks again every minute, and once on it stays on (a master cannot tell a cut link from
// no replica). A cluster client: on exactly while the master now serving the tenant's
// slot lists replicas in CLUSTER NODES, failed or cut-off ones included, read when the
// store first grants on that master, again in the background by a grant that finds the
// last read older than a second or follows a redirection, and checked with INFO replication after a grant sent without WAIT (a
// replica attached since is waited for). So after a failover the promoted master, which
// lists no replica until the failed one rejoins as its replica, grants without WAIT: it
// has nothing a failover could promote, so no grant of it can be lost to one (see the
// package doc).
//
// What it costs: a refill takes one more round trip to a replica (sub-millisecond on a
// LAN), off the request path unless a block runs out. While the master's replicas are
// down or cut off, it grants nothing new: replicas spend the blocks they hold, and then an
// admission that needs a block fails as during an outage (the Client skips the engine as
// unavailable). A replica that has just linked counts only after its first
// acknowledgement to the master (up to a second later). What it buys: a failover to a
// replica that missed the last writes never lets a replica spend budget the promoted
// replica does not count (overrun 0).
func WithReplicaAcks(n int, timeout time.Duration) Option {
	return func(o *options) { o.acks, o.ackTimeout, o.acksSet = n, timeout, true }
}

func (a *acks) init(o *options) {
	a.forced = o.acksSet
	a.n, a.timeout = o.acks, o.ackTimeout
	if !a.forced {
		a.timeout = o.timeout
	}
}

// wantAcks returns how many replicas must acknowledge a grant now, and WAIT's timeout; in auto
// mode it looks at the replication first when due.
func (s *Store) wantAcks(ctx context.Context, key string) (int, time.Duration) {
	if c, ok := s.rdb.(*redis.ClusterClient); ok && !s.acks.forced {
		return s.clusterAcks(ctx, c, key), s.acks.timeout
	}
	a := &s.acks
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.forced && a.n == 0 && (a.checked.IsZero() || time.Since(a.checked) >= ackRecheck) {
		if n, err := replicasOf(ctx, s.rdb); err == nil {
			a.checked = time.Now()
			if n > 0 {
				a.n = 1
			}
		}
	}
	return a.n, a.timeout
}

// clusterAcks is 1 when the master now serving key's slot lists replicas in CLUSTER NODES
// (failed or cut-off ones included), else 0: a master with no replica has nothing a
// failover could promote, so its grants cannot be lost to one (see doc.go). A master seen
// for the first time is read here; after that the store reads it again in the background
// when the last read is older than clusterRecheck, or after a redirection (transient), and
// decides on the last read meanwhile. Unknown (unreachable) is 1: the stricter rule.
func (s *Store) clusterAcks(ctx context.Context, c *redis.ClusterClient, key string) int {
	node, err := c.MasterForKey(ctx, key)
	if err != nil {
		return 1 // runBlock cannot reach it either
	}
	addr := node.Options().Addr
	a := &s.acks
	a.mu.Lock()
	if m := a.masters[addr]; m != nil {
		if !m.reading && time.Since(m.checked) >= clusterRecheck {
			m.reading = true
			s.blocks.wg.Add(1)
			go s.rereadMaster(node, addr)
		}
		n := min(m.replicas, 1)
		a.mu.Unlock()
		return n
	}
	a.mu.Unlock()
	n, err := replicasInCluster(ctx, node)
	if err != nil {
		return 1
	}
	a.mu.Lock()
	a.setMaster(addr, n)
	a.mu.Unlock()
	return min(n, 1)
}

// rereadMaster reads again the replicas of the master at addr, off the request path.
func (s *Store) rereadMaster(node *redis.Client, addr string) {
	defer s.blocks.wg.Done()
	ctx, cancel := context.WithTimeout(context.Background(), s.o.timeout)
	defer cancel()
	n, err := replicasInCluster(ctx, node)
	a := &s.acks
	a.mu.Lock()
	defer a.mu.Unlock()
	if err == nil {
		a.setMaster(addr, n)
		return
	}
	if m := a.masters[addr]; m != nil {
		m.reading = false // the next grant on it tries again
	}
}

// setMaster records a read of the master at addr; a.mu held.
func (a *acks) setMaster(addr string, replicas int) {
	if a.masters == nil {
		a.masters = make(map[string]*masterAcks)
	}
	a.masters[addr] = &masterAcks{replicas: replicas, checked: time.Now()}
}

// staleMasters makes the next grant on each cluster master read its replicas again.
func (a *acks) staleMasters() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range a.masters {
		m.checked = time.Time{}
	}
}

// replicasOf counts the replicas connected to a plain client's master (INFO replication).
func replicasOf(ctx context.Context, rdb redis.UniversalClient) (int, error) {
	c, ok := rdb.(*redis.Client)
	if !ok {
		return 0, nil
	}
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(infoField(info, "connected_slaves"))
}

// replicasInCluster counts the replicas CLUSTER NODES on node lists for node, failed or
// cut-off ones included.
func replicasInCluster(ctx context.Context, node *redis.Client) (int, error) {
	nodes, err := node.ClusterNodes(ctx).Result()
	if err != nil {
		return 0, err
	}
	return replicasInNodes(nodes), nil
}

// infoField is one field of an INFO reply; "" when absent.
func infoField(info, field string) string {
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

// replicasInNodes counts, in a CLUSTER NODES reply, the replicas of the node marked myself.
func replicasInNodes(nodes string) int {
	var me string
	var masters []string // each replica's master id
	for line := range strings.SplitSeq(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		if strings.Contains(f[2], "myself") {
			me = f[0]
		}
		if strings.Contains(f[2], "slave") {
			masters = append(masters, f[3])
		}
	}
	n := 0
	for _, m := range masters {
		if m == me {
			n++
		}
	}
	return n
}

// runBlock runs the block script on keys. For a grant (a refill, not a return: a return
// lost in a failover only leaves budget reserved), with acknowledgements on, WAIT follows
// it on the same connection, and a grant fewer replicas acknowledged returns errNotAcked
// with the reply, which the caller must not use. On a cluster in auto mode, a grant sent
// without WAIT is checked right after (lateReplica).
func (s *Store) runBlock(ctx context.Context, grant bool, keys []string, args ...any) ([]any, error) {
	n, timeout := 0, time.Duration(0)
	if grant {
		n, timeout = s.wantAcks(ctx, keys[0])
	}
	_, cluster := s.rdb.(*redis.ClusterClient)
	if n == 0 && !(grant && cluster && !s.acks.forced) {
		return s.sc.block.Run(ctx, s.rdb, keys, args...).Slice()
	}
	node, err := s.masterFor(ctx, keys[0])
	if err != nil {
		return nil, err
	}
	var r []any
	var acked int64
	if n == 0 {
		r, n, acked, err = s.lateReplica(ctx, node, keys, args, timeout)
	} else {
		var wait *redis.Cmd
		if r, wait, err = evalThen(ctx, node, s.sc.block, keys, args, "wait", n, timeout.Milliseconds()); err == nil {
			acked, err = wait.Int64()
		}
	}
	if err != nil {
		return nil, s.transient(err)
	}
	if acked < int64(n) {
		s.notAcked(acked, n)
		return r, errNotAcked
	}
	if n > 0 {
		s.acked()
	}
	return r, nil
}

// lateReplica runs the block script on node, whose last read listed no replica, with INFO
// replication after it on the same connection: a replica attached since (the failed master
// back as this one's replica, before the next read lists it) makes the grant wait for it
// (WAIT 1 on that connection, n 1). It returns the reply, n and the replicas that acknowledged.
func (s *Store) lateReplica(ctx context.Context, node *redis.Client, keys []string, args []any, timeout time.Duration) ([]any, int, int64, error) {
	conn := node.Conn()
	defer conn.Close()
	r, info, err := evalThen(ctx, conn, s.sc.block, keys, args, "info", "replication")
	if err != nil {
		return nil, 0, 0, err
	}
	text, err := info.Text()
	if err != nil {
		return nil, 0, 0, err
	}
	if n, _ := strconv.Atoi(infoField(text, "connected_slaves")); n == 0 {
		return r, 0, 0, nil
	}
	s.acks.staleMasters()
	acked, err := conn.Do(ctx, "wait", 1, timeout.Milliseconds()).Int64()
	return r, 1, acked, err
}

// masterFor is the client of one node that holds key: the cluster's master of its slot,
// or the plain client itself.
func (s *Store) masterFor(ctx context.Context, key string) (*redis.Client, error) {
	switch c := s.rdb.(type) {
	case *redis.Client:
		return c, nil
	case *redis.ClusterClient:
		node, err := c.MasterForKey(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("redisstore: no master for the tenant's slot: %v", err) // not a redis.Error: an outage
		}
		return node, nil
	}
	return nil, errors.New("redisstore: WithReplicaAcks needs a *redis.Client or a *redis.ClusterClient")
}

// pipeliner is a node client or one of its connections.
type pipeliner interface {
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// evalThen runs script then the command then in one pipeline (one connection): the
// script's reply and then's command.
func evalThen(ctx context.Context, node pipeliner, script *redis.Script, keys []string, args []any, then ...any) ([]any, *redis.Cmd, error) {
	for _, load := range []bool{false, true} { // EVALSHA, then EVAL if Redis lost the script
		var ev, next *redis.Cmd
		_, _ = node.Pipelined(ctx, func(p redis.Pipeliner) error {
			if load {
				ev = script.Eval(ctx, p, keys, args...)
			} else {
				ev = script.EvalSha(ctx, p, keys, args...)
			}
			next = p.Do(ctx, then...) // Pipeliner has no Wait
			return nil
		})
		r, err := ev.Slice()
		if !load && redis.HasErrorPrefix(err, "NOSCRIPT") {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		return r, next, nil
	}
	return nil, nil, errors.New("redisstore: unreachable")
}

func acksSupported(rdb redis.UniversalClient) bool {
	switch rdb.(type) {
	case *redis.Client, *redis.ClusterClient:
		return true
	}
	return false
}

// transient turns the redirections and refusals of a cluster in failover (MOVED, ASK,
// READONLY, TRYAGAIN, CLUSTERDOWN) into an outage, not a configuration error: a node
// client does not follow redirections as the cluster client does. It asks the cluster
// client to reload its view.
func (s *Store) transient(err error) error {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return err
	}
	for _, p := range []string{"MOVED ", "ASK ", "READONLY", "TRYAGAIN", "CLUSTERDOWN", "LOADING", "MASTERDOWN"} {
		if strings.HasPrefix(rerr.Error(), p) {
			if c, ok := s.rdb.(*redis.ClusterClient); ok {
				c.ReloadState(context.Background())
				s.acks.staleMasters()
			}
			return fmt.Errorf("redisstore: redis in failover: %v", err) // not a redis.Error
		}
	}
	return err
}

func (s *Store) notAcked(acked int64, n int) {
	s.unacked.Add(context.Background(), 1)
	s.acks.mu.Lock()
	first := !s.acks.warned
	s.acks.warned = true
	s.acks.mu.Unlock()
	if first {
		s.log.Warn("redisstore: redis replicas do not acknowledge grants; serving from held blocks",
			"acknowledged", acked, "wanted", n)
	}
}

func (s *Store) acked() {
	s.acks.mu.Lock()
	was := s.acks.warned
	s.acks.warned = false
	s.acks.mu.Unlock()
	if was {
		s.log.Info("redisstore: redis replicas acknowledge grants again")
	}
}

// refillTimeout bounds one refill: WithTimeout, plus WAIT's timeout when grants may wait
// for replicas.
func (s *Store) refillTimeout() time.Duration {
	if _, ok := s.rdb.(*redis.ClusterClient); ok && !s.acks.forced {
		return s.o.timeout + s.acks.timeout // decided per master, per grant
	}
	s.acks.mu.Lock()
	defer s.acks.mu.Unlock()
	if s.acks.n == 0 && (s.acks.forced || !s.acks.checked.IsZero()) { // off, or a lone Redis
		return s.o.timeout
	}
	return s.o.timeout + s.acks.timeout
}
