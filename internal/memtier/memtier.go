// Package memtier is the mechanism of a Client's translation memory: its own memory
// (package fidelity/memory) in front of an optional memory shared by the Clients of a
// store. A lookup takes the own exact match, else the shared one (kept in the own memory
// too, where fuzzy lookups see it), else the own fuzzy match; a translation is kept in
// both. The shared memory is an optimisation: its errors count as a miss and are never
// returned. The root keeps the policy: which requests take part, under which key, and
// which entries a request may take.
package memtier

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/fanyi-go/translate/fidelity/memory"
)

// Shared is a memory shared by several Clients: the root's MemoryStore.
type Shared interface {
	// MemoryGet returns the entry kept for text from source to target, exactly.
	MemoryGet(ctx context.Context, source, target, text string) (e memory.Entry, found bool, err error)
	// MemoryPut keeps e for every Client of the store.
	MemoryPut(ctx context.Context, e memory.Entry) error
}

// Tiers is a Client's own memory and the shared one. Its methods are safe for concurrent
// use when its stores are; the zero value is not usable (Own is required).
type Tiers struct {
	Own    memory.Store
	Shared Shared        // nil: none
	Wait   time.Duration // bound on each call of Shared
}

// Find returns the best entry for text from source to target at threshold th (1: exact
// only): the own exact match, else the shared one, else the own fuzzy match; false when
// none qualifies or ctx ended.
func (t *Tiers) Find(ctx context.Context, source, target, text string, th float64) (memory.Match, bool) {
	m, ok, err := t.Own.Lookup(ctx, source, target, text, th)
	if err != nil && ctx.Err() != nil {
		return memory.Match{}, false
	}
	ok = ok && err == nil
	if !ok || !m.Exact() {
		if sm, found := t.sharedFind(ctx, source, target, text); found {
			return sm, true
		}
	}
	return m, ok
}

// sharedFind looks text up in the shared memory, exactly, and keeps what it finds in the
// own memory too. Errors count as a miss.
func (t *Tiers) sharedFind(ctx context.Context, source, target, text string) (memory.Match, bool) {
	if t.Shared == nil {
		return memory.Match{}, false
	}
	sctx, cancel := context.WithTimeout(ctx, t.Wait)
	defer cancel()
	e, found, err := t.Shared.MemoryGet(sctx, source, target, text)
	if err != nil || !found {
		return memory.Match{}, false
	}
	e.Source, e.Target, e.Text = source, target, text
	_ = t.Own.Put(ctx, e) // too large for the own memory: served all the same
	return memory.Match{Entry: e, Score: 1}, true
}

// Put keeps e in the own memory and in the shared one. It returns the own memory's error,
// but not memory.ErrTooLarge (an entry too large is not kept, as the memory's bounds mean);
// the shared memory's errors are its own to report, and a lost entry costs a call.
func (t *Tiers) Put(e memory.Entry) error {
	err := t.Own.Put(context.Background(), e)
	if errors.Is(err, memory.ErrTooLarge) {
		err = nil
	}
	if t.Shared != nil {
		ctx, cancel := context.WithTimeout(context.Background(), t.Wait)
		defer cancel()
		_ = t.Shared.MemoryPut(ctx, e)
	}
	return err
}

// Import reads a TMX document (memory.ImportTMX) into own and returns how many entries it
// stored and how many segments it skipped: those ImportTMX skips, those whose languages
// norm refuses (ok false; else it returns the keys to store them under), and those larger
// than own (memory.ErrTooLarge). Another error of own.Put stops the import.
func Import(ctx context.Context, own memory.Store, r io.Reader, norm func(source, target string) (string, string, bool)) (stored, skipped int, err error) {
	refused := 0
	skipped, err = memory.ImportTMX(r, func(e memory.Entry) error {
		src, tgt, ok := norm(e.Source, e.Target)
		if !ok {
			refused++
			return nil
		}
		e.Source, e.Target = src, tgt
		if err := own.Put(ctx, e); err != nil {
			if errors.Is(err, memory.ErrTooLarge) {
				refused++
				return nil
			}
			return err
		}
		stored++
		return nil
	})
	return stored, skipped + refused, err
}
