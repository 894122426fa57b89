package translate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fanyi-go/translate"
	sysclock "github.com/fanyi-go/translate/internal/clock"
)

// rcVendor is the vendor behind engines of the "rc" type registered for these tests: the
// engines a Config builds for it share it, so a test controls them across rebuilds.
type rcVendor struct {
	calls atomic.Int64
	// validKey, when set, is the only key the vendor takes; others get 401.
	validKey atomic.Pointer[string]
	// gate, when set, holds every call until it is closed; entered gets a value per call.
	gate    chan struct{}
	entered chan struct{}
	// failEvery, when > 0, fails every failEvery-th call (KindUnavailable).
	failEvery int64
	// epoch, when set, holds each call that fails by fail_prefix until the channel it
	// points to is closed (the test closes it at the next reconfiguration).
	epoch atomic.Pointer[chan struct{}]
	// latency, when > 0, is how long every call takes, honouring ctx.
	latency time.Duration
	// lateOnce, when > 0, makes the next call take that long (nanoseconds) ignoring ctx,
	// and then answer as usual.
	lateOnce atomic.Int64
}

// nextEpoch releases the calls waiting on the current epoch and starts a new one; last
// leaves no epoch to wait on.
func (v *rcVendor) nextEpoch(last bool) {
	ch := make(chan struct{})
	if last {
		close(ch)
	}
	if old := v.epoch.Swap(&ch); old != nil {
		close(*old)
	}
}

var rcVendors sync.Map // id -> *rcVendor

// rcType registers the "rc" engine type once. Its settings: vendor (an id in rcVendors,
// required), suffix (appended to every translation after "|"), key (the credential),
// fail_prefix (texts starting with it fail with KindUnavailable).
var rcType = sync.OnceFunc(func() {
	translate.RegisterEngineType("rc", func(ec translate.EngineConfig) (translate.Engine, error) {
		v, ok := rcVendors.Load(ec.Settings["vendor"])
		if !ok {
			return nil, &translate.Error{Kind: translate.KindInvalidInput, Message: "settings.vendor: unknown vendor"}
		}
		return &rcEngine{name: ec.Name, v: v.(*rcVendor), suffix: ec.Settings["suffix"],
			key: ec.Settings["key"], failPrefix: ec.Settings["fail_prefix"]}, nil
	})
})

// rcVendorFor registers a vendor for this test under a unique id.
func rcVendorFor(t *testing.T, v *rcVendor) string {
	id := t.Name() + fmt.Sprintf("/%p", v)
	rcVendors.Store(id, v)
	t.Cleanup(func() { rcVendors.Delete(id) })
	return id
}

type rcEngine struct {
	name, suffix, key, failPrefix string
	v                             *rcVendor
}

func (e *rcEngine) Name() string { return e.name }

