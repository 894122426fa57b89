package redisstore

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/redisstore/redistest"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// pausable is a fixture on a server of its own that the test pauses with SIGSTOP.
type pausable struct {
	*fixture
	srv    *redistest.Server
	logs   *syncBuffer
	reader *sdkmetric.ManualReader
}

// Its store waits 1s for Redis: a call that takes longer on a busy machine would look like
// an outage. The tests run in parallel, each on its own server, so the timeouts they wait
// out overlap.
func newPausable(t *testing.T, opts ...Option) *pausable {
	t.Parallel()
	srv := ownServer(t)
	p := &pausable{srv: srv, logs: new(syncBuffer), reader: sdkmetric.NewManualReader()}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(p.reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	f := &fixture{t: t, rdb: newClient(t, srv.Addr), clk: newClock(t0), ctx: context.Background()}
	opts = append([]Option{WithPrefix("p:"), withClock(f.clk), WithTimeout(time.Second),
		WithLogger(slog.New(slog.NewTextHandler(p.logs, nil))), WithMeterProvider(mp)}, opts...)
	st, err := New(f.rdb, opts...)
	if err != nil {
		t.Fatal(err)
	}
	f.st = st
	p.fixture = f
	return p
}

func (p *pausable) pause() {
	p.t.Helper()
	if err := p.srv.Pause(); err != nil {
		p.t.Fatal(err)
	}
}

func (p *pausable) resume() {
	p.t.Helper()
	if err := p.srv.Resume(); err != nil {
		p.t.Fatal(err)
	}
}

func (p *pausable) counter(name string) int64 {
	p.t.Helper()
	var rm metricdata.ResourceMetrics
	if err := p.reader.Collect(context.Background(), &rm); err != nil {
		p.t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				var n int64
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					n += dp.Value
				}
				return n
			}
		}
	}
	return 0
}

// probeNow moves the store's clock past the probe period: the next call tries Redis.
func (p *pausable) probeNow() { p.clk.add(p.st.probeEvery()) }

func TestUnreachableServesLocalShareAndPushesOnReturn(t *testing.T) {
	p := newPausable(t, WithReplicas(4))
	a := adm("deepl", 1, 10)
	a.Quota, a.Chars = 1000, 100
	done := p.admit(a)
	p.settle(translate.Settlement{Lease: done.Lease, Sent: true, Credits: 1, Chars: 100})
	inFlight := p.admit(a) // Redis: spent 1, reserved 1; 800 chars left

	p.pause()
	var local []string
	for i := range 3 {
		got := p.admit(a)
		if i < 2 && got.Lease == "" {
			t.Fatalf("local admission %d = %+v, want a lease from the share (8/4 = 2 credits)", i, got)
		}
		if i == 2 && got.Refused != translate.KindBudgetExceeded {
			t.Fatalf("third local admission = %+v, want KindBudgetExceeded: the share is spent", got)
		}
		if got.Lease != "" {
			local = append(local, got.Lease)
		}
	}
	if n := p.counter("translate.store.fallback"); n != 3 {
		t.Errorf("translate.store.fallback = %d, want 3", n)
	}
	if n := p.counter("translate.store.unreachable"); n < 1 {
		t.Errorf("translate.store.unreachable = %d, want at least 1", n)
	}
	if logs := p.logs.String(); strings.Count(logs, "level=WARN") != 1 || !strings.Contains(logs, "unreachable") {
		t.Errorf("want one warning, logs:\n%s", logs)
	}
	b, err := p.st.Budget(p.ctx, t0, 10)
	if err != nil || math.Abs(b.Spent+b.Reserved-4) > 1e-9 {
		t.Errorf("Budget while unreachable = %+v, %v; want spent+reserved 4 (2 known + 2 local)", b, err)
	}
	// Settles while unreachable: a Redis lease (queued) and a local lease (charged locally).
	p.settle(translate.Settlement{Lease: inFlight.Lease, Sent: true, Credits: 1, Chars: 100})
	p.settle(translate.Settlement{Lease: local[0], Sent: true, Credits: 0.5, Chars: 50})

	p.resume()
	p.probeNow()
	free := adm("deepl", 0, 10)
	if got := p.admit(free); got.Lease == "" {
		t.Fatalf("admission after the return = %+v", got)
	}
	if p.st.loc.isDegraded() {
		t.Fatal("still degraded after Redis answered")
	}
	// Pushed: 1 + 1 + 0.5 spent; the local lease still in flight is now a Redis lease.
	want := translate.BudgetStatus{Daily: 10, Spent: 2.5, Reserved: 1}
	if diff := cmp.Diff(want, p.budget(t0), approx); diff != "" {
		t.Errorf("Budget after the push (-want +got):\n%s", diff)
	}
	p.settle(translate.Settlement{Lease: local[1], Sent: true, Credits: 1, Chars: 100})
	want = translate.BudgetStatus{Daily: 10, Spent: 3.5}
	if diff := cmp.Diff(want, p.budget(t0), approx); diff != "" {
		t.Errorf("Budget after the adopted lease settled (-want +got):\n%s", diff)
	}
	a.Chars = 0
	if got := p.admit(a); got.QuotaLeft != 1000-350 {
		t.Errorf("QuotaLeft = %d, want 650", got.QuotaLeft)
	}
}

