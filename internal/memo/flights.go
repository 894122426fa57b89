package memo

import (
	"context"
	"sync"
	"sync/atomic"
)

// Flight is one piece of work that identical concurrent requests share. The caller
// provides its storage (embed it in something the request allocates anyway) so that
// leading a flight allocates nothing. The zero value is ready; a Flight is used for one
// Join and must not be reused or copied afterwards: followers may still read it.
type Flight[K comparable, V any] struct {
	hash  uint64
	key   K
	owner *Flights[K, V]
	next  atomic.Pointer[Flight[K, V]] // next flight in the slot's chain
	// done is nil until the first follower that waits puts its channel there, which Land
	// closes; Land leaves landed there: v and err are set. (No flag beside it: a Flight
	// lives in its request's one allocation, kept within a size class.)
	done atomic.Pointer[chan struct{}]
	v    V
	err  error
}

// landed is what Flight.done holds once the flight has landed.
var landed = new(chan struct{})

// Flights coalesces concurrent identical work: the first Join of a key leads a flight,
// later Joins of that key follow it until the leader Lands it. It is safe for concurrent
// use; the zero value is ready and must not be copied after first use.
//
// Flights in the air are kept in a table of flightSlots slots, each the head of a chain of
// the flights whose hash maps to it. A Join that finds its slot empty leads with one CAS,
// and one whose slot's head is its own key follows with one load: no lock, no allocation.
// Only a Join whose slot holds another key's flight takes the slot's stripe lock and walks
// the chain, so identical requests always meet, at any load.
type Flights[K comparable, V any] struct {
	slots   [flightSlots]atomic.Pointer[Flight[K, V]]
	locks   [flightLocks]sync.Mutex // slot i's chain is changed under locks[i%flightLocks]
	waiting atomic.Int64
}

const (
	flightSlots = 1024 // more than the flights a process usually has in the air
	flightLocks = 64
)

func (fs *Flights[K, V]) slot(h uint64) (*atomic.Pointer[Flight[K, V]], *sync.Mutex) {
	i := h % flightSlots
	return &fs.slots[i], &fs.locks[i%flightLocks]
}

// Join registers f as the flight for (hash, key) and returns it with leader true, or
// returns the flight an identical Join leads, with leader false. A leader must Land its
// flight whatever happens (defer it); a follower Waits on g. A landed flight has left the
// table, so a follower that will not take its leader's outcome (the leader's caller gave
// up) Joins again with a fresh Flight, and meets the others who do the same.
func (fs *Flights[K, V]) Join(hash uint64, key K, f *Flight[K, V]) (g *Flight[K, V], leader bool) {
	f.hash, f.key, f.owner = hash, key, fs
	s, mu := fs.slot(hash)
	if s.CompareAndSwap(nil, f) {
		return f, true
	}
	if g := s.Load(); g != nil && g.hash == hash && g.key == key {
		f.owner = nil // not in the table: Landing it just publishes
		return g, false
	}
	mu.Lock()
	defer mu.Unlock()
	for {
		head := s.Load()
		for g := head; g != nil; g = g.next.Load() {
			if g.hash == hash && g.key == key {
				f.owner = nil
				return g, false
			}
		}
		// Under mu only a lock-free Land of a lone head or a lock-free Join into an
		// empty slot can change the head; then look again.
		f.next.Store(head)
		if s.CompareAndSwap(head, f) {
			return f, true
		}
	}
}

// Land publishes the leader's outcome, takes f out of the table and wakes its followers.
// hash and key must be those f joined with. Landing a flight that is not in the table (never
// joined, or given to a Join that returned another flight: its caller runs alone) just
// publishes, touching nothing shared.
func (fs *Flights[K, V]) Land(hash uint64, key K, f *Flight[K, V], v V, err error) {
	f.v, f.err = v, err
	if f.owner == nil {
		f.done.Store(landed)
		return
	}
	fs.remove(hash, f)
	if ch := f.done.Swap(landed); ch != nil {
		close(*ch)
	}
}

// remove unlinks f from its slot's chain. A lone head leaves with one CAS: f.next, once
// nil, stays nil, because Joins add at the head.
func (fs *Flights[K, V]) remove(hash uint64, f *Flight[K, V]) {
	s, mu := fs.slot(hash)
	if f.next.Load() == nil && s.CompareAndSwap(f, nil) {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if s.CompareAndSwap(f, f.next.Load()) {
		return
	}
	for p := s.Load(); p != nil; p = p.next.Load() {
		if p.next.Load() == f {
			p.next.Store(f.next.Load())
			return
		}
	}
}

// Wait returns the flight's outcome once it has landed, or ctx's error if ctx ends first.
//
// Land swaps landed into f.done and closes the channel it takes out; a follower finds
// either landed (the outcome is set) or a channel that Land will close, its own or
// another follower's.
func (f *Flight[K, V]) Wait(ctx context.Context) (V, error) {
	ch := f.done.Load()
	if ch == landed {
		return f.v, f.err
	}
	if f.owner != nil {
		f.owner.waiting.Add(1)
		defer f.owner.waiting.Add(-1)
	}
	if ch == nil {
		nc := make(chan struct{})
		if f.done.CompareAndSwap(nil, &nc) {
			ch = &nc
		} else if ch = f.done.Load(); ch == landed {
			return f.v, f.err
		}
	}
	select {
	case <-*ch:
		return f.v, f.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

// Waiting returns how many followers are waiting in Wait (for tests).
func (fs *Flights[K, V]) Waiting() int { return int(fs.waiting.Load()) }
