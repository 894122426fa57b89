package redisstore

import (
	"context"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/fanyi-go/translate"
)

// Monthly budgets and tenants' budgets (translate.BudgetStore). Each is leased in blocks
// like the day's budget: the Client's month under the prefix, beside its day; a tenant's
// day and month under a hash tag of its own, "q t:{TENANT}:", with their own zset of
// blocks and epoch, so that a cluster spreads tenants over its slots. An admission takes
// its credits from every block it needs (the Client's day and month, the tenant's day and
// month), all or nothing, in process.

var _ translate.BudgetStore = (*Store)(nil)

// maxTenants bounds the tenants a Store keeps figures for: past it, tenants whose blocks
// were all returned are forgotten, and an admission for a new tenant is refused when none
// can be.
const maxTenants = 10000

// group is the zset of live blocks and the epoch that the figures of one slot share, and
// the epoch this Store last saw there.
type group struct {
	bx, epoch          string
	prefix             string       // a tenant's: "q t:{TENANT}:"
	daySlot, monthSlot string       // a tenant's limits in limits.m
	known              atomic.Value // string
}

// tenantGroups are the groups of the tenants this Store admitted for, bounded by maxTenants.
type tenantGroups struct {
	mu  sync.Mutex
	m   map[string]*group
	max int // 0: maxTenants (tests lower it)
}

func (k keys) month(start time.Time) string { return k.prefix + "m:" + start.Format("2006-01") }

// tenantPrefix puts the tenant in the hash tag, after the escaped prefix (keys.go).
func (k keys) tenantPrefix(tenant string) string { return k.spread + "t:{" + tenant + "}:" }

// month is the UTC calendar month of now and when it ends.
func month(now time.Time) (start, end time.Time) {
	u := now.UTC()
	start = time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 1, 0)
}

// checkTenant validates the budget fields of an admission: a tenant name that fits a hash
// tag, and finite limits.
func checkTenant(a *translate.Admission) error {
	for _, v := range []float64{a.Monthly, a.TenantDaily, a.TenantMonthly} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return invalid("budget limits must be finite numbers, not negative")
		}
	}
	t := a.Tenant
	switch {
	case len(t) > 64 || !utf8.ValidString(t) || strings.ContainsAny(t, "{}"):
		return invalid("tenant must be at most 64 bytes of UTF-8 without braces")
	case strings.IndexFunc(t, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return invalid("tenant must not contain control characters")
	}
	return nil
}

// tenantGroup returns tenant's group, making it when there is room.
func (s *Store) tenantGroup(tenant string) (*group, error) {
	s.tenants.mu.Lock()
	defer s.tenants.mu.Unlock()
	if g := s.tenants.m[tenant]; g != nil {
		return g, nil
	}
	if s.tenants.m == nil {
		s.tenants.m = map[string]*group{}
	}
	limit := s.tenants.max
	if limit == 0 {
		limit = maxTenants
	}
	if len(s.tenants.m) >= limit && s.forgetIdleTenants() == 0 {
		return nil, invalid("more than 10000 tenants hold blocks in this Store")
	}
	p := s.k.tenantPrefix(tenant)
	g := &group{bx: p + "bx", epoch: p + "E", prefix: p, daySlot: "tb:" + tenant, monthSlot: "tm:" + tenant}
	s.tenants.m[tenant] = g
	return g, nil
}

// forgetIdleTenants drops the tenants whose limits hold no block and no call, and reports
// how many. s.tenants.mu is held.
func (s *Store) forgetIdleTenants() int {
	s.blocks.mu.Lock()
	defer s.blocks.mu.Unlock()
	n := 0
	for tenant, g := range s.tenants.m {
		slots := []string{g.daySlot, g.monthSlot}
		if !idle(s.blocks.m[slots[0]]) || !idle(s.blocks.m[slots[1]]) {
			continue
		}
		for _, slot := range slots {
			if l := s.blocks.m[slot]; l != nil {
				l.stop()
			}
			delete(s.blocks.m, slot)
		}
		delete(s.tenants.m, tenant)
		n++
	}
	return n
}

