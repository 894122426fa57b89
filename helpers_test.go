package translate_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/text/language"

	"go.uber.org/goleak"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a manual Clock: Sleep advances it at once, so backoffs cost no real time.
type clock struct {
	mu    sync.Mutex
	t     time.Time
	slept []time.Duration
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.slept = append(c.slept, d)
	return nil
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *clock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}

// newClient builds a Client with a manual clock, a fixed seed and no cache unless opts say
// otherwise, and closes it when the test ends.
func newClient(t testing.TB, opts ...translate.Option) *translate.Client {
	t.Helper()
	base := []translate.Option{translate.WithSeed(1), translate.WithoutCache()}
	c, err := translate.New(append(base, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// req is a minimal request.
func req(text string) translate.Request {
	return translate.Request{Text: text, Source: "en", Target: "es"}
}

// engineNames lists the engines of the attempts.
func engineNames(as []translate.Attempt) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Engine)
	}
	return out
}

// kinds lists the Kinds of the attempts ("ok" for success).
func kinds(as []translate.Attempt) []string {
	var out []string
	for _, a := range as {
		if a.Err == nil {
			out = append(out, "ok")
		} else {
			out = append(out, translate.KindOf(a.Err).String())
		}
	}
	return out
}

// primary is a profile that the router strongly prefers over secondary.
var (
	primary   = translate.Profile{Quality: 100}
	secondary = translate.Profile{Quality: 1}
)

// sharp is a routing policy under which the better score nearly always wins.
var sharp = translate.WithRouting(translate.RoutingPolicy{Temperature: 0.5})

func fakes(names ...string) []*fake.Engine {
	var out []*fake.Engine
	for _, n := range names {
		out = append(out, fake.New(n))
	}
	return out
}

func runtimeGosched() { runtime.Gosched() }

type languageTagT = language.Tag

func languageTag(s string) language.Tag { return language.MustParse(s) }
