package contentkit

import (
	"strconv"
	"strings"

	"github.com/fanyi-go/translate/fidelity/glossary"
)

// MaxGlossaries bounds the glossaries of one configuration.
const MaxGlossaries = 1000

// Spec is one glossary of a configuration's "glossaries" section, as the root's
// GlossaryConfig holds it: name, source and target (BCP 47 tags), whether it is its
// pair's default, and its terms.
type Spec struct {
	Name    string
	Source  string
	Target  string
	Default bool
	Terms   []glossary.Term
}

// PathError is a fault of a configuration at a JSON path ("glossaries[2].terms[0].source").
type PathError struct {
	Path, Msg string
}

func (e *PathError) Error() string { return e.Path + ": " + e.Msg }

// Glossaries builds the glossaries specs describe, in order, and the names of those that
// are their pair's default. At most MaxGlossaries; name, source and target are required,
// the languages well-formed BCP 47 tags, the terms at most glossary.MaxTerms of
// 1..glossary.MaxTermSize bytes each; two glossaries with one name and pair, two terms with
// one source, and two defaults for one pair are errors. An error is a *PathError whose
// path is under "glossaries".
func Glossaries(specs []Spec) ([]*glossary.Glossary, []string, error) {
	if len(specs) > MaxGlossaries {
		return nil, nil, &PathError{"glossaries", "at most 1000 glossaries"}
	}
	var gs []*glossary.Glossary
	var defaults []string
	for i := range specs {
		sp := &specs[i]
		at := "glossaries[" + strconv.Itoa(i) + "]"
		g, err := sp.build(at)
		if err != nil {
			return nil, nil, err
		}
		gs = append(gs, g)
		if sp.Default {
			defaults = append(defaults, sp.Name)
		}
		if _, err := glossary.NewBook(gs, defaults...); err != nil {
			return nil, nil, &PathError{at, strings.TrimPrefix(err.Error(), "glossary: ")}
		}
	}
	return gs, defaults, nil
}

// build builds the glossary sp describes; at is its path.
func (sp *Spec) build(at string) (*glossary.Glossary, error) {
	for _, f := range []struct{ key, val string }{{"name", sp.Name}, {"source", sp.Source}, {"target", sp.Target}} {
		switch {
		case f.val == "":
			return nil, &PathError{at + "." + f.key, "is required"}
		case f.key != "name" && !ValidTag(f.val):
			return nil, &PathError{at + "." + f.key, "language is not a valid BCP 47 tag"}
		}
	}
	if len(sp.Terms) > glossary.MaxTerms {
		return nil, &PathError{at + ".terms", "at most 10000 terms"}
	}
	for k, t := range sp.Terms {
		for _, f := range []struct{ key, val string }{{"source", t.Source}, {"target", t.Target}} {
			if len(f.val) == 0 || len(f.val) > glossary.MaxTermSize {
				return nil, &PathError{at + ".terms[" + strconv.Itoa(k) + "]." + f.key, "must be 1..256 bytes"}
			}
		}
	}
	g, err := glossary.New(sp.Name, sp.Source, sp.Target, sp.Terms)
	if err != nil {
		return nil, &PathError{at + ".terms", strings.TrimPrefix(err.Error(), "glossary: ")}
	}
	return g, nil
}
