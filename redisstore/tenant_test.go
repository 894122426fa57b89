package redisstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
)

// tenantAdm is an admission of 1 credit for tenant, whose month allows monthly.
func tenantAdm(now time.Time, tenant string, monthly float64) translate.Admission {
	return translate.Admission{Now: now, Engine: "paid", Credits: 1, Tenant: tenant, TenantMonthly: monthly,
		LeaseTTL: 5 * time.Second}
}

// spend admits and settles (sent) one call; it reports whether the call was granted.
func spend(t *testing.T, st *Store, a translate.Admission) bool {
	t.Helper()
	got, err := st.Admit(context.Background(), a)
	if err != nil {
		t.Fatalf("Admit: %v", err)
	}
	switch got.Refused {
	case translate.KindUnknown:
	case translate.KindBudgetExceeded:
		return false
	default:
		t.Fatalf("Admit refused with %v, want a grant or KindBudgetExceeded", got.Refused)
	}
	if err := st.Settle(context.Background(), translate.Settlement{Lease: got.Lease, Now: a.Now, Sent: true, Credits: a.Credits}); err != nil {
		t.Fatal(err)
	}
	return true
}

// Two replicas (Stores on one prefix) spend one tenant's monthly budget together: exactly
// the budget is granted, never more, while another tenant is served; the month's figures
// are shared, and the next calendar month starts afresh.
func TestTenantMonthSharedByReplicas(t *testing.T) {
	f := newFixture(t)
	st2, err := New(f.rdb, WithPrefix(f.st.o.prefix), withClock(f.clk), WithTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st2.blocks.wg.Wait)
	replicas := []*Store{f.st, st2}
	granted := 0
	for i := range 40 {
		if spend(t, replicas[i%2], tenantAdm(t0, "acme", 25)) {
			granted++
		}
	}
	if granted != 25 {
		t.Errorf("granted %d calls of 1 credit on a monthly budget of 25 over two replicas, want 25", granted)
	}
	if !spend(t, st2, tenantAdm(t0, "beta", 25)) {
		t.Error("beta refused while acme's month is spent")
	}
	for _, st := range replicas {
		if err := st.Flush(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	got, err := f.st.BudgetOf(f.ctx, t0, "acme", 0, 25)
	if err != nil {
		t.Fatal(err)
	}
	want := translate.BudgetStatus{Tenant: "acme", Spent: 25, Monthly: 25, MonthSpent: 25}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("BudgetOf(acme) (-want +got):\n%s", diff)
	}
	next := time.Date(2030, 4, 1, 0, 0, 0, 0, time.UTC)
	f.clk.add(next.Sub(t0))
	if !spend(t, st2, tenantAdm(next, "acme", 25)) {
		t.Error("acme refused on the first of the next month")
	}
	if spend(t, f.st, tenantAdm(next.Add(-time.Nanosecond), "acme", 25)) {
		t.Error("a call dated in the spent month was granted")
	}
}

// The Client's month caps every tenant; a tenant's day caps it within its month.
func TestClientMonthAndTenantDay(t *testing.T) {
	f := newFixture(t)
	a := translate.Admission{Now: t0, Engine: "paid", Credits: 1, Monthly: 5, Tenant: "acme", TenantDaily: 3, LeaseTTL: time.Second}
	var got []bool
	for range 4 {
		got = append(got, spend(t, f.st, a))
	}
	b := a
	b.Tenant, b.TenantDaily = "beta", 0
	for range 3 {
		got = append(got, spend(t, f.st, b))
	}
	want := []bool{true, true, true, false, true, true, false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("acme (day 3) 4 calls, then beta 3, under the Client's month of 5 (-want +got):\n%s", diff)
	}
	ad, err := f.st.Admit(f.ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if ad.Refused != translate.KindBudgetExceeded || ad.MonthSpent < 5-1e-9 {
		t.Errorf("refused admission = %+v, want KindBudgetExceeded with MonthSpent 5", ad)
	}
}

// Every key a tenant's budget writes expires; the tenant's keys carry its hash tag, and
// a month's key outlives its month by a day at most.
func TestTenantKeysExpireAndCarryTheTenantTag(t *testing.T) {
	f := newFixture(t)
	a := translate.Admission{Now: t0, Engine: "paid", Credits: 1, Monthly: 100, Tenant: "acme", TenantDaily: 10,
		TenantMonthly: 50, LeaseTTL: time.Second}
	if !spend(t, f.st, a) {
		t.Fatal("refused")
	}
	if err := f.st.Flush(f.ctx); err != nil {
		t.Fatal(err)
	}
	keys, err := f.rdb.Keys(f.ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	p := f.st.k
	wantKeys := map[string]bool{p.budget(time.Date(2030, 3, 4, 0, 0, 0, 0, time.UTC)): true, p.prefix + "m:2030-03": true,
		p.blocks(): false, p.epoch(): true, p.spread + "t:{acme}:b:2030-03-04": true, p.spread + "t:{acme}:m:2030-03": true,
		p.spread + "t:{acme}:bx": false, p.spread + "t:{acme}:E": true}
	monthEnd := time.Date(2030, 4, 1, 0, 0, 0, 0, time.UTC).Sub(t0)
	for k, must := range wantKeys {
		ttl, err := f.rdb.PTTL(f.ctx, k).Result()
		switch {
		case err != nil:
			t.Fatal(err)
		case ttl == -2 && must:
			t.Errorf("key %q is missing (keys: %q)", k, keys)
		case ttl == -1:
			t.Errorf("key %q never expires", k)
		case strings.Contains(k, "m:2030-03") && (ttl < monthEnd || ttl > monthEnd+24*time.Hour+time.Minute):
			t.Errorf("month key %q expires in %v, want after the month ends (%v) and within a day of it", k, ttl, monthEnd)
		}
	}
	for _, k := range keys {
		if ttl := f.rdb.PTTL(f.ctx, k).Val(); ttl == -1 {
			t.Errorf("key %q never expires", k)
		}
	}
}

// A bad tenant or limit is refused before anything is reserved.
func TestTenantAdmissionValidated(t *testing.T) {
	f := newFixture(t)
	for name, a := range map[string]translate.Admission{
		"brace":    {Tenant: "a}b", TenantDaily: 1},
		"long":     {Tenant: strings.Repeat("x", 65)},
		"control":  {Tenant: "a\nb"},
		"negative": {Tenant: "a", TenantMonthly: -1},
		"monthly":  {Monthly: -2},
	} {
		a.Now, a.Engine, a.Credits = t0, "paid", 1
		if _, err := f.st.Admit(f.ctx, a); translate.KindOf(err) != translate.KindInvalidInput {
			t.Errorf("%s: Admit = %v, want KindInvalidInput", name, err)
		}
	}
}

// On a cluster, tenants' figures spread over the slots by their hash tags, and an
// admission for a tenant touches no key outside its slot (no CROSSSLOT).
func TestClusterSpreadsTenants(t *testing.T) {
	cl := needCluster(t)
	rdb := newClusterClient(t, cl.Addrs)
	st, err := New(rdb, WithPrefix("{spread}:"), WithTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Flush(context.Background())
	slots := map[int64]bool{}
	for _, tenant := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		a := translate.Admission{Now: time.Now(), Engine: "paid", Credits: 1, Daily: 100, Monthly: 1000, Tenant: tenant,
			TenantDaily: 10, TenantMonthly: 100, LeaseTTL: time.Second}
		if !spend(t, st, a) {
			t.Fatalf("tenant %s refused", tenant)
		}
		slot, err := rdb.ClusterKeySlot(context.Background(), st.k.tenantPrefix(tenant)+"bx").Result()
		if err != nil {
			t.Fatal(err)
		}
		slots[slot] = true
	}
	if len(slots) < 2 {
		t.Errorf("8 tenants in %d slot(s), want them spread", len(slots))
	}
}

// The tenants a Store keeps blocks for are bounded: past the bound, an admission for a new
// tenant is refused while every kept tenant holds a block, and tenants whose blocks were
// returned are forgotten to make room.
func TestTenantsBounded(t *testing.T) {
	f := newFixture(t)
	f.st.tenants.max = 2
	a := translate.Admission{Now: t0, Engine: "paid", Credits: 1, TenantDaily: 10, LeaseTTL: time.Second}
	for _, tenant := range []string{"a", "b"} {
		a.Tenant = tenant
		if !spend(t, f.st, a) {
			t.Fatalf("tenant %s refused", tenant)
		}
	}
	a.Tenant = "c"
	if _, err := f.st.Admit(f.ctx, a); translate.KindOf(err) != translate.KindInvalidInput {
		t.Fatalf("a third tenant while two hold blocks: %v, want KindInvalidInput", err)
	}
	if err := f.st.Flush(f.ctx); err != nil {
		t.Fatal(err)
	}
	if !spend(t, f.st, a) {
		t.Fatal("tenant c refused after the others returned their blocks")
	}
	if n := len(f.st.tenants.m); n > 2 {
		t.Errorf("the Store keeps %d tenants, want at most 2", n)
	}
	f.st.blocks.mu.Lock()
	n := len(f.st.blocks.m)
	f.st.blocks.mu.Unlock()
	if n > 3 { // the Client's day and two tenants' days
		t.Errorf("the Store keeps %d limits, want at most 3", n)
	}
}
