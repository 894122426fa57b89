// Package fidelity keeps what a translation must not change: markup, placeholders and
// glossary terms. It is one pipeline around each engine call:
//
//	prepare -> call -> restore -> verify
//
// A Pipeline is composed once per request from the request's Options (format, placeholder
// syntaxes, glossary). For each engine it is about to call, the caller asks
// Pipeline.Prepare with the engine's Native capabilities and sends Prepared.Texts; it
// gives the engine's answers to Prepared.Finish, which restores what was masked and
// verifies the result. A *VerifyError means the engine's output is bad (it lost, doubled
// or made up a protected part, broke the structure or missed a glossary term): the caller
// fails over to the next engine as for any bad output.
//
// # What is protected, and how
//
// An engine is sent text in which the parts it must not touch are masked: each replaced
// by a token "⟦N⟧" it keeps as it is (see the stages: markupStage, placeholderStage,
// glossaryStage). An engine that takes a format natively (Native.Formats) gets the markup
// as is (but for a literal ⟦ or ⟧, masked in markup as in text), and the pipeline only
// checks the structure it returns; placeholders are masked for every engine. A glossary is applied natively by an engine that says so
// (Native.Glossary, Prepared.Glossary), by instruction for an engine that follows
// instructions (Native.Instructions, Prepared.Instruction), and otherwise by masking each
// source term with a token that restores as its target term. Every glossary is checked on
// the way back whatever applied it; see package glossary for the matching rules.
//
// # Formats
//
// FormatText is text: nothing is markup. FormatHTML and FormatXML are documents or
// fragments: tags, comments, declarations, processing instructions, CDATA sections and
// character references are markup; the content of script, style and code elements, and of
// any element with translate="no", is never sent; the HTML attributes alt, title,
// placeholder and aria-label are translated as texts of their own, no other attribute is.
// The result is well-formed when the source was (XML as encoding/xml reads it strictly;
// HTML as every non-void element closed in order).
//
// # Using it around an engine call
//
// Once per request:
//
//	p, err := fidelity.New(fidelity.Options{Format: req.Format, Glossary: g})
//
// then for each engine tried (n being the engine's declared Native capabilities):
//
//	if !p.Serves(n) { /* filter the engine out: a hard rule */ }
//	pr := p.Prepare(req.Text, n)
//	// send pr.Texts, declared as pr.Format; pass pr.Glossary (native glossary) or
//	// pr.Instruction (LLM prompt) when set; cut a text over the engine's limit with
//	// pr.Split(i, maxChars) and join the translated parts with Segments.Join.
//	out, err := pr.Finish(answers)
//	// a *VerifyError is bad output: fail over to the next engine.
//
// A cache key must hold the format and the glossary's Revision, since both change the
// answer. Package memory keeps earlier translations for exact and fuzzy reuse.
//
// Everything here is safe for concurrent use: a Pipeline and a Prepared are immutable.
package fidelity

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/fanyi-go/translate/fidelity/glossary"
	"github.com/fanyi-go/translate/fidelity/internal/markup"
	"github.com/fanyi-go/translate/fidelity/internal/ph"
)

// Format is what a request's text is. The zero value is FormatText.
type Format uint8

// The formats.
const (
	FormatText Format = iota // plain text (default)
	FormatHTML               // an HTML document or fragment
	FormatXML                // an XML document or fragment
)

