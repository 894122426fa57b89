package memo

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type fl = Flight[key, string]

// outcome is what Wait returned, for comparing with cmp.
type outcome struct {
	V   string
	Err string
}

func wait(ctx context.Context, g *fl) outcome {
	v, err := g.Wait(ctx)
	o := outcome{V: v}
	if err != nil {
		o.Err = err.Error()
	}
	return o
}

// waitFor yields until cond holds: the tests' way to let goroutines reach a point without
// sleeping.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 10_000_000 {
		if cond() {
			return
		}
		runtime.Gosched()
	}
	t.Fatal("condition never held")
}

// empty reports whether no flight is left in the table.
func empty(fs *Flights[key, string]) bool {
	for i := range fs.slots {
		if fs.slots[i].Load() != nil {
			return false
		}
	}
	return true
}

func otherHash(i int) uint64 { return uint64(i) * 0x9e3779b97f4a7c15 }
func otherKey(i int) key     { return key{fmt.Sprint("other", i), 0} }
func otherLand(fs *Flights[key, string], others []fl, i int) {
	fs.Land(otherHash(i), otherKey(i), &others[i], "", nil)
}

// joinOthers puts n flights of distinct keys in the air, filling every slot.
func joinOthers(t *testing.T, fs *Flights[key, string], n int) []fl {
	others := make([]fl, n)
	for i := range others {
		if g, lead := fs.Join(otherHash(i), otherKey(i), &others[i]); !lead || g != &others[i] {
			t.Fatalf("other flight %d did not lead", i)
		}
	}
	return others
}

// churn lands the even others and leads and lands a new flight in each one's place.
func churn(fs *Flights[key, string], others []fl) {
	for i := 0; i < len(others); i += 2 {
		otherLand(fs, others, i)
		var f fl
		k := key{fmt.Sprint("new", i), 0}
		fs.Join(otherHash(i), k, &f)
		fs.Land(otherHash(i), k, &f, "", nil)
	}
}

// 50 concurrent identical Joins make one leader, even with 3,000 other flights in the air
// filling every slot and landing meanwhile (the old direct-mapped table made 50 leaders).
func TestFlightsMergeUnderLoad(t *testing.T) {
	var fs Flights[key, string]
	others := joinOthers(t, &fs, 3000)
	hot, h := key{"hot", 0}, otherHash(1)+flightSlots // others[1]'s slot; it stays in the air
	flights := make([]fl, 50)
	leaders := make(chan *fl, len(flights))
	got := make([]outcome, len(flights))
	var joined, done sync.WaitGroup
	joined.Add(len(flights))
	for i := range flights {
		done.Go(func() {
			g, lead := fs.Join(h, hot, &flights[i])
			if lead {
				leaders <- g
			}
			joined.Done()
			if lead {
				return
			}
			got[i] = wait(context.Background(), g)
		})
	}
	churn(&fs, others)
	joined.Wait()
	if n := len(leaders); n != 1 {
		t.Fatalf("%d leaders among 50 identical Joins, want 1", n)
	}
	leader := <-leaders
	waitFor(t, func() bool { return fs.Waiting() == len(flights)-1 })
	fs.Land(h, hot, leader, "HOT", nil)
	done.Wait()
	for i := range got {
		if &flights[i] != leader {
			if diff := cmp.Diff(outcome{V: "HOT"}, got[i]); diff != "" {
				t.Errorf("follower %d (-want +got):\n%s", i, diff)
			}
		}
	}
	for i := 1; i < len(others); i += 2 {
		otherLand(&fs, others, i)
	}
	if !empty(&fs) {
		t.Error("flights left in the table after every flight landed")
	}
}

