package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
)

// BenchmarkAdmitSettle is one engine call's store traffic on loopback: Admit then Settle.
func BenchmarkAdmitSettle(b *testing.B) {
	f := newFixture(b, WithCache(time.Hour))
	rt := new(roundTrips)
	f.rdb.AddHook(rt)
	a := adm("deepl", 0.001, 1e9)
	a.Quota, a.Chars = 1e12, 20
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a.RequestID = fmt.Sprint("r", i)
		a.CacheKey = a.RequestID
		i++
		got, err := f.st.Admit(context.Background(), a)
		if err != nil || got.Lease == "" {
			b.Fatal(err, got)
		}
		if err := f.st.Settle(context.Background(), translate.Settlement{Lease: got.Lease, Sent: true,
			Credits: 0.001, Chars: 20, Answer: &translate.StoredAnswer{Text: "x"}, CacheKey: a.CacheKey}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rt.take())/float64(b.N), "roundtrips/op")
}

// BenchmarkAdmitSettleBlocks is the same call with no request id and no cache key: the
// budget and the quota are taken from leased blocks in process.
func BenchmarkAdmitSettleBlocks(b *testing.B) {
	f := newFixture(b)
	rt := new(roundTrips)
	f.rdb.AddHook(rt)
	a := adm("deepl", 0.001, 1e9)
	a.Quota, a.Chars = 1e12, 20
	b.ReportAllocs()
	for b.Loop() {
		got, err := f.st.Admit(context.Background(), a)
		if err != nil || got.Lease == "" {
			b.Fatal(err, got)
		}
		if err := f.st.Settle(context.Background(), translate.Settlement{Lease: got.Lease, Sent: true,
			Credits: 0.001, Chars: 20}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rt.take())/float64(b.N), "roundtrips/op")
}
