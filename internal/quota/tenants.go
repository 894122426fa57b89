package quota

import (
	"math"
	"sync"
	"sync/atomic"
)

// Tenants are a client's budgets in process: its own daily and monthly budgets, and each
// configured tenant's. A request of a tenant with a budget of its own spends that budget
// and the client's together. Only configured tenants have state, so no caller can make
// it keep state for a name it chose. Safe for concurrent use; build it with NewTenants.
type Tenants struct {
	All        Pair
	MonthSpent atomic.Uint64 // the client's month as the shared store last reported it, float64 bits
	mu         sync.Mutex    // serialises Set
	tenants    atomic.Pointer[map[string]*Tenant]
}

// A Tenant is one configured tenant's budget, and its figures as the shared store last
// reported them.
type Tenant struct {
	Name                   string
	Pair                   Pair
	SharedDay, SharedMonth atomic.Uint64 // float64 bits
}

// Limits are a daily and a monthly limit; 0 means unlimited.
type Limits struct{ Daily, Monthly float64 }

// NewTenants returns the budgets all (the client's) and tenants describe.
func NewTenants(all Limits, tenants map[string]Limits) *Tenants {
	bs := &Tenants{All: NewPair(all.Daily, all.Monthly)}
	bs.Set(all, tenants)
	return bs
}

// Set applies new limits: they change from now on, and tenants that stay keep what they
// spent. A removed tenant's calls in flight settle on its old figures.
func (bs *Tenants) Set(all Limits, tenants map[string]Limits) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	bs.All.Set(all.Daily, all.Monthly)
	var old map[string]*Tenant
	p := bs.tenants.Load()
	if p != nil {
		old = *p
	}
	if p != nil && len(old) == 0 && len(tenants) == 0 {
		return // no tenants before or after: keep the empty table rather than build another
	}
	m := make(map[string]*Tenant, len(tenants))
	for name, tb := range tenants {
		t := old[name]
		if t == nil {
			t = &Tenant{Name: name, Pair: NewPair(tb.Daily, tb.Monthly)}
		}
		t.Pair.Set(tb.Daily, tb.Monthly)
		m[name] = t
	}
	bs.tenants.Store(&m)
}

// Len is the number of tenants with a budget of their own.
func (bs *Tenants) Len() int { return len(*bs.tenants.Load()) }

// Daily is the client's daily limit, 0 when unlimited.
func (bs *Tenants) Daily() float64 { return bs.All.Day.Daily() }

// Tenant returns the budget of the tenant name, nil when it has none of its own.
func (bs *Tenants) Tenant(name string) *Tenant {
	if name == "" {
		return nil
	}
	return (*bs.tenants.Load())[name]
}

// Reserve takes cost from t's budget (nil: none) and the client's, all or nothing.
func (bs *Tenants) Reserve(t *Tenant, cost float64, now int64) bool {
	if t != nil && !t.Pair.Reserve(cost, now) {
		return false
	}
	if !bs.All.Reserve(cost, now) {
		if t != nil {
			t.Pair.Refund(cost, now)
		}
		return false
	}
	return true
}

// Refund gives back a reservation of cost made at now.
func (bs *Tenants) Refund(t *Tenant, cost float64, now int64) {
	bs.All.Refund(cost, now)
	if t != nil {
		t.Pair.Refund(cost, now)
	}
}

// Charge settles a reservation made at now at what the call cost.
func (bs *Tenants) Charge(t *Tenant, reserved, actual float64, now int64) {
	bs.All.Charge(reserved, actual, now)
	if t != nil {
		t.Pair.Charge(reserved, actual, now)
	}
}

// SharedOf is a figure the shared store reported, as a fraction of limit; 0 for no limit.
func SharedOf(v *atomic.Uint64, limit float64) float64 {
	if limit <= 0 {
		return 0
	}
	return math.Float64frombits(v.Load()) / limit
}

// Learn keeps spent, a figure the shared store reported, in v; a negative or non-finite
// figure is dropped.
func Learn(v *atomic.Uint64, spent float64) {
	if spent >= 0 && !math.IsNaN(spent) && !math.IsInf(spent, 0) {
		v.Store(math.Float64bits(spent))
	}
}