// Different keys with one hash never share a flight.
func TestFlightsHashCollisionDifferentKeys(t *testing.T) {
	var fs Flights[key, string]
	var a, b, a2 fl
	if _, lead := fs.Join(9, key{"a", 0}, &a); !lead {
		t.Fatal("a did not lead")
	}
	if g, lead := fs.Join(9, key{"b", 0}, &b); !lead || g != &b {
		t.Fatal("b followed a's flight")
	}
	if g, lead := fs.Join(9, key{"a", 0}, &a2); lead || g != &a {
		t.Fatal("a second a did not follow a's flight")
	}
	fs.Land(9, key{"a", 0}, &a, "A", nil)
	fs.Land(9, key{"b", 0}, &b, "B", nil)
	if diff := cmp.Diff(outcome{V: "A"}, wait(context.Background(), &a)); diff != "" {
		t.Errorf("a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(outcome{V: "B"}, wait(context.Background(), &b)); diff != "" {
		t.Errorf("b (-want +got):\n%s", diff)
	}
	if !empty(&fs) {
		t.Error("flights left in the table")
	}
}

// Landing a flight from the middle, the head or the tail of a slot's chain keeps the
// others findable, and a landed flight is no longer joined.
func TestFlightsChainLanding(t *testing.T) {
	var fs Flights[key, string]
	ks := []key{{"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}}
	fls := make([]fl, len(ks))
	for i, k := range ks {
		fs.Join(uint64(i)*flightSlots, k, &fls[i]) // one slot; chain d, c, b, a
	}
	for _, i := range []int{1, 3, 0, 2} { // middle, head, tail, last
		fs.Land(uint64(i)*flightSlots, ks[i], &fls[i], "", nil)
		var f fl
		if _, lead := fs.Join(uint64(i)*flightSlots, ks[i], &f); !lead {
			t.Errorf("Join(%v) after it landed followed the landed flight", ks[i])
		}
		fs.Land(uint64(i)*flightSlots, ks[i], &f, "", nil)
		for j := range ks {
			if fls[j].done.Load() == landed {
				continue
			}
			var f fl
			if g, lead := fs.Join(uint64(j)*flightSlots, ks[j], &f); lead || g != &fls[j] {
				t.Errorf("after landing %v, Join(%v) did not follow its flight", ks[i], ks[j])
			}
		}
	}
	if !empty(&fs) {
		t.Error("flights left in the table")
	}
}

func TestFlightFollowerContextEnds(t *testing.T) {
	var fs Flights[key, string]
	var lead, follow fl
	fs.Join(1, key{"a", 0}, &lead)
	g, isLeader := fs.Join(1, key{"a", 0}, &follow)
	if isLeader {
		t.Fatal("second Join led")
	}
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan outcome, 1)
	go func() { res <- wait(ctx, g) }()
	waitFor(t, func() bool { return fs.Waiting() == 1 })
	cancel()
	if diff := cmp.Diff(outcome{Err: context.Canceled.Error()}, <-res); diff != "" {
		t.Errorf("Wait after ctx ended (-want +got):\n%s", diff)
	}
	if n := fs.Waiting(); n != 0 {
		t.Errorf("Waiting = %d after the follower left, want 0", n)
	}
	fs.Land(1, key{"a", 0}, &lead, "", errors.New("boom"))
	if diff := cmp.Diff(outcome{Err: "boom"}, wait(context.Background(), g)); diff != "" {
		t.Errorf("Wait after landing (-want +got):\n%s", diff)
	}
}

// Joins and Lands from many goroutines over few slots: every follower gets its own key's
// answer and the table ends empty.
func TestFlightsConcurrent(t *testing.T) {
	var fs Flights[key, string]
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 3000 {
				n := (i*13 + g) % 40
				h := uint64(n % 3 * flightSlots) // 40 keys, 3 hashes, one slot
				k := key{fmt.Sprint(n), 0}
				var f fl
				got, lead := fs.Join(h, k, &f)
				if lead {
					fs.Land(h, k, got, k.text, nil)
					continue
				}
				if v, err := got.Wait(context.Background()); err != nil || v != k.text {
					t.Errorf("follower of %v got %q, %v", k, v, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if !empty(&fs) {
		t.Error("flights left in the table")
	}
}

func TestFlightsJoinLandAllocateNothing(t *testing.T) {
	var fs Flights[key, string]
	k := key{"hello", 1}
	fls := make([]fl, 2000)
	i := 0
	if n := testing.AllocsPerRun(1000, func() {
		f := &fls[i]
		i++
		g, lead := fs.Join(42, k, f)
		if !lead {
			t.Fatal("did not lead")
		}
		fs.Land(42, k, g, "hi", nil)
	}); n != 0 {
		t.Errorf("Join and Land allocate %v times, want 0", n)
	}
}

// A Flight given to a Join that returned another (its caller runs alone: see Join) is not in
// the table: landing it publishes its outcome without touching the table, so it takes no
// lock, even when its slot holds a chain, and leaves the leader's flight to be followed.
func TestFlightsFollowersOwnFlightLandsAlone(t *testing.T) {
	var fs Flights[key, string]
	a, b := key{"a", 0}, key{"b", 0}
	var other, lead, head, chained fl
	fs.Join(flightSlots, b, &other) // another key in the slot: Joins of a walk the chain
	fs.Join(0, a, &lead)
	for _, own := range []*fl{&head, &chained} {
		if own == &chained {
			fs.Land(0, a, &lead, "", nil) // the chain is b's flight alone again
			lead = fl{}
			fs.Join(0, a, &lead)
			fs.Land(flightSlots, b, &other, "", nil)
			other = fl{}
			fs.Join(flightSlots, b, &other) // b heads the chain, a follows it
		}
		if g, isLeader := fs.Join(0, a, own); isLeader || g != &lead {
			t.Fatalf("second Join of a: leader %v, want a follower of the first", isLeader)
		}
		_, mu := fs.slot(0)
		mu.Lock()
		landed := make(chan struct{})
		go func() {
			fs.Land(0, a, own, "alone", nil)
			close(landed)
		}()
		select {
		case <-landed:
		case <-time.After(5 * time.Second):
			t.Error("Land of a follower's own flight waited for the slot's lock")
		}
		mu.Unlock()
		<-landed
		if diff := cmp.Diff(outcome{V: "alone"}, wait(context.Background(), own)); diff != "" {
			t.Errorf("own flight's outcome (-want +got):\n%s", diff)
		}
		var f fl
		if g, isLeader := fs.Join(0, a, &f); isLeader || g != &lead {
			t.Errorf("after the follower's own flight landed, Join of a led: the leader's flight left")
		}
	}
	fs.Land(0, a, &lead, "", nil)
	fs.Land(flightSlots, b, &other, "", nil)
	if !empty(&fs) {
		t.Error("flights left in the table")
	}
}
