// Package contentkit is the mechanism the root package uses around package fidelity: a
// text's way through the pipeline for one request's walk (Job: prepared for the engine
// that takes it, cut into the parts of its calls, stitched back, restored and verified),
// the cheap test that keeps plain text off the pipeline (MayHavePlaceholders), a
// verification failure said without the customer's text (VerifyMessage), and the building
// of glossaries from a configuration (Glossaries). The functions are pure and safe for
// concurrent use; a Job is used by one goroutine at a time.
package contentkit

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/text/language"

	"github.com/fanyi-go/translate/fidelity"
)

// Job is a text's way through a pipeline for one request's walk: the text prepared for
// the shape of the engine that takes it now, and its texts cut into the parts of that
// engine's calls. Engines of one shape (what they take natively, and the limit of one
// text) share the parts translated so far; a walk that moves to an engine of another
// shape, or whose translation failed the checks, prepares the text anew and starts over.
// The zero value has prepared nothing.
type Job struct {
	pr    *fidelity.Prepared // nil: prepare for the next engine
	shape shape
	cut   cut
}

// Ready prepares src with p for an engine that takes n natively and at most limit code
// points in one text (0: no limit), unless the parts made already fit it: each text of the
// prepared text is cut into parts of at most limit with Prepared.Split, never inside a
// token or a tag. It returns the parts of all the texts in order, and false (and no parts)
// when the parts made already fit.
func (j *Job) Ready(p *fidelity.Pipeline, src string, n fidelity.Native, limit int) ([]string, bool) {
	sh := shapeOf(p.Format(), n, limit)
	if j.pr != nil && sh == j.shape {
		return nil, false
	}
	j.pr, j.shape = p.Prepare(src, n), sh
	return j.cut.reset(j.pr, limit), true
}

// Prepared is the text as Ready last prepared it; nil before Ready or after Finish failed.
func (j *Job) Prepared() *fidelity.Prepared { return j.pr }

// Finish stitches the answers to the parts Ready returned, in order, restores the
// prepared text and verifies it (Prepared.Finish), and returns the translation. When that
// fails, the next Ready prepares the text anew; VerifyMessage says what went wrong.
func (j *Job) Finish(answers []string) (string, error) {
	texts, err := j.cut.join(answers)
	if err == nil {
		var out string
		if out, err = j.pr.Finish(texts); err == nil {
			return out, nil
		}
	}
	j.pr = nil
	return "", err
}

// shape is what makes two engines get the same prepared text: whether they take the
// format natively, apply a glossary or follow instructions themselves, and the limit of
// one text (0: none).
type shape struct {
	native, glossary, instructions bool
	limit                          int
}

// shapeOf is the shape of an engine that takes n natively and at most limit code points
// in one text, for a pipeline of format f.
func shapeOf(f fidelity.Format, n fidelity.Native, limit int) shape {
	return shape{native: f != fidelity.FormatText && n.Takes(f), glossary: n.Glossary, instructions: n.Instructions, limit: limit}
}

// cut is a prepared text's texts cut into parts for an engine's calls.
type cut struct {
	segs []fidelity.Segments // per text of the prepared text
}

// errStitch is a stitching failure: fewer answers than parts.
var errStitch = errors.New("contentkit: stitching segments")

// reset cuts every text of pr into parts of at most limit code points (0: no limit) with
// Prepared.Split and returns the parts of all the texts in order. It reuses c's memory.
func (c *cut) reset(pr *fidelity.Prepared, limit int) []string {
	c.segs = c.segs[:0]
	var parts []string
	for i := range pr.Texts {
		s := pr.Split(i, limit)
		c.segs = append(c.segs, s)
		parts = append(parts, s.Parts...)
	}
	return parts
}

// join stitches the answers to the parts reset returned, in order, into one answer per
// text of the prepared text, as Prepared.Finish takes them; errStitch when the answers are
// fewer than the parts.
func (c *cut) join(answers []string) ([]string, error) {
	texts := make([]string, len(c.segs))
	k := 0
	for i, s := range c.segs {
		if k+len(s.Parts) > len(answers) {
			return nil, errStitch
		}
		t, err := s.Join(answers[k : k+len(s.Parts)])
		if err != nil {
			return nil, errStitch
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
// (placeholders, terms) come from the customer's text and are never quoted. A stitching
// failure of Job.Finish says so; another error says only that the answers do not match.
func VerifyMessage(err error) string {
	var ve *fidelity.VerifyError
	if errors.Is(err, errStitch) {
		return "fidelity: stitching segments"
	}
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
