package translate_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// TestInstantEngineDoesNotMerge: an identical request that meets another in flight waits for
// its answer, unless every engine it may go to has earned inline calls (deadline.Trust: calls
// that return at once, in process) and it has no RequestID of its own; then it makes its own
// call instead of parking. Virtual time (synctest): the warm-up's calls take no time, so the
// engine is trusted whatever the machine's load.
func TestInstantEngineDoesNotMerge(t *testing.T) {
	pinned := func(r translate.Request) translate.Request { r.Engine = "a"; return r }
	withID := func(r translate.Request) translate.Request { r.RequestID = "mine"; return r }
	for _, tc := range []struct {
		name     string
		instant  int  // engines a, b, ... that earn trust; 0 means 1
		untested bool // z, a fallback-only engine that never earned trust, is configured
		shape    func(translate.Request) translate.Request
		alone    bool // the second request makes its own call while the first is held
	}{
		{name: "instant engine", shape: func(r translate.Request) translate.Request { return r }, alone: true},
		{name: "instant engine, request ids", shape: withID, alone: false},
		{name: "routed, an untrusted engine configured", untested: true, shape: func(r translate.Request) translate.Request { return r }, alone: false},
		{name: "pinned to the instant engine", untested: true, shape: pinned, alone: true},
		// More engines than a request reads before joining: it reads them once it met another.
		{name: "routed, 6 instant engines", instant: 6, shape: func(r translate.Request) translate.Request { return r }, alone: true},
		{name: "routed, 6 instant engines and an untrusted one", instant: 6, untested: true, shape: func(r translate.Request) translate.Request { return r }, alone: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { checkMerge(t, max(tc.instant, 1), tc.untested, tc.shape, tc.alone) })
		})
	}
}

// checkMerge earns the trust of n engines, holds the first call of "hot" and sends a second
// identical request: alone, it must finish with a call of its own while the first is held;
// otherwise it must wait and share the first's call.
func checkMerge(t *testing.T, n int, untested bool, shape func(translate.Request) translate.Request, alone bool) {
	release := make(chan struct{})
	var held atomic.Bool
	hold := fake.WithHook(func(_ context.Context, r *translate.EngineRequest) error {
		if r.Texts[0] == "hot" && held.CompareAndSwap(false, true) {
			<-release
		}
		return nil
	})
	opts := []translate.Option{translate.WithSeed(1), translate.WithoutCache(), translate.WithClock(newClock())}
	engines := make([]*fake.Engine, n)
	for i := range engines {
		engines[i] = fake.New(string(rune('a'+i)), hold)
		opts = append(opts, translate.WithEngine(engines[i], translate.Profile{}))
	}
	if untested {
		opts = append(opts, translate.WithEngine(fake.New("z"), translate.Profile{FallbackOnly: true}))
	}
	c, err := translate.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const each = 100 // more than deadline.Earn instant calls in a row
	warm := n * each
	for i := range warm {
		r := req("warm")
		r.Engine = engines[i%n].Name()
		if _, err := c.Translate(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	calls := func() int {
		sum := 0
		for _, e := range engines {
			sum += e.Calls()
		}
		return sum
	}
	var wg sync.WaitGroup
	var first, second atomic.Pointer[translate.Result]
	run := func(to *atomic.Pointer[translate.Result]) {
		defer wg.Done()
		res, err := c.Translate(context.Background(), shape(req("hot")))
		if err != nil {
			t.Error(err)
			return
		}
		to.Store(res)
	}
	wg.Add(2)
	go run(&first)
	synctest.Wait() // the first is held in a's call
	go run(&second)
	synctest.Wait() // the second is done, or waits for the first
	type state struct {
		SecondDone bool
		Calls      int
	}
	want := state{SecondDone: alone, Calls: warm + 1}
	if alone {
		want.Calls = warm + 2
	}
	if diff := cmp.Diff(want, state{second.Load() != nil, calls()}); diff != "" {
		t.Errorf("while the first call is held (-want +got):\n%s", diff)
	}
	close(release)
	wg.Wait()
	if res := second.Load(); res == nil || res.Text != "[es] hot" || res.FromCache == alone {
		t.Errorf("second answer %+v: want its text, shared (FromCache) only when merged", res)
	}
}
