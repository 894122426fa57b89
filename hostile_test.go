package translate_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// engineFunc is an Engine made of a function: the misbehaving engines of these tests.
type engineFunc struct {
	name string
	f    func(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error)
}

func (e engineFunc) Name() string { return e.name }
func (e engineFunc) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	return e.f(ctx, req)
}

const secretText = "CUSTOMER-SECRET-TEXT please keep this private"

// hostile runs one request through a misbehaving engine h backed by a healthy fake b, and
// returns the result, the error and b.
func hostile(t *testing.T, f func(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error), opts ...translate.Option) (*translate.Result, error, *fake.Engine) {
	t.Helper()
	b := fake.New("b")
	opts = append([]translate.Option{translate.WithClock(newClock()), sharp,
		translate.WithEngine(engineFunc{"h", f}, primary), translate.WithEngine(b, secondary)}, opts...)
	c := newClient(t, opts...)
	res, err := c.Translate(context.Background(), req(secretText))
	return res, err, b
}

func TestTypedNilErrorFromEngineDoesNotPanic(t *testing.T) {
	res, err, b := hostile(t, func(context.Context, *translate.EngineRequest) (*translate.EngineResult, error) {
		var e *translate.Error
		return nil, e
	})
	if err != nil || res.Engine != "b" || b.Calls() != 1 {
		t.Fatalf("typed nil: res %+v err %v; want b to serve", res, err)
	}
	if k := translate.KindOf(res.Attempts[0].Err); k != translate.KindUnknown {
		t.Errorf("typed nil attempt kind = %v, want unknown", k)
	}
}

func TestPanicValueNeverReachesTheError(t *testing.T) {
	c := newClient(t, translate.WithClock(newClock()), translate.WithEngine(engineFunc{"h",
		func(_ context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
			panic("cannot translate " + req.Texts[0])
		}}, primary))
	_, err := c.Translate(context.Background(), req(secretText))
	if err == nil || strings.Contains(err.Error(), "CUSTOMER-SECRET") {
		t.Fatalf("err = %v: want an error without the panic's text", err)
	}
	if translate.KindOf(err) != translate.KindUnknown {
		t.Errorf("kind = %v, want unknown", translate.KindOf(err))
	}
}

func TestHugeEngineMessageIsCapped(t *testing.T) {
	c := newClient(t, translate.WithClock(newClock()), translate.WithEngine(engineFunc{"h",
		func(context.Context, *translate.EngineRequest) (*translate.EngineResult, error) {
			return nil, &translate.Error{Kind: translate.KindUnavailable, Message: strings.Repeat("x", 10<<20), Err: errors.New(strings.Repeat("y", 10<<20))}
		}}, primary))
	_, err := c.Translate(context.Background(), req(secretText))
	if err == nil {
		t.Fatal("want an error")
	}
	if n := len(err.Error()); n >= 64<<10 {
		t.Errorf("len(err.Error()) = %d, want under 64 KiB", n)
	}
	var ae *translate.Error
	if !errors.As(err, &ae) || len(ae.Attempts) == 0 {
		t.Fatalf("err = %T, want *Error with attempts", err)
	}
	if m := ae.Attempts[0].Err.(*translate.Error).Message; len(m) > 1024 {
		t.Errorf("attempt message is %d bytes, want a few hundred", len(m))
	}
}

func TestUnknownKindFromEngineIsUnknownFailure(t *testing.T) {
	res, err, _ := hostile(t, func(context.Context, *translate.EngineRequest) (*translate.EngineResult, error) {
		return nil, &translate.Error{Kind: translate.Kind(200)}
	})
	if err != nil {
		t.Fatal(err)
	}
	if k := translate.KindOf(res.Attempts[0].Err); k != translate.KindUnknown {
		t.Errorf("Kind(200) came back as %v, want unknown", k)
	}
}

func TestCanceledFromEngineWithLiveContextIsEngineFailure(t *testing.T) {
	res, err, b := hostile(t, func(context.Context, *translate.EngineRequest) (*translate.EngineResult, error) {
		return nil, &translate.Error{Kind: translate.KindCanceled}
	})
	if err != nil || b.Calls() != 1 {
		t.Fatalf("err %v, b calls %d: an engine's KindCanceled must fail over, not end the request", err, b.Calls())
	}
	if k := translate.KindOf(res.Attempts[0].Err); k == translate.KindCanceled {
		t.Errorf("attempt kind = canceled, want an engine failure")
	}
}

func TestCallerDeadlineTooNearIsTimeout(t *testing.T) {
	c := newClient(t, translate.WithEngine(fake.New("a"), primary))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	_, err := c.Translate(ctx, req("hello there"))
	if !errors.Is(err, translate.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if ctx.Err() == nil && translate.KindOf(err) != translate.KindTimeout {
		t.Errorf("deadline under 20ms away: err = %v, want KindTimeout", err)
	}
}

// An engine that ignores ctx may hold its first overrun, but not the requests after it.
func TestEngineIgnoringContextCannotHoldLaterRequests(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan context.Context, 16)
	stuck := engineFunc{"stuck", func(ctx context.Context, _ *translate.EngineRequest) (*translate.EngineResult, error) {
		entered <- ctx
		<-release // ignores ctx
		return &translate.EngineResult{Texts: []string{"late"}}, nil
	}}
	c := newClient(t, translate.WithDeadline(time.Second),
		translate.WithEngine(stuck, translate.Profile{Timeout: 50 * time.Millisecond}))
	// The first overrun: it returns well after its attempt's deadline.
	done := make(chan error, 1)
	go func() { _, err := c.Translate(context.Background(), req("first text here")); done <- err }()
	actx := <-entered
	<-actx.Done()
	time.Sleep(2 * overrunGraceForTest) // past the grace: this is what "late" means
	release <- struct{}{}
	<-done
	// Later calls run apart: Translate returns at the deadline while the engine holds on.
	start := time.Now()
	_, err := c.Translate(context.Background(), req("second text here"))
	if translate.KindOf(err) != translate.KindTimeout {
		t.Errorf("err = %v, want KindTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Translate took %v with an engine ignoring ctx", d)
	}
	close(release)
}

const overrunGraceForTest = 50 * time.Millisecond

// Close returns while a probe sits in an engine that ignores ctx.
func TestCloseReturnsWithProbeStuckInEngine(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	stuck := engineFunc{"stuck", func(context.Context, *translate.EngineRequest) (*translate.EngineResult, error) {
		entered <- struct{}{}
		<-release
		return nil, errors.New("late")
	}}
	clk := newClock()
	c, err := translate.New(translate.WithClock(translate.ManualProbesForTest(clk)),
		translate.WithProbes(translate.ProbePolicy{}), translate.WithEngine(stuck, translate.Profile{Timeout: time.Hour}))
	if err != nil {
		t.Fatal(err)
	}
	roundDone := make(chan struct{})
	go func() { translate.ProbeRoundForTest(c); close(roundDone) }()
	<-entered
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Error("Close blocked on a probe stuck in an engine")
	}
	select {
	case <-roundDone:
	case <-time.After(10 * time.Second):
		t.Error("the probe round did not return after Close")
	}
	close(release)
}
