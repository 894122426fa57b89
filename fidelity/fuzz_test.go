package fidelity

import (
	"testing"

	"github.com/fanyi-go/translate/fidelity/glossary"
)

// FuzzPipeline: for any text in any format, with every placeholder syntax, an engine that
// changes nothing gets the text back byte for byte, and with a glossary too, one that
// rewrites every word passes verification — for an engine without native abilities and
// for one that takes the markup natively.
func FuzzPipeline(f *testing.F) {
	for _, s := range []string{
		`<p title="a {n}">x &amp; <b>cloud</b> %s</p><br>`,
		`{n, plural, one {# <i>x</i>} other {y}}`,
		`<a><b></a></b> ⟦0⟧ :name {{m}}`,
		`<![CDATA[x]]><?p?><!-- c --><x/>`,
		"00%XCloud", // a term right after a placeholder
	} {
		f.Add(s, uint8(1))
	}
	g, err := glossary.New("g", "en", "de", []glossary.Term{{Source: "cloud", Target: "Wolke"}, {Source: "x", Target: "<&>"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc string, format uint8) {
		o := Options{Format: Format(format % 3), Placeholders: ICU | Printf | Mustache | Colon}
		plain, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		o.Glossary = g
		p, _ := New(o)
		for _, n := range []Native{{}, {Formats: []Format{FormatHTML, FormatXML}}} {
			pr := plain.Prepare(doc, n)
			got, err := pr.Finish(pr.Texts)
			if err != nil || got != doc {
				t.Fatalf("%v %+v: %q -> %q -> %q, %v", p.Format(), n, doc, pr.Texts, got, err)
			}
			if len(n.Formats) > 0 {
				continue // rewrite would rewrite the tag names a native engine keeps
			}
			pr = p.Prepare(doc, n)
			outs := make([]string, len(pr.Texts))
			for i, s := range pr.Texts {
				outs[i] = rewrite(s)
			}
			if _, err := pr.Finish(outs); err != nil {
				t.Fatalf("%v: %q -> %q -> %q: %v", p.Format(), doc, pr.Texts, outs, err)
			}
		}
	})
}
