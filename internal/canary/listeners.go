package canary

import "sync"

// Listeners are the functions a Step is reported to (the root's OnCanaryStep), kept in the
// order they were added. The zero value is ready; it is safe for concurrent use and must
// not be copied.
type Listeners[T any] struct {
	mu   sync.Mutex
	fns  []listener[T]
	next int
}

type listener[T any] struct {
	id int
	fn func(T)
}

// Add adds fn and returns a function that removes it; calling that twice is harmless.
func (l *Listeners[T]) Add(fn func(T)) (stop func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := l.next
	l.next++
	l.fns = append(l.fns, listener[T]{id, fn})
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for i, x := range l.fns {
			if x.id == id {
				l.fns = append(l.fns[:i:i], l.fns[i+1:]...)
				return
			}
		}
	}
}

// Call calls every listener with v, in the order they were added, without holding the
// lock. A listener's panic is recovered and passed to recovered; the others still run.
func (l *Listeners[T]) Call(v T, recovered func(p any)) {
	l.mu.Lock()
	fns := make([]func(T), len(l.fns))
	for i, x := range l.fns {
		fns[i] = x.fn
	}
	l.mu.Unlock()
	for _, fn := range fns {
		call(fn, v, recovered)
	}
}

func call[T any](fn func(T), v T, recovered func(p any)) {
	defer func() {
		if p := recover(); p != nil {
			recovered(p)
		}
	}()
	fn(v)
}