// Before Redis ever answered a Client knows no figures: it can decide nothing for a limited
// budget or quota, and says so with an error.
func TestUnreachableWithoutFigures(t *testing.T) {
	p := newPausable(t)
	p.pause()
	defer p.resume()
	if _, err := p.st.Admit(p.ctx, adm("deepl", 1, 10)); !errors.Is(err, errNoFigures) {
		t.Errorf("limited budget: %v, want errNoFigures", err)
	}
	got, err := p.st.Admit(p.ctx, adm("deepl", 1, 0))
	if err != nil || got.Lease == "" {
		t.Errorf("unlimited budget: %+v, %v; want a local lease", got, err)
	}
}

func TestUnreachableKeepsRequestIDsAndHolds(t *testing.T) {
	p := newPausable(t)
	p.admit(adm("deepl", 0, 10)) // figures known
	p.pause()
	a := adm("deepl", 1, 10)
	a.RequestID = "r1"
	first := p.admit(a)
	if first.Lease == "" {
		t.Fatalf("first = %+v", first)
	}
	if got := p.admit(a); got.Prior == nil {
		t.Errorf("second admission of r1 while unreachable = %+v, want Prior", got)
	}
	until := t0.Add(time.Hour)
	if err := p.st.Hold(p.ctx, "google", translate.KindUnauthorized, until); err != nil {
		t.Fatal(err)
	}
	if got := p.admit(adm("google", 1, 10)); got.Refused != translate.KindUnauthorized {
		t.Errorf("held engine while unreachable = %+v", got)
	}
	p.settle(translate.Settlement{Lease: first.Lease, Sent: true, Credits: 1,
		Answer: &translate.StoredAnswer{Text: "hola", Engine: "deepl"}})
	p.resume()
	p.probeNow()
	p.admit(adm("microsoft", 0, 10)) // pushes
	// Another replica sees the hold and the answer.
	other, err := New(p.rdb, WithPrefix("p:"), withClock(p.clk))
	if err != nil {
		t.Fatal(err)
	}
	got, err := other.Admit(p.ctx, adm("google", 1, 10))
	if err != nil || got.Refused != translate.KindUnauthorized {
		t.Errorf("hold pushed: %+v, %v", got, err)
	}
	a.Engine = "microsoft"
	got, err = other.Admit(p.ctx, a)
	if err != nil || got.Prior == nil || got.Prior.Text != "hola" {
		t.Errorf("answer pushed: %+v, %v", got, err)
	}
}