// String returns "text", "html" or "xml".
func (f Format) String() string {
	switch f {
	case FormatText:
		return "text"
	case FormatHTML:
		return "html"
	case FormatXML:
		return "xml"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// ParseFormat reads "text" (or ""), "html" or "xml", as a configuration file writes them.
func ParseFormat(s string) (Format, error) {
	for _, f := range []Format{FormatText, FormatHTML, FormatXML} {
		if s == f.String() {
			return f, nil
		}
	}
	if s == "" {
		return FormatText, nil
	}
	return 0, fmt.Errorf("fidelity: unknown format %q (want text, html or xml)", s)
}

// Native is what an engine does itself; an adapter declares it (with its profile) and maps
// it to its vendor's wire format. The zero value is an engine that takes plain text only
// and knows no glossary: the pipeline masks and enforces everything for it.
type Native struct {
	// Formats lists the markup formats the engine translates keeping tags (DeepL
	// tag_handling, Google mimeType text/html, Microsoft textType html). FormatText is
	// always taken.
	Formats []Format
	// Glossary: the engine applies a glossary itself (DeepL glossaries, Google v3
	// glossaryConfig, Microsoft's dynamic dictionary); Prepared.Glossary carries it.
	Glossary bool
	// Instructions: the engine follows written instructions (an LLM);
	// Prepared.Instruction carries the glossary terms as text for its prompt.
	Instructions bool
}

// Takes reports whether the engine takes format f natively.
func (n Native) Takes(f Format) bool { return f == FormatText || slices.Contains(n.Formats, f) }

// Syntax is a set of placeholder syntaxes.
type Syntax uint8

// The placeholder syntaxes (see Options.Placeholders for each one's exact form).
const (
	ICU      = Syntax(ph.ICU)      // {name}, {n, number}, {n, plural, one {# item} other {# items}}
	Printf   = Syntax(ph.Printf)   // %s, %1$s, %d, %.2f, %%
	Mustache = Syntax(ph.Mustache) // {{name}}, {{{name}}}, {{#list}}
	Colon    = Syntax(ph.Colon)    // :name
	// DefaultSyntaxes is what a zero Options.Placeholders protects.
	DefaultSyntaxes = ICU | Printf | Mustache
)

// Options are a request's fidelity options. The zero value is plain text with the
// default placeholder syntaxes and no glossary.
type Options struct {
	Format Format
	// Placeholders are the syntaxes protected; 0 means DefaultSyntaxes. The exact forms:
	// ICU arguments ({name}, {name, type, style}; a plural or select keeps its messages
	// translatable and masks its head, keys and braces; '#' in a plural message is a
	// placeholder), printf verbs (%s, %-5d, %1$s, %[1]d, %.2f, %lld, %@, and "%%"),
	// mustache ({{x}}, {{{x}}}: up to 60 bytes without braces or newlines) and :name (a
	// ':' after neither a letter, a digit, ':' nor '/', then an ASCII letter or '_', then
	// letters, digits and '_').
	Placeholders Syntax
	// NoPlaceholders protects no placeholder syntax (Pattern still applies).
	NoPlaceholders bool
	// Pattern is the caller's own placeholder pattern: each non-empty match is protected.
	// nil means none.
	Pattern *regexp.Regexp
	// Glossary is applied and checked; nil means none.
	Glossary *glossary.Glossary
	// TextAttributes names the attributes whose values are translated, compared without
	// case; nil means alt, title, placeholder and aria-label in HTML and none in XML; an
	// empty non-nil list means none. Other attributes are never sent.
	TextAttributes []string
}

// Pipeline is the fidelity pipeline of one request. It is immutable and safe for
// concurrent use. Build it with New.
type Pipeline struct {
	format    Format
	scanner   ph.Scanner
	glossary  *glossary.Glossary
	textAttrs []string
}

// New composes the pipeline of a request's options. It fails on an unknown format or
// syntax.
func New(o Options) (*Pipeline, error) {
	if o.Format > FormatXML {
		return nil, fmt.Errorf("fidelity: unknown format %d", o.Format)
	}
	if o.Placeholders&^(ICU|Printf|Mustache|Colon) != 0 {
		return nil, fmt.Errorf("fidelity: unknown placeholder syntax %#x", uint8(o.Placeholders))
	}
	set := o.Placeholders
	if set == 0 {
		set = DefaultSyntaxes
	}
	if o.NoPlaceholders {
		set = 0
	}
	attrs := o.TextAttributes
	if attrs == nil && o.Format == FormatHTML {
		attrs = markup.HTMLTextAttrs
	}
	return &Pipeline{
		format:    o.Format,
		scanner:   ph.Scanner{Set: ph.Set(set), Pattern: o.Pattern},
		glossary:  o.Glossary,
		textAttrs: slices.Clone(attrs),
	}, nil
}

// Format returns the pipeline's format.
func (p *Pipeline) Format() Format { return p.format }

// Glossary returns the pipeline's glossary, or nil.
func (p *Pipeline) Glossary() *glossary.Glossary { return p.glossary }

// Serves reports whether an engine with capabilities n can serve the pipeline's format,
// natively or through masking. Every engine serves text, HTML and XML; the method exists
// so the router asks the pipeline, not the format, when a format no masking serves is added.
func (p *Pipeline) Serves(n Native) bool { return p.format <= FormatXML || n.Takes(p.format) }
