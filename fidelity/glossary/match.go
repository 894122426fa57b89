package glossary

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Match is one term found in a text: text[Start:End] is Term's source.
type Match struct {
	Start, End int
	Term       Term
}

// Find returns the terms found in text, left to right, without overlaps, as the package
// documentation says.
func (g *Glossary) Find(text string) []Match {
	out, _ := g.find(text)
	return out
}

// find is Find; steps counts the runes compared, at most the text's runes times the
// longest term's plus one.
func (g *Glossary) find(text string) (out []Match, steps int) {
	for i := 0; i < len(text); {
		m, ok, s := g.matchAt(text, i)
		steps += s
		if ok {
			out = append(out, m)
			i = m.End
			continue
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	return out, steps
}

// matchAt returns the longest term starting at text[i], and the runes it compared.
func (g *Glossary) matchAt(text string, i int) (Match, bool, int) {
	fn, fj, fok := g.fold.start(text, i)
	en, ej, eok := g.exact.start(text, i)
	if !fok && !eok || !boundaryBefore(text, i) {
		return Match{}, false, 1
	}
	term, end, steps := int32(-1), 0, 1
	if fok {
		term, end, steps = g.fold.longest(text, i, fn, fj)
		steps++
	}
	if eok {
		// Two terms matching the same bytes would be the same term (New refuses them).
		t, e, s := g.exact.longest(text, i, en, ej)
		if steps += s; t >= 0 && e > end {
			term, end = t, e
		}
	}
	if term < 0 {
		return Match{}, false, steps
	}
	return Match{Start: i, End: end, Term: g.terms[term]}, true, steps
}

// Missing returns the terms found in src whose target out lacks, once each, in src order.
func (g *Glossary) Missing(src, out string) []Term {
	return Absent(Terms(g.Find(src)), out)
}

// Terms returns the terms of matches, once each, in order.
func Terms(matches []Match) []Term {
	var out []Term
	seen := make(map[string]bool, len(matches))
	for _, m := range matches {
		if !seen[m.Term.Source] {
			seen[m.Term.Source] = true
			out = append(out, m.Term)
		}
	}
	return out
}

// Absent returns the terms whose target out lacks, in order.
func Absent(terms []Term, out string) []Term {
	if len(terms) == 0 {
		return nil
	}
	out = norm.NFC.String(out)
	var missing []Term
	for _, t := range terms {
		if !present(out, t.Target) {
			missing = append(missing, t)
		}
	}
	return missing
}

// present reports whether out holds target as a whole word, its first letter in any case.
func present(out, target string) bool {
	r, size := utf8.DecodeRuneInString(target)
	rest := target[size:]
	for _, first := range []rune{r, unicode.ToUpper(r), unicode.ToLower(r)} {
		form := string(first) + rest
		for i := 0; ; {
			j := strings.Index(out[i:], form)
			if j < 0 {
				break
			}
			s := i + j
			if boundaryBefore(out, s) && boundaryAfter(out, s+len(form)) {
				return true
			}
			_, n := utf8.DecodeRuneInString(out[s:])
			i = s + n
		}
	}
	return false
}

// maxInstructionTerms bounds the terms an instruction lists.
const maxInstructionTerms = 200

// Instruction returns the text an LLM engine gets so that it applies the terms found in
// text, or "" when there are none: one line per term, at most 200.
func (g *Glossary) Instruction(text string) string { return Instruction(Terms(g.Find(text))) }

// Instruction returns the text an LLM engine gets so that it applies terms, or "" when
// there are none: one line per term, at most 200.
func Instruction(terms []Term) string {
	if len(terms) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Translate these terms exactly as given (source => target):\n")
	for _, t := range terms[:min(len(terms), maxInstructionTerms)] {
		fmt.Fprintf(&b, "%q => %q\n", t.Source, t.Target)
	}
	return b.String()
}

// isWordRune reports whether r is a letter or digit of a script written with spaces
// between words.
func isWordRune(r rune) bool {
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
		return false
	}
	return !unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

// boundaryBefore reports whether a word may start at text[i].
func boundaryBefore(text string, i int) bool {
	if i == 0 {
		return true
	}
	prev, _ := utf8.DecodeLastRuneInString(text[:i])
	cur, _ := utf8.DecodeRuneInString(text[i:])
	return !(isWordRune(prev) && isWordRune(cur))
}

// boundaryAfter reports whether a word may end at text[i].
func boundaryAfter(text string, i int) bool {
	if i >= len(text) {
		return true
	}
	prev, _ := utf8.DecodeLastRuneInString(text[:i])
	next, _ := utf8.DecodeRuneInString(text[i:])
	return !(isWordRune(prev) && isWordRune(next))
}
