// Package registry holds named values registered at init time and looked up later, the
// way database/sql keeps its drivers: the translate package keeps its engine types here
// (RegisterEngineType). The caller decides what a bad registration means (translate
// panics); this package only keeps the names.
package registry

import (
	"slices"
	"sync"
)

// A Registry maps names to values. The zero value is empty and ready; it is safe for
// concurrent use and must not be copied after first use.
type Registry[V any] struct {
	mu sync.RWMutex
	m  map[string]V
}

// Add registers v under name and reports true, or reports false and changes nothing when
// name is taken.
func (r *Registry[V]) Add(name string, v V) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[name]; dup {
		return false
	}
	if r.m == nil {
		r.m = map[string]V{}
	}
	r.m[name] = v
	return true
}

// Get returns the value registered under name.
func (r *Registry[V]) Get(name string) (V, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.m[name]
	return v, ok
}

// Names returns the registered names, sorted.
func (r *Registry[V]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.m))
	for n := range r.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Call returns f(arg), and panicked true (with f's results zero) when f panics; the panic
// value is dropped, so that nothing it holds (a credential) can reach an error.
func Call[A, R any](f func(A) (R, error), arg A) (r R, err error, panicked bool) {
	defer func() {
		if recover() != nil {
			var zero R
			r, err, panicked = zero, nil, true
		}
	}()
	r, err = f(arg)
	return r, err, false
}
