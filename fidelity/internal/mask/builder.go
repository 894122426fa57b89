package mask

import "strings"

// Span is a part of a text to mask as an Atom: s[Start:End] becomes a token that restores
// as Orig.
type Span struct {
	Start, End int
	Orig       string
	Label      string
	Kind       Kind
}

// Builder writes a masked text and its Table. The zero value is ready to use and masks
// only literal ⟦ and ⟧; Spans, when set, finds more atoms (glossary terms) in plain text.
type Builder struct {
	Table
	// Spans returns the non-overlapping spans of s to mask, in order; nil means none.
	Spans func(s string) []Span
	b     strings.Builder
}

// String returns the masked text written so far.
func (bd *Builder) String() string { return bd.b.String() }

// Text writes translatable text: its literal ⟦ and ⟧ and the Spans are masked, the rest
// is written as it is.
func (bd *Builder) Text(s string) { bd.marks(s, true) }

// Markup writes markup an engine takes natively: as it is, but for its literal ⟦ and ⟧,
// which are masked as in Text (and restore byte for byte), so that every token in the
// engine's answer, inside a tag too, is one of the Table's. No Spans are looked for.
func (bd *Builder) Markup(s string) { bd.marks(s, false) }

// marks writes s with its literal ⟦ and ⟧ masked, and the rest through spans (withSpans)
// or as it is.
func (bd *Builder) marks(s string, withSpans bool) {
	for s != "" {
		i := strings.IndexAny(s, left+right)
		if i < 0 {
			bd.spans(s, withSpans)
			return
		}
		bd.spans(s[:i], withSpans)
		r := left
		if strings.HasPrefix(s[i:], right) {
			r = right
		}
		bd.Atom(r, r, Literal)
		s = s[i+len(r):]
	}
}

func (bd *Builder) spans(s string, withSpans bool) {
	if s == "" {
		return
	}
	if bd.Spans == nil || !withSpans {
		bd.b.WriteString(s)
		return
	}
	last := 0
	for _, sp := range bd.Spans(s) {
		if sp.Start < last || sp.End > len(s) || sp.End <= sp.Start {
			continue // a bad span is ignored, not trusted
		}
		bd.b.WriteString(s[last:sp.Start])
		bd.Atom(sp.Orig, sp.Label, sp.Kind)
		last = sp.End
	}
	bd.b.WriteString(s[last:])
}

// Atom masks orig as a token that stands alone.
func (bd *Builder) Atom(orig, label string, k Kind) {
	bd.b.WriteString(bd.Add(Token{Orig: orig, Label: label, Kind: k}))
}

// Bound masks orig as an atom that belongs inside group g (the '#' of an ICU plural): it
// may move within the group, and Restore puts it back in source order when it leaves.
func (bd *Builder) Bound(orig, label string, k Kind, g int) {
	bd.b.WriteString(bd.Add(Token{Orig: orig, Label: label, Kind: k, Group: g}))
}

// Tag masks a tag whose attribute values are translated elsewhere (see Token.Parts).
func (bd *Builder) Tag(t Token) {
	bd.b.WriteString(bd.Add(t))
}

// Open masks orig as the opening token of a new group and returns the group.
func (bd *Builder) Open(orig, label string, k Kind) int {
	g := bd.NewGroup()
	bd.b.WriteString(bd.Add(Token{Orig: orig, Label: label, Kind: k, Role: Open, Group: g}))
	return g
}

// Mid masks orig as a separator inside group g.
func (bd *Builder) Mid(orig, label string, k Kind, g int) {
	bd.b.WriteString(bd.Add(Token{Orig: orig, Label: label, Kind: k, Role: Mid, Group: g}))
}

// Close masks orig as the closing token of group g.
func (bd *Builder) Close(orig, label string, k Kind, g int) {
	bd.b.WriteString(bd.Add(Token{Orig: orig, Label: label, Kind: k, Role: Close, Group: g}))
}
