package score

import (
	"slices"
	"sync/atomic"
)

// Set is a small bitset of engine indices (non-negative). The zero value is empty; indices
// below 128 cost no allocation.
type Set struct {
	small [2]uint64
	big   []uint64
	n     int // additions; 0 means empty, the common case on a first decision
}

// Has reports whether i is in the set.
func (s *Set) Has(i int) bool {
	if s.n == 0 {
		return false
	}
	u := uint(i)
	if u < 128 {
		return s.small[u>>6]&(1<<(u&63)) != 0
	}
	j := u>>6 - 2
	return j < uint(len(s.big)) && s.big[j]&(1<<(u&63)) != 0
}

// Del removes i.
func (s *Set) Del(i int) {
	if i < 128 {
		s.small[i/64] &^= 1 << (i % 64)
		return
	}
	if j := i/64 - 2; j < len(s.big) {
		s.big[j] &^= 1 << (i % 64)
	}
}

// Add adds i.
func (s *Set) Add(i int) {
	s.n++
	if i < 128 {
		s.small[i/64] |= 1 << (i % 64)
		return
	}
	j := i/64 - 2
	for len(s.big) <= j {
		s.big = append(s.big, 0)
	}
	s.big[j] |= 1 << (i % 64)
}

// Clone returns a copy of s that shares no memory with it.
func (s Set) Clone() Set {
	s.big = slices.Clone(s.big)
	return s
}

// RaiseTo raises a to t unless it is already later: a time (unix nanos) that several
// goroutines may push back concurrently.
func RaiseTo(a *atomic.Int64, t int64) {
	for {
		old := a.Load()
		if old >= t || a.CompareAndSwap(old, t) {
			return
		}
	}
}
