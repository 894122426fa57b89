package redisstore

import (
	"testing"
	"time"

	"github.com/fanyi-go/translate"
)

// quotaCall admits one call of chars against a quota of 1e15 characters on st and settles
// it as sent; it returns the refusal's Kind (KindUnknown when granted, KindUnavailable when
// Admit failed).
func (fl *fleet) quotaCall(st *Store, chars int64) translate.Kind {
	a := translate.Admission{Now: fl.clk.now(), Engine: "paid", Chars: chars, Quota: 1e15,
		QuotaPeriod: 24 * time.Hour, LeaseTTL: 5 * time.Second}
	got, err := st.Admit(fl.ctx, a)
	switch {
	case err != nil:
		return translate.KindUnavailable
	case got.Lease == "":
		return got.Refused
	}
	if err := st.Settle(fl.ctx, translate.Settlement{Lease: got.Lease, Sent: true, Chars: chars}); err != nil {
		fl.t.Fatal(err)
	}
	return translate.KindUnknown
}

// overloadRun has every store ask for n calls of 100 characters per 10 ms step for d of
// virtual time; it counts the refusals by Kind.
func (fl *fleet) overloadRun(d time.Duration, n int) map[translate.Kind]int {
	refused := map[translate.Kind]int{}
	for end := fl.clk.now().Add(d); fl.clk.now().Before(end); {
		fl.clk.add(10 * time.Millisecond)
		for _, st := range fl.st {
			for range n {
				if k := fl.quotaCall(st, 100); k != translate.KindUnknown {
					refused[k]++
				}
			}
		}
		fl.wait()
	}
	return refused
}

// Overload (issue 17, 6): on a saturated host every refill times out (Redis answers after
// WithTimeout). With a quota of 1e15 characters no request is refused while the leased
// blocks last (about demandWindow/2 of demand is left when a refill is due), none is ever
// refused as quota_exhausted, and once Redis answers in time again every request is
// served: timeouts leave no holdback behind. Nor does a host saturated every other second.
func TestOverloadedRedisNeverExhaustsAHugeQuota(t *testing.T) {
	srv := needServer(t)
	px := newProxy(t, srv.Addr)
	fl := &fleet{t: t, srv: srv.Addr, prefix: prefixFor(t), clk: newClock(t0), ctx: t.Context()}
	fl.rdb = newClient(t, srv.Addr)
	for range 3 {
		// 100 ms: a loopback round trip on a busy 2-core machine under -race stays well
		// under it (at 50 ms CI saw refills time out with Redis back, load average 18).
		fl.add(px.addr(), WithTimeout(100*time.Millisecond))
	}
	warm := fl.overloadRun(5*time.Second, 5)
	px.slow.Store(int64(250 * time.Millisecond)) // every reply after the timeout
	slow := fl.overloadRun(2*time.Second, 5)
	long := fl.overloadRun(10*time.Second, 5) // past what the blocks hold: refused, as unavailable
	px.slow.Store(0)
	fl.clk.add(time.Second) // past the probe period of the failed refills
	after := fl.overloadRun(2*time.Second, 5)
	flap := map[translate.Kind]int{} // a host saturated on and off: every other second
	for i := range 20 {
		px.slow.Store(int64(i%2) * int64(250*time.Millisecond))
		for k, n := range fl.overloadRun(time.Second, 5) {
			flap[k] += n
		}
	}
	t.Logf("refusals: warm-up %v, 2 s slow %v, 10 s more slow %v, after %v, 20 s flapping %v", warm, slow, long, after, flap)
	for name, r := range map[string]map[translate.Kind]int{"warm-up": warm, "the first 2 s of timeouts": slow, "Redis back": after, "flapping": flap} {
		if len(r) != 0 {
			t.Errorf("%s: refusals %v, want none on a quota of 1e15", name, r)
		}
	}
	if n := long[translate.KindQuotaExhausted]; n != 0 {
		t.Errorf("%d calls refused as quota_exhausted on a quota of 1e15 while refills timed out", n)
	}
}
