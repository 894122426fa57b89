package glossary

import (
	"fmt"
	"strings"
)

// Book is a set of glossaries: each is found by name and language pair, and one per pair
// may serve that pair by default. It is immutable and safe for concurrent use; the zero
// value holds none.
type Book struct {
	named    map[bookKey]*Glossary
	defaults map[bookKey]*Glossary
}

type bookKey struct{ name, source, target string }

// NewBook returns a book of gs; the glossaries named in defaults serve their pair when a
// request names none. Two glossaries with the same name and pair, a default that names no
// glossary, and two defaults for one pair are errors.
func NewBook(gs []*Glossary, defaults ...string) (*Book, error) {
	b := &Book{named: make(map[bookKey]*Glossary), defaults: make(map[bookKey]*Glossary)}
	for _, g := range gs {
		k := bookKey{g.name, lower(g.source), lower(g.target)}
		if b.named[k] != nil {
			return nil, fmt.Errorf("glossary: %q for %s->%s given twice", g.name, g.source, g.target)
		}
		b.named[k] = g
	}
	for _, name := range defaults {
		found := false
		for k, g := range b.named {
			if k.name != name {
				continue
			}
			found = true
			pk := bookKey{"", k.source, k.target}
			if d := b.defaults[pk]; d != nil {
				return nil, fmt.Errorf("glossary: %q and %q are both defaults for %s->%s", d.name, name, g.source, g.target)
			}
			b.defaults[pk] = g
		}
		if !found {
			return nil, fmt.Errorf("glossary: default %q names no glossary", name)
		}
	}
	return b, nil
}

// Lookup returns the glossary named name for the pair source->target, or with name ""
// the pair's default. A regional tag falls back to its language: a glossary for en->de
// serves en-US->de-AT when none is given for that pair.
func (b *Book) Lookup(name, source, target string) (*Glossary, bool) {
	if b == nil {
		return nil, false
	}
	m := b.named
	if name == "" {
		m = b.defaults
	}
	for _, s := range []string{lower(source), base(source)} {
		for _, t := range []string{lower(target), base(target)} {
			if g := m[bookKey{name, s, t}]; g != nil {
				return g, true
			}
		}
	}
	return nil, false
}

func lower(tag string) string { return strings.ToLower(tag) }

// base returns the language subtag of a BCP 47 tag, lower-cased.
func base(tag string) string {
	if i := strings.IndexAny(tag, "-_"); i > 0 {
		tag = tag[:i]
	}
	return strings.ToLower(tag)
}
