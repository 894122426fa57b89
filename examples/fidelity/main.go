// Command fidelity translates an HTML product page with a glossary through two engines and
// prints what each engine received: the markup, the placeholders and the glossary terms come
// back intact whichever engine serves.
//
//   - "vendor" takes HTML natively and applies glossaries itself (as DeepL does with
//     tag_handling and a glossary): it gets the page as HTML, with the placeholders masked,
//     and the glossary. It forgets one term, and its word list also rewrites the image's
//     src (box -> Box), so its answer fails the check and the request fails over.
//   - "tagless" takes plain text only and knows no glossary (as most engines): it gets the
//     text with every tag, entity, placeholder and glossary term masked as ⟦N⟧ tokens, and
//     the page's text attributes (alt, title) as texts of their own.
//
// Both engines are in-process fakes that translate a few English words into German: no
// vendor key is needed.
//
//	go run ./examples/fidelity
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/fidelity/glossary"
)

const page = `<article>
  <h1 title="Acme Cloud storage">Acme Cloud storage</h1>
  <p class="lead">Hello {name}, your cart holds {count, plural, one {# item} other {# items}}.</p>
  <img src="/img/box.png" alt="A storage box">
  <p><a href="/checkout?ref=page">Buy now</a> &amp; save 20% with <b>Acme Cloud</b>.</p>
</article>`

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fidelity:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer) error {
	g, err := glossary.New("brands", "en", "de", []glossary.Term{
		{Source: "Acme Cloud", Target: "Acme Cloud"}, // a brand: never translated
		{Source: "cart", Target: "Warenkorb"},
	})
	if err != nil {
		return err
	}
	vendor := &engine{name: "vendor", forget: "cart"}
	tagless := &engine{name: "tagless"}
	c, err := translate.New(
		translate.WithEngine(vendor, translate.Profile{MaxTexts: 10,
			Native: fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML}, Glossary: true}}),
		translate.WithEngine(tagless, translate.Profile{MaxTexts: 10}),
		translate.WithGlossaries(g), translate.WithDefaultGlossaries("brands"),
	)
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := c.Translate(ctx, translate.Request{Text: page, Source: "en", Target: "de",
		Format: translate.FormatHTML, Engine: "vendor", AllowFallback: true})
	if err != nil {
		return err
	}
	for _, e := range []*engine{vendor, tagless} {
		e.print(w)
	}
	fmt.Fprintln(w, "== attempts")
	for _, a := range res.Attempts {
		fmt.Fprintf(w, "%s: %v\n", a.Engine, orOK(a.Err))
	}
	fmt.Fprintf(w, "== result (engine %s, glossary revision %s)\n%s\n", res.Engine, res.Glossary, res.Text)
	return nil
}

func orOK(err error) any {
	if err == nil {
		return "ok"
	}
	return err
}

// engine translates a few English words into German, keeping tags, entities and ⟦N⟧
// tokens as they are. With a glossary in the request it applies its terms itself, but
// forget.
type engine struct {
	name   string
	forget string

	mu   sync.Mutex
	seen []translate.EngineRequest
}

var words = strings.NewReplacer("A storage box", "Eine Speicherbox", "storage", "Speicher", "Hello", "Hallo",
	"your", "Ihr", "holds", "enthält", "items", "Artikel", "item", "Artikel", "Buy now", "Jetzt kaufen",
	"save", "sparen", "with", "mit", "box", "Box", "cart", "Einkaufswagen")

func (e *engine) Name() string { return e.name }

func (e *engine) Translate(_ context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	e.mu.Lock()
	e.seen = append(e.seen, *req)
	e.mu.Unlock()
	out := make([]string, len(req.Texts))
	for i, t := range req.Texts {
		if req.Glossary != nil {
			for _, term := range req.Glossary.Terms() {
				if term.Source != e.forget {
					t = strings.ReplaceAll(t, term.Source, "\x00"+term.Target+"\x00")
				}
			}
		}
		parts := strings.Split(t, "\x00") // odd parts are glossary targets: not translated again
		for k := 0; k < len(parts); k += 2 {
			parts[k] = words.Replace(parts[k])
		}
		out[i] = strings.Join(parts, "")
	}
	return &translate.EngineResult{Texts: out}, nil
}

func (e *engine) print(w io.Writer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.seen {
		fmt.Fprintf(w, "== %s received %d text(s) as %v", e.name, len(r.Texts), r.Format)
		if r.Glossary != nil {
			fmt.Fprintf(w, " with glossary %q", r.Glossary.Name())
		}
		fmt.Fprintln(w)
		for _, t := range r.Texts {
			fmt.Fprintf(w, "%s\n", t)
		}
	}
}
