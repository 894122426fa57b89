package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/redisstore"
	"github.com/fanyi-go/translate/redisstore/redistest"
)

// These tests run translate.Clients, each with its own Store and go-redis client as a
// replica would have, against one real redis-server: what issue 10 promises across
// replicas, seen through the public API.

// secret stands for an engine's API key: it appears in the engine's error messages, and
// must never reach Redis.
const secret = "sk-live-7f3a9c1e"

// recEngine records the request ids it is sent, answers "[es] " and the text reversed (a
// translation that does not contain its source), or fails with fail when it is set.
type recEngine struct {
	name string
	mu   sync.Mutex
	ids  []string
	fail translate.Kind
}

func (e *recEngine) Name() string { return e.name }

func (e *recEngine) Translate(_ context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	e.mu.Lock()
	e.ids = append(e.ids, r.RequestID)
	fail := e.fail
	e.mu.Unlock()
	if fail != translate.KindUnknown {
		return nil, &translate.Error{Kind: fail, Engine: e.name, Message: "vendor said no to key " + secret}
	}
	out := make([]string, len(r.Texts))
	for i, t := range r.Texts {
		out[i] = "[es] " + reverse(t)
	}
	return &translate.EngineResult{Texts: out}, nil
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

func (e *recEngine) calls() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.ids...)
}

func (e *recEngine) setFail(k translate.Kind) {
	e.mu.Lock()
	e.fail = k
	e.mu.Unlock()
}

func needRedis(t *testing.T) *redistest.Server {
	t.Helper()
	srv, err := redistest.Start()
	if err != nil {
		redistest.Skip(t, err) // fails in CI; reported by TestMain
	}
	t.Cleanup(srv.Stop)
	return srv
}

// replica is one Client with its own Store and go-redis client.
type replica struct {
	st  *redisstore.Store
	c   *translate.Client
	rt  *counter
	rdb *redis.Client
}

