package redisstore

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// runUntilDry has every store of fl ask for calls of 1 credit, n per step each, until no
// call was granted for two virtual seconds; it returns the grants per store.
func (fl *fleet) runUntilDry(daily float64, n int, step time.Duration, stores []*Store) []float64 {
	got := make([]float64, len(stores))
	for idle := time.Duration(0); idle < 2*time.Second; {
		fl.clk.add(step)
		any := false
		for i, st := range stores {
			for range n {
				if fl.call(st, 1, daily) {
					got[i]++
					any = true
				}
			}
		}
		fl.wait()
		if any {
			idle = 0
		} else {
			idle += step
		}
	}
	return got
}

func (fl *fleet) runFor(d time.Duration, daily float64, n int, step time.Duration) float64 {
	granted := 0.0
	for end := fl.clk.now().Add(d); fl.clk.now().Before(end); {
		fl.clk.add(step)
		for _, st := range fl.st {
			for range n {
				if fl.call(st, 1, daily) {
					granted++
				}
			}
		}
		fl.wait()
	}
	return granted
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// A replica SIGKILLed while it holds a block: its block is charged as spent in full once
// BlockTTL has passed, so the others never spend it a second time.
func TestDeadReplicasBlockIsChargedInFull(t *testing.T) {
	srv := needServer(t)
	fl := newFleet(t, 2, srv.Addr)
	const daily = 10_000.0
	granted := fl.runFor(5*time.Second, daily, 10, 10*time.Millisecond)
	dead := fl.st[1].blocks.all()[0]
	dead.mu.Lock()
	held := dead.cur.granted
	dead.mu.Unlock()
	dead.stop() // killed: no renewal, no Flush
	// Before BlockTTL its block stays reserved; after it, the next refill charges it.
	fl.clk.add(BlockTTL)
	rest := fl.runUntilDry(daily, 10, 10*time.Millisecond, fl.st[:1])
	spent, reserved := fl.spent() // Flush of the dead one returns nothing: its block is gone
	if granted+sum(rest) > daily {
		t.Errorf("granted %.0f before the kill and %.0f after: over the budget of %.0f", granted, sum(rest), daily)
	}
	if spent > daily+1e-6 || reserved > 1e-6 {
		t.Errorf("Redis counts %.0f spent and %.0f reserved, want at most %.0f and 0", spent, reserved, daily)
	}
	if want := daily; spent < want-1e-6 {
		t.Errorf("Redis counts %.0f spent, want %.0f (the dead replica's block of %.0f charged in full)", spent, want, held)
	}
}

// Redis loses its data mid-run (FLUSHALL at about a third of the budget): the replicas
// notice, spend only the blocks they hold, and a replica that starts afterwards gets
// nothing from the lost day: the engines are never sent more than the budget.
func TestFlushAllMidRunOverrunsNothing(t *testing.T) {
	srv := ownServer(t)
	fl := newFleet(t, 3, srv.Addr)
	const daily = 30_000.0
	before := fl.runFor(4*time.Second, daily, 10, 10*time.Millisecond) // 3,000 calls/s: 40%
	if err := fl.rdb.FlushAll(fl.ctx).Err(); err != nil {
		t.Fatal(err)
	}
	after := fl.runUntilDry(daily, 10, 10*time.Millisecond, fl.st)
	late := fl.add(srv.Addr) // a replica started after the loss
	lateGot := fl.runUntilDry(daily, 10, 10*time.Millisecond, []*Store{late})
	total := before + sum(after) + sum(lateGot)
	t.Logf("granted %.0f before FLUSHALL, %.0f after (%v), %.0f to a replica started later", before, sum(after), after, sum(lateGot))
	if total > daily {
		t.Errorf("granted %.0f in all: %.1f%% of the budget", total, 100*total/daily)
	}
	if before < 0.2*daily || sum(after) == 0 {
		t.Errorf("granted %.0f before and %.0f after the loss: want a third of the budget before and the held blocks spent after", before, sum(after))
	}
	if sum(lateGot) != 0 {
		t.Errorf("the replica started after the loss was granted %.0f of a day whose figures were lost", sum(lateGot))
	}
}

// proxy forwards TCP connections to a server until blackhole: then it forwards nothing,
// and keeps the connections open, as a network partition does.
type proxy struct {
	ln     net.Listener
	to     string
	hole   atomic.Bool
	slow   atomic.Int64 // ns each chunk waits before it is forwarded: an overloaded host
	mu     sync.Mutex
	closed bool // by close: a connection accepted later is closed at once
	cs     []net.Conn
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, to string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, to: to}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.DialTimeout("tcp", p.to, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.closed { // close ran while this one was dialling: nobody would close these
			p.mu.Unlock()
			c.Close()
			s.Close()
			return
		}
		p.cs = append(p.cs, c, s)
		p.wg.Add(2)
		p.mu.Unlock()
		go p.pipe(c, s)
		go p.pipe(s, c)
	}
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		time.Sleep(time.Duration(p.slow.Load()))
		if n > 0 && !p.hole.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			return
		}
	}
}

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for _, c := range p.cs {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// A replica cut off from Redis alone (its connection black-holed) while the others keep
// spending: it spends only the block it leased, and the others never spend that block too
// (it is charged in full once BlockTTL has passed): overrun 0, whatever the replicas.
func TestCutOffReplicaSpendsOnlyItsBlock(t *testing.T) {
	srv := needServer(t)
	fl := newFleet(t, 3, srv.Addr)
	px := newProxy(t, srv.Addr)
	cut := fl.add(px.addr(), WithTimeout(20*time.Millisecond))
	const daily = 40_000.0
	before := fl.runFor(5*time.Second, daily, 10, 10*time.Millisecond)
	px.hole.Store(true)
	after := fl.runUntilDry(daily, 10, 10*time.Millisecond, fl.st)
	// The cut-off block expires; the others' next refills charge it. Then everybody is dry.
	fl.clk.add(BlockTTL)
	tail := fl.runUntilDry(daily, 10, 100*time.Millisecond, fl.st)
	total := before + sum(after) + sum(tail)
	t.Logf("granted %.0f before the cut, %.0f after (%v), %.0f after BlockTTL (%v)", before, sum(after), after, sum(tail), tail)
	if total > daily {
		t.Errorf("granted %.0f in all: %.2f%% of the budget", total, 100*total/daily)
	}
	if after[len(after)-1] == 0 {
		t.Error("the cut-off replica spent nothing of its block")
	}
	if !cut.Degraded() && cut.blocks.all()[0].retryAt.IsZero() {
		t.Error("the cut-off replica never noticed")
	}
}

// A replica that admitted nothing for demandWindow returns its block at its quiet-time
// renewal; one still admitting renews it (the block stays, its expiry moves).
func TestQuietReplicaReturnsItsBlock(t *testing.T) {
	srv := needServer(t)
	fl := newFleet(t, 1, srv.Addr)
	st := fl.st[0]
	fl.runFor(time.Second, 1e6, 10, 10*time.Millisecond)
	l := st.blocks.all()[0]
	fl.clk.add(BlockTTL / 3)
	st.quiet(l) // admitted within demandWindow: renewed
	l.mu.Lock()
	renewed := l.cur != nil && l.cur.expires.After(fl.clk.now().Add(BlockTTL-time.Second))
	l.mu.Unlock()
	if !renewed {
		t.Error("an active replica's block was not renewed")
	}
	fl.clk.add(demandWindow + time.Second)
	st.quiet(l)
	v := fl.rdb.HMGet(fl.ctx, newKeys(fl.prefix).budget(t0.Truncate(24*time.Hour)), "s", "r").Val()
	if spent, reserved := num(v[0]), num(v[1]); spent != 1000 || reserved != 0 {
		t.Errorf("after a quiet renewal Redis counts %v spent and %v reserved, want 1000 and 0 (block returned)", spent, reserved)
	}
}
