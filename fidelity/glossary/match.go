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
	var out []Match
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if m, ok := g.matchAt(text, i, r); ok {
			out = append(out, m)
			i = m.End
			continue
		}
		i += size
	}
	return out
}

// matchAt returns the longest term starting at text[i] (whose rune is r).
func (g *Glossary) matchAt(text string, i int, r rune) (Match, bool) {
	list := g.byFirst[unicode.ToLower(r)]
	if len(list) == 0 || !boundaryBefore(text, i) {
		return Match{}, false
	}
	for _, k := range list {
		t := g.terms[k]
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
