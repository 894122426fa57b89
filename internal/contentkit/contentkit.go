// Package contentkit is the mechanism the root package uses around package fidelity: what
// makes two engines get the same prepared text (Shape), a prepared text cut into the parts
// of an engine's calls and stitched back (Cut), the cheap test that keeps plain text off
// the pipeline (MayHavePlaceholders), a verification failure said without the customer's
// text (VerifyMessage), and the building of glossaries from a configuration (Build). The
// functions are pure and safe for concurrent use; a Cut is used by one goroutine at a time.
package contentkit

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/text/language"

	"github.com/fanyi-go/translate/fidelity"
)

// Shape is what makes two engines get the same prepared text: whether they take the
// format natively, apply a glossary or follow instructions themselves, and the limit of
// one text (0: none). The zero value is plain text without a limit.
type Shape struct {
	Native, Glossary, Instructions bool
	Limit                          int
}

// ShapeOf is the shape of an engine that takes n natively and at most limit code points
// in one text, for a pipeline of format f.
func ShapeOf(f fidelity.Format, n fidelity.Native, limit int) Shape {
	return Shape{Native: f != fidelity.FormatText && n.Takes(f), Glossary: n.Glossary, Instructions: n.Instructions, Limit: limit}
}

// Cut is a prepared text's texts cut into parts for an engine's calls. The zero value
// holds no parts; Reset fills it.
type Cut struct {
	segs []fidelity.Segments // per text of the prepared text
}

// Reset cuts every text of pr into parts of at most limit code points (0: no limit) with
// Prepared.Split, never inside a token or a tag, and returns the parts of all the texts in
// order. It reuses c's memory.
func (c *Cut) Reset(pr *fidelity.Prepared, limit int) []string {
	c.segs = c.segs[:0]
	var parts []string
	for i := range pr.Texts {
		s := pr.Split(i, limit)
		c.segs = append(c.segs, s)
		parts = append(parts, s.Parts...)
	}
	return parts
}

// Join stitches the answers to the parts Reset returned, in order, into one answer per
// text of the prepared text, as Prepared.Finish takes them. It fails when the answers are
// fewer than the parts.
func (c *Cut) Join(answers []string) ([]string, error) {
	texts := make([]string, len(c.segs))
	k := 0
	for i, s := range c.segs {
		if k+len(s.Parts) > len(answers) {
			return nil, errors.New("contentkit: fewer answers than parts")
		}
		t, err := s.Join(answers[k : k+len(s.Parts)])
		if err != nil {
			return nil, err
		}
		texts[i], k = t, k+len(s.Parts)
	}
	return texts, nil
}

// MayHavePlaceholders reports whether text may hold a placeholder of the syntaxes: always
// with a pattern of the caller's own (pattern true), else when it holds a '{' or a '%', or
// a ':' with fidelity.Colon. It keeps the plain path free of a pipeline.
func MayHavePlaceholders(text string, syntax fidelity.Syntax, pattern bool) bool {
	if pattern {
		return true
	}
	if syntax&fidelity.Colon != 0 && strings.IndexByte(text, ':') >= 0 {
		return true
	}
	return strings.IndexByte(text, '{') >= 0 || strings.IndexByte(text, '%') >= 0
}

// VerifyMessage says what a failed check found, by kind and count only ("fidelity: lost 1
// placeholder(s); 2 made-up token(s)"): the items of a *fidelity.VerifyError
// (placeholders, terms) come from the customer's text and are never quoted. Another error
// says only that the answers do not match.
func VerifyMessage(err error) string {
	var ve *fidelity.VerifyError
	if !errors.As(err, &ve) {
		return "fidelity: answers do not match the texts sent"
	}
	var parts []string
	for _, side := range []struct {
		verb  string
		items []fidelity.Item
	}{{"lost", ve.Lost}, {"doubled", ve.Extra}} {
		var m [fidelity.ItemTerm + 1]int
		for _, it := range side.items {
			if it.Kind <= fidelity.ItemTerm {
				m[it.Kind]++
			}
		}
		for _, k := range []fidelity.ItemKind{fidelity.ItemMarkup, fidelity.ItemPlaceholder, fidelity.ItemTerm} {
			if m[k] > 0 {
				parts = append(parts, fmt.Sprintf("%s %d %s(s)", side.verb, m[k], k))
			}
		}
	}
	if ve.Unknown > 0 {
		parts = append(parts, fmt.Sprintf("%d made-up token(s)", ve.Unknown))
	}
	if ve.Malformed {
		parts = append(parts, "markup not well-formed")
	}
	return "fidelity: " + strings.Join(parts, "; ")
}

// ValidTag reports whether tag is a well-formed BCP 47 tag.
func ValidTag(tag string) bool {
	_, err := language.Parse(tag)
	return err == nil
}
