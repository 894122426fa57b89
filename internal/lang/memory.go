package lang

import (
	"sync"
	"sync/atomic"
)

// MaxRemembered bounds the pairs a PairMemory holds: the pairs come from user input, and
// past the bound the oldest memory is dropped.
const MaxRemembered = 4096

// PairMemory remembers language pairs (by id) up to MaxRemembered; when full it starts over.
// Asking it while it holds nothing costs one atomic load. The zero value is empty and ready;
// it is safe for concurrent use.
type PairMemory struct {
	any atomic.Bool // fast path: nothing remembered
	mu  sync.RWMutex
	m   map[uint64]struct{}
}

// Has reports whether the pair src->tgt is remembered.
func (p *PairMemory) Has(src, tgt int) bool {
	if !p.any.Load() {
		return false
	}
	p.mu.RLock()
	_, ok := p.m[PairKey(src, tgt)]
	p.mu.RUnlock()
	return ok
}

// Add remembers the pair src->tgt.
func (p *PairMemory) Add(src, tgt int) {
	p.mu.Lock()
	if p.m == nil || len(p.m) >= MaxRemembered {
		p.m = make(map[uint64]struct{})
	}
	p.m[PairKey(src, tgt)] = struct{}{}
	p.mu.Unlock()
	p.any.Store(true)
}

// Len returns how many pairs are remembered.
func (p *PairMemory) Len() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.m)
}

// Forget drops every pair remembered.
func (p *PairMemory) Forget() {
	p.mu.Lock()
	p.m = nil
	p.mu.Unlock()
	p.any.Store(false)
}
