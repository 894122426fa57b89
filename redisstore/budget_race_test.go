package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate"
)

// heldReply lets the next EVALSHA run in Redis and then holds its reply until release is
// closed: a refill Redis has applied (this replica's spend reported) whose answer has not
// reached the replica yet.
type heldReply struct {
	armed   chan struct{} // closed by the test: hold the next EVALSHA
	applied chan struct{} // closed when Redis ran it
	release chan struct{}
}

func (h *heldReply) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *heldReply) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *heldReply) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		select {
		case <-h.armed:
		default:
			return err
		}
		if cmd.Name() == "evalsha" {
			select {
			case <-h.applied:
			default:
				close(h.applied)
				<-h.release
			}
		}
		return err
	}
}

// Budget while a refill is in flight counts this replica's spend once: Redis already holds
// the spend the refill reported, the replica's block does not know it yet. (CI saw 4 spent
// for 2 under load: TestRequestIDReachesEachEngineOnce.)
func TestBudgetDuringARefillCountsSpendOnce(t *testing.T) {
	f := newFixture(t)
	h := &heldReply{armed: make(chan struct{}), applied: make(chan struct{}), release: make(chan struct{})}
	f.rdb.AddHook(h)
	got := f.admit(adm("deepl", 1, 10))
	f.settle(translate.Settlement{Lease: got.Lease, Sent: true, Credits: 1})
	close(h.armed)
	l := f.st.blocks.get("b", f.st.k.budget(t0), t0, t0.Add(24*time.Hour), false)
	done := make(chan struct{})
	go func() { // a background refill that reports the spend of 1
		defer close(done)
		l.rmu.Lock()
		defer l.rmu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = f.st.refillLocked(ctx, l, 5, 0, false)
	}()
	select {
	case <-h.applied:
	case <-time.After(10 * time.Second):
		close(h.release)
		t.Fatal("the refill never reached Redis within 10s")
	}
	b := f.budget(t0)
	close(h.release)
	<-done
	if diff := cmp.Diff(translate.BudgetStatus{Daily: 10, Spent: 1}, b, approx); diff != "" {
		t.Errorf("Budget while a refill is in flight (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(translate.BudgetStatus{Daily: 10, Spent: 1}, f.budget(t0), approx); diff != "" {
		t.Errorf("Budget after the refill (-want +got):\n%s", diff)
	}
}