// A Client whose Admit timed out because Redis was paused leaves no reservation behind,
// whether the script ran late or not.
func TestTimedOutAdmitLeavesNoReservation(t *testing.T) {
	p := newPausable(t)
	p.admit(adm("deepl", 0, 10))
	p.pause()
	got := p.admit(adm("deepl", 2, 10)) // times out, then local
	p.settle(translate.Settlement{Lease: got.Lease, Sent: false})
	p.resume()
	p.probeNow()
	p.admit(adm("deepl", 0, 10))
	if diff := cmp.Diff(translate.BudgetStatus{Daily: 10}, p.budget(t0), approx); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A call that finds Redis gone waits WithTimeout, not its caller's deadline; while
// degraded, calls do not wait on Redis at all: they send nothing but one probe per period.
func TestDegradedCallsDoNotWait(t *testing.T) {
	p := newPausable(t, WithTimeout(time.Second))
	rt := &roundTrips{skipSetup: true} // a new connection's HELLO is no wait of the caller's
	p.rdb.AddHook(rt)
	p.admit(adm("deepl", 0, 10))
	p.pause()
	defer p.resume()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p.ctx = ctx // a caller's deadline far beyond the store's timeout
	start := time.Now()
	p.admit(adm("deepl", 0, 10)) // waits and finds Redis gone
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the first Admit on a paused Redis took %v with WithTimeout(1s): it waited on its caller", d)
	}
	rt.take()
	for range 20 {
		p.admit(adm("deepl", 0.1, 10))
	}
	if n := rt.take(); n != 0 {
		t.Errorf("20 degraded admissions sent %d commands to Redis, want 0 before the probe is due", n)
	}
	p.probeNow()
	for range 5 {
		p.admit(adm("deepl", 0.1, 10))
	}
	if n := rt.take(); n != 1 {
		t.Errorf("admissions once the probe is due sent %d commands, want 1 (one probe)", n)
	}
}

// A Client that makes no more calls after Redis returns (its engines are out, or its
// traffic stopped) still finds Redis again through Budget, and pushes its local spend then:
// until it does, the other replicas would count its share as still free.
func TestBudgetProbesAndPushesAfterReturn(t *testing.T) {
	p := newPausable(t, WithReplicas(4))
	p.admit(adm("deepl", 0, 10)) // figures known
	p.pause()
	got := p.admit(adm("deepl", 1, 10)) // times out, then local
	if got.Lease == "" {
		t.Fatalf("local admission = %+v", got)
	}
	p.settle(translate.Settlement{Lease: got.Lease, Sent: true, Credits: 1})
	p.resume()
	if b := p.budget(t0); !p.st.Degraded() || math.Abs(b.Spent-1) > 1e-9 {
		t.Errorf("Budget before the probe is due = %+v, degraded %v; want the local figure 1, still degraded", b, p.st.Degraded())
	}
	p.probeNow()
	want := translate.BudgetStatus{Daily: 10, Spent: 1}
	if diff := cmp.Diff(want, p.budget(t0), approx); diff != "" {
		t.Errorf("Budget once the probe is due (-want +got):\n%s", diff)
	}
	if p.st.Degraded() {
		t.Error("still degraded after Budget found Redis again")
	}
	other, err := New(p.rdb, WithPrefix("p:"), withClock(p.clk))
	if err != nil {
		t.Fatal(err)
	}
	b, err := other.Budget(p.ctx, t0, 10)
	if err != nil || math.Abs(b.Spent-1) > 1e-9 {
		t.Errorf("another replica's Budget = %+v, %v; want the pushed spend 1", b, err)
	}
}

