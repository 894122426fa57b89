package translate_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
	"github.com/fanyi-go/translate/engines/fake"
)

// tenantReq is a 10-character request of tenant: 1 credit on an engine at 100 000 credits
// per million characters.
func tenantReq(tenant string, i int) translate.Request {
	r := req(fmt.Sprintf("text %05d", i))
	r.Tenant = tenant
	return r
}

// paidOnly is a Client with one paid engine (1 credit a request) and budget b: a request
// its budget refuses fails with KindBudgetExceeded.
func paidOnly(t *testing.T, clk *clock, b translate.Budget, opts ...translate.Option) *translate.Client {
	t.Helper()
	base := []translate.Option{translate.WithClock(clk), translate.WithBudget(b),
		translate.WithEngine(fake.New("paid"), translate.Profile{Quality: 90, CostPerMillion: 100000})}
	return newClient(t, append(base, opts...)...)
}

// serve sends n requests of tenant and returns the kinds of their errors ("ok" for none).
func serve(c *translate.Client, tenant string, from, n int) []string {
	var out []string
	for i := range n {
		_, err := c.Translate(context.Background(), tenantReq(tenant, from+i))
		if err == nil {
			out = append(out, "ok")
			continue
		}
		out = append(out, translate.KindOf(err).String())
	}
	return out
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// A tenant that spent its monthly budget is refused (KindBudgetExceeded) for the rest of
// the calendar month, across days, while another tenant and the default tenant are served;
// at 00:00 UTC on the first of the next month it is served again.
func TestTenantMonthlyBudgetRefusesOnlyThatTenant(t *testing.T) {
	clk := newClock()
	clk.Advance(-48 * time.Hour) // 2026-11-28 12:00 UTC
	c := paidOnly(t, clk, translate.Budget{Monthly: 1000, Tenants: map[string]translate.Budget{
		"acme": {Monthly: 3}, "beta": {Daily: 100}}})
	exceeded := translate.KindBudgetExceeded.String()
	if diff := cmp.Diff([]string{"ok", "ok", "ok", exceeded}, serve(c, "acme", 0, 4)); diff != "" {
		t.Fatalf("acme, monthly budget 3 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(repeat("ok", 3), serve(c, "beta", 10, 3)); diff != "" {
		t.Errorf("beta while acme is out (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(repeat("ok", 2), serve(c, "", 20, 2)); diff != "" {
		t.Errorf("the default tenant while acme is out (-want +got):\n%s", diff)
	}
	clk.Advance(24 * time.Hour) // 2026-11-29: a new day, the same month
	if diff := cmp.Diff([]string{exceeded}, serve(c, "acme", 30, 1)); diff != "" {
		t.Errorf("acme the next day of the same month (-want +got):\n%s", diff)
	}
	clk.Advance(36*time.Hour - time.Nanosecond) // 2026-11-30 23:59:59.999999999
	if diff := cmp.Diff([]string{exceeded}, serve(c, "acme", 40, 1)); diff != "" {
		t.Errorf("acme on the month's last nanosecond (-want +got):\n%s", diff)
	}
	clk.Advance(time.Nanosecond) // 2026-12-01 00:00 UTC
	if diff := cmp.Diff([]string{"ok", "ok", "ok", exceeded}, serve(c, "acme", 50, 4)); diff != "" {
		t.Errorf("acme in the next month (-want +got):\n%s", diff)
	}
}

// The Client's budget caps every tenant's spend together: a tenant whose own limit is
// higher is refused once the Client's is spent, and a tenant without a budget of its own
// spends the Client's.
func TestClientBudgetCapsTheTenants(t *testing.T) {
	c := paidOnly(t, newClock(), translate.Budget{Daily: 5, Tenants: map[string]translate.Budget{"acme": {Daily: 10}}})
	exceeded := translate.KindBudgetExceeded.String()
	got := append(serve(c, "acme", 0, 3), serve(c, "zeta", 10, 3)...)
	got = append(got, serve(c, "acme", 20, 1)...)
	want := []string{"ok", "ok", "ok", "ok", "ok", exceeded, exceeded}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("acme 3, zeta 3, acme 1 under a Client's 5 (-want +got):\n%s", diff)
	}
	acme, ok := c.TenantBudget("acme")
	// Economy: acme's requests see the Client's spent budget.
	if diff := cmp.Diff(translate.BudgetStatus{Tenant: "acme", Daily: 10, Spent: 3, Economy: true}, acme); diff != "" || !ok {
		t.Errorf("TenantBudget(acme) ok=%v (-want +got):\n%s", ok, diff)
	}
	all := c.Budget()
	if diff := cmp.Diff(translate.BudgetStatus{Daily: 5, Spent: 5, Economy: true}, all); diff != "" {
		t.Errorf("Budget() (-want +got):\n%s", diff)
	}
	zeta, ok := c.TenantBudget("zeta")
	if diff := cmp.Diff(all, zeta); diff != "" || ok {
		t.Errorf("TenantBudget(zeta), a tenant without a budget, ok=%v: want the Client's (-want +got):\n%s", ok, diff)
	}
}

// Budget and TenantBudget report the month beside the day; Economy follows whichever
// limit is closer.
func TestBudgetReportsTheMonth(t *testing.T) {
	c := paidOnly(t, newClock(), translate.Budget{Daily: 100, Monthly: 4, Tenants: map[string]translate.Budget{
		"acme": {Monthly: 50}}})
	serve(c, "acme", 0, 2)
	serve(c, "", 10, 1)
	want := translate.BudgetStatus{Daily: 100, Spent: 3, Monthly: 4, MonthSpent: 3}
	if diff := cmp.Diff(want, c.Budget()); diff != "" {
		t.Errorf("Budget() at 3/4 of the month (-want +got):\n%s", diff)
	}
	serve(c, "", 20, 1)
	want = translate.BudgetStatus{Daily: 100, Spent: 4, Monthly: 4, MonthSpent: 4, Economy: true}
	if diff := cmp.Diff(want, c.Budget()); diff != "" {
		t.Errorf("Budget() with the month spent (-want +got):\n%s", diff)
	}
	acme, _ := c.TenantBudget("acme")
	want = translate.BudgetStatus{Tenant: "acme", Spent: 2, Monthly: 50, MonthSpent: 2, Economy: true} // the Client's month is spent
	if diff := cmp.Diff(want, acme); diff != "" {
		t.Errorf("TenantBudget(acme) (-want +got):\n%s", diff)
	}
}

// Economy mode follows the request's tenant: past EconomyAt of acme's month, premium
// serves acme's high-priority requests no more, while beta's still reach it.
func TestTenantEconomyIsTheTenants(t *testing.T) {
	prem, std := fake.New("prem"), fake.New("std")
	c := newClient(t, translate.WithClock(newClock()), sharp,
		translate.WithBudget(translate.Budget{Tenants: map[string]translate.Budget{"acme": {Monthly: 10}}}),
		translate.WithEngine(prem, translate.Profile{Quality: 100, Class: translate.ClassPremium, CostPerMillion: 100000}),
		translate.WithEngine(std, translate.Profile{Quality: 50, CostPerMillion: 1}))
	engines := func(tenant string, from, n int) []string {
		var out []string
		for i := range n {
			r := tenantReq(tenant, from+i)
			r.Priority = translate.PriorityHigh
			res, err := c.Translate(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, res.Engine)
		}
		return out
	}
	if diff := cmp.Diff(append(repeat("prem", 8), "std"), engines("acme", 0, 9)); diff != "" {
		t.Errorf("acme up to 80%% of its month (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(repeat("prem", 3), engines("beta", 100, 3)); diff != "" {
		t.Errorf("beta, without a budget of its own (-want +got):\n%s", diff)
	}
}

// Request.Tenant is validated: at most 64 ASCII letters, digits and - _ . : @ /.
func TestTenantNameValidated(t *testing.T) {
	c := paidOnly(t, newClock(), translate.Budget{})
	for _, name := range []string{"a b", "acme{x}", strings.Repeat("x", 65), "é", "a\x00", "a\n"} {
		r := tenantReq(name, 0)
		if _, err := c.Translate(context.Background(), r); translate.KindOf(err) != translate.KindInvalidInput {
			t.Errorf("Tenant %q: err %v, want KindInvalidInput", name, err)
		}
	}
	for _, name := range []string{"", strings.Repeat("x", 64), "org-1_a.b:c@d/e", "UNKNOWN"} {
		if _, err := c.Translate(context.Background(), tenantReq(name, 0)); err != nil {
			t.Errorf("Tenant %q: %v", name, err)
		}
	}
}

// Reconfigure keeps what a tenant that stays has spent, applies its new limits, and
// drops a removed tenant to the Client's budget.
func TestReconfigureKeepsTenantSpend(t *testing.T) {
	clk := newClock()
	b := translate.Budget{Tenants: map[string]translate.Budget{"acme": {Monthly: 2}}}
	c := paidOnly(t, clk, b)
	exceeded := translate.KindBudgetExceeded.String()
	serve(c, "acme", 0, 2)
	cfg := func(monthly float64) *translate.Config {
		return &translate.Config{Engines: []translate.EngineConfig{{Name: "paid", Type: "fake",
			Profile: translate.Profile{Quality: 90, CostPerMillion: 100000}}},
			Budget: translate.Budget{Tenants: map[string]translate.Budget{"acme": {Monthly: monthly}, "new": {Daily: 1}}}}
	}
	all.Register()
	if err := c.Reconfigure(cfg(2)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{exceeded}, serve(c, "acme", 10, 1)); diff != "" {
		t.Errorf("acme after a Reconfigure with the same limit (-want +got):\n%s", diff)
	}
	if err := c.Reconfigure(cfg(3)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ok", exceeded}, serve(c, "acme", 20, 2)); diff != "" {
		t.Errorf("acme with its limit raised to 3 (-want +got):\n%s", diff)
	}
}

// A batch's and a stream's requests spend their tenant's budget like single requests.
func TestTenantBudgetInBatchAndStream(t *testing.T) {
	eng := fake.New("paid")
	c := newClient(t, translate.WithClock(newClock()), translate.WithBatchConcurrency(1),
		translate.WithBudget(translate.Budget{Tenants: map[string]translate.Budget{"acme": {Monthly: 4}}}),
		// 10 characters at 100 000 per million: 1 credit a request or a segment.
		translate.WithEngine(eng, translate.Profile{CostPerMillion: 100_000, MaxChars: 10}))
	batch := []translate.Request{tenantReq("acme", 0), tenantReq("acme", 1), tenantReq("beta", 2)}
	var got []string
	for _, br := range c.TranslateBatch(context.Background(), batch) {
		got = append(got, translate.KindOf(br.Err).String())
	}
	if diff := cmp.Diff(repeat(translate.KindUnknown.String(), 3), got); diff != "" {
		t.Errorf("batch (-want +got):\n%s", diff)
	}
	r := req("Segment 0.\n\nSegment 1.\n\nSegment 2.\n\nSegment 3.")
	r.Tenant, r.Priority = "acme", translate.PriorityHigh
	got = nil
	for ch, err := range c.TranslateStream(context.Background(), r) {
		got = append(got, fmt.Sprint(ch.Segment, translate.KindOf(err)))
	}
	want := []string{"0 " + translate.KindUnknown.String(), "1 " + translate.KindUnknown.String(), "2 " + translate.KindBudgetExceeded.String()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stream of 4 segments with 2 credits of acme's month left (-want +got):\n%s", diff)
	}
}