// idle reports whether l (nil: none) holds no block and no refill is under way.
func idle(l *limit) bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur == nil && len(l.orphans) == 0 && !l.refill
}

// groupKeys are l's zset of blocks, its epoch key and the epoch this Store last saw there.
func (s *Store) groupKeys(l *limit) (bx, epoch, known string) {
	if g := l.grp; g != nil {
		v, _ := g.known.Load().(string)
		return g.bx, g.epoch, v
	}
	return s.k.blocks(), s.k.epoch(), s.epoch()
}

// learnEpoch keeps the epoch Redis reported for l's group.
func (s *Store) learnEpoch(l *limit, e string) {
	switch {
	case e == "":
	case l.grp != nil:
		l.grp.known.Store(e)
	default:
		s.setEpoch(e)
	}
}

// budgetLimit is one budget limit an admission reserves from, besides the Client's day.
type budgetLimit struct {
	l      *limit
	lim    float64 // the limit; 0 unlimited
	figure figureOf
}

// figureOf names where Admitted reports a budget limit's figure (an index, not a pointer
// into Admitted: that would move every admission's answer to the heap).
type figureOf int

const (
	monthFigure figureOf = iota
	tenantDayFigure
	tenantMonthFigure
)

// report puts m's figure where got reports it.
func (m budgetLimit) report(got *translate.Admitted) {
	f := m.l.figure(m.lim)
	switch m.figure {
	case monthFigure:
		got.MonthSpent = f
	case tenantDayFigure:
		got.TenantSpent = f
	case tenantMonthFigure:
		got.TenantMonthSpent = f
	}
}

// held is what a call reserved of one budget limit besides the Client's day.
type held struct {
	l *limit
	b *block
}

// heldSet is what a call reserved beyond the Client's day: at most three limits.
type heldSet struct {
	h [3]held
	n int
}

// period returns slot's limit for the period [start, end) of group g (nil: the prefix's),
// making its key only for a period it does not hold yet (no allocation on the hot path).
func (ls *limits) period(slot string, start, end time.Time, g *group, key func(time.Time) string) *limit {
	ls.mu.Lock()
	l := ls.m[slot]
	ls.mu.Unlock()
	if l != nil && l.start.Equal(start) {
		return l
	}
	return ls.getIn(slot, key(start), start, end, false, g)
}

func (g *group) dayKey(start time.Time) string   { return g.prefix + "b:" + start.Format(time.DateOnly) }
func (g *group) monthKey(start time.Time) string { return g.prefix + "m:" + start.Format("2006-01") }

// moreLimits puts in out the limits a, beyond the Client's day, spends, and returns how
// many: the Client's month when it has a limit, the tenant's day (always, to share its
// spend) and month (with a limit). Each figure is where Admitted reports it.
func (s *Store) moreLimits(a *translate.Admission, out *[3]budgetLimit) (int, error) {
	n := 0
	if a.Monthly > 0 {
		start, end := month(a.Now)
		out[n] = budgetLimit{s.blocks.period("m", start, end, nil, s.k.month), a.Monthly, monthFigure}
		n++
	}
	if a.Tenant == "" {
		return n, nil
	}
	g, err := s.tenantGroup(a.Tenant)
	if err != nil {
		return 0, err
	}
	start, end := day(a.Now)
	out[n] = budgetLimit{s.blocks.period(g.daySlot, start, end, g, g.dayKey), a.TenantDaily, tenantDayFigure}
	n++
	if a.TenantMonthly > 0 {
		start, end := month(a.Now)
		out[n] = budgetLimit{s.blocks.period(g.monthSlot, start, end, g, g.monthKey), a.TenantMonthly, tenantMonthFigure}
		n++
	}
	return n, nil
}