// After an outage the other replicas may have spent their local shares and not pushed them
// yet: for a while a Client admits only up to the limits less those shares, so it does not
// spend them a second time (the overrun the replicas scenario caught: one replica back
// early spent what a replica still degraded had already spent).
func TestHoldsBackOtherSharesAfterOutage(t *testing.T) {
	p := newPausable(t, WithReplicas(2))
	q := func(credits float64, chars int64) translate.Admission {
		a := adm("deepl", credits, 10)
		a.Quota, a.Chars = 100, chars
		return a
	}
	p.admit(q(0, 0)) // figures known: nothing spent
	p.pause()
	local := p.admit(q(1, 10)) // a share of 5 credits and 50 characters
	if local.Lease == "" {
		t.Fatalf("local admission = %+v", local)
	}
	p.settle(translate.Settlement{Lease: local.Lease, Sent: true, Credits: 1, Chars: 10})
	p.resume()
	p.probeNow()
	// Pushed 1 and 10; the other replica's share (5, 50) is held back: 4 credits and 40
	// characters are left.
	if got := p.admit(q(4, 40)); got.Lease == "" {
		t.Fatalf("admission within the limits less the holdback = %+v", got)
	}
	if got := p.admit(q(0.5, 0)); got.Refused != translate.KindBudgetExceeded {
		t.Errorf("budget admission into the holdback = %+v, want KindBudgetExceeded", got)
	}
	// The Client keeps a quota-refused engine out until Until: for a holdback, only until
	// it ends, not the quota period's end.
	heldUntil := p.clk.now().Add(p.st.holdFor()) // from the recovery
	if got := p.admit(q(0, 1)); got.Refused != translate.KindQuotaExhausted || !got.Until.Equal(heldUntil) {
		t.Errorf("quota admission into the holdback = %+v, want KindQuotaExhausted until the holdback ends (%v)", got, heldUntil)
	}
	// A refusal the shared quota itself makes (50 used + 60 > 100) keeps the period's end.
	periodEnd := time.Date(2030, 3, 5, 0, 0, 0, 0, time.UTC)
	if got := p.admit(q(0, 60)); got.Refused != translate.KindQuotaExhausted || !got.Until.Equal(periodEnd) {
		t.Errorf("admission past the shared quota during the holdback = %+v, want KindQuotaExhausted until the period ends (%v)", got, periodEnd)
	}
	p.clk.add(p.st.holdFor())
	if got := p.admit(q(0.5, 1)); got.Lease == "" {
		t.Errorf("admission once the holdback ended = %+v", got)
	}
}

// A free engine's admission (no daily budget) must not cut the budget share: the share is
// cut from the budget's limit by the first admission that has one (the replicas scenario
// caught replicas whose first local admission was free serving an unlimited share).
func TestFreeAdmissionDoesNotCutAnUnlimitedShare(t *testing.T) {
	p := newPausable(t, WithReplicas(2))
	p.admit(adm("deepl", 0, 10)) // figures known: nothing spent
	p.pause()
	defer p.resume()
	if got := p.admit(adm("free", 0, 0)); got.Lease == "" {
		t.Fatalf("free local admission = %+v", got)
	}
	if got := p.admit(adm("deepl", 3, 10)); got.Lease == "" {
		t.Fatalf("paid local admission within the share of 5 = %+v", got)
	}
	if got := p.admit(adm("deepl", 3, 10)); got.Refused != translate.KindBudgetExceeded {
		t.Errorf("paid local admission past the share = %+v, want KindBudgetExceeded", got)
	}
}

// A local share that runs out is no reason to keep the engine out until the quota period
// ends (the Client would, given an Until): the shared quota may have plenty left.
func TestLocalQuotaRefusalHasNoUntil(t *testing.T) {
	p := newPausable(t, WithReplicas(2))
	a := adm("deepl", 0, 0)
	a.Quota, a.Chars = 100, 0
	p.admit(a) // figures known: nothing spent
	p.pause()
	defer p.resume()
	a.Chars = 60 // more than the share of 50
	want := translate.Admitted{Refused: translate.KindQuotaExhausted, QuotaLeft: 50}
	if diff := cmp.Diff(want, p.admit(a)); diff != "" {
		t.Errorf("local quota refusal (-want +got):\n%s", diff)
	}
}

