package translate_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// heldFailure is an engine whose first call waits until release is closed (or its ctx
// ends) and then fails as unavailable; later calls fail at once. called is closed when the
// first call has begun.
func heldFailure(name string) (e *fake.Engine, called, release chan struct{}) {
	called, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	e = fake.New(name, fake.WithHook(func(ctx context.Context, _ *translate.EngineRequest) error {
		first := false
		once.Do(func() { first = true; close(called) })
		if first {
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return &translate.Error{Kind: translate.KindUnavailable, Engine: name, Message: "down"}
	}))
	return e, called, release
}

// joinsNoFailingFlight sends first and, once the engine holds first's call, second, which
// differs from first only in what decides where it may go. second must not wait for
// first's failure: alone, it is served at once. If it is still waiting after a second (it
// joined first's flight), first's call is released and second gets first's failure.
func joinsNoFailingFlight(t *testing.T, c *translate.Client, called, release chan struct{}, first, second translate.Request, what string) {
	t.Helper()
	ctx := context.Background()
	firstDone := make(chan struct{})
	go func() {
		defer close(firstDone)
		c.Translate(ctx, first)
	}()
	<-called
	type answer struct {
		res *translate.Result
		err error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := c.Translate(ctx, second)
		got <- answer{res, err}
	}()
	var a answer
	select {
	case a = <-got:
		close(release)
	case <-time.After(time.Second):
		close(release) // second waits for first's call: it joined its flight
		a = <-got
	}
	<-firstDone
	if a.err != nil {
		t.Errorf("%s beside the same request in flight: %v; alone it is served", what, a.err)
	}
}

// TestHighPriorityJoinsNoNormalFlight: a high-priority request may go to premium engines,
// which a normal one may not, so it never takes the failure of an identical normal request
// in flight.
func TestHighPriorityJoinsNoNormalFlight(t *testing.T) {
	std, called, release := heldFailure("std")
	c := newClient(t, sharp, translate.WithEngine(std, translate.Profile{Quality: 95}),
		translate.WithEngine(fake.New("prem"), translate.Profile{Quality: 90, Class: translate.ClassPremium}))
	r := req("The delivery will arrive tomorrow morning")
	high := r
	high.Priority = translate.PriorityHigh
	joinsNoFailingFlight(t, c, called, release, r, high, "high priority")
}

// TestTenantJoinsNoSpentTenantsFlight: a tenant whose budget is spent (19 of 20 credits, a
// credit a character) goes to free engines
// only; another tenant's identical request, with budget left, never takes its failure.
func TestTenantJoinsNoSpentTenantsFlight(t *testing.T) {
	std, called, release := heldFailure("std")
	c := newClient(t, sharp, translate.WithEngine(fake.New("paid"), translate.Profile{Quality: 95, CostPerMillion: 1e6}),
		translate.WithEngine(std, translate.Profile{Quality: 10, Class: translate.ClassFree}),
		translate.WithBudget(translate.Budget{Tenants: map[string]translate.Budget{"poor": {Daily: 20}, "rich": {Daily: 1000}}}))
	spend := req("Spend what poor has")
	spend.Tenant = "poor"
	if _, err := c.Translate(context.Background(), spend); err != nil {
		t.Fatal(err)
	}
	poor := req("The delivery will arrive tomorrow morning")
	poor.Tenant = "poor"
	rich := poor
	rich.Tenant = "rich"
	joinsNoFailingFlight(t, c, called, release, poor, rich, "tenant rich")
}

// TestRequestIDReusedElsewhereIsNew: an id's first answer is replayed only to a request
// that may take it: reused limited to regions the first answer's engine is not in, or
// pinned to another engine without fallback, it goes to the engines it has not reached.
func TestRequestIDReusedElsewhereIsNew(t *testing.T) {
	c := newClient(t, translate.WithEngine(fake.New("us"), translate.Profile{Region: "us"}),
		translate.WithEngine(fake.New("eu"), translate.Profile{Region: "eu"}))
	ctx := context.Background()
	inEU := req("The house is red")
	inEU.Regions = []string{"eu"}
	pinEU := req("The house is red")
	pinEU.Engine = "eu"
	for id, second := range map[string]translate.Request{"doc-1": inEU, "doc-2": pinEU} {
		first := req("The house is red")
		first.RequestID, first.Engine = id, "us"
		if res, err := c.Translate(ctx, first); err != nil || res.Engine != "us" {
			t.Fatalf("%s pinned to us: %v, %v", id, res, err)
		}
		second.RequestID = id
		if res, err := c.Translate(ctx, second); err != nil || res.Engine != "eu" {
			t.Errorf("%s reused with Regions %v, Engine %q: %+v, %v; want eu's answer", id, second.Regions, second.Engine, res, err)
		}
		if res, err := c.Translate(ctx, first); err != nil || res.Engine != "us" || !res.FromCache {
			t.Errorf("%s as first sent again: %+v, %v; want its first answer", id, res, err)
		}
	}
}

// TestCallerStringsStayShort: a caller's names are quoted in errors cut to 64 bytes, and
// ids longer than 512 bytes (carried into spans, logs and the request-id store) are refused.
func TestCallerStringsStayShort(t *testing.T) {
	c := newClient(t, translate.WithEngine(fake.New("a"), translate.Profile{}))
	long := strings.Repeat("é", 1<<19) // 1 MiB
	for name, r := range map[string]translate.Request{
		"engine":     {Text: "hello", Source: "en", Target: "es", Engine: long},
		"glossary":   {Text: "hello", Source: "en", Target: "es", Glossary: long},
		"request id": {Text: "hello", Source: "en", Target: "es", RequestID: long},
		"user id":    {Text: "hello", Source: "en", Target: "es", UserID: long},
	} {
		_, err := c.Translate(context.Background(), r)
		if err == nil {
			t.Errorf("%s of 1 MiB: served", name)
		} else if translate.KindOf(err) != translate.KindInvalidInput || len(err.Error()) > 200 || !utf8.ValidString(err.Error()) {
			t.Errorf("%s of 1 MiB: %d bytes of error (%.80s…), want a short invalid-input error", name, len(err.Error()), err)
		}
	}
	r := req("hello")
	r.RequestID, r.UserID = strings.Repeat("x", 512), strings.Repeat("y", 512)
	if _, err := c.Translate(context.Background(), r); err != nil {
		t.Errorf("ids of 512 bytes: %v", err)
	}
}

// TestRequestIDReachedEveryEngineSaysSo: a request whose id already reached every engine
// it may go to, with no answer it may take, fails naming each engine and why; it failed
// with "no engine available: " and nothing after.
func TestRequestIDReachedEveryEngineSaysSo(t *testing.T) {
	c := newClient(t, translate.WithEngine(fake.New("us"), translate.Profile{Region: "us"}),
		translate.WithEngine(fake.New("eu"), translate.Profile{Region: "eu"}))
	ctx := context.Background()
	for _, engine := range []string{"us", "eu"} {
		r := req("The house is red")
		r.RequestID, r.Engine = "doc-1", engine
		if _, err := c.Translate(ctx, r); err != nil && engine == "us" {
			t.Fatal(err)
		}
	}
	r := req("The house is red")
	r.RequestID, r.Engine = "doc-1", "eu" // eu has seen it; its first answer is us's
	_, err := c.Translate(ctx, r)
	var te *translate.Error
	if !errors.As(err, &te) || te.Kind != translate.KindNoEngine ||
		te.Excluded["eu"] != "the request id already reached it" || !strings.Contains(err.Error(), "eu: the request id already reached it") {
		t.Errorf("err = %v; want no_engine naming eu and why", err)
	}
}
