package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/redisstore/redistest"
)

// pair starts a master and a replica of it (REPLICAOF), each a redis-server of its own,
// and waits until the replica's link is up.
func pair(t *testing.T) (master, replica *redistest.Server) {
	t.Helper()
	master, replica = ownServer(t), ownServer(t)
	host, port, _ := strings.Cut(master.Addr, ":")
	rc := newClient(t, replica.Addr)
	if err := diskless(context.Background(), newClient(t, master.Addr), rc); err != nil {
		t.Fatal(err)
	}
	if err := rc.ReplicaOf(context.Background(), host, port).Err(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); replInfo(t, rc, "master_link_status") != "up"; {
		if time.Now().After(deadline) {
			t.Fatal("the replica did not link to its master within 20s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := replicaAcks(context.Background(), newClient(t, master.Addr)); err != nil {
		t.Fatal(err)
	}
	return master, replica
}

// replicaAcks waits until a write on master is acknowledged by a replica (the link is up
// before the master counts the replica for WAIT), for at most 20s.
func replicaAcks(ctx context.Context, master *redis.Client) error {
	for deadline := time.Now().Add(20 * time.Second); ; {
		var wait *redis.Cmd
		_, _ = master.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "replica-acks-probe", "1", time.Minute)
			wait = p.Do(ctx, "wait", 1, 100)
			return nil
		})
		if n, _ := wait.Int64(); n >= 1 {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("no replica acknowledged a write within 20s")
		}
	}
}

// diskless makes the replica's sync go through the socket on both ends: no RDB file is
// written into the package's directory.
func diskless(ctx context.Context, master, replica *redis.Client) error {
	if err := master.ConfigSet(ctx, "repl-diskless-sync", "yes").Err(); err != nil {
		return err
	}
	if err := master.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		return err
	}
	return replica.ConfigSet(ctx, "repl-diskless-load", "on-empty-db").Err()
}

// Grants wait for replicas by default exactly when Redis has some: a lone Redis is asked
// nothing more, a master with a connected replica gets WAIT 1; WithReplicaAcks forces
// either way.
func TestReplicaAcksDefault(t *testing.T) {
	master, _ := pair(t)
	lone := needServer(t)
	cases := []struct {
		name string
		addr string
		opts []Option
		want int
	}{
		{"lone redis", lone.Addr, nil, 0},
		{"master with a replica", master.Addr, nil, 1},
		{"forced off", master.Addr, []Option{WithReplicaAcks(0, 0)}, 0},
		{"forced on a lone redis", lone.Addr, []Option{WithReplicaAcks(2, time.Millisecond)}, 2},
	}
	for _, c := range cases {
		st, err := New(newClient(t, c.addr), append([]Option{WithPrefix(prefixFor(t) + strconv.Itoa(len(c.name)) + ":")}, c.opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := st.wantAcks(context.Background(), "k")
		if n != c.want {
			t.Errorf("%s: grants wait for %d replicas, want %d", c.name, n, c.want)
		}
	}
	if _, err := New(newClient(t, lone.Addr), WithReplicaAcks(1, 0)); err == nil {
		t.Error("WithReplicaAcks(1, 0) accepted: WAIT 1 0 would block for ever")
	}
}

func TestReplicasInNodes(t *testing.T) {
	nodes := "a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460\n" +
		"b1 127.0.0.1:7001@17001 master - 0 0 2 connected 5461-10922\n" +
		"r1 127.0.0.1:7003@17003 slave,fail a1 0 0 1 connected\n" +
		"r2 127.0.0.1:7004@17004 slave b1 0 0 2 connected\n"
	if got := replicasInNodes(nodes); got != 1 {
		t.Errorf("replicas of myself: %d, want 1 (a failed one counts)", got)
	}
}

// With the replica stopped, a refill's WAIT times out: the store spends only what was
// acknowledged, never the grant Redis made meanwhile, each admission from the held block
// returns without waiting for the refill's WAIT (it runs in the background), and Flush
// hands the unacknowledged grant back, leaving nothing reserved.
func TestUnackedGrantIsNeitherSpentNorStranded(t *testing.T) {
	master, replica := pair(t)
	const wait = 2 * time.Second
	a := &acker{t: t, clk: newClock(t0)}
	var err error
	a.st, err = New(newClient(t, master.Addr), WithPrefix(prefixFor(t)), withClock(a.clk), WithTimeout(time.Second), WithReplicaAcks(1, wait))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.st.blocks.wg.Wait)
	for range 100 { // acknowledged grants: a block grown to the demand
		if ok, _ := a.admit(); !ok {
			t.Fatal("refused with the replica up")
		}
	}
	a.st.blocks.wg.Wait()
	l := a.st.blocks.all()[0]
	if err := replica.Pause(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = replica.Resume() }()
	l.mu.Lock()
	held := l.cur.granted
	l.mu.Unlock()
	spent, during, slowest := a.spendHeld(l)
	spent += 100
	if float64(spent) > held {
		t.Errorf("spent %d with %.0f acknowledged: the unacknowledged grant was spent", spent, held)
	}
	if during == 0 || slowest >= wait/2 {
		t.Errorf("%d admissions from the held block during a refill waiting for its replica, the slowest %v: WAIT (%v) reached the request path", during, slowest, wait)
	}
	if err := replica.Resume(); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	pending := l.pending
	l.mu.Unlock()
	if _, r := figuresOf(t, a.st, l); !pending || r <= 0 {
		t.Fatalf("pending %v, Redis reserves %.0f before Flush: no unacknowledged grant to hand back", pending, r)
	}
	if err := a.st.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, r := figuresOf(t, a.st, l)
	if diff := cmp.Diff([2]float64{float64(spent), 0}, [2]float64{s, r}); diff != "" {
		t.Errorf("figures after Flush (spent, reserved) (-want +got):\n%s", diff)
	}
	t.Logf("%.0f acknowledged, %d spent; %d admissions during a refill waiting for its replica, the slowest %v", held, spent, during, slowest)
}

// acker admits calls of 1 credit on st, at clk.
type acker struct {
	t   *testing.T
	st  *Store
	clk *clock
}

// admit admits and settles one call: whether it was granted, and how long Admit took.
func (a *acker) admit() (bool, time.Duration) {
	ctx := context.Background()
	start := time.Now()
	got, err := a.st.Admit(ctx, translate.Admission{Now: a.clk.now(), Engine: "paid", Credits: 1, Daily: 1000})
	took := time.Since(start)
	if err != nil || got.Lease == "" {
		return false, took
	}
	if err := a.st.Settle(ctx, translate.Settlement{Lease: got.Lease, Sent: true, Credits: 1}); err != nil {
		a.t.Fatal(err)
	}
	return true, took
}

// spendHeld admits until a refusal (at most 400): how many were granted, how many of
// those while a refill of l was under way, and the slowest of these.
func (a *acker) spendHeld(l *limit) (spent, during int, slowest time.Duration) {
	for range 400 {
		l.mu.Lock()
		refilling := l.refill
		l.mu.Unlock()
		ok, took := a.admit()
		if !ok {
			break
		}
		spent++
		if refilling {
			during++
			slowest = max(slowest, took)
		}
	}
	a.st.blocks.wg.Wait()
	return spent, during, slowest
}

// figuresOf reads l's spent and reserved figures from Redis.
func figuresOf(t *testing.T, st *Store, l *limit) (spent, reserved float64) {
	t.Helper()
	v, err := st.rdb.HMGet(context.Background(), l.key, "s", "r").Result()
	if err != nil {
		t.Fatal(err)
	}
	return num(v[0]), num(v[1])
}
