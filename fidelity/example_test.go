package fidelity_test

import (
	"fmt"
	"strings"

	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/fidelity/glossary"
)

// engine is a stand-in for a real one: it translates a few English phrases to German,
// and gets the brand wrong when it sees it.
var engine = strings.NewReplacer(
	"Acme Cloud", "Acme-Wolke", "storage", "Speicher", "you", "Sie", "Hello", "Hallo", "buy now", "jetzt kaufen",
).Replace

// An HTML product page with a placeholder and a glossary goes to two engines: one that
// takes plain text only (the markup and the term are masked) and one that takes HTML and
// applies glossaries itself (the markup goes as is; the term is checked on the way back).
func Example() {
	g, err := glossary.New("brands", "en", "de", []glossary.Term{{Source: "Acme Cloud", Target: "Acme Cloud"}})
	if err != nil {
		panic(err)
	}
	p, err := fidelity.New(fidelity.Options{Format: fidelity.FormatHTML, Glossary: g})
	if err != nil {
		panic(err)
	}
	page := `<h1 title="Acme Cloud storage">Acme Cloud &amp; you</h1><p>Hello {name}, <a href="/buy">buy now</a>.</p>`
	for _, e := range []struct {
		name   string
		native fidelity.Native
	}{
		{"plain-text engine", fidelity.Native{}},
		{"HTML engine with glossaries", fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML}, Glossary: true}},
	} {
		pr := p.Prepare(page, e.native)
		fmt.Printf("%s receives %q as %v (native glossary: %v)\n", e.name, pr.Texts, pr.Format, pr.Glossary != nil)
		outs := make([]string, len(pr.Texts))
		for i, s := range pr.Texts {
			outs[i] = engine(s)
		}
		out, err := pr.Finish(outs)
		fmt.Printf("  -> %s (err: %v)\n", out, err)
	}
	// Output:
	// plain-text engine receives ["⟦0⟧⟦1⟧ ⟦2⟧ you⟦3⟧⟦4⟧Hello ⟦5⟧, ⟦6⟧buy now⟦7⟧.⟦8⟧" "⟦0⟧ storage"] as text (native glossary: false)
	//   -> <h1 title="Acme Cloud Speicher">Acme Cloud &amp; Sie</h1><p>Hallo {name}, <a href="/buy">jetzt kaufen</a>.</p> (err: <nil>)
	// HTML engine with glossaries receives ["<h1 title=\"Acme Cloud storage\">Acme Cloud &amp; you</h1><p>Hello ⟦0⟧, <a href=\"/buy\">buy now</a>.</p>"] as html (native glossary: true)
	//   -> <h1 title="Acme-Wolke Speicher">Acme-Wolke &amp; Sie</h1><p>Hallo {name}, <a href="/buy">jetzt kaufen</a>.</p> (err: fidelity: lost term Acme Cloud)
}
