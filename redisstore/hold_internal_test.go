package redisstore

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
)

// The HoldStore contract on one Redis, two stores of one prefix: a down hold is read by
// the other store and does not refuse admissions (routing keeps the engine out); Unhold on
// one ends it for the other's next reading; the probe lock goes to one caller until it
// expires.
func TestHoldStoreContract(t *testing.T) {
	f := newFixture(t)
	other, err := New(f.rdb, WithPrefix(f.st.k.prefix), withClock(f.clk))
	if err != nil {
		t.Fatal(err)
	}
	until := t0.Add(time.Hour)
	if err := f.st.Hold(f.ctx, "x", translate.KindUnavailable, until); err != nil {
		t.Fatal(err)
	}
	got, ok := other.readHolds(f.ctx, []string{"x", "y"})
	want := []translate.EngineHold{{Engine: "x", Kind: translate.KindUnavailable, Until: until}}
	if diff := cmp.Diff(want, got); !ok || diff != "" {
		t.Errorf("the other store read (ok %v) (-want +got):\n%s", ok, diff)
	}
	if a := f.admit(adm("x", 1, 10)); a.Lease == "" {
		t.Errorf("Admit on a down hold = %+v, want a lease: routing keeps a down engine out, not Admit", a)
	}
	if err := other.Unhold(f.ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if got, ok := f.st.readHolds(f.ctx, []string{"x", "y"}); !ok || len(got) != 0 {
		t.Errorf("after Unhold on the other store: %v (ok %v), want no hold", got, ok)
	}
	if err := f.st.Hold(f.ctx, "x", translate.KindQuotaExhausted, until); err != nil {
		t.Fatal(err)
	}
	if a := f.admit(adm("x", 1, 10)); a.Refused != translate.KindQuotaExhausted {
		t.Errorf("Admit on a quota hold = %+v, want refused", a)
	}
	var taken []bool
	for _, st := range []*Store{f.st, other, f.st} {
		ok, err := st.ProbeLock(f.ctx, "x", 300*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		taken = append(taken, ok)
	}
	if diff := cmp.Diff([]bool{true, false, false}, taken); diff != "" {
		t.Errorf("probe lock, three callers in a row (-want +got):\n%s", diff)
	}
	if ttl := f.rdb.PTTL(f.ctx, f.st.k.probe("x")).Val(); ttl <= 0 || ttl > 300*time.Millisecond {
		t.Errorf("probe lock expires in %v, want within its 300ms", ttl)
	}
}
