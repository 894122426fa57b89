package fidelity

import (
	"encoding/xml"
	"errors"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate/fidelity/internal/markup"
)

// rewrite is an engine that translates every word: each run of letters is upper-cased and
// doubled, so nothing of the source's words is left; "of" becomes "<&>", characters markup
// must escape.
func rewrite(s string) string {
	var b strings.Builder
	word := []rune{}
	flush := func() {
		if len(word) > 0 {
			w := strings.ToUpper(string(word))
			if w == "OF" {
				w = "<&>"
			}
			b.WriteString(w + w)
			word = word[:0]
		}
	}
	for _, r := range s {
		if unicode.IsLetter(r) {
			word = append(word, r)
			continue
		}
		flush()
		b.WriteRune(r)
	}
	flush()
	return b.String()
}

// shuffler returns an engine that rewrites the words and then shuffles them, tokens
// stuck to words moving with them.
func shuffler(rng *rand.Rand) func(string) string {
	return func(s string) string {
		words := strings.Fields(rewrite(s))
		rng.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
		return strings.Join(words, " ")
	}
}

// placeholders are those the documents and strings hold; none can be made of rewritten
// words.
var placeholders = []string{"{name}", "{0}", "%s", "%1$s", "%d", "%.2f", "%%", "{{count}}", "{{{raw}}}"}

type gen struct {
	rng  *rand.Rand
	html bool
	phs  []string // the placeholders written, in order
}

var words = []string{"red", "shoes", "for", "the", "price", "of", "one", "Ünïcode", "日本"}

func (g *gen) pick(list []string) string { return list[g.rng.IntN(len(list))] }

func (g *gen) text(b *strings.Builder) {
	for n := g.rng.IntN(4); n >= 0; n-- {
		switch g.rng.IntN(6) {
		case 0:
			p := g.pick(placeholders)
			g.phs = append(g.phs, p)
			b.WriteString(p)
		case 1:
			b.WriteString(g.pick([]string{"&amp;", "&lt;", "&#169;", "&#x27E6;"}))
		default:
			b.WriteString(g.pick(words))
		}
		b.WriteString(g.pick([]string{" ", "", "  ", "\n"}))
	}
}

var tagNames = []string{"b", "i", "a", "p", "span", "div", "em"}

func (g *gen) node(b *strings.Builder, depth int) {
	switch k := g.rng.IntN(10); {
	case k < 4 || depth > 3:
		g.text(b)
	case k == 4 && g.html:
		b.WriteString(g.pick([]string{`<br>`, `<img src="x.png" alt="red shoes">`, `<input placeholder="your {name}" disabled>`}))
	case k == 4:
		b.WriteString(g.pick([]string{`<x/>`, `<![CDATA[a < b]]>`, `<?pi data?>`}))
	case k == 5:
		b.WriteString(g.pick([]string{`<!-- note -->`, `<code>if a &lt; b { x }</code>`, `<span translate="no">Brand</span>`}))
	default:
		name := g.pick(tagNames)
		b.WriteString("<" + name)
		if g.rng.IntN(2) == 0 {
			b.WriteString(` href="/p?a=1&amp;b=2" title="the price"`)
		}
		b.WriteString(">")
		for n := g.rng.IntN(4); n >= 0; n-- {
			g.node(b, depth+1)
		}
		b.WriteString("</" + name + ">")
	}
}

func (g *gen) doc() string {
	var b strings.Builder
	for n := g.rng.IntN(4); n >= 0; n-- {
		g.node(&b, 0)
	}
	return b.String()
}

// xmlOK reports whether doc reads as well-formed XML.
func xmlOK(doc string) bool {
	d := xml.NewDecoder(strings.NewReader(doc))
	d.Strict = true
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return false
		}
	}
}

func sortedTags(doc string, html bool) []string {
	t := markup.Tags(doc, html)
	slices.Sort(t)
	return t
}

// placeholderCounts counts the generated placeholders in s.
func placeholderCounts(s string, phs []string) map[string]int {
	out := make(map[string]int)
	noPercent := strings.ReplaceAll(s, "%%", "\x00\x00") // "%%s" holds no %s
	for _, p := range phs {
		if p == "%%" {
			out[p] = strings.Count(s, p)
		} else {
			out[p] = strings.Count(noPercent, p)
		}
	}
	return out
}

// TestRoundTripDocuments sends random HTML and XML documents through engines that
// rewrite every word, and that also shuffle them: the result keeps every tag (nested when
// the source was), every placeholder once, and stays well-formed.
func TestRoundTripDocuments(t *testing.T) {
	for _, f := range []Format{FormatHTML, FormatXML} {
		for name, mk := range map[string]func(*rand.Rand) func(string) string{
			"rewrite": func(*rand.Rand) func(string) string { return rewrite },
			"shuffle": shuffler,
		} {
			t.Run(f.String()+"/"+name, func(t *testing.T) {
				p, err := New(Options{Format: f})
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, uint64(f)))
				engine := mk(rng)
				for i := range 400 {
					g := &gen{rng: rng, html: f == FormatHTML}
					doc := g.doc()
					if f == FormatXML && !xmlOK(doc) {
						t.Fatalf("generator wrote bad XML: %q", doc)
					}
					roundTrip(t, i, p, doc, g.phs, engine)
				}
			})
		}
	}
}

