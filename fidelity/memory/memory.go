// Package memory is a translation memory: earlier translations found again by exact or
// fuzzy match, bounded in size, with TMX import and export.
//
// # Similarity
//
// The score of a stored text s for a looked-up text t is
//
//	1 - lev(s, t) / max(|s|, |t|)
//
// over the NFC normal forms of both, lev being the Levenshtein distance counting one per
// inserted, deleted or substituted code point and |x| the number of code points (two
// empty texts score 1). Only an identical text scores 1. A fuzzy match is the stored text
// with the best score at or above the threshold (default 0.95: one edit in twenty code
// points); of texts scoring alike, the one that sorts first wins. Texts longer than Options.MaxFuzzyRunes are
// matched exactly only.
package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Entry is one translation unit: Text in language Source was translated as Translation in
// language Target by Engine ("" when unknown, as for imported entries).
type Entry struct {
	Source, Target    string
	Text, Translation string
	Engine            string
}

// Match is an entry found for a text, with its score (1 for an exact match).
type Match struct {
	Entry
	Score float64
}

// Exact reports whether the match is exact.
func (m Match) Exact() bool { return m.Score == 1 }

// Store is where a translation memory lives: in process (Memory) or shared (a Redis
// store, later). Implementations must be safe for concurrent use, bound what they keep,
// return ctx's error when ctx ends, and follow the package's similarity definition so
// that a threshold means the same everywhere.
type Store interface {
	// Lookup returns the best entry for text from source to target: exact when there is
	// one, else the best fuzzy match scoring at least threshold (in (0, 1]; 1 asks for
	// exact matches only). found is false when none qualifies.
	Lookup(ctx context.Context, source, target, text string, threshold float64) (m Match, found bool, err error)
	// Put stores an entry, replacing the one with the same languages and text.
	Put(ctx context.Context, e Entry) error
}

// ErrTooLarge is returned by Put for an entry larger than the whole memory.
var ErrTooLarge = errors.New("memory: entry larger than the memory's byte bound")

// Options bound a Memory. The zero value means the defaults.
type Options struct {
	// MaxEntries bounds the entries kept; 1..10,000,000, default 10,000 (0).
	MaxEntries int
	// MaxBytes bounds the bytes of text kept (texts, translations, languages and engine,
	// plus 4 bytes per code point of a text kept for fuzzy matching); 1 KiB..64 GiB,
	// default 32 MiB (0).
	MaxBytes int64
	// MaxFuzzyRunes is the longest text, in code points, matched fuzzily; longer texts
	// match exactly only. 1..100,000, default 1,000 (0).
	MaxFuzzyRunes int
}

// Defaults and ranges of Options.
const (
	DefaultMaxEntries    = 10_000
	DefaultMaxBytes      = 32 << 20
	DefaultMaxFuzzyRunes = 1000
	// DefaultThreshold is the fuzzy threshold callers should use when they have none.
	DefaultThreshold = 0.95
)

func (o Options) withDefaults() (Options, error) {
	if o.MaxEntries == 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxFuzzyRunes == 0 {
		o.MaxFuzzyRunes = DefaultMaxFuzzyRunes
	}
	switch {
	case o.MaxEntries < 1 || o.MaxEntries > 10_000_000:
		return o, fmt.Errorf("memory: MaxEntries %d out of 1..10000000", o.MaxEntries)
	case o.MaxBytes < 1<<10 || o.MaxBytes > 64<<30:
		return o, fmt.Errorf("memory: MaxBytes %d out of 1KiB..64GiB", o.MaxBytes)
	case o.MaxFuzzyRunes < 1 || o.MaxFuzzyRunes > 100_000:
		return o, fmt.Errorf("memory: MaxFuzzyRunes %d out of 1..100000", o.MaxFuzzyRunes)
	}
	return o, nil
}

// key identifies an entry: the lower-cased languages and the NFC text.
type key struct {
	source, target, text string
}

type pair struct{ source, target string }

func keyOf(source, target, text string) key {
	return key{strings.ToLower(source), strings.ToLower(target), norm.NFC.String(text)}
}

// Score returns the similarity of a and b as the package documentation defines it.
func Score(a, b string) float64 {
	ra, rb := []rune(norm.NFC.String(a)), []rune(norm.NFC.String(b))
	n := max(len(ra), len(rb))
	if n == 0 {
		return 1
	}
	return 1 - float64(levenshtein(ra, rb, n))/float64(n)
}

// maxEdits returns the most edits a pair of texts of longest length n can have and still
// score at least threshold.
func maxEdits(n int, threshold float64) int {
	return int((1-threshold)*float64(n) + 1e-9)
}

// levenshtein returns the edit distance of a and b when it is at most k, and k+1
// otherwise, looking only at the band of width 2k+1 around the diagonal.
func levenshtein(a, b []rune, k int) int { return levenshteinIn(a, b, k, nil) }

// levenshteinIn is levenshtein with its two rows in buf when it holds 2(len(b)+1) ints, so
// that a search over many candidates allocates once.
func levenshteinIn(a, b []rune, k int, buf []int) int {
	if d := len(a) - len(b); d > k || -d > k {
		return k + 1
	}
	inf := k + 1
	if len(buf) < 2*(len(b)+1) {
		buf = make([]int, 2*(len(b)+1))
	}
	prev, cur := buf[:len(b)+1], buf[len(b)+1:2*(len(b)+1)]
	for j := range prev {
		prev[j] = min(j, inf)
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-k), min(len(b), i+k)
		cur[lo-1] = inf
		if lo == 1 {
			cur[0] = min(i, inf)
		}
		rowMin := cur[lo-1]
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost, inf)
			rowMin = min(rowMin, cur[j])
		}
		if hi < len(b) {
			cur[hi+1] = inf
		}
		if rowMin >= inf {
			return inf
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], inf)
}
