package redisstore

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate"
)

func adm(engine string, credits, daily float64) translate.Admission {
	return translate.Admission{Now: t0, Engine: engine, Credits: credits, Daily: daily, LeaseTTL: 5 * time.Second}
}

func (f *fixture) admit(a translate.Admission) translate.Admitted {
	f.t.Helper()
	got, err := f.st.Admit(f.ctx, a)
	if err != nil {
		f.t.Fatalf("Admit: %v", err)
	}
	return got
}

func (f *fixture) settle(s translate.Settlement) {
	f.t.Helper()
	if s.Now.IsZero() {
		s.Now = t0
	}
	if err := f.st.Settle(f.ctx, s); err != nil {
		f.t.Fatalf("Settle: %v", err)
	}
}

func (f *fixture) budget(now time.Time) translate.BudgetStatus {
	f.t.Helper()
	b, err := f.st.Budget(f.ctx, now, 10)
	if err != nil {
		f.t.Fatalf("Budget: %v", err)
	}
	return b
}

var approx = cmpopts.EquateApprox(0, 1e-9)

func TestGrantReservesAndSettleCharges(t *testing.T) {
	f := newFixture(t)
	got := f.admit(adm("deepl", 1, 10))
	if got.Lease == "" || got.Refused != translate.KindUnknown || got.Cached != nil || got.Prior != nil {
		t.Fatalf("Admit = %+v, want a lease only", got)
	}
	if diff := cmp.Diff(translate.Admitted{Lease: got.Lease, Spent: 1, QuotaLeft: -1}, got, approx); diff != "" {
		t.Errorf("Admit (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(translate.BudgetStatus{Daily: 10, Reserved: 1}, f.budget(t0), approx); diff != "" {
		t.Errorf("Budget after Admit (-want +got):\n%s", diff)
	}
	f.settle(translate.Settlement{Lease: got.Lease, Sent: true, Credits: 0.8})
	if diff := cmp.Diff(translate.BudgetStatus{Daily: 10, Spent: 0.8}, f.budget(t0), approx); diff != "" {
		t.Errorf("Budget after Settle (-want +got):\n%s", diff)
	}
}

func TestReleaseWhenNotSent(t *testing.T) {
	f := newFixture(t)
	got := f.admit(adm("deepl", 3, 10))
	f.settle(translate.Settlement{Lease: got.Lease, Sent: false, Credits: 3})
	if diff := cmp.Diff(translate.BudgetStatus{Daily: 10}, f.budget(t0), approx); diff != "" {
		t.Errorf("Budget (-want +got):\n%s", diff)
	}
}

func TestBudgetRefusalReservesNothing(t *testing.T) {
	f := newFixture(t)
	f.admit(adm("deepl", 1.5, 2))
	a := adm("deepl", 1, 2)
	a.RequestID = "r1"
	got := f.admit(a)
	if got.Refused != translate.KindBudgetExceeded || got.Lease != "" {
		t.Fatalf("Admit over budget = %+v, want refused KindBudgetExceeded", got)
	}
	if b := f.budget(t0); math.Abs(b.Reserved-1.5) > 1e-9 {
		t.Errorf("Reserved = %v after a refusal, want 1.5", b.Reserved)
	}
	// The refused request id was not claimed: it may go to the engine later.
	a.Daily = 0
	if got := f.admit(a); got.Lease == "" {
		t.Errorf("Admit of the refused request id = %+v, want a lease", got)
	}
}

func TestBudgetIsPerUTCDay(t *testing.T) {
	f := newFixture(t)
	f.admit(adm("deepl", 2, 2))
	a := adm("deepl", 2, 2)
	a.Now = t0.Add(24 * time.Hour)
	if got := f.admit(a); got.Lease == "" {
		t.Errorf("Admit on the next day = %+v, want a lease", got)
	}
}

func TestQuota(t *testing.T) {
	f := newFixture(t)
	a := adm("deepl", 0, 0)
	a.Quota, a.QuotaPeriod, a.Chars = 100, time.Hour, 60
	first := f.admit(a)
	if first.Lease == "" || first.QuotaLeft != 40 {
		t.Fatalf("first Admit = %+v, want a lease and 40 left", first)
	}
	a.Chars = 50
	got := f.admit(a)
	periodEnd := time.Date(2030, 3, 4, 11, 0, 0, 0, time.UTC)
	if diff := cmp.Diff(translate.Admitted{Refused: translate.KindQuotaExhausted, Until: periodEnd, QuotaLeft: 40}, got,
		cmpopts.EquateApproxTime(0)); diff != "" {
		t.Errorf("Admit over quota (-want +got):\n%s", diff)
	}
	// Charged by what the vendor billed: 30, not 60.
	f.settle(translate.Settlement{Lease: first.Lease, Sent: true, Chars: 30})
	if got := f.admit(a); got.Lease == "" || got.QuotaLeft != 20 {
		t.Errorf("Admit after the settle = %+v, want a lease and 20 left", got)
	}
	// Another period starts afresh; another engine has its own quota.
	a.Now = periodEnd
	if got := f.admit(a); got.QuotaLeft != 50 {
		t.Errorf("next period: QuotaLeft = %d, want 50", got.QuotaLeft)
	}
	a.Now, a.Engine = t0, "google"
	if got := f.admit(a); got.QuotaLeft != 50 {
		t.Errorf("other engine: QuotaLeft = %d, want 50", got.QuotaLeft)
	}
}

func TestRequestIDReachesEachEngineOnce(t *testing.T) {
	f := newFixture(t)
	a := adm("deepl", 1, 0)
	a.RequestID = "req-1"
	first := f.admit(a)
	if first.Lease == "" {
		t.Fatalf("first Admit = %+v", first)
	}
	pending := f.admit(a)
	if diff := cmp.Diff(&translate.StoredAnswer{}, pending.Prior); diff != "" || pending.Lease != "" {
		t.Errorf("same engine before the answer: Prior (-want +got):\n%s lease %q", diff, pending.Lease)
	}
	other := a
	other.Engine = "google"
	second := f.admit(other)
	if second.Lease == "" {
		t.Fatalf("an engine that has not seen the id = %+v, want a lease", second)
	}
	f.settle(translate.Settlement{Lease: second.Lease, Sent: true, Credits: 1,
		Answer: &translate.StoredAnswer{Engine: "google", Kind: translate.KindUnavailable}})
	if got := f.admit(other); got.Prior == nil || got.Prior.Kind != translate.KindUnavailable {
		t.Errorf("after a failure: %+v, want Prior with KindUnavailable", got)
	}
	text := &translate.StoredAnswer{Text: "hola", Source: "en", Engine: "deepl"}
	f.settle(translate.Settlement{Lease: first.Lease, Sent: true, Credits: 1, Answer: text})
	third := a
	third.Engine = "microsoft"
	got := f.admit(third)
	if diff := cmp.Diff(text, got.Prior); diff != "" {
		t.Errorf("a text answer goes to every later request (-want +got):\n%s", diff)
	}
	if b := f.budget(t0); b.Reserved != 0 || math.Abs(b.Spent-2) > 1e-9 {
		t.Errorf("Budget = %+v, want 2 spent and nothing reserved", b)
	}
}

func TestHold(t *testing.T) {
	f := newFixture(t)
	until := t0.Add(time.Hour)
	if err := f.st.Hold(f.ctx, "deepl", translate.KindQuotaExhausted, until); err != nil {
		t.Fatal(err)
	}
	// A shorter hold, from another replica, does not shorten it.
	other, err := New(f.rdb, WithPrefix(f.st.k.prefix), withClock(f.clk))
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Hold(f.ctx, "deepl", translate.KindUnauthorized, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got := f.admit(adm("deepl", 1, 10))
	want := translate.Admitted{Refused: translate.KindQuotaExhausted, Until: until, QuotaLeft: -1}
	if diff := cmp.Diff(want, got, cmpopts.EquateApproxTime(0)); diff != "" {
		t.Errorf("held engine (-want +got):\n%s", diff)
	}
	if got := f.admit(adm("google", 1, 10)); got.Lease == "" {
		t.Errorf("another engine = %+v, want a lease", got)
	}
	ttl := f.rdb.PTTL(f.ctx, f.st.k.hold("deepl")).Val()
	if ttl <= 0 || ttl > time.Hour {
		t.Errorf("hold key TTL = %v, want (0, 1h]", ttl)
	}
	if err := f.st.Hold(f.ctx, "deepl", translate.KindUnknown, until); translate.KindOf(err) != translate.KindInvalidInput {
		t.Errorf("Hold with KindUnknown: %v, want KindInvalidInput", err)
	}
}

func TestSettleIsIdempotent(t *testing.T) {
	f := newFixture(t)
	got := f.admit(adm("deepl", 1, 10))
	for range 3 {
		f.settle(translate.Settlement{Lease: got.Lease, Sent: true, Credits: 1})
	}
	if diff := cmp.Diff(translate.BudgetStatus{Daily: 10, Spent: 1}, f.budget(t0), approx); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSecondLevelCache(t *testing.T) {
	f := newFixture(t, WithCache(time.Hour))
	a := adm("deepl", 1, 10)
	a.CacheKey = "k1"
	got := f.admit(a)
	text := &translate.StoredAnswer{Text: "hola", Source: "en", Engine: "deepl"}
	f.settle(translate.Settlement{Lease: got.Lease, Sent: true, Credits: 1, Answer: text, CacheKey: "k1"})
	hit := f.admit(a)
	if diff := cmp.Diff(translate.Admitted{Cached: text, QuotaLeft: -1}, hit, approx); diff != "" {
		t.Errorf("cache hit (-want +got):\n%s", diff)
	}
	if ttl := f.rdb.PTTL(f.ctx, f.st.k.cache("k1")).Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("cache TTL = %v", ttl)
	}
	// Failures are not cached.
	a.CacheKey = "k2"
	got = f.admit(a)
	f.settle(translate.Settlement{Lease: got.Lease, Sent: true, Answer: &translate.StoredAnswer{Kind: translate.KindBadOutput}, CacheKey: "k2"})
	if got := f.admit(a); got.Cached != nil {
		t.Errorf("a failure was cached: %+v", got.Cached)
	}
}

func TestNoCacheWithoutWithCache(t *testing.T) {
	f := newFixture(t)
	a := adm("deepl", 1, 10)
	a.CacheKey = "k1"
	got := f.admit(a)
	f.settle(translate.Settlement{Lease: got.Lease, Sent: true, Answer: &translate.StoredAnswer{Text: "hola"}, CacheKey: "k1"})
	if got := f.admit(a); got.Cached != nil {
		t.Errorf("cached without WithCache: %+v", got)
	}
}

// Every key the store writes expires: nothing grows without bound.
func TestEveryKeyExpires(t *testing.T) {
	f := newFixture(t, WithCache(time.Hour))
	a := adm("deepl", 1, 10)
	a.RequestID, a.CacheKey, a.Quota, a.Chars, a.LeaseTTL = "r", "c", 100, 10, time.Second
	got := f.admit(a)
	f.settle(translate.Settlement{Lease: got.Lease, Sent: true, Credits: 1, Chars: 10,
		Answer: &translate.StoredAnswer{Text: "x"}, CacheKey: "c"})
	a.RequestID, a.CacheKey = "r2", ""
	f.admit(a) // never settled
	later := a
	later.RequestID, later.Now = "", t0.Add(time.Minute)
	f.admit(later) // sweeps
	if err := f.st.Hold(f.ctx, "deepl", translate.KindUnauthorized, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	ks, err := f.rdb.Keys(f.ctx, f.st.k.prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) < 7 {
		t.Errorf("only %d keys: %v", len(ks), ks)
	}
	for _, k := range ks {
		ttl := f.rdb.PTTL(f.ctx, k).Val()
		if ttl <= 0 || ttl > 49*time.Hour {
			t.Errorf("key %q: TTL %v, want a bounded expiry", k, ttl)
		}
	}
}

func TestConcurrentAdmissionsNeverExceed(t *testing.T) {
	f := newFixture(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 40 {
		wg.Go(func() {
			a := adm("deepl", 1, 10)
			a.Quota, a.Chars = 1000, 10
			got, err := f.st.Admit(context.Background(), a)
			if err != nil {
				t.Error(err)
				return
			}
			if got.Lease != "" {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if granted != 10 {
		t.Errorf("granted %d of 40 admissions of 1 credit on a budget of 10, want 10", granted)
	}
}

// roundTrips counts commands and pipelines sent to Redis; with skipSetup, not the commands
// that set up a new connection (HELLO, CLIENT).
type roundTrips struct {
	mu        sync.Mutex
	n         int
	skipSetup bool
}

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.mu.Lock()
		if n := cmd.Name(); !r.skipSetup || (n != "hello" && n != "client") {
			r.n++
		}
		r.mu.Unlock()
		return next(ctx, cmd)
	}
}
func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.mu.Lock()
		r.n++
		r.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (r *roundTrips) take() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.n
	r.n = 0
	return n
}

func TestRoundTrips(t *testing.T) {
	f := newFixture(t, WithCache(time.Hour))
	rt := new(roundTrips)
	f.rdb.AddHook(rt)
	a := adm("deepl", 1, 1e9)
	a.Quota, a.Chars = 1e12, 5
	for range 50 { // leases the blocks, reads the hold; the blocks grow with the demand
		got := f.admit(a)
		f.settle(translate.Settlement{Lease: got.Lease, Sent: true, Credits: 1, Chars: 5})
	}
	f.st.blocks.wg.Wait()
	rt.take()
	got := f.admit(a)
	f.settle(translate.Settlement{Lease: got.Lease, Sent: true, Credits: 1, Chars: 5})
	if n := rt.take(); n != 0 {
		t.Errorf("Admit and Settle without a request id or cache key: %d round trips, want 0", n)
	}
	free := adm("apertium", 0, 0) // no block: only the id and the cache reach Redis
	free.RequestID, free.CacheKey = "r0", "c0"
	got = f.admit(free) // loads the scripts
	f.settle(translate.Settlement{Lease: got.Lease, Sent: true, Answer: &translate.StoredAnswer{Text: "x"}, CacheKey: "c0"})
	rt.take()
	free.RequestID, free.CacheKey = "r", "c"
	got = f.admit(free)
	if n := rt.take(); n != 2 {
		t.Errorf("Admit with a request id and a cache key: %d round trips, want 2", n)
	}
	f.settle(translate.Settlement{Lease: got.Lease, Sent: true, Answer: &translate.StoredAnswer{Text: "x"}, CacheKey: "c"})
	if n := rt.take(); n != 1 {
		t.Errorf("Settle with an answer for the id and the cache: %d round trips, want 1", n)
	}
}

func TestInvalidInput(t *testing.T) {
	f := newFixture(t)
	for name, a := range map[string]translate.Admission{
		"no engine":        {Now: t0, Credits: 1},
		"negative credits": {Now: t0, Engine: "e", Credits: -1},
		"NaN credits":      {Now: t0, Engine: "e", Credits: math.NaN()},
		"negative daily":   {Now: t0, Engine: "e", Daily: -1},
		"negative chars":   {Now: t0, Engine: "e", Chars: -1},
	} {
		if _, err := f.st.Admit(f.ctx, a); translate.KindOf(err) != translate.KindInvalidInput {
			t.Errorf("%s: %v, want KindInvalidInput", name, err)
		}
	}
	for name, s := range map[string]translate.Settlement{
		"no lease":  {},
		"malformed": {Lease: "x"},
		"negative":  {Lease: `{"i":"a"}`, Credits: -1},
	} {
		if err := f.st.Settle(f.ctx, s); translate.KindOf(err) != translate.KindInvalidInput {
			t.Errorf("%s: %v, want KindInvalidInput", name, err)
		}
	}
}

func TestNewValidates(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	plain := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer plain.Close()
	for name, c := range map[string]struct {
		rdb  redis.UniversalClient
		opts []Option
	}{
		"nil client":          {nil, nil},
		"no context timeouts": {plain, nil},
		"zero replicas":       {rdb, []Option{WithReplicas(0)}},
		"zero timeout":        {rdb, []Option{WithTimeout(0)}},
		"negative cache ttl":  {rdb, []Option{WithCache(-time.Second)}},
		"hold poll too short": {rdb, []Option{WithHoldPoll(time.Millisecond)}},
		"hold poll too long":  {rdb, []Option{WithHoldPoll(time.Minute)}},
	} {
		if _, err := New(c.rdb, c.opts...); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
	if _, err := New(rdb); err != nil {
		t.Errorf("New with defaults: %v", err)
	}
}

// Stores share state exactly when they share a prefix, and write no key outside it.
func TestPrefixesDoNotShare(t *testing.T) {
	srv := ownServer(t) // a server no other test writes to
	rdb := newClient(t, srv.Addr)
	stores := map[string]*Store{}
	for _, p := range []string{"a:", "b:"} {
		st, err := New(rdb, WithPrefix(p), WithCache(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		stores[p] = st
	}
	ctx := context.Background()
	a := adm("deepl", 10, 10)
	a.RequestID, a.CacheKey, a.Quota, a.Chars = "r", "c", 100, 100
	for _, p := range []string{"a:", "b:"} {
		got, err := stores[p].Admit(ctx, a)
		if err != nil || got.Lease == "" {
			t.Fatalf("prefix %s: Admit = %+v, %v; want a lease: the other prefix's spend is not this one's", p, got, err)
		}
		if err := stores[p].Settle(ctx, translate.Settlement{Lease: got.Lease, Sent: true, Credits: 10, Chars: 100,
			Answer: &translate.StoredAnswer{Text: "x"}, CacheKey: "c"}); err != nil {
			t.Fatal(err)
		}
		if err := stores[p].Hold(ctx, "google", translate.KindUnauthorized, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	ks, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		if !strings.HasPrefix(k, "a:") && !strings.HasPrefix(k, "b:") {
			t.Errorf("key %q outside the prefixes", k)
		}
	}
	if len(ks) < 10 {
		t.Errorf("%d keys, want at least 5 per prefix: %v", len(ks), ks)
	}
}
