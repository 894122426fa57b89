package memory

import (
	"context"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Memory is a translation memory in process: a Store bounded in entries and bytes, which
// drops the least recently used entries first. It is safe for concurrent use. Build it
// with New.
type Memory struct {
	opts Options

	mu    sync.Mutex
	lru   *simplelru.LRU[key, *item]
	bytes int64
	pairs map[pair]map[key]*item // the entries of each pair, for fuzzy matching
}

// item is one stored entry; immutable once stored.
type item struct {
	e     Entry
	k     key
	runes []rune // the NFC text, when short enough for fuzzy matching
	size  int64
}

var _ Store = (*Memory)(nil)

// New returns an empty memory bounded by o; it fails on an option out of its range.
func New(o Options) (*Memory, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Memory{opts: o, pairs: make(map[pair]map[key]*item)}
	m.lru, err = simplelru.NewLRU[key, *item](o.MaxEntries, m.evicted)
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	return m, nil
}

// evicted forgets an entry the LRU dropped; it runs under m.mu.
func (m *Memory) evicted(k key, it *item) {
	m.bytes -= it.size
	p := pair{k.source, k.target}
	delete(m.pairs[p], k)
	if len(m.pairs[p]) == 0 {
		delete(m.pairs, p)
	}
}

// Put stores e, replacing the entry with the same languages and text, and drops the least
// recently used entries while the memory is over its bounds. An entry larger than
// Options.MaxBytes by itself is refused with ErrTooLarge.
func (m *Memory) Put(ctx context.Context, e Entry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k := keyOf(e.Source, e.Target, e.Text)
	it := &item{e: e, k: k}
	if n := utf8.RuneCountInString(k.text); n <= m.opts.MaxFuzzyRunes {
		it.runes = []rune(k.text)
	}
	it.size = int64(len(e.Source)+len(e.Target)+len(e.Text)+len(e.Translation)+len(e.Engine)) + 4*int64(len(it.runes))
	if it.size > m.opts.MaxBytes {
		return ErrTooLarge
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lru.Remove(k) // through evicted: the byte count and index forget the old entry
	m.lru.Add(k, it)
	m.bytes += it.size
	p := pair{k.source, k.target}
	if m.pairs[p] == nil {
		m.pairs[p] = make(map[key]*item)
	}
	m.pairs[p][k] = it
	for m.bytes > m.opts.MaxBytes {
		m.lru.RemoveOldest()
	}
	return nil
}

// Lookup returns the exact entry for text, or else the best fuzzy one scoring at least
// threshold; see the package documentation. A threshold outside (0, 1] is an error.
func (m *Memory) Lookup(ctx context.Context, source, target, text string, threshold float64) (Match, bool, error) {
	if err := ctx.Err(); err != nil {
		return Match{}, false, err
	}
	if !(threshold > 0 && threshold <= 1) {
		return Match{}, false, fmt.Errorf("memory: threshold %v out of (0, 1]", threshold)
	}
	k := keyOf(source, target, text)
	m.mu.Lock()
	it, ok := m.lru.Get(k)
	var cands []*item
	if !ok && threshold < 1 {
		cands = m.candidates(k)
	}
	m.mu.Unlock()
	if ok {
		return Match{Entry: it.e, Score: 1}, true, nil
	}
	best, score := m.best(k.text, cands, threshold)
	if best == nil {
		return Match{}, false, nil
	}
	m.mu.Lock()
	m.lru.Get(best.k) // a match counts as a use
	m.mu.Unlock()
	return Match{Entry: best.e, Score: score}, true, nil
}

// candidates returns the pair's entries that may match fuzzily; it runs under m.mu.
func (m *Memory) candidates(k key) []*item {
	entries := m.pairs[pair{k.source, k.target}]
	out := make([]*item, 0, len(entries))
	for _, it := range entries {
		if it.runes != nil {
			out = append(out, it)
		}
	}
	return out
}

// best returns the candidate scoring highest at or above threshold for text.
func (m *Memory) best(text string, cands []*item, threshold float64) (*item, float64) {
	r := []rune(text)
	if len(r) > m.opts.MaxFuzzyRunes || len(cands) == 0 {
		return nil, 0
	}
	var best *item
	bestScore := -1.0
	buf := make([]int, 2*(len(r)+maxEdits(len(r), threshold)+2)) // rows for every candidate in reach
	for _, it := range cands {
		n := max(len(r), len(it.runes))
		k := maxEdits(n, threshold)
		d := levenshteinIn(r, it.runes, k, buf)
		if d > k {
			continue
		}
		s := 1 - float64(d)/float64(n)
		if s > bestScore || s == bestScore && it.k.text < best.k.text {
			best, bestScore = it, s
		}
	}
	return best, bestScore
}

// Len returns the number of entries.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lru.Len()
}

// Bytes returns the bytes the entries take, as Options.MaxBytes counts them.
func (m *Memory) Bytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}

// Entries returns a copy of the entries, least recently used first.
func (m *Memory) Entries() []Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Entry, 0, m.lru.Len())
	for _, it := range m.lru.Values() {
		out = append(out, it.e)
	}
	return out
}
