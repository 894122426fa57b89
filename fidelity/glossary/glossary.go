// Package glossary holds terminology that must come out the same every time: named
// glossaries per language pair, their matching and checking rules, and the instruction an
// LLM engine gets for them.
//
// # Matching rules
//
// A source term is found in a text where the text holds it as a whole word: compared
// without case (Unicode simple folding, strings.EqualFold) unless the term is
// CaseSensitive, on a code point boundary, and not preceded nor followed by a letter or
// digit — except in scripts that do not cut words with spaces (Han, Hiragana, Katakana,
// Thai, Lao, Khmer, Myanmar) or attach particles to them (Hangul), where a term is found
// inside a run of letters too. Overlapping
// finds go to the leftmost, then the longest term. Terms are NFC-normalised when the
// glossary is built; the text is matched as written.
//
// A target term is present in a translation where the translation, NFC-normalised, holds
// its exact form as a whole word (same boundary rule), except that the case of its first
// letter is ignored, since a term may open a sentence. A translation passes when every
// term found in its source has its target present at least once.
package glossary

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Term is one glossary entry: Source is always translated as Target. The JSON names are
// those a configuration file uses.
type Term struct {
	Source string `json:"source"`
	Target string `json:"target"`
	// CaseSensitive makes Source match only with its own case; by default case is ignored.
	CaseSensitive bool `json:"case_sensitive,omitempty"`
}

// Limits on a glossary's size.
const (
	MaxTerms    = 10000 // terms per glossary
	MaxTermSize = 256   // bytes per source or target term
)

// Glossary is a named, immutable list of terms for one language pair. It is safe for
// concurrent use. Build it with New.
type Glossary struct {
	name, source, target string
	terms                []Term
	revision             string
	fold, exact          *index // the terms compared without case, and with it
}

// New returns a glossary named name translating from source to target (BCP 47 tags) with
// the given terms. It fails on an empty name or language, an empty term or target, a term
// or target over MaxTermSize bytes, more than MaxTerms terms, or two terms with the same
// source (compared as they match).
func New(name, source, target string, terms []Term) (*Glossary, error) {
	if name == "" || source == "" || target == "" {
		return nil, errors.New("glossary: name, source and target language are required")
	}
	if len(terms) > MaxTerms {
		return nil, fmt.Errorf("glossary: %q has %d terms, more than %d", name, len(terms), MaxTerms)
	}
	g := &Glossary{name: name, source: source, target: target}
	seen := sources{folded: make(map[string]bool), exact: make(map[string]bool)}
	var folded, exact []int
	for i, t := range terms {
		t.Source, t.Target = norm.NFC.String(t.Source), norm.NFC.String(t.Target)
		if t.Source == "" || t.Target == "" || len(t.Source) > MaxTermSize || len(t.Target) > MaxTermSize {
			return nil, fmt.Errorf("glossary: %q term %d: source and target must be 1..%d bytes", name, i, MaxTermSize)
		}
		if seen.duplicate(t) {
			return nil, fmt.Errorf("glossary: %q has term %q twice", name, t.Source)
		}
		if t.CaseSensitive {
			exact = append(exact, len(g.terms))
		} else {
			folded = append(folded, len(g.terms))
		}
		g.terms = append(g.terms, t)
	}
	g.fold, g.exact = newIndex(g.terms, folded, false), newIndex(g.terms, exact, true)
	g.revision = revision(source, target, g.terms)
	return g, nil
}

// sources notes the terms' sources as New reads them.
type sources struct {
	folded map[string]bool // folded form -> one of its terms ignores case
	exact  map[string]bool // the case-sensitive terms
}

// duplicate reports whether t has the source of a term seen before: the same folded form
// (the same first letter's lower case too, as matching has it) where either ignores case,
// the same exact form where both heed it. It notes t.
func (s sources) duplicate(t Term) bool {
	r, _ := utf8.DecodeRuneInString(t.Source)
	key := string(unicode.ToLower(r)) + string(foldKeys(t.Source))
	anyCase, found := s.folded[key]
	if found && (anyCase || !t.CaseSensitive) || t.CaseSensitive && s.exact[t.Source] {
		return true
	}
	s.folded[key] = anyCase || !t.CaseSensitive
	if t.CaseSensitive {
		s.exact[t.Source] = true
	}
	return false
}

// foldKeys returns the fold key of every rune of s.
func foldKeys(s string) []rune {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		out = append(out, foldKey(r))
	}
	return out
}

// revision hashes the pair and the terms, sorted, so the same content gives the same
// revision whatever the order or name.
func revision(source, target string, terms []Term) string {
	lines := make([]string, len(terms))
	for i, t := range terms {
		lines[i] = fmt.Sprintf("%q\t%q\t%t", t.Source, t.Target, t.CaseSensitive)
	}
	slices.Sort(lines)
	h := sha256.New()
	fmt.Fprintf(h, "%q\t%q\n%s", strings.ToLower(source), strings.ToLower(target), strings.Join(lines, "\n"))
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// Name returns the glossary's name.
func (g *Glossary) Name() string { return g.name }

// Source returns the source language.
func (g *Glossary) Source() string { return g.source }

// Target returns the target language.
func (g *Glossary) Target() string { return g.target }

// Terms returns a copy of the terms, in the order given to New.
func (g *Glossary) Terms() []Term { return slices.Clone(g.terms) }

// Revision returns the content hash of the glossary: 24 hex digits of SHA-256 over the
// lower-cased language pair and the sorted terms. The name is not part of it; equal terms
// give equal revisions. It belongs in cache keys and in results.
func (g *Glossary) Revision() string { return g.revision }
