package translate

import (
	"hash/maphash"
	"regexp"
	"slices"
	"strings"

	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/fidelity/glossary"
	"github.com/fanyi-go/translate/internal/contentkit"
	"github.com/fanyi-go/translate/internal/segment"
)

// This file is the root's policy over package fidelity: which requests get a content
// pipeline, which glossary applies, and how the walk uses the pipeline around each engine
// call (prepare -> call -> restore -> verify). The mechanism is in package fidelity and
// internal/contentkit.

// NoGlossary, as Request.Glossary, asks for no glossary even when the pair has a default.
const NoGlossary = "-"

// maxGlossaries bounds the glossaries of a Client (WithGlossaries, Config.Glossaries).
const maxGlossaries = contentkit.MaxGlossaries

// contentOptions are the options of content fidelity: glossaries and placeholders.
type contentOptions struct {
	glossaries []*glossary.Glossary
	defaults   []string
	syntax     fidelity.Syntax
	pattern    *regexp.Regexp
}

// WithGlossaries adds glossaries (package glossary), found by Request.Glossary with the
// request's language pair (a glossary for en->de serves en-US->de-AT). At most 1,000
// glossaries, each of at most glossary.MaxTerms terms of at most glossary.MaxTermSize bytes
// (glossary.New checks those); two with the same name and pair are an error. Default: none.
func WithGlossaries(gs ...*glossary.Glossary) Option {
	return func(o *options) { o.content.glossaries = append(o.content.glossaries, gs...) }
}

// WithDefaultGlossaries names the glossaries (given with WithGlossaries or in a Config)
// that serve their pair when a request names none (Request.Glossary ""); one per pair.
// Default: none.
func WithDefaultGlossaries(names ...string) Option {
	return func(o *options) { o.content.defaults = append(o.content.defaults, names...) }
}

// WithPlaceholders sets the placeholder syntaxes protected for every engine (0 means
// fidelity.DefaultSyntaxes: ICU, printf and mustache) and, if pattern is not nil, a
// pattern of the caller's own whose every non-empty match is protected too. Default:
// fidelity.DefaultSyntaxes, no pattern.
func WithPlaceholders(syntax fidelity.Syntax, pattern *regexp.Regexp) Option {
	return func(o *options) { o.content.syntax, o.content.pattern = syntax, pattern }
}

// contentSetup is the running configuration's content policy.
type contentSetup struct {
	book    *glossary.Book // nil: no glossaries
	syntax  fidelity.Syntax
	pattern *regexp.Regexp
	keyed   placeholderKey // syntax and pattern in the Store's and the memory's keys (storecall.go)
}

// build validates the content options and returns their setup; errors name the option.
func (co *contentOptions) build() (contentSetup, error) {
	s := contentSetup{syntax: co.syntax, pattern: co.pattern, keyed: newPlaceholderKey(co.syntax, co.pattern)}
	if co.syntax&^(fidelity.ICU|fidelity.Printf|fidelity.Mustache|fidelity.Colon) != 0 {
		return s, configError("WithPlaceholders", "unknown placeholder syntax")
	}
	if len(co.glossaries) > maxGlossaries {
		return s, configError("WithGlossaries", "at most 1000 glossaries")
	}
	if slices.Contains(co.glossaries, nil) {
		return s, configError("WithGlossaries", "nil glossary")
	}
	for _, g := range co.glossaries {
		if !contentkit.ValidTag(g.Source()) || !contentkit.ValidTag(g.Target()) {
			return s, configError("WithGlossaries", "language is not a valid BCP 47 tag")
		}
	}
	if len(co.glossaries) == 0 && len(co.defaults) == 0 {
		return s, nil
	}
	b, err := glossary.NewBook(co.glossaries, co.defaults...)
	if err != nil {
		return s, configError("WithGlossaries", strings.TrimPrefix(err.Error(), "glossary: "))
	}
	s.book = b
	return s, nil
}

// content is a request's fidelity pipeline and the glossary it applies.
type content struct {
	p *fidelity.Pipeline
	g *glossary.Glossary // nil: none
}

// contentKey checks a request's content options and puts them in r's cache key: the format
// and, hashed, the revision of the glossary that applies. The pipeline is made by
// prepareContent, for a request that goes on to the engines.
func (c *Client) contentKey(req *Request, r *request) error {
	if req.Format > FormatXML {
		return invalid("unknown Format")
	}
	g, err := r.s.content.glossaryFor(req, r)
	if err != nil {
		return err
	}
	r.key.format = req.Format
	if g != nil {
		r.key.gloss = maphash.String(c.hashSeed, g.Revision()) | 1 // never 0, which means none
	}
	return nil
}

