package fidelity

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/fanyi-go/translate/fidelity/internal/markup"
	"github.com/fanyi-go/translate/fidelity/internal/mask"
	"github.com/fanyi-go/translate/internal/segment"
)

// Segments is a prepared text cut into parts for an engine with a per-call limit:
// Prefix + Parts[0] + Seps[0] + Parts[1] + Seps[1] + ... is the text, Seps[i] being the
// whitespace after Parts[i]. The zero value is the empty text.
type Segments struct {
	Prefix string
	Parts  []string
	Seps   []string // len(Seps) == len(Parts)
}

// Join puts translated parts back together with the original whitespace; it fails when
// their number is not len(s.Parts).
func (s Segments) Join(parts []string) (string, error) {
	if len(parts) != len(s.Parts) {
		return "", fmt.Errorf("fidelity: %d translated parts for %d", len(parts), len(s.Parts))
	}
	var b strings.Builder
	b.WriteString(s.Prefix)
	for i, p := range parts {
		b.WriteString(p)
		b.WriteString(s.Seps[i])
	}
	return b.String(), nil
}

// Split cuts Texts[i] into parts of at most max code points (max <= 0: no limit) at the
// best breaks internal/segment finds — paragraphs, sentences, clauses, spaces — and never
// inside a token or, for an engine that takes markup natively, inside a tag. A token or
// tag longer than max makes a part longer than max. The parts are translated one by one,
// joined with Segments.Join, and given to Finish as the answer to Texts[i].
func (pr *Prepared) Split(i, max int) Segments {
	text := pr.Texts[i]
	atoms := pr.atoms(text)
	shadow := []byte(text)
	for _, a := range atoms {
		for k := a[0]; k < a[1]; k++ {
			shadow[k] = 'x' // one word: no break inside
		}
	}
	segs := segment.Split(string(shadow), max)
	if len(segs.Parts) == 0 {
		return Segments{Prefix: text}
	}
	cuts := []int{len(segs.Prefix)}
	pos := len(segs.Prefix)
	for k, p := range segs.Parts {
		pos += len(p) + len(segs.Seps[k])
		if k < len(segs.Parts)-1 {
			cuts = append(cuts, pos)
		}
	}
	return rebuild(text, moveCuts(cuts, atoms))
}

// atoms returns the byte ranges of the tokens of text and, when markup goes natively,
// of its tags and character references.
func (pr *Prepared) atoms(text string) [][2]int {
	var out [][2]int
	if pr.native {
		for _, p := range markup.Tokenize(text, pr.p.format == FormatHTML) {
			if p.Kind != markup.Text {
				out = append(out, [2]int{p.Start, p.End})
				continue
			}
			for i := p.Start; i < p.End; i++ {
				if end := markup.RefEnd(text[:p.End], i); end > 0 {
					out = append(out, [2]int{i, end})
					i = end - 1
				}
			}
		}
	}
	for _, f := range mask.Scan(text) {
		out = append(out, [2]int{f.Start, f.End})
	}
	return out
}

// moveCuts moves each cut (after the first, the start of the text) that falls inside an
// atom to the start of the outermost atom around it, and drops it when that leaves an
// empty part. The cuts are in order; one pass over both.
func moveCuts(cuts []int, atoms [][2]int) []int {
	atoms = outermost(atoms)
	out := cuts[:1]
	k := 0
	for _, c := range cuts[1:] {
		for k < len(atoms) && atoms[k][1] <= c {
			k++
		}
		if k < len(atoms) && atoms[k][0] < c {
			c = atoms[k][0]
		}
		if c > out[len(out)-1] {
			out = append(out, c)
		}
	}
	return out
}

// outermost sorts atoms, which nest (a token in a tag) or stand apart, and leaves out
// those inside another; atoms that overlap become one.
func outermost(atoms [][2]int) [][2]int {
	slices.SortFunc(atoms, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(b[1], a[1])) })
	out := atoms[:0]
	for _, a := range atoms {
		if n := len(out); n > 0 && a[0] < out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], a[1])
			continue
		}
		out = append(out, a)
	}
	return out
}

// rebuild cuts text at cuts (the first is where the first part starts) and moves the
// trailing whitespace of each part into its separator.
func rebuild(text string, cuts []int) Segments {
	s := Segments{Prefix: text[:cuts[0]]}
	for k, start := range cuts {
		end := len(text)
		if k+1 < len(cuts) {
			end = cuts[k+1]
		}
		part := strings.TrimRightFunc(text[start:end], unicode.IsSpace)
		if part == "" {
			if n := len(s.Seps); n > 0 {
				s.Seps[n-1] += text[start:end]
			} else {
				s.Prefix += text[start:end]
			}
			continue
		}
		s.Parts = append(s.Parts, part)
		s.Seps = append(s.Seps, text[start+len(part):end])
	}
	return s
}
