package quota

import "testing"

// TestTenantsReserveAllOrNothing: a cost the client's budget refuses is not taken from the
// tenant's either, and Set keeps a staying tenant's spend while dropping removed tenants.
func TestTenantsReserveAllOrNothing(t *testing.T) {
	const now = int64(1e18)
	bs := NewTenants(Limits{Daily: 1}, map[string]Limits{"acme": {Daily: 10}, "old": {Daily: 1}})
	acme := bs.Tenant("acme")
	if bs.Tenant("") != nil || bs.Tenant("nobody") != nil || acme == nil || bs.Len() != 2 {
		t.Fatalf("tenants: default %v, unknown %v, acme %v, %d in all", bs.Tenant(""), bs.Tenant("nobody"), acme, bs.Len())
	}
	if !bs.Reserve(acme, 0.75, now) {
		t.Fatal("a cost within both budgets refused")
	}
	if bs.Reserve(acme, 0.5, now) {
		t.Fatal("a cost past the client's budget reserved")
	}
	if got := acme.Pair.Day.Reserved(now); got != 0.75 {
		t.Errorf("acme reserved %v after the refusal, want 0.75", got)
	}
	bs.Charge(acme, 0.75, 0.5, now)
	bs.Set(Limits{Daily: 2}, map[string]Limits{"acme": {Daily: 20}})
	if bs.Tenant("acme") != acme || bs.Tenant("old") != nil || bs.Len() != 1 {
		t.Error("Set did not keep acme and drop old")
	}
	if got := acme.Pair.Day.Spent(now); got != 0.5 {
		t.Errorf("acme spent %v after Set, want 0.5", got)
	}
}