// replicaOf builds a Client over engines (each with its Profile) sharing state through
// addr under prefix.
func replicaOf(t *testing.T, addr, prefix string, budget float64, engines map[*recEngine]translate.Profile,
	copts []translate.Option, sopts ...redisstore.Option) *replica {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, DisableIdentity: true})
	t.Cleanup(func() { _ = rdb.Close() })
	rt := new(counter)
	rdb.AddHook(rt)
	st, err := redisstore.New(rdb, append([]redisstore.Option{redisstore.WithPrefix(prefix),
		redisstore.WithTimeout(2 * time.Second)}, sopts...)...)
	if err != nil {
		t.Fatal(err)
	}
	opts := []translate.Option{translate.WithSeed(1), translate.WithStore(st),
		translate.WithBudget(translate.Budget{Daily: budget})}
	for e, p := range engines {
		opts = append(opts, translate.WithEngine(e, p))
	}
	c, err := translate.New(append(opts, copts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	t.Cleanup(func() { _ = st.Flush(context.Background()) })
	return &replica{st: st, c: c, rt: rt, rdb: rdb}
}

// paid costs one credit per character; a 10-character text costs 10 credits.
func paid(e *recEngine) map[*recEngine]translate.Profile {
	return map[*recEngine]translate.Profile{e: {Quality: 90, CostPerMillion: 1e6, Timeout: 2 * time.Second}}
}

// text10 is a 10-character text, distinct for each n < 1000.
func text10(n int) string { return fmt.Sprintf("hello %04d", n) }

func req(n int, engine string) translate.Request {
	return translate.Request{Text: text10(n), Source: "en", Target: "es", Engine: engine,
		RequestID: fmt.Sprint("id-", n)}
}

// Two replicas with a daily budget of 100 credits each ask for 20 calls of 10: the engine
// is called 10 times in all, and both report the shared spend, nothing more (no spend
// inflated by reservations that were never freed or charges counted twice).
func TestClientsShareTheBudget(t *testing.T) {
	srv := needRedis(t)
	e := &recEngine{name: "paid"}
	a := replicaOf(t, srv.Addr, "share:budget:", 100, paid(e), nil)
	b := replicaOf(t, srv.Addr, "share:budget:", 100, paid(e), nil)
	refused := 0
	for n := range 20 {
		c := []*replica{a, b}[n%2].c
		_, err := c.Translate(context.Background(), req(n, "paid"))
		switch translate.KindOf(err) {
		case translate.KindUnknown:
		case translate.KindBudgetExceeded:
			refused++
		default:
			t.Fatalf("request %d: %v", n, err)
		}
	}
	if n := len(e.calls()); n != 10 || refused != 10 {
		t.Errorf("engine calls %d, refused %d; want 10 and 10 (budget 100, 10 credits a call)", n, refused)
	}
	want := translate.BudgetStatus{Daily: 100, Spent: 100, Economy: true}
	for _, r := range []*replica{a, b} {
		if err := r.st.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range []*replica{a, b} {
		if diff := cmp.Diff(want, r.c.Budget(), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
			t.Errorf("replica %d Budget (-want +got):\n%s", i, diff)
		}
	}
}

// Two replicas share a free engine's quota of 100 characters: 10 calls of 10. Near the
// end one replica may be refused (quota_exhausted) while the other's block holds the last
// calls, which that replica then makes: 10 calls in all over 20 requests, never more.
func TestClientsShareTheQuota(t *testing.T) {
	srv := needRedis(t)
	e := &recEngine{name: "quota"}
	engines := map[*recEngine]translate.Profile{e: {Quality: 80, Class: translate.ClassFree, Quota: 100,
		Timeout: 2 * time.Second}}
	a := replicaOf(t, srv.Addr, "share:quota:", 0, engines, nil)
	b := replicaOf(t, srv.Addr, "share:quota:", 0, engines, nil)
	for n := range 20 {
		c := []*replica{a, b}[n%2].c
		_, err := c.Translate(context.Background(), req(n, "quota"))
		// Which request is refused first depends on how the blocks fell between the
		// replicas (the other may hold the last calls); a refusal is only ever the quota's.
		if err != nil && (n < 4 || !strings.Contains(err.Error(), "quota_exhausted")) {
			t.Fatalf("request %d: %v", n, err)
		}
	}
	if n := len(e.calls()); n != 10 {
		t.Errorf("engine calls %d, want 10 (quota 100 characters, 10 a call)", n)
	}
}

// A request id retried on another replica reaches the engine once: the retry gets the
// first answer, or, when the first call failed, is not sent to that engine again.
func TestClientsDeduplicateRequestIDs(t *testing.T) {
	srv := needRedis(t)
	e := &recEngine{name: "paid"}
	noCache := []translate.Option{translate.WithoutCache()}
	a := replicaOf(t, srv.Addr, "share:dedup:", 1000, paid(e), noCache)
	b := replicaOf(t, srv.Addr, "share:dedup:", 1000, paid(e), noCache)
	ctx := context.Background()
	first, err := a.c.Translate(ctx, req(1, ""))
	if err != nil {
		t.Fatal(err)
	}
	retry, err := b.c.Translate(ctx, req(1, ""))
	if err != nil {
		t.Fatal(err)
	}
	if retry.Text != first.Text || retry.Cost != 0 {
		t.Errorf("retry on the other replica = %q cost %v, want %q at no cost", retry.Text, retry.Cost, first.Text)
	}
	e.setFail(translate.KindUnavailable)
	if _, err := a.c.Translate(ctx, req(2, "")); err == nil {
		t.Fatal("a failing engine served request 2")
	}
	e.setFail(translate.KindUnknown)
	if _, err := b.c.Translate(ctx, req(2, "")); err == nil {
		t.Error("the retry of a request id whose call failed was sent to the engine again within RequestWindow")
	}
	if diff := cmp.Diff([]string{"id-1", "id-2"}, e.calls()); diff != "" {
		t.Errorf("request ids the engine got (-want +got):\n%s", diff)
	}
}

// A call the vendor refused (never billed) releases its reservation: nothing is left
// reserved or charged for it, on any replica.
func TestClientFailureReleasesReservation(t *testing.T) {
	srv := needRedis(t)
	e := &recEngine{name: "paid", fail: translate.KindUnavailable}
	a := replicaOf(t, srv.Addr, "share:release:", 100, paid(e), nil)
	b := replicaOf(t, srv.Addr, "share:release:", 100, paid(e), nil)
	for n := range 3 {
		if _, err := a.c.Translate(context.Background(), req(n, "paid")); err == nil {
			t.Fatal("a failing engine served")
		}
	}
	if n := len(e.calls()); n == 0 {
		t.Fatal("the engine was never called")
	}
	if err := a.st.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(translate.BudgetStatus{Daily: 100}, b.c.Budget()); diff != "" {
		t.Errorf("Budget after refused calls (-want +got):\n%s", diff)
	}
}

// A vendor's Unauthorized on one replica keeps the engine out on the others.
func TestClientsShareHolds(t *testing.T) {
	srv := needRedis(t)
	e := &recEngine{name: "paid", fail: translate.KindUnauthorized}
	a := replicaOf(t, srv.Addr, "share:hold:", 1000, paid(e), nil)
	b := replicaOf(t, srv.Addr, "share:hold:", 1000, paid(e), nil)
	if _, err := a.c.Translate(context.Background(), req(1, "paid")); translate.KindOf(err) != translate.KindUnauthorized {
		t.Fatalf("first call: %v, want KindUnauthorized", err)
	}
	e.setFail(translate.KindUnknown) // the key works again: only the hold keeps b out
	if _, err := b.c.Translate(context.Background(), req(2, "paid")); err == nil {
		t.Error("the other replica served from the held engine")
	}
	if n := len(e.calls()); n != 1 {
		t.Errorf("engine calls %d, want 1", n)
	}
}

// A miss with a request id and the second-level cache costs four round trips to Redis in
// steady state (the cache and the id in Admit, the answer and the cache entry in Settle),
// none for the budget; an in-process cache hit none at all.
func TestClientRoundTrips(t *testing.T) {
	srv := needRedis(t)
	e := &recEngine{name: "paid"}
	a := replicaOf(t, srv.Addr, "share:rt:", 1e6, paid(e), nil, redisstore.WithCache(time.Hour))
	ctx := context.Background()
	if _, err := a.c.Translate(ctx, req(0, "")); err != nil { // loads the scripts
		t.Fatal(err)
	}
	for n := 100; n < 120; n++ { // the blocks grow with the demand
		if _, err := a.c.Translate(ctx, req(n, "")); err != nil {
			t.Fatal(err)
		}
	}
	a.rt.n.Store(0)
	for n := 200; n < 220; n++ {
		if _, err := a.c.Translate(ctx, req(n, "")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.c.Translate(ctx, req(1, "")); err != nil {
		t.Fatal(err)
	}
	if n := a.rt.n.Swap(0); n > 21*4+3 {
		t.Errorf("21 misses: %d round trips, want at most 4 each and 3 refills", n)
	}
	if r, err := a.c.Translate(ctx, req(1, "")); err != nil || !r.FromCache {
		t.Fatalf("second request: %+v, %v; want an in-process cache hit", r, err)
	}
	if n := a.rt.n.Load(); n != 0 {
		t.Errorf("hit: %d round trips, want 0", n)
	}
}

// Redis holds no source text and no credential: the second-level cache is keyed by a hash,
// failures are stored as a Kind without their message, and a translation is kept only
// under its request id (for RequestWindow) and, with WithCache, in the cache.
func TestRedisHoldsNoSourceTextOrCredentials(t *testing.T) {
	srv := needRedis(t)
	e := &recEngine{name: "paid"}
	const prefix = "share:secrets:"
	a := replicaOf(t, srv.Addr, prefix, 1000, paid(e), nil, redisstore.WithCache(time.Hour))
	ctx := context.Background()
	if _, err := a.c.Translate(ctx, req(1, "")); err != nil {
		t.Fatal(err)
	}
	e.setFail(translate.KindUnavailable)
	_, _ = a.c.Translate(ctx, req(2, ""))
	e.setFail(translate.KindUnauthorized)
	_, _ = a.c.Translate(ctx, req(3, ""))
	all := dumpKeys(t, a.rdb, prefix)
	if len(all) < 4 {
		t.Fatalf("only %d keys written: %v", len(all), all)
	}
	for k, v := range all {
		for _, bad := range []string{secret, text10(1), text10(2), text10(3), "vendor said no"} {
			if strings.Contains(k, bad) || strings.Contains(v, bad) {
				t.Errorf("key %q holds %q: %q", k, bad, v)
			}
		}
		if strings.Contains(v, "[es]") && !strings.HasPrefix(k, prefix+"r:") && !strings.HasPrefix(k, prefix+"c:") {
			t.Errorf("key %q holds a translation: %q", k, v)
		}
		if strings.HasPrefix(k, prefix+"r:") {
			if ttl := a.rdb.PTTL(ctx, k).Val(); ttl <= 0 || ttl > translate.RequestWindow {
				t.Errorf("request id key %q: TTL %v, want at most RequestWindow", k, ttl)
			}
		}
	}
}

// dumpKeys reads every key under prefix and its value as text.
func dumpKeys(t *testing.T, rdb *redis.Client, prefix string) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		var v any
		switch typ := rdb.Type(ctx, k).Val(); typ {
		case "string":
			v, err = rdb.Get(ctx, k).Result()
		case "hash":
			v, err = rdb.HGetAll(ctx, k).Result()
		case "zset":
			v, err = rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
		default:
			t.Fatalf("key %q of type %s", k, typ)
		}
		if err != nil {
			t.Fatal(err)
		}
		out[k] = fmt.Sprint(v)
	}
	return out
}

// Two replicas spend one tenant's monthly budget together: its 100 credits buy 10 calls
// of 10 across both (overrun 0), the rest of its requests are refused with
// KindBudgetExceeded, another tenant is served meanwhile, and both replicas report the
// shared month.
func TestClientsShareATenantsBudget(t *testing.T) {
	srv := needRedis(t)
	e := &recEngine{name: "paid"}
	budget := translate.WithBudget(translate.Budget{Monthly: 10000, Tenants: map[string]translate.Budget{
		"acme": {Monthly: 100}, "beta": {Daily: 1000}}})
	a := replicaOf(t, srv.Addr, "share:tenant:", 0, paid(e), []translate.Option{budget})
	b := replicaOf(t, srv.Addr, "share:tenant:", 0, paid(e), []translate.Option{budget})
	refused := 0
	for n := range 20 {
		r := req(n, "paid")
		r.Tenant = "acme"
		_, err := []*replica{a, b}[n%2].c.Translate(context.Background(), r)
		switch translate.KindOf(err) {
		case translate.KindUnknown:
		case translate.KindBudgetExceeded:
			refused++
		default:
			t.Fatalf("request %d: %v", n, err)
		}
	}
	if n := len(e.calls()); n != 10 || refused != 10 {
		t.Errorf("acme: engine calls %d, refused %d; want 10 and 10 (monthly budget 100, 10 credits a call)", n, refused)
	}
	r := req(100, "paid")
	r.Tenant = "beta"
	if _, err := b.c.Translate(context.Background(), r); err != nil {
		t.Errorf("beta while acme's month is spent: %v", err)
	}
	for _, r := range []*replica{a, b} {
		if err := r.st.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	want := translate.BudgetStatus{Tenant: "acme", Spent: 100, Monthly: 100, MonthSpent: 100, Economy: true}
	for i, r := range []*replica{a, b} {
		got, ok := r.c.TenantBudget("acme")
		if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" || !ok {
			t.Errorf("replica %d TenantBudget(acme) ok=%v (-want +got):\n%s", i, ok, diff)
		}
		all := r.c.Budget()
		if diff := cmp.Diff(translate.BudgetStatus{Spent: 110, Monthly: 10000, MonthSpent: 110}, all, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
			t.Errorf("replica %d Budget (-want +got):\n%s", i, diff)
		}
	}
}
