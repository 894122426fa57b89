package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
)

// With Redis paused (SIGSTOP: connections open, nothing answers), an admission that needs a
// refill in the call returns when its caller's context ends, not after the store's own
// timeout: the first admission to an engine (the hold read and the first block), and one
// queued behind a refill under way. The refill goes on in the background and grants its
// block once Redis answers. Bounds: a 100ms context, against a 6s WithTimeout.
func TestPausedRedisAdmitReturnsWithinTheCallersContext(t *testing.T) {
	const timeout = 6 * time.Second
	srv := ownServer(t)
	st, err := New(newClient(t, srv.Addr), WithPrefix(prefixFor(t)), withClock(newClock(t0)), WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.blocks.wg.Wait)
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			_ = srv.Resume()
		}
	}()
	admit := func(d time.Duration) (translate.Admitted, error, time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		start := time.Now()
		got, err := st.Admit(ctx, adm("deepl", 1, 100))
		return got, err, time.Since(start)
	}
	for i := range 3 { // the first runs the refill; the others wait for it
		if got, err, took := admit(100 * time.Millisecond); err == nil || took > timeout/4 {
			t.Errorf("admission %d with a 100ms context: %+v, %v after %v; want an error well before the store's %v",
				i, got, err, took, timeout)
		}
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	st.blocks.wg.Wait() // the refill, answered once Redis resumed
	if got, err, _ := admit(timeout); err != nil || got.Lease == "" {
		t.Errorf("after Redis resumed: %+v, %v; want a lease", got, err)
	}
}

// A refillLock waiter leaves when its context ends; one still waiting gets the lock when
// it is released.
func TestRefillLockWaitsWithinTheContext(t *testing.T) {
	var q refillLock
	q.Lock()
	if q.TryLock() {
		t.Fatal("TryLock took a held lock")
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if q.lockWithin(ended) {
		t.Fatal("lockWithin took a held lock")
	}
	got := make(chan bool)
	go func() { got <- q.lockWithin(context.Background()) }()
	q.Unlock()
	if !<-got {
		t.Fatal("the waiter did not get the released lock")
	}
	q.Unlock()
	if !q.TryLock() {
		t.Fatal("TryLock did not take a free lock")
	}
}
