// Package longtext is the mechanism the root package uses to translate a text longer than
// one engine call as several units at once: the limits of one text and of one call
// (TextChars, CallChars), a pool that runs the units and stops at the first failure (Run),
// the state the units' walks share, where the next one starts (Cursor), and their outcomes
// added up (Sum).
package longtext

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// TextChars is the most code points of one text in a call of an engine that takes at most
// maxText in one text and maxCall in one call: maxText, capped by maxCall; 0 means
// unlimited (and so does either limit at 0).
func TextChars(maxText, maxCall int) int {
	t := maxText
	if t == 0 || maxCall > 0 && t > maxCall {
		t = maxCall
	}
	return t
}

// CallChars is the most code points one call of an engine carries: maxCall, or else
// maxTexts texts (at least 1) of maxText each; 0 means unlimited, as does a product past
// math.MaxInt32.
func CallChars(maxCall, maxText, maxTexts int) int {
	switch {
	case maxCall > 0:
		return maxCall
	case maxText > 0 && maxText <= math.MaxInt32/max(1, maxTexts):
		return maxText * max(1, maxTexts)
	}
	return 0
}

// Run calls do for the units 0..n-1, each once, on at most conc goroutines (at least
// one), with a context derived from ctx. Once a call reports false, or ctx ends, no unit
// starts any more and the context of the calls running is cancelled. Run returns when
// every call has returned; no goroutine outlives it.
func Run(ctx context.Context, n, conc int, do func(ctx context.Context, i int) bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(conc, n)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n && ctx.Err() == nil; i = int(next.Add(1)) - 1 {
				if !do(ctx, i) {
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
}

// Cursor is the state the units' walks share: where the next one starts (S), which a
// walk that moved on (it failed over) sets for the units after it, and the first error.
// It is safe for concurrent use; the S it holds is handed out by value and must not be
// changed in place. The zero value holds the zero S and no error.
type Cursor[S any] struct {
	mu  sync.Mutex
	s   S
	err error
}

// NewCursor returns a cursor at s.
func NewCursor[S any](s S) *Cursor[S] { return &Cursor[S]{s: s} }

// Load returns where the next unit's walk starts.
func (c *Cursor[S]) Load() S {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s
}

// Update calls f with the cursor's S, under the cursor's lock: what f leaves there is
// where the units' walks that start from now on start. f must be quick and must not call
// the cursor.
func (c *Cursor[S]) Update(f func(s *S)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.s)
}

// Fail records err, unless an error is recorded already.
func (c *Cursor[S]) Fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

// Err returns the first error recorded, or nil.
func (c *Cursor[S]) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Part is one unit's outcome; A is the caller's record of one attempt.
type Part[A any] struct {
	Text     string   // the unit's translation
	By       []string // the engines that made it, in order
	Cost     float64
	Source   string // the detected source, or ""
	Attempts []A
	Degraded bool
	Ended    int64 // when its last call returned, on the caller's clock
}

// Total is the units' outcomes together.
type Total[A any] struct {
	Texts    []string // the units' translations in order, to stitch
	By       []string // the units' engines in order
	Cost     float64  // the sum of the units' costs
	Source   string   // the first unit's detected source that is not ""
	Attempts []A      // the attempts given to Sum, then the units' in order
	Degraded bool     // a unit is degraded
	Ended    int64    // the last unit's end
}

// Sum adds up the units' outcomes, in order, appending their attempts to attempts.
func Sum[A any](parts []Part[A], attempts []A) Total[A] {
	by, tried := 0, 0
	for i := range parts {
		by, tried = by+len(parts[i].By), tried+len(parts[i].Attempts)
	}
	t := Total[A]{Texts: make([]string, len(parts)), By: make([]string, 0, by), Attempts: slices.Grow(attempts, tried)}
	for i := range parts {
		p := &parts[i]
		t.Texts[i] = p.Text
		t.By = append(t.By, p.By...)
		t.Cost += p.Cost
		t.Source = cmp.Or(t.Source, p.Source)
		t.Attempts = append(t.Attempts, p.Attempts...)
		t.Degraded = t.Degraded || p.Degraded
		t.Ended = max(t.Ended, p.Ended)
	}
	return t
}
