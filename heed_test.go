package translate_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
)

// heeder is a remote engine's stand-in: it answers after 30ms and heeds ctx, as an HTTP
// engine does. Once hang is set, a text starting with "hang" makes it read ctx.Done() and
// then sleep 5s ignoring it (an engine that checks its context, then blocks on something
// that does not).
type heeder struct{ hang atomic.Bool }

func (*heeder) Name() string { return "heeder" }

func (e *heeder) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	done := ctx.Done()
	if e.hang.Load() && strings.HasPrefix(req.Texts[0], "hang") {
		time.Sleep(5 * time.Second)
		return &translate.EngineResult{Texts: []string{"hola"}}, nil
	}
	t := time.NewTimer(30 * time.Millisecond)
	defer t.Stop()
	select {
	case <-done:
		return nil, ctx.Err()
	case <-t.C:
		return &translate.EngineResult{Texts: []string{"hola"}}, nil
	}
}

// heederClient returns a Client with a 1s deadline over e alone, after 100 calls: enough
// for e to earn inline calls by heeding its context (deadline.Trust).
func heederClient(t *testing.T, e *heeder) *translate.Client {
	c, err := translate.New(translate.WithDeadline(time.Second), translate.WithoutCache(),
		translate.WithEngine(e, translate.Profile{}))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if _, err := c.Translate(context.Background(), req(fmt.Sprint("warm ", i))); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

var within20ms = cmp.Comparer(func(a, b time.Duration) bool { return (a - b).Abs() <= 20*time.Millisecond })

// TestHeedingEngineEarnsInlineCalls: an engine that waits on a network (30ms a call) but
// reads ctx.Done() and returns by its deadline earns inline calls, on the caller's goroutine,
// without the call pool's two goroutine hand-offs (deadline.Earn calls in a row: until then
// its calls run on the pool and keep the deadline). Seen from outside: when it then reads
// ctx.Done() but ignores it (sleeps 5s), the one call that found it so returns when the
// engine does, 5s over a 1s deadline (the breach the README states for earned inline
// calls); that call returned past its deadline, so every call after it runs on the pool for
// good and returns by the deadline plus the 20ms grace. Virtual time (synctest).
func TestHeedingEngineEarnsInlineCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := &heeder{}
		c := heederClient(t, e)
		defer c.Close()
		e.hang.Store(true)
		var took []time.Duration
		for i := range 3 {
			t0 := time.Now()
			c.Translate(context.Background(), req(fmt.Sprint("hang ", i)))
			took = append(took, time.Since(t0))
		}
		want := []time.Duration{5 * time.Second, time.Second, time.Second}
		if diff := cmp.Diff(want, took, within20ms); diff != "" {
			t.Errorf("calls took (-want +got):\n%s", diff)
		}
		time.Sleep(5 * time.Second) // the abandoned calls return
	})
}

// TestOverdueInlineCallSendsTheNextToThePool: when an inline call of an engine that earned
// it by heeding ctx is still running at its deadline, the calls that start after it run on
// the pool and keep the deadline, though other calls of the engine go on returning in time
// (so the stall rule does not apply) and the overdue call has not returned yet to say it is
// late: the alarm that ends its context at its deadline tells the engine's trust. Virtual
// time (synctest).
func TestOverdueInlineCallSendsTheNextToThePool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := &heeder{}
		c := heederClient(t, e)
		defer c.Close()
		e.hang.Store(true)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 8 { // calls that go on returning in time, one every 4ms or so
			wg.Go(func() {
				time.Sleep(time.Duration(g) * 4 * time.Millisecond)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := c.Translate(context.Background(), req(fmt.Sprint("good ", g, i))); err != nil {
						t.Error(err)
					}
				}
			})
		}
		var took [2]time.Duration
		wg.Go(func() {
			t0 := time.Now()
			c.Translate(context.Background(), req("hang 0")) // inline: held until the engine returns
			took[0] = time.Since(t0)
		})
		time.Sleep(1100 * time.Millisecond) // past the first call's deadline
		t0 := time.Now()
		c.Translate(context.Background(), req("hang 1"))
		took[1] = time.Since(t0)
		close(stop)
		wg.Wait()
		want := [2]time.Duration{5 * time.Second, time.Second}
		if diff := cmp.Diff(want, took, within20ms); diff != "" {
			t.Errorf("calls took (-want +got):\n%s", diff)
		}
		time.Sleep(5 * time.Second) // the abandoned calls return
	})
}

// stackEngine heeds ctx (it asks for Done and answers at once) and keeps the name of the
// function that called the engine call's panic guard on its last call.
type stackEngine struct{ above string }

func (*stackEngine) Name() string { return "stackEngine" }

func (e *stackEngine) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	ctx.Done()
	pcs := make([]uintptr, 2)
	runtime.Callers(2, pcs) // the engine's caller (the panic guard), and its caller
	e.above = runtime.FuncForPC(pcs[1] - 1).Name()
	return &translate.EngineResult{Texts: []string{"hola"}}, nil
}

// TestInlineCallWaitsInCallsFrame: an inline engine call is made from the attempt's own
// frame, with no frame between it and the panic guard. Every garbage collection scans the
// stack of every request waiting on its engine frame by frame, so each frame on that stack
// lengthens a busy Client's collections, which its callers wait for (BenchmarkLoadGC).
func TestInlineCallWaitsInCallsFrame(t *testing.T) {
	e := &stackEngine{}
	c, err := translate.New(translate.WithoutCache(), translate.WithEngine(e, translate.Profile{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 100 { // earns inline calls (deadline.Trust): the last ones are inline
		if _, err := c.Translate(context.Background(), req(fmt.Sprint("text ", i))); err != nil {
			t.Fatal(err)
		}
	}
	if want := "github.com/fanyi-go/translate.(*walk).call"; e.above != want {
		t.Errorf("the inline call's guard is called from %s, want %s", e.above, want)
	}
}