// prepareContent gives r, whose key contentKey made, its content pipeline when it needs
// one: a format other than text, a glossary, or a text that may hold placeholders. The
// plain path (text, no glossary, no '{' nor '%') allocates nothing.
func (c *Client) prepareContent(r *request) error {
	cs := &r.s.content
	var g *glossary.Glossary
	if r.key.gloss != 0 {
		g, _ = cs.glossaryFor(&r.Request, r) // found by contentKey: no error
	}
	if r.Format == FormatText && g == nil && !cs.mayHavePlaceholders(r.Text) {
		return nil
	}
	p, err := fidelity.New(fidelity.Options{Format: r.Format, Glossary: g, Placeholders: cs.syntax, Pattern: cs.pattern})
	if err != nil {
		return invalid("content options: " + err.Error())
	}
	r.fid = &content{p: p, g: g}
	return nil
}

// glossaryFor returns the glossary req asks for: the named one for its pair, none for
// NoGlossary, or the pair's default for "". A named glossary needs a Source and must
// exist for the pair.
func (cs *contentSetup) glossaryFor(req *Request, r *request) (*glossary.Glossary, error) {
	name := req.Glossary
	if name == NoGlossary || (name == "" && cs.book == nil) {
		return nil, nil
	}
	if r.src == nil {
		if name == "" {
			return nil, nil // a glossary needs its source language: detection has none
		}
		return nil, invalid("Glossary needs a Source")
	}
	g, ok := cs.book.Lookup(name, r.src.Canon, r.tgt.Canon)
	if !ok && name != "" {
		return nil, invalid("unknown Glossary " + quoted(name) + " for the language pair")
	}
	return g, nil
}

// mayHavePlaceholders reports whether text may hold a placeholder of the protected
// syntaxes: a cheap test that keeps the plain path free of a pipeline.
func (cs *contentSetup) mayHavePlaceholders(text string) bool {
	return contentkit.MayHavePlaceholders(text, cs.syntax, cs.pattern != nil)
}

// inUnits reports whether a long text of the request may be translated as units of its
// own (longtext.go), each prepared apart: plain text without a glossary, where
// segment.Split cuts no placeholder and whole keeps ICU plurals in one unit. Markup and
// glossary terms, which a cut between units could break, go as one sequence of calls cut
// by Prepared.Split.
func (ct *content) inUnits() bool {
	return ct == nil || ct.p.Format() == FormatText && ct.g == nil
}

// whole returns split, a cut of text into pieces translated apart (units, stream
// segments), with the pieces an ICU plural or select runs across joined: its keywords
// and braces are masked only when the whole of it is prepared at once.
func (ct *content) whole(text string, split segment.Segments) segment.Segments {
	if ct == nil || len(split.Parts) < 2 {
		return split
	}
	return split.Keep(text, ct.p.Groups(text))
}

// markupNative reports whether e takes r's markup natively.
func (r *request) markupNative(e *engine) bool {
	return r.fid != nil && r.Format != FormatText && e.prof.Native.Takes(r.Format)
}

// echoedBy reports whether e sent src back as its translation got (echoed). Markup e takes
// natively is compared by its text, tags left out: a part that is all tags rightly comes
// back as it is, while a document whose text comes back unchanged, tags reordered or not,
// is an echo.
func (r *request) echoedBy(e *engine, src, got string, out *EngineResult) bool {
	if !r.markupNative(e) {
		return echoed(src, got, r, out)
	}
	return echoed(r.fid.p.Text(src), r.fid.p.Text(got), r, out)
}

// revision is the revision of the glossary r applies, "" for none.
func (r *request) revision() string {
	if r.fid == nil || r.fid.g == nil {
		return ""
	}
	return r.fid.g.Revision()
}

// contentJob is a walk's pipeline state: the text prepared for the engine that takes it
// now, cut into the job's parts (contentkit.Job), and the verified translation.
type contentJob struct {
	c    *content
	src  string         // the text: the request's, or one unit's of a long text
	prep contentkit.Job // src prepared for the shape of the engine that takes it now
	text string         // the restored, verified translation
}

// ready prepares the job's text for e, unless the parts already made fit it: each text of
// the prepared text is cut into parts that fit e's per-text limit with Prepared.Split,
// never inside a token or a tag.
func (cj *contentJob) ready(j *job, e *engine) {
	limit := textChars(&e.prof)
	if j.forceMax > 0 && (limit == 0 || j.forceMax < limit) {
		limit = j.forceMax
	}
	parts, fresh := cj.prep.Ready(cj.c.p, cj.src, e.nativeFor(cj.c.g), limit)
	if !fresh {
		return
	}
	j.split.Prefix, j.split.Parts, j.split.Seps = "", parts, make([]string, len(parts))
	j.out, j.next, j.by = j.out[:0], 0, j.by[:0]
}

