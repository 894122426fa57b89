package fidelity

import (
	"html"
	"slices"
	"strings"

	"github.com/fanyi-go/translate/fidelity/glossary"
	"github.com/fanyi-go/translate/fidelity/internal/markup"
	"github.com/fanyi-go/translate/fidelity/internal/mask"
	"github.com/fanyi-go/translate/fidelity/internal/ph"
)

// Prepared is a text made ready for one engine, and what it takes to restore and verify
// that engine's answer. It is immutable and safe for concurrent use.
type Prepared struct {
	// Texts are what the engine translates, in order: the body, then the value of each
	// translated attribute (HTML alt, title, ...) in document order.
	Texts []string
	// Format is how Texts are declared to the engine: the request's format when the
	// engine takes it natively, FormatText otherwise (the markup is masked).
	Format Format
	// Glossary is the glossary the engine must apply natively, or nil.
	Glossary *glossary.Glossary
	// Instruction is the glossary as text for an engine that follows instructions, or "".
	Instruction string

	src    string
	terms  []glossary.Term // the glossary terms found in the translatable text
	native bool            // markup passed through
	tables []*mask.Table
	// escapes escape the engine's text between tokens of each text on the way back; nil
	// means as is (plain text, native markup).
	escapes []func(string) string
	p       *Pipeline
}

// Prepare masks text for an engine with capabilities n. It does not fail: what it cannot
// read as markup or placeholder is text.
func (p *Pipeline) Prepare(text string, n Native) *Prepared {
	pr := &Prepared{src: text, p: p}
	pr.native = p.format != FormatText && n.Takes(p.format)
	if pr.native {
		pr.Format = p.format
	}
	terms := &termSet{}
	mark := !n.Glossary && !n.Instructions
	newBuilder := func(quote byte) *mask.Builder {
		bd := new(mask.Builder)
		if p.glossary != nil {
			var esc func(string) string // a target lands in text as is, in markup escaped
			if p.format != FormatText {
				esc = markup.Escaper(quote)
			}
			bd.Spans = glossaryStage{g: p.glossary, escape: esc, mask: mark, found: terms}.spans
		}
		return bd
	}
	body := newBuilder('<')
	phs := placeholderStage{scanner: p.scanner}
	var attrs []markup.AttrText
	if p.format == FormatText {
		phs.mask(text, body)
	} else {
		ms := markupStage{html: p.format == FormatHTML, native: pr.native, text: phs, attrs: p.textAttrs}
		attrs = ms.mask(text, body, newBuilder)
	}
	var bodyEsc func(string) string
	if p.format != FormatText && !pr.native {
		bodyEsc = markup.EscapeText
	}
	pr.add(body, bodyEsc)
	for _, a := range attrs {
		pr.add(a.Builder, markup.Escaper(a.Quote))
	}
	pr.terms = terms.list
	switch {
	case p.glossary != nil && n.Glossary:
		pr.Glossary = p.glossary
	case n.Instructions:
		pr.Instruction = glossary.Instruction(pr.terms)
	}
	return pr
}

// isTextAttr reports whether the pipeline translates attribute name.
func (p *Pipeline) isTextAttr(name string) bool {
	return slices.ContainsFunc(p.textAttrs, func(n string) bool { return strings.EqualFold(n, name) })
}

func (pr *Prepared) add(bd *mask.Builder, escape func(string) string) {
	pr.Texts = append(pr.Texts, bd.String())
	pr.tables = append(pr.tables, &bd.Table)
	pr.escapes = append(pr.escapes, escape)
}

// glossaryStage finds the glossary's source terms in translatable text — never in markup
// or placeholders — (package glossary's rules) and notes them for Verify. For an engine
// without a glossary of its own (mask), each becomes a token that restores as the term's
// target, escaped for where it lands: the engine never sees the term, and the result
// always holds the target.
type glossaryStage struct {
	g      *glossary.Glossary
	escape func(string) string // nil: as is
	mask   bool
	found  *termSet
}

// termSet is the terms found in a text, once each, in order.
type termSet struct {
	list []glossary.Term
	seen map[string]bool
}

func (ts *termSet) add(t glossary.Term) {
	if ts.seen == nil {
		ts.seen = make(map[string]bool)
	}
	if !ts.seen[t.Source] {
		ts.seen[t.Source] = true
		ts.list = append(ts.list, t)
	}
}

