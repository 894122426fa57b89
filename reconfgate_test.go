package translate_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"

	"github.com/fanyi-go/translate"
)

// gateFactories are the "gated" engine type's factories by vendor id: each call of a
// factory waits until its channel, if any, is closed.
var gateFactories sync.Map // id -> chan struct{}

// gateType registers the "gated" engine type once: an engine that answers "<text>|<suffix>"
// at once, built by a factory that waits on gateFactories[settings.vendor] when set.
var gateType = sync.OnceFunc(func() {
	translate.RegisterEngineType("gated", func(ec translate.EngineConfig) (translate.Engine, error) {
		e := suffixEngine{name: ec.Name, suffix: ec.Settings["suffix"]}
		if ec.Settings["pairs"] == "wait" { // the factory answers; the language list waits
			return pairsEngine{e, ec.Settings["vendor"]}, nil
		}
		if hold, held := gateFactories.Load(ec.Settings["vendor"]); held {
			<-hold.(chan struct{})
		}
		return e, nil
	})
})

type suffixEngine struct{ name, suffix string }

func (e suffixEngine) Name() string { return e.name }

func (e suffixEngine) Translate(_ context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	out := make([]string, len(req.Texts))
	for i, s := range req.Texts {
		out[i] = s + "|" + e.suffix
	}
	return &translate.EngineResult{Texts: out}, nil
}

// pairsEngine is a suffixEngine whose language list comes when its vendor's channel in
// gateFactories, if any, is closed.
type pairsEngine struct {
	suffixEngine
	vendor string
}

func (e pairsEngine) SupportedPairs(ctx context.Context) ([]translate.LanguagePair, error) {
	if hold, held := gateFactories.Load(e.vendor); held {
		<-hold.(chan struct{})
	}
	return []translate.LanguagePair{{Source: language.English, Target: language.German}}, nil
}

// gatedConfig is a configuration of one "gated" engine whose answers end in suffix.
func gatedConfig(t *testing.T, vendor, suffix, pairs string) *translate.Config {
	return rcParse(t, `{"cache": {"disabled": true}, "engines": [
	    {"name": "e", "type": "gated", "settings": {"vendor": %q, "suffix": %q, "pairs": %q}}]}`,
		vendor, suffix, pairs)
}

// TestRequestsWaitForReconfigure: a request that arrives while Reconfigure builds the next
// configuration waits for it and runs under it; when the build takes longer than the hold
// (a slow engine factory), the request goes on under the running configuration once the
// hold has passed. Requests do not wait while the new engines' language lists are fetched.
// Without the gate, the first request is served by v1 at once; without its hold, the
// second waits for the factory; gated through the language lists, the third waits 20ms.
func TestRequestsWaitForReconfigure(t *testing.T) {
	gateType()
	for _, tc := range []struct {
		name    string
		build   time.Duration // how long the v2 factory (or its language list) takes
		pairs   string        // "wait": the factory answers, the language list takes build
		want    string
		elapsed time.Duration
	}{
		{"build within the hold", 5 * time.Millisecond, "", "hello|v2", 5 * time.Millisecond},
		{"build past the hold", time.Second, "", "hello|v1", translate.ReconfigureHoldForTest},
		{"language list", time.Second, "wait", "hello|v1", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				vendor := t.Name()
				c, err := translate.New(translate.WithConfig(gatedConfig(t, vendor, "v1", "")))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				v2 := gatedConfig(t, vendor, "v2", tc.pairs) // ParseConfig builds the engines too
				hold := make(chan struct{})
				gateFactories.Store(vendor, hold)
				defer gateFactories.Delete(vendor)
				reconfigured := make(chan error, 1)
				go func() { reconfigured <- c.Reconfigure(v2) }()
				synctest.Wait() // Reconfigure waits in the v2 factory
				time.AfterFunc(tc.build, func() { close(hold) })
				t0 := time.Now()
				res, err := c.Translate(context.Background(), translate.Request{Text: "hello", Target: "de"})
				if err != nil {
					t.Fatal(err)
				}
				got := struct {
					Text    string
					Elapsed time.Duration
				}{res.Text, time.Since(t0)}
				want := struct {
					Text    string
					Elapsed time.Duration
				}{tc.want, tc.elapsed}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("request during Reconfigure (-want +got):\n%s", diff)
				}
				if err := <-reconfigured; err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}