// reserveMore reserves a's credits from the limits beyond the Client's day. On a refusal or
// an error it reserves nothing more and the caller releases c.
func (s *Store) reserveMore(ctx context.Context, a *translate.Admission, c *call, got *translate.Admitted) error {
	if a.Credits <= 0 {
		return nil
	}
	var more [3]budgetLimit
	n, err := s.moreLimits(a, &more)
	if err != nil {
		return err
	}
	for _, m := range more[:n] {
		lim := m.lim
		if lim == 0 {
			lim = unlimited
		}
		b, _, err := s.reserve(ctx, m.l, a.Credits, lim, c.at)
		if err != nil {
			return s.blockErr(err)
		}
		if b == nil {
			got.Refused = translate.KindBudgetExceeded
			m.report(got)
			return nil
		}
		c.more.h[c.more.n] = held{m.l, b}
		c.more.n++
		m.report(got)
	}
	return nil
}

// settleMore gives back (sent false) or charges what c took beyond the Client's day.
func (c *call) settleMore(sent bool, credits float64) {
	if !sent {
		credits = 0
	}
	for _, h := range c.more.h[:c.more.n] {
		h.l.settle(h.b, c.credits, credits)
	}
	c.more = heldSet{}
}

// BudgetOf implements translate.BudgetStore: the day's figures of tenant ("" the Client's)
// and, with a monthly limit, the month's; one round trip each. Like Budget, Spent counts
// this replica's spend not reported yet and Reserved what the other replicas' blocks hold
// and this replica's calls in flight; while Redis is unreachable the figures of the last
// refill.
func (s *Store) BudgetOf(ctx context.Context, now time.Time, tenant string, daily, monthly float64) (translate.BudgetStatus, error) {
	a := translate.Admission{Now: now, Engine: "budget", Tenant: tenant, Daily: daily, Monthly: monthly}
	if err := checkAdmission(&a); err != nil {
		return translate.BudgetStatus{}, err
	}
	if err := checkTenant(&a); err != nil {
		return translate.BudgetStatus{}, err
	}
	st := translate.BudgetStatus{Tenant: tenant, Daily: daily, Monthly: monthly}
	dayL, monthL, err := s.reportLimits(now, tenant, monthly > 0)
	if err != nil {
		return st, err
	}
	if st.Spent, st.Reserved, err = s.figures(ctx, dayL); err != nil {
		return st, err
	}
	if monthL != nil {
		st.MonthSpent, st.MonthReserved, err = s.figures(ctx, monthL)
	}
	return st, err
}

// reportLimits are the limits of tenant's day and, when asked, month.
func (s *Store) reportLimits(now time.Time, tenant string, withMonth bool) (dayL, monthL *limit, err error) {
	ds, de := day(now)
	ms, me := month(now)
	if tenant == "" {
		dayL = s.blocks.period("b", ds, de, nil, s.k.budget)
		if withMonth {
			monthL = s.blocks.period("m", ms, me, nil, s.k.month)
		}
		return dayL, monthL, nil
	}
	g, err := s.tenantGroup(tenant)
	if err != nil {
		return nil, nil, err
	}
	dayL = s.blocks.period(g.daySlot, ds, de, g, g.dayKey)
	if withMonth {
		monthL = s.blocks.period(g.monthSlot, ms, me, g, g.monthKey)
	}
	return dayL, monthL, nil
}

// figures reads l's figures from Redis (when it answers) and returns them with this
// replica's own block counted: spent, and reserved. Redis's figures and the block agree
// only while no refill is in flight (see Budget in admit.go): with one, the last figures.
func (s *Store) figures(ctx context.Context, l *limit) (spent, reserved float64, err error) {
	if l.rmu.TryLock() {
		defer l.rmu.Unlock()
		if err := s.readBudget(ctx, l); err != nil {
			return 0, 0, err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	spent, reserved = l.spent, l.reserve
	if c := l.counted(); c != nil {
		spent += c.spent - c.reported
		reserved += c.inflight - (c.granted - c.reported)
	}
	return max(spent, 0), max(reserved, 0), nil
}