func (s glossaryStage) spans(text string) []mask.Span {
	found := s.g.Find(text)
	for _, m := range found {
		s.found.add(m.Term)
	}
	if len(found) == 0 || !s.mask {
		return nil
	}
	out := make([]mask.Span, len(found))
	for i, m := range found {
		target := m.Term.Target
		if s.escape != nil {
			target = s.escape(target)
		}
		out[i] = mask.Span{Start: m.Start, End: m.End, Orig: target, Label: m.Term.Source, Kind: mask.Term}
	}
	return out
}

// placeholderStage protects placeholders for every engine: each placeholder of the
// enabled syntaxes becomes a token that restores byte for byte; an ICU plural or select
// keeps its messages translatable and comes back with its keys in source order; the text
// around them goes on to the glossary stage.
type placeholderStage struct {
	scanner ph.Scanner
}

func (s placeholderStage) mask(text string, bd *mask.Builder) { s.scanner.Mask(text, bd) }

// markupStage handles HTML and XML. Masked (the engine does not take the format): every
// tag, character reference, comment, declaration, processing instruction and CDATA
// section becomes a token that restores byte for byte; the content of script, style and
// code elements and of translate="no" elements is one token and never sent; text
// attributes become texts of their own; the engine's text is escaped on the way back and
// tags it reordered so they no longer nest go back in source order at the places it left
// them, so the result is well-formed when the source was. Native: the markup goes as is
// but for its literal ⟦ and ⟧ (masked, see mask.Builder.Markup), and only placeholders and
// terms in its text are masked.
type markupStage struct {
	html, native bool
	text         placeholderStage
	attrs        []string // the text attributes
}

func (s markupStage) mask(doc string, bd *mask.Builder, newAttr func(quote byte) *mask.Builder) []markup.AttrText {
	if s.native {
		for _, p := range markup.Tokenize(doc, s.html) {
			if p.Kind == markup.Text {
				s.text.mask(doc[p.Start:p.End], bd)
			} else {
				bd.Markup(doc[p.Start:p.End])
			}
		}
		return nil
	}
	m := markup.Masker{HTML: s.html, Text: s.text.mask, NewBuilder: newAttr, TextAttrs: s.attrs}
	return m.Mask(doc, bd)
}

// Groups returns the ICU plurals and selects of a plain text, the byte range of each
// outermost one in order, nil for markup: a cut between pieces translated apart must not
// fall inside one, whose keywords and braces only the whole text's masking protects.
func (p *Pipeline) Groups(text string) [][2]int {
	if p.format != FormatText {
		return nil
	}
	return p.scanner.Groups(text)
}

// Text returns the character data of doc in the pipeline's format: of HTML or XML the
// text between its tags, character references decoded, pieces joined by a space (no
// attribute values, comments or scripts); a plain text as it is. An engine that takes
// markup natively may leave attribute values as they are, never all the text.
func (p *Pipeline) Text(doc string) string { return p.text(doc, false) }

// content returns the text of a document the glossary is checked against: its character
// data and translated attribute values with character references decoded, pieces joined
// by a space.
func (p *Pipeline) content(doc string) string { return p.text(doc, true) }

// text returns doc's character data and, with attrs, its translated attribute values.
func (p *Pipeline) text(doc string, attrs bool) string {
	if p.format == FormatText {
		return doc
	}
	var b []byte
	for _, pc := range markup.Tokenize(doc, p.format == FormatHTML) {
		if pc.Kind == markup.Text {
			b = append(append(b, html.UnescapeString(doc[pc.Start:pc.End])...), ' ')
		}
		for _, a := range pc.Attrs {
			if attrs && a.Val[0] >= 0 && p.isTextAttr(a.Name) {
				b = append(append(b, html.UnescapeString(doc[a.Val[0]:a.Val[1]])...), ' ')
			}
		}
	}
	return string(b)
}

// pieces returns s cut where the glossary stage cuts text before it looks for terms: at
// each placeholder and literal token mark, the pieces joined by a space. A term found
// right after a placeholder ("%XCloud") is a word there, and its target is one here.
func (p *Pipeline) pieces(s string) string {
	var b []byte
	bd := mask.Builder{Spans: func(t string) []mask.Span {
		b = append(append(b, t...), ' ')
		return nil
	}}
	p.scanner.Mask(s, &bd)
	return string(b)
}
