package health

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestWindowSpansFiveMinutes(t *testing.T) {
	var w Window
	t0 := int64(1_000_000) * int64(time.Second)
	w.Add(t0, Sample{Calls: 10, Fails: 5})
	for i := 1; i <= 29; i++ { // 29 more folds 10s apart: the first still counts
		w.Add(t0+int64(i)*int64(10*time.Second), Sample{Calls: 10, OKCalls: 10})
	}
	now := t0 + 29*int64(10*time.Second)
	if diff := cmp.Diff(Sample{Calls: 300, Fails: 5, OKCalls: 290}, w.Sum(now)); diff != "" {
		t.Errorf("within 5 minutes (-want +got):\n%s", diff)
	}
	now += int64(10 * time.Second) // the first fold is 5 minutes old
	if diff := cmp.Diff(Sample{Calls: 290, OKCalls: 290}, w.Sum(now)); diff != "" {
		t.Errorf("after 5 minutes (-want +got):\n%s", diff)
	}
	w.Add(now+int64(time.Hour), Sample{Calls: 1, Fails: 1})
	if diff := cmp.Diff(Sample{Calls: 1, Fails: 1}, w.Sum(now+int64(time.Hour))); diff != "" {
		t.Errorf("an hour later (-want +got):\n%s", diff)
	}
}

func TestAvailabilityWeighsLatency(t *testing.T) {
	at := func(lat time.Duration, fails int64) float64 {
		a, ok := Availability(Sample{Calls: 100, Fails: fails, OKCalls: 100 - fails, LatNanos: (100 - fails) * int64(lat)}, 5*time.Second)
		if !ok {
			t.Fatal("no availability")
		}
		return a
	}
	got := []float64{at(40*time.Millisecond, 0), at(120*time.Millisecond, 0), at(40*time.Millisecond, 10), at(5*time.Second, 0)}
	want := []float64{1 - 0.5*0.04/5.04, 1 - 0.5*0.12/5.12, 0.9 * (1 - 0.5*0.04/5.04), 0.75}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("availability (-want +got):\n%s", diff)
	}
	if got[0] <= got[1] {
		t.Errorf("40ms %v, 120ms %v: want the faster engine more available", got[0], got[1])
	}
	if _, ok := Availability(Sample{}, time.Second); ok {
		t.Error("an empty sample has an availability")
	}
}

func TestPairsFoldBadRate(t *testing.T) {
	var p Pairs
	const ja, de = 1, 2
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				p.Record(uint64(g*10+i), ja, true)
				p.Record(uint64(g*10+i), de, false)
			}
		}()
	}
	wg.Wait()
	if !p.Clean() {
		t.Fatal("standing before the fold")
	}
	var rates []float64
	p.Fold()
	st, _ := p.State(ja)
	rates = append(rates, st.Bad)
	if _, ok := p.State(de); ok {
		t.Error("en-de is not clean")
	}
	p.Record(0, ja, false) // one good call: a third of a full fold's weight
	p.Fold()
	st, _ = p.State(ja)
	rates = append(rates, st.Bad)
	for range 6 { // no calls: the rate halves each fold, then is clean
		p.Fold()
		st, _ = p.State(ja)
		rates = append(rates, st.Bad)
	}
	want := []float64{0.5, 0.5 * (1 - 1.0/6), 0.5 * 5 / 6 / 2, 0.5 * 5 / 6 / 4, 0.5 * 5 / 6 / 8, 0.5 * 5 / 6 / 16, 0.5 * 5 / 6 / 32, 0}
	if diff := cmp.Diff(want, rates, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("rates by fold (-want +got):\n%s", diff)
	}
	if !p.Clean() {
		t.Error("not clean after recovering")
	}
}

func TestPairsProbeMarks(t *testing.T) {
	var p Pairs
	p.Record(1, 7, false)
	p.Record(1, 8, false)
	p.Record(1, 8, false)
	p.Fold()
	if !p.MarkDown(9) {
		t.Fatal("MarkDown refused")
	}
	if st, ok := p.State(9); !ok || !st.ProbeDown {
		t.Fatalf("State = %+v, %v; want down at once", st, ok)
	}
	if diff := cmp.Diff([]uint64{9, 8, 7}, p.ToProbe(nil, 5)); diff != "" {
		t.Errorf("ToProbe (-want +got):\n%s", diff)
	}
	p.Passed(9)
	if !p.Clean() {
		t.Error("a passing probe left the pair down")
	}
}

func TestPairsBounded(t *testing.T) {
	var p Pairs
	for i := range MaxPairs + 10 {
		p.Record(0, uint64(i), true)
	}
	if got := p.Untracked(); got != 10 {
		t.Errorf("Untracked = %d, want 10", got)
	}
	for range IdleFolds + 8 { // every rate decays to 0, then the slots are idle long enough
		p.Fold()
	}
	p.Record(0, 1000, true)
	if got := p.Untracked(); got != 10 {
		t.Errorf("Untracked = %d after the idle pairs left, want still 10", got)
	}
	if n := p.used.Load(); n != 1 {
		t.Errorf("%d pairs tracked, want 1", n)
	}
}

func TestPairsRecordAllocatesNothing(t *testing.T) {
	var p Pairs
	pair := uint64(0)
	if n := testing.AllocsPerRun(100, func() { pair++; p.Record(pair, pair, true) }); n != 0 {
		t.Errorf("Record allocates %v times", n)
	}
}

func BenchmarkPairsRecordParallel(b *testing.B) {
	var p Pairs
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		k := uint64(0)
		for pb.Next() {
			k++
			p.Record(k*0x9e3779b97f4a7c15, k%4, false)
		}
	})
}
