package translate

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// codeEngine is an engine given in code, beside a configuration file's.
type codeEngine struct{ name string }

func (e *codeEngine) Name() string { return e.name }
func (e *codeEngine) Translate(_ context.Context, req *EngineRequest) (*EngineResult, error) {
	out := &EngineResult{}
	for _, t := range req.Texts {
		out.Texts = append(out.Texts, e.name+":"+t)
	}
	return out, nil
}

// budgetFile is a configuration file with a cfgtest engine for each name and a daily budget.
func budgetFile(daily float64, names ...string) []byte {
	var es []string
	for _, n := range names {
		es = append(es, `{"name":"`+n+`","type":"cfgtest"}`)
	}
	return []byte(`{"engines":[` + strings.Join(es, ",") + `],"budget":{"daily":` +
		strconv.FormatFloat(daily, 'g', -1, 64) + `}}`)
}

// running is what a test of option retention checks: the engines, the daily budget, and
// who serves a request pinned to the engine given in code.
type running struct {
	Engines []string
	Daily   float64
	Code    string // the pinned request's engine, or its error
}

func runningOf(c *Client) running {
	r := running{Engines: clientEngineNames(c), Daily: c.Budget().Daily}
	res, err := c.Translate(context.Background(), Request{Text: "hello", Source: "en", Target: "es", Engine: "code", NoCache: true})
	if err != nil {
		r.Code = err.Error()
	} else {
		r.Code = res.Engine
	}
	return r
}

// TestReloadKeepsOptionsAroundConfig: options given to New after WithConfig (an engine in
// code, a budget) override the file at New and at every reload, by Reconfigure, of the
// same file or a changed one, and by WatchConfig; options before WithConfig are overridden
// by the file every time, as at New (the engine given before it stays, before the file's).
func TestReloadKeepsOptionsAroundConfig(t *testing.T) {
	registerTestTypes()
	code := WithEngine(&codeEngine{name: "code"}, Profile{Quality: 90})
	budget := WithBudget(Budget{Daily: 7})
	tests := []struct {
		name            string
		opts            func(cfg *Config) []Option
		atNew, reloaded running // the file: budget 50 and "a"; reloaded: budget 60, "a" and "b"
	}{
		{"options after WithConfig",
			func(cfg *Config) []Option { return []Option{WithConfig(cfg), code, budget} },
			running{[]string{"a", "code"}, 7, "code"}, running{[]string{"a", "b", "code"}, 7, "code"}},
		{"options before WithConfig",
			func(cfg *Config) []Option { return []Option{code, budget, WithConfig(cfg)} },
			running{[]string{"code", "a"}, 50, "code"}, running{[]string{"code", "a", "b"}, 60, "code"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, write := writeInPlace(t, budgetFile(50, "a"))
			cfg, err := LoadConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			c, err := New(append([]Option{WithLogger(slog.New(slog.DiscardHandler))}, tt.opts(cfg)...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			check := func(when string, want running) {
				t.Helper()
				if diff := cmp.Diff(want, runningOf(c)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", when, diff)
				}
			}
			check("at New", tt.atNew)
			same, err := LoadConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Reconfigure(same); err != nil {
				t.Fatal(err)
			}
			check("after Reconfigure with the same file", tt.atNew)
			w := c.newConfigWatcher(context.Background(), path)
			write(budgetFile(60, "a", "b"))
			pollUntilApplied(t, w)
			check("after WatchConfig applied a change", tt.reloaded)
			if err := c.Reconfigure(cfg); err != nil {
				t.Fatal(err)
			}
			check("after Reconfigure back to the first file", tt.atNew)
		})
	}
}

// TestReturningEngineReusesItsTelemetry: an engine that leaves the configuration and comes
// back at the next Reconfigure (a configuration that alternates) gets its attribute sets
// back instead of building them again (about 40 of a Reconfigure's 88 allocations); one
// away for two configurations, or new, gets new ones.
func TestReturningEngineReusesItsTelemetry(t *testing.T) {
	registerTestTypes()
	parse := func(names ...string) *Config {
		cfg, err := ParseConfig(budgetFile(0, names...))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	c, err := New(WithConfig(parse("a", "b")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tel := func(name string) *engineTel {
		if e := c.cfg.Load().byName[name]; e != nil {
			return e.tel
		}
		return nil
	}
	first := tel("a")
	for i, step := range []struct {
		names []string
		same  bool // a's telemetry is first's
	}{{[]string{"b"}, false}, {[]string{"a", "b"}, true}, {[]string{"b"}, false}, {[]string{"b"}, false}, {[]string{"a", "b"}, false}} {
		if err := c.Reconfigure(parse(step.names...)); err != nil {
			t.Fatal(err)
		}
		if a := tel("a"); a != nil && (a == first) != step.same {
			t.Errorf("step %d: a's telemetry reused %v, want %v", i, a == first, step.same)
		}
	}
}
