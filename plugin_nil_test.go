package translate_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/deepl"
	"github.com/fanyi-go/translate/engines/fake"
	"github.com/fanyi-go/translate/engines/openai"
	"github.com/fanyi-go/translate/redisstore"
)

// TestNewRefusesNilPlugins: an Engine or a Store interface that holds a nil pointer (a
// typed nil: "var st *redisstore.Store" never assigned), or a zero redisstore.Store, is a
// configuration error naming the option, not a panic in New or on a goroutine of the
// Client later.
func TestNewRefusesNilPlugins(t *testing.T) {
	var (
		nilFake   *fake.Engine
		nilOpenAI *openai.Engine
		nilDeepL  *deepl.Engine
		nilRedis  *redisstore.Store
		nilScript *scriptStore
	)
	ok := translate.WithEngine(fake.New("a"), translate.Profile{})
	for _, tc := range []struct {
		name string
		opts []translate.Option
		want string
	}{
		{"nil *fake.Engine", []translate.Option{translate.WithEngine(nilFake, translate.Profile{})}, "WithEngine[0] engine is a nil *fake.Engine"},
		{"nil *openai.Engine", []translate.Option{ok, translate.WithEngine(nilOpenAI, translate.Profile{})}, "WithEngine[1] engine is a nil *openai.Engine"},
		{"nil *deepl.Engine", []translate.Option{translate.WithEngine(nilDeepL, translate.Profile{})}, "WithEngine[0] engine is a nil *deepl.Engine"},
		{"nil *redisstore.Store", []translate.Option{ok, translate.WithStore(nilRedis)}, "WithStore is a nil *redisstore.Store"},
		{"zero redisstore.Store", []translate.Option{ok, translate.WithStore(&redisstore.Store{})}, "WithStore *redisstore.Store is not usable: redisstore: the Store has no Redis client"},
		{"nil Store of another type", []translate.Option{ok, translate.WithStore(nilScript)}, "WithStore is a nil *translate_test.scriptStore"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := translate.New(tc.opts...)
			if err == nil {
				c.Close()
				t.Fatal("New accepted it")
			}
			if translate.KindOf(err) != translate.KindInvalidInput || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want KindInvalidInput with %q", err, tc.want)
			}
		})
	}
}

// TestConfigRefusesFactoryBuildingNilEngine: an engine type whose factory returns a typed
// nil is refused by ParseConfig with the engine's path, not a panic on its Name.
func TestConfigRefusesFactoryBuildingNilEngine(t *testing.T) {
	translate.RegisterEngineType("nilfake", func(translate.EngineConfig) (translate.Engine, error) {
		var e *fake.Engine
		return e, nil
	})
	_, err := translate.ParseConfig([]byte(`{"engines": [{"name": "a", "type": "nilfake"}]}`))
	if want := `engines[0].type: engine type "nilfake" built a nil *fake.Engine`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ParseConfig: %v, want an error with %q", err, want)
	}
}

// panicStore is a HoldStore whose hold watch holds every engine down and then panics
// (watch), or whose probe lock panics (lock): a Store's bug.
type panicStore struct {
	scriptStore
	watch, lock bool
	applied     chan struct{} // closed once the holds are applied
}

func (s *panicStore) WatchHolds(ctx context.Context, engines func() []string, apply func([]translate.EngineHold)) {
	if s.watch {
		var m map[string]int
		m["x"]++ // a runtime error: assignment to entry in nil map
	}
	var holds []translate.EngineHold
	for _, e := range engines() {
		holds = append(holds, translate.EngineHold{Engine: e, Kind: translate.KindUnavailable, Until: time.Now().Add(time.Hour)})
	}
	apply(holds)
	close(s.applied)
	<-ctx.Done()
}

func (s *panicStore) Unhold(context.Context, string) error { return nil }

func (s *panicStore) ProbeLock(context.Context, string, time.Duration) (bool, error) {
	if s.lock {
		panic("secret-in-panic-value")
	}
	return true, nil
}

// panicLog signals every warning about a background panic, with its attributes.
type panicLog struct{ lines chan string }

func (h panicLog) Enabled(context.Context, slog.Level) bool { return true }
func (h panicLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h panicLog) WithGroup(string) slog.Handler            { return h }
func (h panicLog) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "panicked") {
		line := r.Message
		r.Attrs(func(a slog.Attr) bool {
			if a.Key != "stack" {
				line += " " + a.String()
			}
			return true
		})
		select {
		case h.lines <- line:
		default:
		}
	}
	return nil
}

// TestStorePanicOnBackgroundGoroutineIsContained: a Store method that panics on a
// goroutine the Client runs for it (the hold watch; a probe's ProbeLock) is logged as a
// warning, with the panic's type and never its value, and the process lives on: the
// Client still closes.
func TestStorePanicOnBackgroundGoroutineIsContained(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store *panicStore
		want  string
	}{
		{"WatchHolds", &panicStore{watch: true}, "panic=runtime.plainError error=assignment to entry in nil map"},
		{"ProbeLock", &panicStore{lock: true}, "panic=string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.store.applied = make(chan struct{})
			log := panicLog{lines: make(chan string, 1)}
			c := newClient(t, translate.WithEngine(fake.New("a"), translate.Profile{}),
				translate.WithStore(tc.store), translate.WithLogger(slog.New(log)),
				translate.WithProbes(translate.ProbePolicy{}), translate.WithClock(translate.ManualProbesForTest(newClock())))
			if tc.store.lock {
				<-tc.store.applied
				translate.ProbeRoundForTest(c) // the engine is held: the probe asks for the lock
			}
			select {
			case line := <-log.lines:
				if !strings.Contains(line, tc.want) || strings.Contains(line, "secret") {
					t.Errorf("logged %q, want %q and no panic value", line, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no warning of the panic")
			}
			c.Close()
		})
	}
}
