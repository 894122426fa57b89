package glossary

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// findByScan is Find as it was before the index: at every place a word may start, every
// term whose first letter has the same lower case, longest first, compared with
// strings.EqualFold (or exactly).
func findByScan(terms []Term, text string) []Match {
	byFirst := map[rune][]Term{}
	for _, t := range terms {
		r, _ := utf8.DecodeRuneInString(t.Source)
		byFirst[unicode.ToLower(r)] = append(byFirst[unicode.ToLower(r)], t)
	}
	for _, list := range byFirst {
		slices.SortStableFunc(list, func(a, b Term) int { return len(b.Source) - len(a.Source) })
	}
	var out []Match
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if m, ok := scanAt(byFirst[unicode.ToLower(r)], text, i); ok {
			out = append(out, m)
			i = m.End
			continue
		}
		i += size
	}
	return out
}

func scanAt(list []Term, text string, i int) (Match, bool) {
	if len(list) == 0 || !boundaryBefore(text, i) {
		return Match{}, false
	}
	for _, t := range list {
		end := i + len(t.Source)
		if end > len(text) {
			continue
		}
		cand := text[i:end]
		if t.CaseSensitive && cand != t.Source || !strings.EqualFold(cand, t.Source) {
			continue
		}
		if boundaryAfter(text, end) {
			return Match{Start: i, End: end, Term: t}, true
		}
	}
	return Match{}, false
}

// The index finds what comparing every term did, on random glossaries and texts over an
// alphabet of runes that fold to runes of another width (ſ s S, K k K, ß ẞ), that lower
// differently from how they fold (İ), that do not cut words (用) and spaces.
func TestFindAsScanningEveryTerm(t *testing.T) {
	alphabet := []string{"a", "A", "s", "S", "ſ", "k", "K", "K", "ß", "ẞ", "İ", "i", "用", " ", " ", "-", "\uFFFD"}
	rnd := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		var b strings.Builder
		for range 1 + rnd.IntN(n) {
			b.WriteString(alphabet[rnd.IntN(len(alphabet))])
		}
		return b.String()
	}
	for round := range 3000 {
		var terms []Term
		for range 1 + rnd.IntN(12) {
			terms = append(terms, Term{Source: strings.TrimSpace(word(5)) + "x"[:rnd.IntN(2)], Target: "T", CaseSensitive: rnd.IntN(3) == 0})
		}
		g, err := New("g", "en", "de", terms)
		if err != nil {
			continue // a duplicate
		}
		for range 5 {
			text := word(30)
			if rnd.IntN(4) == 0 {
				text += "\xe2\x82" // a cut rune
			}
			if diff := cmp.Diff(findByScan(g.terms, text), g.Find(text)); diff != "" {
				t.Fatalf("round %d: terms %+v: Find(%q) (-scan +index):\n%s", round, terms, text, diff)
			}
		}
	}
}

// New refuses exactly the terms it refused when it compared each with the terms of the
// same first letter.
func TestNewRefusesTheSameDuplicates(t *testing.T) {
	tests := []struct {
		terms []Term
		dup   bool
	}{
		{[]Term{{Source: "Apple"}, {Source: "APPLE"}}, true},
		{[]Term{{Source: "Apple", CaseSensitive: true}, {Source: "apple", CaseSensitive: true}}, false},
		{[]Term{{Source: "Apple", CaseSensitive: true}, {Source: "Apple", CaseSensitive: true}}, true},
		{[]Term{{Source: "Apple", CaseSensitive: true}, {Source: "apple"}}, true},
		{[]Term{{Source: "apple"}, {Source: "Apple", CaseSensitive: true}}, true},
		{[]Term{{Source: "ſun"}, {Source: "sun"}}, false}, // first letters lower differently
		{[]Term{{Source: "uſ"}, {Source: "us"}}, true},
		{[]Term{{Source: "Kelvin"}, {Source: "kelvin"}}, true},
	}
	for _, tt := range tests {
		for i := range tt.terms {
			tt.terms[i].Target = "T"
		}
		_, err := New("g", "en", "de", tt.terms)
		if got := err != nil; got != tt.dup {
			t.Errorf("New(%+v): error %v, want a duplicate: %v", tt.terms, err, tt.dup)
		}
	}
}

// Finding terms costs the text's length, not the text's length times the terms: 10,000
// terms that share a first letter, on a text of that letter alone a word, cost a few runes
// compared a word (scanning compared every term at every word: 10,000 a word).
func TestFindWorkIsLinearInTheText(t *testing.T) {
	terms := make([]Term, MaxTerms)
	for i := range terms {
		terms[i] = Term{Source: fmt.Sprintf("s%05d term", i), Target: "T"}
	}
	g, err := New("big", "en", "de", terms)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{strings.Repeat("s ", 1<<19), strings.Repeat("s0000 ", 1<<17), strings.Repeat("S00001 term ", 1<<16)} {
		matches, steps := g.find(text)
		if runes := utf8.RuneCountInString(text); steps > 4*runes {
			t.Errorf("Find over %d runes (%q...) compared %d runes, want at most %d", runes, text[:12], steps, 4*runes)
		}
		_ = matches
	}
	// The longest term bounds the work at a place: a term of 128 words "s" and a text of
	// "s" words costs at most that many runes a word.
	long := strings.TrimSpace(strings.Repeat("s ", 127)) + " x"
	g, err = New("long", "en", "de", []Term{{Source: long, Target: "T"}, {Source: "s", Target: "S"}})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("s ", 1<<14) + "y"
	matches, steps := g.find(text)
	if len(matches) != 1<<14 {
		t.Errorf("found %d terms, want %d", len(matches), 1<<14)
	}
	if runes := utf8.RuneCountInString(text); steps > 2*(len(long)+2)*runes {
		t.Errorf("compared %d runes over %d", steps, runes)
	}
}