func roundTrip(t *testing.T, i int, p *Pipeline, doc string, phs []string, engine func(string) string) {
	t.Helper()
	html := p.Format() == FormatHTML
	pr := p.Prepare(doc, Native{})
	outs := make([]string, len(pr.Texts))
	for k, s := range pr.Texts {
		outs[k] = engine(s)
	}
	got, err := pr.Finish(outs)
	if err != nil {
		t.Fatalf("doc %d %q: %v\nsent %q", i, doc, err, pr.Texts)
	}
	if diff := cmp.Diff(sortedTags(doc, html), sortedTags(got, html)); diff != "" {
		t.Fatalf("doc %d %q -> %q: tags (-src +got):\n%s", i, doc, got, diff)
	}
	if markup.WellFormed(doc, html) && !markup.WellFormed(got, html) {
		t.Fatalf("doc %d %q -> %q: not well-formed", i, doc, got)
	}
	if !html && !xmlOK(got) {
		t.Fatalf("doc %d %q -> %q: encoding/xml rejects it", i, doc, got)
	}
	if diff := cmp.Diff(placeholderCounts(doc, phs), placeholderCounts(got, phs)); diff != "" {
		t.Fatalf("doc %d %q -> %q: placeholders (-src +got):\n%s", i, doc, got, diff)
	}
	for _, s := range pr.Texts {
		if strings.Contains(s, "href") || strings.Contains(s, "/p?a=1") {
			t.Fatalf("doc %d: a non-text attribute was sent: %q", i, s)
		}
	}
}

// TestRoundTripIdentity: an engine that changes nothing gets back the source byte for byte.
func TestRoundTripIdentity(t *testing.T) {
	for _, f := range []Format{FormatText, FormatHTML, FormatXML} {
		p, _ := New(Options{Format: f, Placeholders: ICU | Printf | Mustache | Colon})
		rng := rand.New(rand.NewPCG(2, 2))
		for i := range 300 {
			g := &gen{rng: rng, html: f != FormatXML}
			doc := g.doc()
			pr := p.Prepare(doc, Native{})
			got, err := pr.Finish(pr.Texts)
			if err != nil || got != doc {
				t.Fatalf("%v doc %d: %q -> %q, %v", f, i, doc, got, err)
			}
		}
	}
}

// messages are app strings with every placeholder syntax, ICU plurals included.
var messages = []string{
	"Hello {name}, you have {count, plural, one {# new message} other {# new messages}}.",
	"%1$s sent %2$d files to {{user}} and {{{raw}}}; 100%% done, %.2f left",
	"{gender, select, female {She invited {n, plural, one {# guest} other {# guests}}} other {They invited %d}}",
	"Dear :name, see {link} for {count, selectordinal, one {#st} two {#nd} few {#rd} other {#th}} prize",
}

// TestRoundTripMessages: strings with placeholders through engines that rewrite and that
// shuffle the words keep every placeholder exactly once and every ICU plural well-formed.
func TestRoundTripMessages(t *testing.T) {
	p := mustNew(t, Options{Placeholders: DefaultSyntaxes | Colon})
	rng := rand.New(rand.NewPCG(3, 3))
	want := regexp.MustCompile(`\{[a-z]+, (plural|select|selectordinal), `)
	for _, engine := range []func(string) string{rewrite, shuffler(rng)} {
		for i := range 200 {
			msg := messages[i%len(messages)]
			pr := p.Prepare(msg, Native{})
			got, err := pr.Finish([]string{engine(pr.Texts[0])})
			if err != nil {
				t.Fatalf("%q: %v", msg, err)
			}
			for _, ph := range []string{"{name}", "{link}", "%1$s", "%2$d", "%d", "%.2f", "%%", "{{user}}", "{{{raw}}}", ":name"} {
				if a, b := strings.Count(msg, ph), strings.Count(got, ph); a != b {
					t.Fatalf("%q -> %q: %s %d times, want %d", msg, got, ph, b, a)
				}
			}
			if a, b := len(want.FindAllString(msg, -1)), len(want.FindAllString(got, -1)); a != b {
				t.Fatalf("%q -> %q: %d ICU heads, want %d", msg, got, b, a)
			}
			// The result is itself a message the scanner reads with the same structure.
			if a, b := p.Prepare(msg, Native{}).Texts[0], p.Prepare(got, Native{}).Texts[0]; strings.Count(a, "⟦") != strings.Count(b, "⟦") {
				t.Fatalf("%q -> %q: %d tokens, want %d", msg, got, strings.Count(b, "⟦"), strings.Count(a, "⟦"))
			}
		}
	}
}