func (e *rcEngine) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	n := e.v.calls.Add(1)
	if err := e.v.wait(ctx); err != nil {
		return nil, err
	}
	if e.v.gate != nil {
		e.v.entered <- struct{}{}
		select {
		case <-e.v.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if k := e.v.validKey.Load(); k != nil && *k != e.key {
		return nil, &translate.Error{Kind: translate.KindUnauthorized, StatusCode: 401, Message: "rc: bad key"}
	}
	if e.v.failEvery > 0 && n%e.v.failEvery == 0 {
		return nil, &translate.Error{Kind: translate.KindUnavailable, StatusCode: 503, Message: "rc: failing"}
	}
	out := &translate.EngineResult{}
	for _, t := range req.Texts {
		if e.failPrefix != "" && strings.HasPrefix(t, e.failPrefix) {
			if ep := e.v.epoch.Load(); ep != nil {
				select {
				case <-*ep:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return nil, &translate.Error{Kind: translate.KindUnavailable, StatusCode: 503, Message: "rc: failing"}
		}
		out.Texts = append(out.Texts, e.name+":"+t+"|"+e.suffix)
	}
	return out, nil
}

// wait takes the vendor's latency, honouring ctx, or once its lateOnce, ignoring ctx.
func (v *rcVendor) wait(ctx context.Context) error {
	if d := v.lateOnce.Swap(0); d > 0 {
		time.Sleep(time.Duration(d))
		return nil
	}
	if v.latency <= 0 {
		return nil
	}
	return sysclock.System{}.Sleep(ctx, v.latency)
}

// rcParse parses a configuration file, failing the test on an error.
func rcParse(t testing.TB, format string, args ...any) *translate.Config {
	t.Helper()
	cfg, err := translate.ParseConfig([]byte(fmt.Sprintf(format, args...)))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	return cfg
}

// rcStatus returns the Client's engines by name.
func rcStatus(c *translate.Client) map[string]translate.EngineStatus {
	m := map[string]translate.EngineStatus{}
	for _, s := range c.Engines() {
		m[s.Name] = s
	}
	return m
}

// rcVersion is configuration version v of TestReconfigureUnderLoad: "f<v%3>" (preferred;
// it fails texts starting with "F") and "x<v%4>" come and go, "stay" is in every version;
// all append the version to their translations.
func rcVersion(t testing.TB, vendor string, v int) *translate.Config {
	return rcParse(t, `{"cache": {"disabled": true}, "retry": {"per_engine": 1},
	  "engines": [
	    {"name": "f%d", "type": "rc", "settings": {"vendor": %q, "suffix": "v%d", "fail_prefix": "F"},
	     "profile": {"quality": %d}},
	    {"name": "x%d", "type": "rc", "settings": {"vendor": %q, "suffix": "v%d"}, "profile": {"quality": 50}},
	    {"name": "stay", "type": "rc", "settings": {"vendor": %q, "suffix": "v%d"}, "profile": {"quality": 10}}
	  ]}`, v%3, vendor, v, 90+v%10, v%4, vendor, v, vendor, v)
}

// TestReconfigureUnderLoad reconfigures 100 times while 64 callers translate: no request
// fails, and every request is served under exactly one configuration: the version its
// text carries names the only engines its attempts may name. One request in ten fails on
// its first engine, which holds it until the next reconfiguration: its failover always
// runs after a swap, and must stay in the request's configuration.
func TestReconfigureUnderLoad(t *testing.T) {
	rcType()
	rv := &rcVendor{}
	rv.nextEpoch(false)
	vendor := rcVendorFor(t, rv)
	c := newClient(t, translate.WithConfig(rcVersion(t, vendor, 0)), translate.WithClock(newClock()))
	const callers, versions = 64, 100
	l := &rcLoad{c: c, done: make(chan struct{}), errs: make(chan error, callers)}
	for g := range callers {
		l.wg.Add(1)
		go l.call(g)
	}
	for v := 1; v <= versions; v++ {
		if err := c.Reconfigure(rcVersion(t, vendor, v)); err != nil {
			t.Fatalf("Reconfigure v%d: %v", v, err)
		}
		rv.nextEpoch(v == versions)
	}
	close(l.done)
	l.wg.Wait()
	close(l.errs)
	for err := range l.errs {
		if err != nil {
			t.Error(err)
		}
	}
	// After the last swap, requests are served under the last version.
	res, err := c.Translate(context.Background(), req("after"))
	if err != nil || !strings.HasSuffix(res.Text, fmt.Sprintf("|v%d", versions)) {
		t.Errorf("after the last Reconfigure: %v, %+v; want version %d", err, res, versions)
	}
	t.Logf("%d requests served during %d reconfigurations", l.served.Load(), versions)
}

// rcLoad is TestReconfigureUnderLoad's callers: each sends nil or its first error to errs.
type rcLoad struct {
	c      *translate.Client
	done   chan struct{} // closed after the last reconfiguration
	errs   chan error
	wg     sync.WaitGroup
	served atomic.Int64
}

// call is caller g: it translates "t<g>-<i>" for i = 0, 1, ..., every tenth text starting
// with "F" (it fails on f<v%3>: served by x<v%4> or stay of the same version), until done
// is closed and it has sent at least 10 requests. Each result must be rcConsistent.
func (l *rcLoad) call(g int) {
	defer l.wg.Done()
	for i := 0; ; i++ {
		select {
		case <-l.done:
			if i >= 10 {
				l.errs <- nil
				return
			}
		default:
		}
		text := fmt.Sprintf("t%d-%d", g, i)
		if i%10 == 0 {
			text = "F" + text
		}
		res, err := l.c.Translate(context.Background(), req(text))
		if err == nil {
			err = rcConsistent(res)
		}
		if err != nil {
			l.errs <- fmt.Errorf("%s: %w", text, err)
			return
		}
		l.served.Add(1)
	}
}

// rcConsistent checks that a Result of TestReconfigureUnderLoad was made under one version.
func rcConsistent(res *translate.Result) error {
	_, ver, ok := strings.Cut(res.Text, "|v")
	if !ok {
		return fmt.Errorf("text %q carries no version", res.Text)
	}
	var v int
	if _, err := fmt.Sscanf(ver, "%d", &v); err != nil {
		return fmt.Errorf("text %q: %v", res.Text, err)
	}
	allowed := map[string]bool{"stay": true, fmt.Sprintf("f%d", v%3): true, fmt.Sprintf("x%d", v%4): true}
	for _, a := range res.Attempts {
		if !allowed[a.Engine] {
			return fmt.Errorf("served under version %d (%s) but tried %s: %v", v, res.Engine, a.Engine, engineNames(res.Attempts))
		}
	}
	if !strings.HasPrefix(res.Text, res.Engine+":") {
		return fmt.Errorf("text %q not made by %s", res.Text, res.Engine)
	}
	return nil
}

// rcBreakerConfig is a configuration with "down" and "up", and the breaker policy given.
func rcBreakerConfig(t testing.TB, vendorDown, vendorUp string, quality int, breaker string) *translate.Config {
	return rcParse(t, `{"cache": {"disabled": true}, "breaker": %s,
	  "engines": [
	    {"name": "down", "type": "rc", "settings": {"vendor": %q, "fail_prefix": "t"}, "profile": {"quality": %d}},
	    {"name": "up", "type": "rc", "settings": {"vendor": %q}}
	  ]}`, breaker, vendorDown, quality, vendorUp)
}

// TestReconfigureKeepsOpenBreaker: an engine that stays keeps its open breaker across a
// reconfiguration that changes its profile; a changed breaker policy starts it afresh.
func TestReconfigureKeepsOpenBreaker(t *testing.T) {
	rcType()
	down, up := &rcVendor{}, &rcVendor{}
	vd, vu := rcVendorFor(t, down), rcVendorFor(t, up)
	const policy = `{"window": 10, "min_calls": 4, "failure_ratio": 0.5, "cooldown": "1m"}`
	c := newClient(t, translate.WithConfig(rcBreakerConfig(t, vd, vu, 90, policy)), translate.WithClock(newClock()))
	for i := range 6 {
		r := req(fmt.Sprintf("t%d", i))
		r.Engine = "down"
		c.Translate(context.Background(), r)
	}
	if got := rcStatus(c)["down"].Breaker; got != translate.BreakerOpen {
		t.Fatalf("down's breaker %v, want open", got)
	}
	if err := c.Reconfigure(rcBreakerConfig(t, vd, vu, 95, policy)); err != nil {
		t.Fatal(err)
	}
	if got := rcStatus(c)["down"].Breaker; got != translate.BreakerOpen {
		t.Errorf("down's breaker %v after a Reconfigure of its quality, want still open", got)
	}
	calls := down.calls.Load()
	r := req("t-after")
	r.Engine = "down"
	if _, err := c.Translate(context.Background(), r); err == nil {
		t.Error("pinned to down, breaker open: served")
	}
	if n := down.calls.Load() - calls; n != 0 {
		t.Errorf("down called %d times through its open breaker", n)
	}
	if err := c.Reconfigure(rcBreakerConfig(t, vd, vu, 95, `{"window": 12, "min_calls": 4, "cooldown": "1m"}`)); err != nil {
		t.Fatal(err)
	}
	if got := rcStatus(c)["down"].Breaker; got != translate.BreakerClosed {
		t.Errorf("down's breaker %v after a new breaker policy, want closed (afresh)", got)
	}
}

// TestReconfigureSeedIncident is the seed's incident: a push of failure_ratio 0.1 is
// rejected with an error naming it, the running 0.5 keeps working (an engine failing one
// call in four keeps its breaker closed), a warning is logged and translate.config.rejected
// counts it.
func TestReconfigureSeedIncident(t *testing.T) {
	rcType()
	flaky, spare := &rcVendor{failEvery: 4}, &rcVendor{}
	vf, vs := rcVendorFor(t, flaky), rcVendorFor(t, spare)
	file := func(ratio string) string {
		return fmt.Sprintf(`{"cache": {"disabled": true}, "retry": {"per_engine": 1},
		  "breaker": {"window": 20, "min_calls": 8, "failure_ratio": %s},
		  "engines": [
		    {"name": "flaky", "type": "rc", "settings": {"vendor": %q}, "profile": {"quality": 100}},
		    {"name": "spare", "type": "rc", "settings": {"vendor": %q}, "profile": {"quality": 1}}
		  ]}`, ratio, vf, vs)
	}
	tel, opts := newTelemetry(t)
	c := newClient(t, append(opts, translate.WithConfig(rcParse(t, "%s", file("0.5"))), translate.WithClock(newClock()), sharp)...)

	// The push, as a file: ParseConfig rejects it.
	if _, err := translate.ParseConfig([]byte(file("0.1"))); err == nil || !strings.Contains(err.Error(), "breaker.failure_ratio: must be within 0.2..0.9") {
		t.Errorf("ParseConfig(failure_ratio 0.1) = %v, want an error naming breaker.failure_ratio", err)
	}
	// The push, as a Config value: Reconfigure rejects it, warns and counts it.
	bad := rcParse(t, "%s", file("0.5"))
	bad.Breaker.FailureRatio = 0.1
	err := c.Reconfigure(bad)
	var e *translate.Error
	if !errors.As(err, &e) || e.Kind != translate.KindInvalidInput || !strings.Contains(e.Message, "breaker.failure_ratio") {
		t.Fatalf("Reconfigure(failure_ratio 0.1) = %v, want KindInvalidInput naming breaker.failure_ratio", err)
	}
	if !strings.Contains(tel.logs.String(), `"level":"WARN"`) || !strings.Contains(tel.logs.String(), "failure_ratio") {
		t.Errorf("no warning naming failure_ratio in the log:\n%s", tel.logs.String())
	}
	if got := values(tel.metrics(t))["translate.config.rejected{}"]; got != 1 {
		t.Errorf("translate.config.rejected = %v, want 1", got)
	}

	// The old 0.5 keeps working: one failure in four never opens flaky's breaker.
	for i := range 40 {
		if _, err := c.Translate(context.Background(), req(fmt.Sprintf("text %d", i))); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if st := rcStatus(c)["flaky"]; st.Breaker != translate.BreakerClosed || flaky.calls.Load() < 30 {
		t.Errorf("flaky: breaker %v after %d calls failing one in four; want closed under the kept 0.5", st.Breaker, flaky.calls.Load())
	}
}

// TestReconfigureRemovedEngineFinishesInFlight: a removed engine gets no new requests, but
// a call in flight on it finishes and its request succeeds; a new engine starts fresh.
func TestReconfigureRemovedEngineFinishesInFlight(t *testing.T) {
	rcType()
	old := &rcVendor{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	fresh := &rcVendor{}
	vo, vf := rcVendorFor(t, old), rcVendorFor(t, fresh)
	c := newClient(t, translate.WithConfig(rcParse(t, `{"cache": {"disabled": true}, "engines": [
	    {"name": "old", "type": "rc", "settings": {"vendor": %q, "suffix": "old"}, "profile": {"quota": 1000}}]}`, vo)),
		translate.WithClock(newClock()))
	type answer struct {
		res *translate.Result
		err error
	}
	inFlight := make(chan answer, 1)
	go func() {
		res, err := c.Translate(context.Background(), req("in flight"))
		inFlight <- answer{res, err}
	}()
	<-old.entered
	if err := c.Reconfigure(rcParse(t, `{"cache": {"disabled": true}, "engines": [
	    {"name": "new", "type": "rc", "settings": {"vendor": %q, "suffix": "new"}, "profile": {"quota": 1000}}]}`, vf)); err != nil {
		t.Fatal(err)
	}
	want := map[string]translate.EngineStatus{"new": {Name: "new", Breaker: translate.BreakerClosed, Pool: translate.PoolNormal,
		Health: 1, QuotaLeft: 1000}}
	if d := cmp.Diff(want, rcStatus(c), cmpIgnore("Score", "LatencyEWMA")); d != "" {
		t.Errorf("engines after the swap (-want +got):\n%s", d)
	}
	for i := range 5 {
		res, err := c.Translate(context.Background(), req(fmt.Sprintf("after %d", i)))
		if err != nil || res.Engine != "new" {
			t.Fatalf("after the swap: %v, %+v; want new", err, res)
		}
	}
	close(old.gate)
	a := <-inFlight
	if a.err != nil || a.res.Text != "old:in flight|old" {
		t.Errorf("the call in flight on the removed engine: %v, %+v; want its answer", a.err, a.res)
	}
	if n := old.calls.Load(); n != 1 {
		t.Errorf("old called %d times, want 1 (the call in flight)", n)
	}
}

// TestReconfigureKeepsSpend: the budget spent and an engine's quota used before a
// reconfiguration still count after it.
func TestReconfigureKeepsSpend(t *testing.T) {
	rcType()
	vendor := rcVendorFor(t, &rcVendor{})
	file := func(quality int) *translate.Config {
		// 100 characters cost 1 credit; the day has 10, the engine 1000 characters.
		return rcParse(t, `{"cache": {"disabled": true}, "budget": {"daily": 10},
		  "engines": [{"name": "paid", "type": "rc", "settings": {"vendor": %q},
		    "profile": {"class": "standard", "cost_per_million": 10000, "quota": 1000, "quality": %d}}]}`, vendor, quality)
	}
	c := newClient(t, translate.WithConfig(file(80)), translate.WithClock(newClock()))
	text := func(i int) string { return fmt.Sprintf("%03d", i) + strings.Repeat("x", 97) }
	for i := range 4 {
		if _, err := c.Translate(context.Background(), req(text(i))); err != nil {
			t.Fatal(err)
		}
	}
	before, left := c.Budget().Spent, rcStatus(c)["paid"].QuotaLeft
	if before != 4 || left != 600 {
		t.Fatalf("before: spent %v, quota left %d; want 4 and 600", before, left)
	}
	if err := c.Reconfigure(file(85)); err != nil {
		t.Fatal(err)
	}
	if after, left := c.Budget().Spent, rcStatus(c)["paid"].QuotaLeft; after != 4 || left != 600 {
		t.Errorf("after Reconfigure: spent %v, quota left %d; want 4 and 600", after, left)
	}
	// The quota counts on: 6 more texts of 100 fit, the 7th does not.
	for i := 4; i < 10; i++ {
		if _, err := c.Translate(context.Background(), req(text(i))); err != nil {
			t.Fatalf("text %d: %v", i, err)
		}
	}
	if _, err := c.Translate(context.Background(), req(text(10))); err == nil {
		t.Error("the 11th text of 100 characters was served: quota or budget forgotten across Reconfigure")
	}
}

// TestReconfigureRotatedKey: an engine set aside after a 401 comes back when Reconfigure
// builds it with a new key (read from the environment again).
func TestReconfigureRotatedKey(t *testing.T) {
	rcType()
	v := &rcVendor{}
	valid := "key-2"
	v.validKey.Store(&valid)
	vendor := rcVendorFor(t, v)
	t.Setenv("RC_ROTATED_KEY", "key-1")
	file := func() *translate.Config {
		return rcParse(t, `{"cache": {"disabled": true}, "engines": [
		    {"name": "keyed", "type": "rc", "settings": {"vendor": %q, "key": "env:RC_ROTATED_KEY"}}]}`, vendor)
	}
	c := newClient(t, translate.WithConfig(file()), translate.WithClock(newClock()))
	if _, err := c.Translate(context.Background(), req("a")); translate.KindOf(err) != translate.KindUnauthorized {
		t.Fatalf("with the old key: %v, want KindUnauthorized", err)
	}
	if !rcStatus(c)["keyed"].SetAside {
		t.Fatal("not set aside after a 401")
	}
	t.Setenv("RC_ROTATED_KEY", valid)
	if err := c.Reconfigure(file()); err != nil {
		t.Fatal(err)
	}
	if rcStatus(c)["keyed"].SetAside {
		t.Error("still set aside after Reconfigure with a new key")
	}
	if res, err := c.Translate(context.Background(), req("b")); err != nil || res.Engine != "keyed" {
		t.Errorf("after the rotation: %v, %+v; want keyed", err, res)
	}
}

// TestReconfigureClosedAndNil: Reconfigure(nil) is KindInvalidInput; on a closed Client,
// Reconfigure is KindClosed.
func TestReconfigureClosedAndNil(t *testing.T) {
	rcType()
	vendor := rcVendorFor(t, &rcVendor{})
	cfg := rcParse(t, `{"engines": [{"name": "e", "type": "rc", "settings": {"vendor": %q}}]}`, vendor)
	c, err := translate.New(translate.WithConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	var e *translate.Error
	if err := c.Reconfigure(nil); !errors.As(err, &e) || e.Kind != translate.KindInvalidInput {
		t.Errorf("Reconfigure(nil) = %v, want a *Error of KindInvalidInput", err)
	}
	c.Close()
	if err := c.Reconfigure(cfg); !errors.As(err, &e) || e.Kind != translate.KindClosed {
		t.Errorf("Reconfigure on a closed Client = %v, want a *Error of KindClosed", err)
	}
}

// cmpIgnore ignores the named fields of EngineStatus.
func cmpIgnore(fields ...string) cmp.Option {
	return cmpopts.IgnoreFields(translate.EngineStatus{}, fields...)
}

// TestReconfigureCacheSection: the cache is New's; a config whose cache section asks for
// a cache Reconfigure cannot give (turned off or on, another size) is applied but for that
// section, and a warning names the fields that were not; a new ttl applies (see
// TestReconfigureCacheTTL) and warns of nothing.
func TestReconfigureCacheSection(t *testing.T) {
	rcType()
	vendor := rcVendorFor(t, &rcVendor{})
	file := func(cache string) *translate.Config {
		return rcParse(t, `{"deadline": "3s", "cache": {%s}, "engines": [{"name": "e", "type": "rc", "settings": {"vendor": %q}}]}`, cache, vendor)
	}
	for _, tc := range []struct {
		name, running, next string
		want                string // the fields named; "" for no warning
	}{
		{"same", `"ttl": "1h"`, `"ttl": "1h"`, ""},
		{"another size", `"ttl": "1h", "entries": 10`, `"ttl": "1h", "entries": 20`, "cache.entries"},
		{"size back to the default", `"entries": 10`, ``, "cache.entries"},
		{"defaults, spelt out", ``, `"ttl": "24h", "entries": 10000`, ""},
		{"new ttl", `"ttl": "1h"`, `"ttl": "2h"`, ""},
		{"ttl back to the default", `"ttl": "1h"`, ``, ""},
		{"turned off", `"ttl": "1h"`, `"disabled": true`, "cache.disabled"},
		{"turned on", `"disabled": true`, `"ttl": "1h"`, "cache.disabled"},
		{"still off", `"disabled": true`, `"disabled": true, "ttl": "5h"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log telemetryLog
			c, err := translate.New(translate.WithConfig(file(tc.running)), translate.WithLogger(newWarnLogger(&log)))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			next := file(tc.next)
			next.Deadline = 4 * time.Second
			if err := c.Reconfigure(next); err != nil {
				t.Fatalf("Reconfigure: %v", err)
			}
			warned := strings.Contains(log.String(), "cache section is not applied")
			if warned != (tc.want != "") || !strings.Contains(log.String(), tc.want) {
				t.Errorf("warnings %q, want one naming %q", log.String(), tc.want)
			}
			if _, err := c.Translate(context.Background(), req("hello")); err != nil {
				t.Errorf("after Reconfigure: %v", err)
			}
		})
	}
}

// TestReconfigureCacheTTL: a new ttl applies at once, to entries cached before it too.
func TestReconfigureCacheTTL(t *testing.T) {
	rcType()
	v := &rcVendor{}
	vendor := rcVendorFor(t, v)
	file := func(ttl string) *translate.Config {
		return rcParse(t, `{"cache": {"ttl": %q}, "engines": [{"name": "e", "type": "rc", "settings": {"vendor": %q}}]}`, ttl, vendor)
	}
	clk := newClock()
	c := newClient(t, translate.WithConfig(file("1h")), translate.WithClock(clk))
	ask := func() *translate.Result {
		t.Helper()
		res, err := c.Translate(context.Background(), req("hello"))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	ask()
	clk.Advance(30 * time.Minute)
	if res := ask(); !res.FromCache {
		t.Fatalf("30 minutes into a 1h ttl: not from the cache (%d calls)", v.calls.Load())
	}
	if err := c.Reconfigure(file("10m")); err != nil {
		t.Fatal(err)
	}
	if res := ask(); res.FromCache || v.calls.Load() != 2 {
		t.Errorf("30 minutes old under a 10m ttl: FromCache %v after %d calls, want a fresh call (2)", res.FromCache, v.calls.Load())
	}
}

// TestReconfigureAppliesEachSection: each part of a new config takes effect at the next
// request, seen through the public API: an engine's region, quality, price, quota and
// rate limit, the routing weights, the retry policy and the breaker thresholds. Each case
// checks the behaviour under the first config, reconfigures once, and checks it again.
func TestReconfigureAppliesEachSection(t *testing.T) {
	rcType()
	vendor := rcVendorFor(t, &rcVendor{})
	for _, tc := range sectionCases {
		t.Run(tc.name, func(t *testing.T) {
			before := sectionFile(t, vendor, tc.profile[0], tc.sections[0])
			after := sectionFile(t, vendor, tc.profile[1], tc.sections[1])
			clk := newClock()
			c := newClient(t, translate.WithConfig(before), translate.WithClock(clk))
			var got [2]string
			got[0] = tc.check(t, c, clk)
			if err := c.Reconfigure(after); err != nil {
				t.Fatal(err)
			}
			got[1] = tc.check(t, c, clk)
			if tc.want == [2]string{} {
				if got[0] == got[1] {
					t.Errorf("%q before and after Reconfigure, want a change", got[0])
				}
				return
			}
			if got != tc.want {
				t.Errorf("before and after Reconfigure: %q, want %q", got, tc.want)
			}
		})
	}
}

// sectionFile is a config with engines a and b; a's profile fields after its quality (90
// unless they say otherwise), and the top-level sections, are given as JSON fragments.
func sectionFile(t *testing.T, vendor, aProfile, sections string) *translate.Config {
	t.Helper()
	if sections == "" {
		sections = `"routing": {"temperature": 0.5}`
	}
	if !strings.Contains(aProfile, "quality") {
		aProfile = `"quality": 90` + aProfile
	}
	return rcParse(t, `{"cache": {"disabled": true}, %s, "engines": [
	    {"name": "a", "type": "rc", "settings": {"vendor": %q, "fail_prefix": "FAIL"}, "profile": {%s}},
	    {"name": "b", "type": "rc", "settings": {"vendor": %q}, "profile": {"quality": 40}}]}`,
		sections, vendor, aProfile, vendor)
}

// sectionCase is a part of the config Reconfigure changes: a's profile fields and the
// top-level sections before and after (see sectionFile), and what the Client shows of it.
type sectionCase struct {
	name     string
	profile  [2]string
	sections [2]string
	check    func(t *testing.T, c *translate.Client, clk *clock) string
	want     [2]string // before, after; zero: any two different values
}

var sectionCases = []sectionCase{
	{"region", [2]string{`, "region": "us"`, `, "region": "eu"`}, [2]string{}, servedInEU, [2]string{"no_engine", "a"}},
	{"quality", [2]string{``, `"quality": 10`}, [2]string{}, servedHello, [2]string{"a", "b"}},
	{"price", [2]string{`, "class": "standard", "cost_per_million": 1000000`, `, "class": "standard", "cost_per_million": 3000000`},
		[2]string{}, costOnA, [2]string{"5", "15"}},
	{"quota", [2]string{`, "quota": 100`, `, "quota": 1000`}, [2]string{}, quotaLeftOnA, [2]string{"100", "1000"}},
	{"rate limit", [2]string{`, "rate_limit": 1, "burst": 1`, `, "rate_limit": 100, "burst": 10`}, [2]string{},
		servedInABurst, [2]string{"a,b,b", "a,a,a"}},
	{"weights", [2]string{}, [2]string{
		`"routing": {"temperature": 0.5, "weights": {"quality": 0.5, "availability": 0.2, "speed": 0.15, "cost": 0.15}}`,
		`"routing": {"temperature": 0.5, "weights": {"quality": 0.2, "availability": 0.5, "speed": 0.15, "cost": 0.15}}`},
		scoreOfA, [2]string{}}, // the score moves (its value is scoring's business)
	{"retry", [2]string{}, [2]string{
		`"routing": {"temperature": 0.5}, "retry": {"max_attempts": 3}`,
		`"routing": {"temperature": 0.5}, "retry": {"max_attempts": 1}`},
		attemptsOfAFailure, [2]string{"a,b", "a failed"}},
	{"breaker", [2]string{}, [2]string{
		`"retry": {"per_engine": 1}, "breaker": {"window": 20, "min_calls": 20, "cooldown": "1m"}`,
		`"retry": {"per_engine": 1}, "breaker": {"window": 20, "min_calls": 4, "cooldown": "1m"}`},
		breakerOfAAfterFailures, [2]string{"closed", "open"}},
}

// servedInEU is the engine that serves a request allowed only in eu, or the error's Kind.
func servedInEU(_ *testing.T, c *translate.Client, _ *clock) string {
	inEU := req("hello")
	inEU.Regions = []string{"eu"}
	res, err := c.Translate(context.Background(), inEU)
	if err != nil {
		return translate.KindOf(err).String()
	}
	return res.Engine
}

// servedHello is the engine that serves "hello".
func servedHello(t *testing.T, c *translate.Client, _ *clock) string {
	return servedBy(t, c, req("hello"))
}

// costOnA is the cost of "hello" pinned to a.
func costOnA(t *testing.T, c *translate.Client, _ *clock) string {
	r := req("hello")
	r.Engine = "a"
	res, err := c.Translate(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(res.Cost)
}

// quotaLeftOnA is a's quota left.
func quotaLeftOnA(_ *testing.T, c *translate.Client, _ *clock) string {
	return fmt.Sprint(rcStatus(c)["a"].QuotaLeft)
}

// servedInABurst lists the engines that serve 3 requests sent at once, a's bucket full.
func servedInABurst(t *testing.T, c *translate.Client, clk *clock) string {
	clk.Advance(time.Minute) // a full bucket
	var out []string
	for i := range 3 {
		out = append(out, servedBy(t, c, req(fmt.Sprintf("burst %d", i))))
	}
	return strings.Join(out, ",")
}

// scoreOfA is a's routing score, rounded.
func scoreOfA(_ *testing.T, c *translate.Client, _ *clock) string {
	return fmt.Sprintf("%.0f", rcStatus(c)["a"].Score)
}

// attemptsOfAFailure lists the engines tried for a text a fails, with " failed" when no
// engine served it.
func attemptsOfAFailure(_ *testing.T, c *translate.Client, _ *clock) string {
	res, err := c.Translate(context.Background(), req("FAIL now"))
	var e *translate.Error
	switch {
	case err == nil:
		return strings.Join(engineNames(res.Attempts), ",")
	case errors.As(err, &e):
		return strings.Join(engineNames(e.Attempts), ",") + " failed"
	}
	return err.Error()
}

// breakerOfAAfterFailures is a's breaker state after 6 failed requests pinned to it.
func breakerOfAAfterFailures(_ *testing.T, c *translate.Client, _ *clock) string {
	for i := range 6 {
		r := req(fmt.Sprintf("FAIL %d", i))
		r.Engine = "a"
		c.Translate(context.Background(), r)
	}
	return rcStatus(c)["a"].Breaker.String()
}

// servedBy is the engine that serves r; an error ends the test.
func servedBy(t *testing.T, c *translate.Client, r translate.Request) string {
	t.Helper()
	res, err := c.Translate(context.Background(), r)
	if err != nil {
		t.Fatalf("%+v: %v", r, err)
	}
	return res.Engine
}

// TestReconfigureKeepsHealth: an engine that stays keeps its health (the calls it failed
// before still count) and its latency estimate; an engine new by name starts healthy.
func TestReconfigureKeepsHealth(t *testing.T) {
	rcType()
	vendor := rcVendorFor(t, &rcVendor{})
	file := func(quality int, extra string) *translate.Config {
		return rcParse(t, `{"cache": {"disabled": true}, "retry": {"per_engine": 1, "max_attempts": 1},
		  "breaker": {"window": 40, "min_calls": 40}, "engines": [
		    {"name": "a", "type": "rc", "settings": {"vendor": %q, "fail_prefix": "F"}, "profile": {"quality": %d}}%s]}`,
			vendor, quality, extra)
	}
	c := newClient(t, translate.WithConfig(file(90, "")), translate.WithClock(newClock()))
	for i := range 10 {
		text := fmt.Sprintf("ok %d", i)
		if i%2 == 0 {
			text = "F" + text // fails
		}
		c.Translate(context.Background(), req(text))
	}
	before := rcStatus(c)["a"]
	if before.Health > 0.9 {
		t.Fatalf("a's health %v after failing 5 calls of 10, want it lowered", before.Health)
	}
	extra := fmt.Sprintf(`, {"name": "n", "type": "rc", "settings": {"vendor": %q}}`, vendor)
	if err := c.Reconfigure(file(95, extra)); err != nil {
		t.Fatal(err)
	}
	after := rcStatus(c)
	if after["a"].Health != before.Health || after["a"].LatencyEWMA != before.LatencyEWMA {
		t.Errorf("a after Reconfigure: health %v, latency %v; want the %v and %v it had", after["a"].Health,
			after["a"].LatencyEWMA, before.Health, before.LatencyEWMA)
	}
	if after["n"].Health != 1 {
		t.Errorf("new engine n: health %v, want 1", after["n"].Health)
	}
}
