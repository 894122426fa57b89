package translate

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// plainStore is a Store that is not a BudgetStore.
type plainStore struct{}

func (plainStore) Admit(context.Context, Admission) (Admitted, error)  { return Admitted{}, nil }
func (plainStore) Settle(context.Context, Settlement) error            { return nil }
func (plainStore) Hold(context.Context, string, Kind, time.Time) error { return nil }
func (plainStore) Budget(context.Context, time.Time, float64) (BudgetStatus, error) {
	return BudgetStatus{}, nil
}

func tenants(m map[string]Budget) []Option { return []Option{WithBudget(Budget{Tenants: m})} }

// tenantRules: the tenants of Budget and the Store that must share them.
func tenantRules() []newRule {
	many := map[string]Budget{}
	var file strings.Builder
	for i := range maxTenants + 1 {
		name := "t" + strconv.Itoa(i)
		many[name] = Budget{}
		if i > 0 {
			file.WriteByte(',')
		}
		file.WriteString(`"` + name + `":{}`)
	}
	return []newRule{
		{opts: tenants(map[string]Budget{"a b": {}}), newMsg: `config: Budget.Tenants["a b"] tenant name ` + tenantRule,
			json: `"budget":{"tenants":{"a b":{}}}`, path: "budget.tenants.a b: tenant name " + tenantRule},
		{opts: tenants(map[string]Budget{"": {}}), newMsg: `config: Budget.Tenants[""] tenant name ` + tenantRule,
			json: `"budget":{"tenants":{"":{}}}`, path: "budget.tenants.: tenant name " + tenantRule},
		{opts: tenants(map[string]Budget{strings.Repeat("x", 65): {}}), newMsg: `config: Budget.Tenants["` + strings.Repeat("x", 65) + `"] tenant name ` + tenantRule},
		{opts: tenants(map[string]Budget{"acme": {Monthly: -1}}), newMsg: `config: Budget.Tenants["acme"].Monthly must not be negative`,
			json: `"budget":{"tenants":{"acme":{"monthly":-1}}}`, path: "budget.tenants.acme.monthly: must not be negative"},
		{opts: tenants(map[string]Budget{"acme": {Daily: 1e13}}), newMsg: `config: Budget.Tenants["acme"].Daily must be within 0..1e12`,
			json: `"budget":{"tenants":{"acme":{"daily":1e13}}}`, path: "budget.tenants.acme.daily: must be within 0..1e12"},
		{opts: tenants(map[string]Budget{"acme": {Monthly: 1e15}}), newMsg: `config: Budget.Tenants["acme"].Monthly must be within 0..1e14`,
			json: `"budget":{"tenants":{"acme":{"monthly":1e15}}}`, path: "budget.tenants.acme.monthly: must be within 0..1e14"},
		{opts: tenants(map[string]Budget{"acme": {EconomyAt: 0.5}}), newMsg: `config: Budget.Tenants["acme"].EconomyAt must be 0: the Client's EconomyAt applies to every tenant`,
			json: `"budget":{"tenants":{"acme":{"economy_at":0.5}}}`, path: "budget.tenants.acme.economy_at: must be 0: the Client's EconomyAt applies to every tenant"},
		{opts: tenants(map[string]Budget{"acme": {Tenants: map[string]Budget{"x": {}}}}), newMsg: `config: Budget.Tenants["acme"].Tenants must be empty: a tenant has no tenants`,
			json: `"budget":{"tenants":{"acme":{"tenants":{"x":{}}}}}`, path: "budget.tenants.acme.tenants: must be empty: a tenant has no tenants"},
		{opts: tenants(many), newMsg: "config: Budget.Tenants must hold at most 10000 tenants",
			json: `"budget":{"tenants":{` + file.String() + `}}`, path: "budget.tenants: must hold at most 10000 tenants"},
		{opts: []Option{WithStore(plainStore{}), WithBudget(Budget{Monthly: 10})},
			newMsg: "config: WithStore the Store cannot share monthly or per-tenant budgets (it is not a BudgetStore)"},
		{opts: []Option{WithStore(plainStore{}), WithBudget(Budget{Tenants: map[string]Budget{"acme": {}}})},
			newMsg: "config: WithStore the Store cannot share monthly or per-tenant budgets (it is not a BudgetStore)"},
	}
}

// A file's tenants and monthly budgets round-trip: ParseConfig, MarshalJSON, ParseConfig.
func TestConfigTenantsRoundTrip(t *testing.T) {
	registerTestTypes()
	doc := `{"engines":[{"name":"a","type":"cfgtest"}],
	  "budget":{"daily":50,"monthly":1000,"economy_at":0.7,
	    "tenants":{"acme":{"daily":5,"monthly":100},"org-2/eu":{"monthly":20},"free-ride":{}}}}`
	cfg, err := ParseConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := Budget{Daily: 50, Monthly: 1000, EconomyAt: 0.7, Tenants: map[string]Budget{
		"acme": {Daily: 5, Monthly: 100}, "org-2/eu": {Monthly: 20}, "free-ride": {}}}
	if diff := cmp.Diff(want, cfg.Budget); diff != "" {
		t.Fatalf("parsed budget (-want +got):\n%s", diff)
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseConfig(out)
	if err != nil {
		t.Fatalf("ParseConfig(MarshalJSON) = %v\n%s", err, out)
	}
	if diff := cmp.Diff(want, again.Budget); diff != "" {
		t.Errorf("round-tripped budget (-want +got):\n%s", diff)
	}
	c, err := New(WithConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if st, ok := c.TenantBudget("acme"); !ok || st.Daily != 5 || st.Monthly != 100 {
		t.Errorf("TenantBudget(acme) = %+v, %v; want the file's 5 and 100", st, ok)
	}
}

// No request makes the Client keep state for a tenant it was not configured with, and a
// caller's map changed after New changes nothing.
func TestTenantStateIsTheConfiguredSet(t *testing.T) {
	m := map[string]Budget{"acme": {Daily: 1}}
	c, err := New(WithEngine(&cfgEngine{name: "a"}, Profile{CostPerMillion: 1}), WithBudget(Budget{Tenants: m}), WithoutCache())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m["late"] = Budget{Daily: 1}
	for i := range 200 {
		req := Request{Text: "hello", Source: "en", Target: "es", Tenant: "t" + strconv.Itoa(i)}
		if _, err := c.Translate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.budget.Len(); got != 1 {
		t.Errorf("the Client keeps %d tenants' budgets, want 1 (the configured acme)", got)
	}
	if _, ok := c.TenantBudget("late"); ok {
		t.Error("a tenant added to the caller's map after New got a budget")
	}
}

func TestBudgetProblemNamesTheTenant(t *testing.T) {
	_, err := ParseConfig([]byte(`{"engines":[{"name":"a","type":"cfgtest"}],"budget":{"tenants":{"acme":{"daily":"x"}}}}`))
	var e *Error
	if !errors.As(err, &e) || e.Message != "budget.tenants.acme.daily: must be a number" {
		t.Errorf("err = %v, want budget.tenants.acme.daily: must be a number", err)
	}
}
