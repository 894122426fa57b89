package translate

import (
	"context"
	"strconv"

	"github.com/fanyi-go/translate/internal/jsonfile"
	"github.com/fanyi-go/translate/internal/quota"
)

// Tenants (Request.Tenant, Budget.Tenants): a request of a tenant with a budget of its own
// spends that budget and the Client's together; any other request spends the Client's
// alone. The figures of a tenant live in the configured set only, so no request can make
// the Client keep state for a tenant name it chose.

// maxTenants bounds Budget.Tenants.
const maxTenants = 10000

// validTenant reports whether name is a tenant name (mechanism in internal/quota).
func validTenant(name string) bool { return quota.ValidTenant(name) }

const tenantRule = quota.TenantRule

// budgetProblem returns the first setting of b outside its range: the Go path (for New),
// the JSON path (for ParseConfig) and why. All empty when b is valid.
func budgetProblem(b Budget) (goPath, jsonPath, msg string) {
	if field, msg := outOfRange(b); field != "" {
		return "Budget." + field, "budget." + jsonfile.Snake(field), msg
	}
	if len(b.Tenants) > maxTenants {
		return "Budget.Tenants", "budget.tenants", "must hold at most " + strconv.Itoa(maxTenants) + " tenants"
	}
	for _, name := range sortedKeys(b.Tenants) {
		tb := b.Tenants[name]
		g, j := "Budget.Tenants["+strconv.Quote(name)+"]", "budget.tenants."+name
		field, msg := outOfRange(tb)
		switch {
		case name == "" || !validTenant(name):
			return g, j, "tenant name " + tenantRule
		case field != "":
			return g + "." + field, j + "." + jsonfile.Snake(field), msg
		case tb.EconomyAt != 0:
			return g + ".EconomyAt", j + ".economy_at", "must be 0: the Client's EconomyAt applies to every tenant"
		case len(tb.Tenants) > 0:
			return g + ".Tenants", j + ".tenants", "must be empty: a tenant has no tenants"
		}
	}
	return "", "", ""
}

// validate is New's check of the budget: ranges, tenants, and a Store able to share what
// the budget asks it to.
func (b Budget) validate(st Store) error {
	if g, _, msg := budgetProblem(b); g != "" {
		return configError(g, msg)
	}
	if _, ok := st.(BudgetStore); st != nil && !ok && (b.Monthly > 0 || len(b.Tenants) > 0) {
		return configError("WithStore", "the Store cannot share monthly or per-tenant budgets (it is not a BudgetStore)")
	}
	return nil
}

// budgetLimits are the limits of b and of its tenants, for quota.Tenants.
func budgetLimits(b Budget) (quota.Limits, map[string]quota.Limits) {
	var m map[string]quota.Limits
	if len(b.Tenants) > 0 {
		m = make(map[string]quota.Limits, len(b.Tenants))
		for name, tb := range b.Tenants {
			m[name] = quota.Limits{Daily: tb.Daily, Monthly: tb.Monthly}
		}
	}
	return quota.Limits{Daily: b.Daily, Monthly: b.Monthly}, m
}

// budgetFraction returns the largest fraction spent (and reserved) of the budgets r
// spends, -1 when none of them has a limit: the Client's day and month, and r's tenant's,
// each the larger of this Client's own figure and the Store's last report.
func (c *Client) budgetFraction(r *request, now int64) float64 {
	bs, t := c.budget, r.tenant
	if bs.All.Unlimited() && (t == nil || t.Pair.Unlimited()) {
		return -1
	}
	f := max(bs.All.Fraction(now), c.sharedFraction(), quota.SharedOf(&bs.MonthSpent, bs.All.Month.Daily()))
	if t != nil {
		f = max(f, t.Pair.Fraction(now), quota.SharedOf(&t.SharedDay, t.Pair.Day.Daily()), quota.SharedOf(&t.SharedMonth, t.Pair.Month.Daily()))
	}
	return f
}

// fillBudgets puts the budgets r spends in a: the Client's, and its tenant's when it has
// one of its own.
func (c *Client) fillBudgets(a *Admission, r *request) {
	a.Daily, a.Monthly = c.budget.All.Day.Daily(), c.budget.All.Month.Daily()
	if t := r.tenant; t != nil {
		a.Tenant, a.TenantDaily, a.TenantMonthly = t.Name, t.Pair.Day.Daily(), t.Pair.Month.Daily()
	}
}

// learnShared keeps the figures a Store's admission reported, for economy mode.
func (c *Client) learnShared(r *request, got *Admitted) {
	c.learnSpent(got.Spent)
	if c.budget.All.Month.Daily() > 0 {
		quota.Learn(&c.budget.MonthSpent, got.MonthSpent)
	}
	if t := r.tenant; t != nil {
		quota.Learn(&t.SharedDay, got.TenantSpent)
		quota.Learn(&t.SharedMonth, got.TenantMonthSpent)
	}
}

// TenantBudget reports the budget of tenant: its own daily and monthly figures (the
// Store's when the Client has one) and Economy as its requests see it (the tenant's
// figures or the Client's, whichever is closer to its limit). ok is false when the tenant
// has no budget of its own (see Budget.Tenants): its requests spend the Client's budget,
// which the status then reports, as Client.Budget does.
func (c *Client) TenantBudget(tenant string) (st BudgetStatus, ok bool) {
	t := c.budget.Tenant(tenant)
	return c.budgetStatus(t), t != nil
}

// budgetStatus reports t's budget, or the Client's for nil.
func (c *Client) budgetStatus(t *quota.Tenant) BudgetStatus {
	now := c.now()
	p, name := c.budget.All, ""
	if t != nil {
		p, name = t.Pair, t.Name
	}
	st := BudgetStatus{Tenant: name, Daily: p.Day.Daily(), Spent: p.Day.Spent(now), Reserved: p.Day.Reserved(now)}
	if m := p.Month.Daily(); m > 0 {
		st.Monthly, st.MonthSpent, st.MonthReserved = m, p.Month.Spent(now), p.Month.Reserved(now)
	}
	if c.store != nil {
		c.sharedStatus(&st, t)
	}
	r := request{tenant: t}
	st.Economy = c.budgetFraction(&r, now) >= c.cfg.Load().economyAt
	return st
}

// sharedStatus replaces st's figures with the Store's, when it answers.
func (c *Client) sharedStatus(st *BudgetStatus, t *quota.Tenant) {
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	var shared BudgetStatus
	var err error
	if bst, ok := c.store.(BudgetStore); ok {
		shared, err = bst.BudgetOf(ctx, c.clock.Now(), st.Tenant, st.Daily, st.Monthly)
	} else {
		shared, err = c.store.Budget(ctx, c.clock.Now(), st.Daily)
	}
	if err != nil {
		c.obs.warn("store unreachable: budget is this Client's own figures", "")
		return
	}
	st.Spent, st.Reserved = shared.Spent, shared.Reserved
	if st.Monthly > 0 {
		st.MonthSpent, st.MonthReserved = shared.MonthSpent, shared.MonthReserved
	}
	day, month := &c.sharedSpent, &c.budget.MonthSpent
	if t != nil {
		day, month = &t.SharedDay, &t.SharedMonth
	}
	quota.Learn(day, st.Spent+st.Reserved)
	if st.Monthly > 0 {
		quota.Learn(month, st.MonthSpent+st.MonthReserved)
	}
}