// nativeFor is what e takes natively for a request with glossary g: its Profile's Native,
// without Glossary when e is a GlossaryFilter that does not apply g (its terms are then
// masked, as for an engine without glossaries).
func (e *engine) nativeFor(g *glossary.Glossary) fidelity.Native {
	n := e.prof.Native
	if f, ok := e.eng.(GlossaryFilter); ok && n.Glossary && g != nil && !f.AppliesGlossary(g) {
		n.Glossary = false
	}
	return n
}

// dress sets what the engine request carries for the prepared text: how the texts are
// declared, and the glossary or instruction for an engine that applies it itself.
func (cj *contentJob) dress(req *EngineRequest) {
	pr := cj.prep.Prepared()
	req.Format, req.Glossary, req.Instruction = pr.Format, pr.Glossary, pr.Instruction
}

// verify restores and checks the translation once the call that answered outs completes
// the job: every protected part back exactly once, the structure intact, every glossary
// term present. A failure is KindBadOutput on e (it fails over) and the job starts over
// on the next engine; its message counts what went wrong and never quotes the text.
func (cj *contentJob) verify(j *job, e *engine, outs []string) error {
	if j.next+len(outs) < len(j.split.Parts) {
		return nil
	}
	out, err := cj.prep.Finish(append(slices.Clip(j.out[:j.next]), outs...))
	if err != nil {
		return &Error{Kind: KindBadOutput, Engine: e.name, Message: contentkit.VerifyMessage(err)}
	}
	cj.text = out
	return nil
}

// ownWalk reports whether a TranslateBatch request is translated alone, as Translate does,
// rather than packed: markup, a glossary that may apply, or a placeholder to protect needs
// a pipeline of its own (a packed text would reach the engine unmasked).
func (c *Client) ownWalk(req *Request) bool {
	cs := &c.cfg.Load().content
	return req.Format != FormatText || (req.Glossary != NoGlossary && (req.Glossary != "" || cs.book != nil)) ||
		cs.mayHavePlaceholders(req.Text)
}

// streamable refuses a TranslateStream request with markup: its segments are cut for
// streaming, and a cut may fall inside a tag.
func streamable(req *Request) error {
	if req.Format != FormatText {
		return invalid("TranslateStream takes plain text only; translate markup with Translate")
	}
	return nil
}

// GlossaryConfig is one glossary of a Config's "glossaries" section:
//
//	"glossaries": [
//	  {"name": "brands", "source": "en", "target": "de", "default": true,
//	   "terms": [{"source": "Acme Cloud", "target": "Acme Cloud"},
//	             {"source": "checkout", "target": "Kasse", "case_sensitive": true}]}
//	]
//
// A file holds at most 1,000 glossaries (and 1 MiB in all); a glossary at most 10,000
// terms (glossary.MaxTerms), each source and target 1..256 bytes (glossary.MaxTermSize).
// Name, source and target are required; two glossaries with one name and pair, two terms
// with one source, and two defaults for one pair are errors.
type GlossaryConfig struct {
	Name   string `json:"name"`
	Source string `json:"source"` // BCP 47 tag
	Target string `json:"target"` // BCP 47 tag
	// Default makes the glossary serve its pair when a request names none.
	Default bool            `json:"default"`
	Terms   []glossary.Term `json:"terms"`
}

// glossaries builds the Config's glossaries (contentkit.Glossaries); errors name the JSON
// path.
func (cfg *Config) glossaries() ([]*glossary.Glossary, []string, error) {
	specs := make([]contentkit.Spec, len(cfg.Glossaries))
	for i, gc := range cfg.Glossaries {
		specs[i] = contentkit.Spec(gc)
	}
	gs, defaults, err := contentkit.Glossaries(specs)
	if pe, ok := err.(*contentkit.PathError); ok { // its only error
		return nil, nil, invalidAt(pe.Path, pe.Msg)
	}
	return gs, defaults, err
}

// storedText is the answer a Store keeps for the call that answered out, and whether it
// is the request's whole answer from one call: the engine's text for a plain job of one
// part, the restored, verified translation of a content job all of whose parts the call
// carried (never the engine's masked text).
func (w *walk) storedText(out *EngineResult) (string, bool) {
	if cj := w.j.fid; cj != nil {
		return cj.text, w.j.next == 0 && len(out.Texts) == len(w.j.split.Parts)
	}
	return out.Texts[0], len(w.j.split.Parts) == 1
}