// An outage that starts while the holdback of the last one lasts: the other replicas may
// still not have pushed what they spent in the first, so the new local share is cut from
// what remains less the holdback, and the holdback after the second outage adds to the
// first (the scenario caught replicas flapping on a busy machine overrunning the budget).
func TestOutageDuringHoldback(t *testing.T) {
	p := newPausable(t, WithReplicas(2))
	p.admit(adm("deepl", 0, 10)) // figures known: nothing spent
	outage := func(credits float64) {
		t.Helper()
		p.pause()
		p.probeNow() // a degraded store tries Redis again first
		got := p.admit(adm("deepl", credits, 10))
		if got.Lease == "" {
			t.Fatalf("local admission of %v = %+v", credits, got)
		}
		p.settle(translate.Settlement{Lease: got.Lease, Sent: true, Credits: credits})
		p.resume()
		p.probeNow()
		p.admit(adm("deepl", 0, 10)) // pushes, and learns the figures
		if p.st.Degraded() {
			t.Fatal("still degraded after Redis answered")
		}
	}
	outage(1) // share 5; spent 1; the other replica's 5 held back
	p.pause()
	p.probeNow()
	// Share: (10 - 1 spent - 5 held back) / 2 = 2.
	if got := p.admit(adm("deepl", 2.5, 10)); got.Refused != translate.KindBudgetExceeded {
		t.Errorf("local admission past the share cut from the holdback = %+v, want KindBudgetExceeded", got)
	}
	got := p.admit(adm("deepl", 2, 10))
	if got.Lease == "" {
		t.Fatalf("local admission within the share = %+v", got)
	}
	p.settle(translate.Settlement{Lease: got.Lease, Sent: true, Credits: 2})
	p.resume()
	p.probeNow()
	p.admit(adm("deepl", 0, 10)) // pushes: spent 3
	// Held back: the first outage's 5 (still within its time) and the second's 2: 3 + 7 = 10.
	if got := p.admit(adm("deepl", 0.5, 10)); got.Refused != translate.KindBudgetExceeded {
		t.Errorf("admission into both holdbacks = %+v, want KindBudgetExceeded", got)
	}
	p.clk.add(p.st.holdFor())
	if got := p.admit(adm("deepl", 0.5, 10)); got.Lease == "" {
		t.Errorf("admission once the holdback ended = %+v", got)
	}
}

