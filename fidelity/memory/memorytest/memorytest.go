// Package memorytest is a conformance suite for memory.Store implementations: a Redis
// store, or any other, runs Run against a fresh store and passes when it behaves as the
// in-process memory.Memory does.
package memorytest

import (
	"context"
	"errors"
	"testing"

	"github.com/fanyi-go/translate/fidelity/memory"
)

// Run checks the Store contract on stores that open returns, each empty, for a new
// subtest: exact and fuzzy matches at, above and below the threshold, language pairs kept
// apart, NFC-equal texts matching exactly, replacement, a bad threshold, and ctx.
func Run(t *testing.T, open func(t *testing.T) memory.Store) {
	t.Run("Exact", func(t *testing.T) { testExact(t, open(t)) })
	t.Run("Fuzzy", func(t *testing.T) { testFuzzy(t, open(t)) })
	t.Run("Pairs", func(t *testing.T) { testPairs(t, open(t)) })
	t.Run("Replace", func(t *testing.T) { testReplace(t, open(t)) })
	t.Run("Errors", func(t *testing.T) { testErrors(t, open(t)) })
}

// Twenty is a text of 20 code points; one edit scores 0.95.
const twenty = "Add to cart for 9 €."

func put(t *testing.T, s memory.Store, e memory.Entry) {
	t.Helper()
	if err := s.Put(context.Background(), e); err != nil {
		t.Fatalf("Put: %v", err)
	}
}

func lookup(t *testing.T, s memory.Store, source, target, text string, threshold float64) (memory.Match, bool) {
	t.Helper()
	m, ok, err := s.Lookup(context.Background(), source, target, text, threshold)
	if err != nil {
		t.Fatalf("Lookup(%q): %v", text, err)
	}
	return m, ok
}

func testExact(t *testing.T, s memory.Store) {
	e := memory.Entry{Source: "en", Target: "de", Text: "café", Translation: "Café", Engine: "deepl"}
	put(t, s, e)
	for _, text := range []string{"café", "cafe\u0301"} {
		m, ok := lookup(t, s, "EN", "de", text, 1)
		if !ok || m.Score != 1 || m.Entry != e {
			t.Errorf("Lookup(%q) = %+v, %v; want the entry, exactly", text, m, ok)
		}
	}
}

func testFuzzy(t *testing.T, s memory.Store) {
	put(t, s, memory.Entry{Source: "en", Target: "de", Text: twenty, Translation: "x"})
	tests := []struct {
		text      string
		threshold float64
		want      bool
	}{
		{"Add to cart for 8 €.", 0.95, true},  // at the threshold
		{"Add to cart for 8 €.", 0.96, false}, // above
		{"Add to cart for 88 €", 0.95, false}, // below
		{"Add to cart for 8 €.", 1, false},    // exact only
	}
	for _, tt := range tests {
		m, ok := lookup(t, s, "en", "de", tt.text, tt.threshold)
		if ok != tt.want || ok && (m.Score < 0.95-1e-9 || m.Score > 0.95+1e-9) {
			t.Errorf("Lookup(%q, %v) = %+v, %v; want found %v with score 0.95", tt.text, tt.threshold, m, ok, tt.want)
		}
	}
}

func testPairs(t *testing.T, s memory.Store) {
	put(t, s, memory.Entry{Source: "en", Target: "de", Text: "Save", Translation: "Speichern"})
	if m, ok := lookup(t, s, "en", "fr", "Save", 0.5); ok {
		t.Errorf("en->fr found the en->de entry %+v", m)
	}
	if m, ok := lookup(t, s, "de", "en", "Save", 0.5); ok {
		t.Errorf("de->en found the en->de entry %+v", m)
	}
}

func testReplace(t *testing.T, s memory.Store) {
	put(t, s, memory.Entry{Source: "en", Target: "de", Text: "Save", Translation: "Sichern"})
	put(t, s, memory.Entry{Source: "en", Target: "de", Text: "Save", Translation: "Speichern", Engine: "b"})
	if m, ok := lookup(t, s, "en", "de", "Save", 1); !ok || m.Translation != "Speichern" || m.Engine != "b" {
		t.Errorf("after replacing: %+v, %v", m, ok)
	}
}

func testErrors(t *testing.T, s memory.Store) {
	for _, th := range []float64{0, -1, 1.5} {
		if _, _, err := s.Lookup(context.Background(), "en", "de", "x", th); err == nil {
			t.Errorf("threshold %v accepted", th)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Put(ctx, memory.Entry{Source: "en", Target: "de", Text: "x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a canceled ctx: %v", err)
	}
	if _, _, err := s.Lookup(ctx, "en", "de", "x", 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Lookup with a canceled ctx: %v", err)
	}
}
