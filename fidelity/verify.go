package fidelity

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fanyi-go/translate/fidelity/glossary"
	"github.com/fanyi-go/translate/fidelity/internal/markup"
	"github.com/fanyi-go/translate/fidelity/internal/mask"
)

// ItemKind says what a protected part is.
type ItemKind uint8

// The item kinds.
const (
	ItemMarkup      ItemKind = iota + 1 // a tag, entity, comment or escaped character
	ItemPlaceholder                     // a placeholder
	ItemTerm                            // a glossary term (Label is its source term)
)

func (k ItemKind) String() string {
	switch k {
	case ItemMarkup:
		return "markup"
	case ItemPlaceholder:
		return "placeholder"
	case ItemTerm:
		return "term"
	}
	return "item"
}

// Item is a protected part, as an error may show it: the placeholder itself, a tag's
// name ("<b>", never its attributes), an entity, or a glossary source term. Labels
// never hold the request's text around them and are cut to 64 bytes.
type Item struct {
	Kind  ItemKind
	Label string
}

// VerifyError is an engine output that fails the pipeline's checks: bad output, to fail
// over from.
type VerifyError struct {
	Lost      []Item // parts the output lacks; for a term, its target is missing
	Extra     []Item // parts that came back more than once
	Unknown   int    // tokens the engine made up
	Malformed bool   // the output is not well-formed though the source was
}

// maxShown bounds the items Error lists.
const maxShown = 8

// Error lists the problems, at most 8 items of each kind.
func (e *VerifyError) Error() string {
	var parts []string
	list := func(verb string, items []Item) {
		for i, it := range items {
			if i == maxShown {
				parts = append(parts, fmt.Sprintf("and %d more %s", len(items)-maxShown, verb))
				break
			}
			parts = append(parts, fmt.Sprintf("%s %s %s", verb, it.Kind, it.Label))
		}
	}
	list("lost", e.Lost)
	list("doubled", e.Extra)
	if e.Unknown > 0 {
		parts = append(parts, fmt.Sprintf("%d made-up token(s)", e.Unknown))
	}
	if e.Malformed {
		parts = append(parts, "markup not well-formed")
	}
	return "fidelity: " + strings.Join(parts, "; ")
}

// Finish restores the engine's answers to Texts (one per text, in order) and verifies
// the result; see Restore and Verify.
func (pr *Prepared) Finish(outs []string) (string, error) {
	out, err := pr.Restore(outs)
	if err != nil {
		return "", err
	}
	return out, pr.Verify(out)
}

// Restore puts what was masked back into the engine's answers to Texts (one per text, in
// order) and returns the translated text. Every token must come back exactly once, else
// it returns a *VerifyError and no text.
func (pr *Prepared) Restore(outs []string) (string, error) {
	if len(outs) != len(pr.Texts) {
		return "", fmt.Errorf("fidelity: %d answers for %d texts", len(outs), len(pr.Texts))
	}
	var e VerifyError
	attrs := make([]string, len(outs)-1)
	for i := 1; i < len(outs); i++ {
		attrs[i-1] = pr.restoreOne(i, outs[i], nil, &e)
	}
	body := pr.restoreOne(0, outs[0], attrs, &e)
	if len(e.Lost) > 0 || len(e.Extra) > 0 || e.Unknown > 0 {
		return "", &e
	}
	return body, nil
}

func (pr *Prepared) restoreOne(i int, out string, attrs []string, e *VerifyError) string {
	tb := pr.tables[i]
	s, probs := tb.Restore(out, attrs, pr.escapes[i])
	for _, k := range probs.Lost {
		e.Lost = append(e.Lost, item(tb.Toks[k]))
	}
	for _, k := range probs.Extra {
		e.Extra = append(e.Extra, item(tb.Toks[k]))
	}
	e.Unknown += probs.Unknown
	return s
}

// item returns the report of a token.
func item(t mask.Token) Item {
	k := ItemMarkup
	switch t.Kind {
	case mask.Placeholder:
		k = ItemPlaceholder
	case mask.Term:
		k = ItemTerm
	}
	return Item{Kind: k, Label: cut(t.Label)}
}

func cut(s string) string {
	if len(s) <= 64 {
		return s
	}
	i := 64
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// Verify checks a restored translation against the source: the markup is well-formed when
// the source's was, the tags are the source's with the same attributes but the text ones
// (native markup), and every glossary term
// found in the source's translatable text (not in its markup or placeholders) has its
// target in the translation's character data, references decoded. It returns a
// *VerifyError or nil.
func (pr *Prepared) Verify(out string) error {
	var e VerifyError
	if f := pr.p.format; f != FormatText {
		html := f == FormatHTML
		e.Malformed = markup.WellFormed(pr.src, html) && !markup.WellFormed(out, html)
		if pr.native {
			// Attributes other than the text ones (alt, title, ...) must come back as
			// they were: a changed href, class or id is a lost tag and an extra one.
			e.Lost, e.Extra = diffTags(markup.TagsWithAttrs(pr.src, html, pr.p.isTextAttr),
				markup.TagsWithAttrs(out, html, pr.p.isTextAttr))
		}
	}
	if len(pr.terms) > 0 {
		c := pr.p.content(out)
		missing := glossary.Absent(pr.terms, c)
		if len(missing) > 0 {
			missing = glossary.Absent(missing, pr.p.pieces(c))
		}
		for _, t := range missing {
			e.Lost = append(e.Lost, Item{Kind: ItemTerm, Label: cut(t.Source)})
		}
	}
	if len(e.Lost) > 0 || len(e.Extra) > 0 || e.Malformed {
		return &e
	}
	return nil
}

// diffTags returns the tags of src that out lacks and those out has beyond src's.
func diffTags(src, out []string) (lost, extra []Item) {
	left := make(map[string]int, len(src))
	for _, t := range src {
		left[t]++
	}
	for _, t := range out {
		if left[t] > 0 {
			left[t]--
			continue
		}
		extra = append(extra, Item{Kind: ItemMarkup, Label: cut(t)})
	}
	keys := make([]string, 0, len(left))
	for t, n := range left {
		for range n {
			keys = append(keys, t)
		}
	}
	slices.Sort(keys)
	for _, t := range keys {
		lost = append(lost, Item{Kind: ItemMarkup, Label: cut(t)})
	}
	return lost, extra
}