// Flush pushes what a Store decided alone, so a replica that stops gracefully leaves its
// local spend to the others; while Redis does not answer it says so.
func TestFlushPushesLocalSpend(t *testing.T) {
	p := newPausable(t, WithReplicas(2))
	rt := &roundTrips{skipSetup: true}
	p.rdb.AddHook(rt)
	if err := p.st.Flush(p.ctx); err != nil {
		t.Fatalf("Flush with nothing to push: %v", err)
	}
	if n := rt.take(); n != 0 {
		t.Errorf("Flush with nothing to push sent %d commands", n)
	}
	p.admit(adm("deepl", 0, 10)) // figures known
	p.pause()
	got := p.admit(adm("deepl", 1, 10))
	p.settle(translate.Settlement{Lease: got.Lease, Sent: true, Credits: 1})
	inFlight := p.admit(adm("deepl", 2, 10))
	if got.Lease == "" || inFlight.Lease == "" {
		t.Fatalf("local admissions = %+v, %+v", got, inFlight)
	}
	if err := p.st.Flush(p.ctx); err == nil {
		t.Error("Flush while Redis is paused: no error")
	}
	p.resume()
	if err := p.st.Flush(p.ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	other, err := New(p.rdb, WithPrefix("p:"), withClock(p.clk))
	if err != nil {
		t.Fatal(err)
	}
	b, err := other.Budget(p.ctx, t0, 10)
	if diff := cmp.Diff(translate.BudgetStatus{Daily: 10, Spent: 1, Reserved: 2}, b, approx); diff != "" || err != nil {
		t.Errorf("another replica's Budget after Flush (-want +got):\n%s%v", diff, err)
	}
	rt.take()
	if err := p.st.Flush(p.ctx); err != nil || rt.take() != 0 {
		t.Errorf("a second Flush: %v, want nothing sent", err)
	}
}

// A Client idle for long before an outage knows only old figures, which the other replicas
// may have spent since: it refuses limited budgets and quotas rather than serve a share of
// them. Client.Budget keeps the budget's figure fresh.
func TestOldFiguresServeNoShare(t *testing.T) {
	p := newPausable(t, WithReplicas(2))
	a := adm("deepl", 0, 10)
	a.Quota = 100
	p.admit(a) // figures known at t0
	p.clk.add(2 * time.Minute)
	p.budget(t0) // Budget refreshes the budget's figure, not the quota's
	p.clk.add(30 * time.Second)
	p.pause()
	defer p.resume()
	if got, err := p.st.Admit(p.ctx, adm("deepl", 1, 10)); err != nil || got.Lease == "" {
		t.Errorf("budget admission with a figure 30s old = %+v, %v; want a local lease", got, err)
	}
	q := adm("google", 0, 0)
	q.Quota, q.Chars = 100, 10
	if _, err := p.st.Admit(p.ctx, q); !errors.Is(err, errNoFigures) {
		t.Errorf("quota admission for an engine never admitted: %v, want errNoFigures", err)
	}
	a.Chars = 10
	if _, err := p.st.Admit(p.ctx, a); !errors.Is(err, errNoFigures) {
		t.Errorf("quota admission with a figure 2.5 minutes old: %v, want errNoFigures", err)
	}
}

// With WithStrictRequestIDs, a Client cut off from Redis refuses a request id it did not
// admit itself within RequestWindow (another replica may have sent it) and serves the rest
// from its share: no request id, or an id it admitted, through Redis or alone.
func TestStrictRequestIDsWhileUnreachable(t *testing.T) {
	p := newPausable(t, WithStrictRequestIDs())
	withID := func(engine, id string, at time.Time) translate.Admission {
		a := adm(engine, 1, 100)
		a.RequestID, a.Now = id, at
		return a
	}
	old := p.admit(withID("deepl", "old", t0.Add(-translate.RequestWindow-time.Second)))
	mine := p.admit(withID("deepl", "mine", t0))
	if old.Lease == "" || mine.Lease == "" {
		t.Fatalf("admissions through Redis: %+v, %+v; want leases", old, mine)
	}
	p.pause()
	type outcome struct {
		Lease   bool
		Prior   bool
		Refused translate.Kind
		Until   time.Time
	}
	of := func(got translate.Admitted) outcome {
		return outcome{got.Lease != "", got.Prior != nil, got.Refused, got.Until}
	}
	got := map[string]outcome{
		"new id":                        of(p.admit(withID("deepl", "new", t0))),
		"no id":                         of(p.admit(withID("deepl", "", t0))),
		"id admitted through redis":     of(p.admit(withID("google", "mine", t0))),
		"id admitted alone, again":      of(p.admit(withID("google", "mine", t0))),
		"id admitted before the window": of(p.admit(withID("google", "old", t0))),
	}
	refused := outcome{Refused: translate.KindUnavailable}
	want := map[string]outcome{
		"new id":                        refused,
		"no id":                         {Lease: true},
		"id admitted through redis":     {Lease: true},
		"id admitted alone, again":      {Prior: true},
		"id admitted before the window": refused,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("admissions while unreachable (-want +got):\n%s", diff)
	}
	// An admission alone renews the id's window: the Client sent it again.
	if got := p.admit(withID("microsoft", "mine", t0.Add(8*time.Second))); got.Lease == "" {
		t.Errorf("mine on microsoft 8s later = %+v, want a lease", got)
	}
	if got := p.admit(withID("systran", "mine", t0.Add(translate.RequestWindow+5*time.Second))); got.Lease == "" {
		t.Errorf("mine on systran within the window of its last admission = %+v, want a lease", got)
	}
	if n := p.counter("translate.store.request_id_refused"); n != 2 {
		t.Errorf("translate.store.request_id_refused = %d, want 2", n)
	}
	p.resume()
	p.probeNow()
	if got := p.admit(withID("deepl", "new", t0)); got.Lease == "" {
		t.Errorf("new id once Redis answers = %+v, want a lease", got)
	}
}
