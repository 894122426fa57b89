package fidelity

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/fanyi-go/translate/fidelity/glossary"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func mustNew(t *testing.T, o Options) *Pipeline {
	t.Helper()
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustGlossary(t *testing.T, terms ...Term) *glossary.Glossary {
	t.Helper()
	g, err := glossary.New("brands", "en", "de", terms)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Term shortens test tables.
type Term = glossary.Term

func TestPlaceholdersText(t *testing.T) {
	p := mustNew(t, Options{Placeholders: DefaultSyntaxes | Colon, Pattern: regexp.MustCompile(`\$[A-Z]+`)})
	src := "Hi {name}, {count, plural, one {# new message} other {# new messages}} for %s and {{user}}, :city $SKU"
	pr := p.Prepare(src, Native{})
	want := "Hi ⟦0⟧, ⟦1⟧⟦2⟧ new message⟦3⟧⟦4⟧ new messages⟦5⟧ for ⟦6⟧ and ⟦7⟧, ⟦8⟧ ⟦9⟧"
	if diff := cmp.Diff([]string{want}, pr.Texts); diff != "" {
		t.Fatalf("sent (-want +got):\n%s", diff)
	}
	got, err := pr.Finish([]string{rewrite(pr.Texts[0])})
	if err != nil {
		t.Fatal(err)
	}
	if w := "HIHI {name}, {count, plural, one {# NEWNEW MESSAGEMESSAGE} other {# NEWNEW MESSAGESMESSAGES}} FORFOR %s ANDAND {{user}}, :city $SKU"; got != w {
		t.Errorf("got %q\nwant %q", got, w)
	}
}

// TestLostPlaceholder: an engine that drops or doubles a placeholder or invents a token
// gets a *VerifyError naming the placeholders, and no customer text.
func TestLostPlaceholder(t *testing.T) {
	p := mustNew(t, Options{})
	pr := p.Prepare("Secret words {name} and %d", Native{})
	_, err := pr.Finish([]string{"GEHEIM ⟦0⟧ ⟦0⟧ ⟦7⟧"})
	var ve *VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want a *VerifyError", err)
	}
	want := &VerifyError{
		Lost:    []Item{{ItemPlaceholder, "%d"}},
		Extra:   []Item{{ItemPlaceholder, "{name}"}},
		Unknown: 1,
	}
	if diff := cmp.Diff(want, ve); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if msg := err.Error(); strings.Contains(msg, "Secret") || strings.Contains(msg, "GEHEIM") {
		t.Errorf("error echoes text: %s", msg)
	}
}

func TestGlossaryMasked(t *testing.T) {
	g := mustGlossary(t, Term{Source: "Acme Cloud", Target: "Acme Wolke"}, Term{Source: "cloud", Target: "Rechnerwolke"})
	p := mustNew(t, Options{Format: FormatHTML, Glossary: g})
	pr := p.Prepare(`<p title="our cloud">Try acme cloud & the Cloud.</p>`, Native{})
	if diff := cmp.Diff([]string{"⟦0⟧Try ⟦1⟧ ⟦2⟧ the ⟦3⟧.⟦4⟧", "our ⟦0⟧"}, pr.Texts); diff != "" {
		t.Fatalf("sent (-want +got):\n%s", diff)
	}
	got, err := pr.Finish([]string{"⟦0⟧Probier ⟦1⟧ ⟦2⟧ die ⟦3⟧.⟦4⟧", "unsere ⟦0⟧"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `<p title="unsere Rechnerwolke">Probier Acme Wolke & die Rechnerwolke.</p>`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestGlossaryChecked: an engine that applies the glossary itself, or by instruction, is
// checked: a missing target is a verification error naming the term; a present one, at
// the start of a sentence too, passes.
func TestGlossaryChecked(t *testing.T) {
	g := mustGlossary(t, Term{Source: "sign in", Target: "anmelden"}, Term{Source: "Acme", Target: "ACME", CaseSensitive: true})
	p := mustNew(t, Options{Glossary: g})
	src := "Please sign in to Acme. acme is not the brand."
	for _, n := range []Native{{Glossary: true}, {Instructions: true}} {
		pr := p.Prepare(src, n)
		if pr.Texts[0] != src {
			t.Errorf("%+v: terms masked for an engine that applies them: %q", n, pr.Texts[0])
		}
		if n.Glossary && pr.Glossary != g || !n.Glossary && pr.Glossary != nil {
			t.Errorf("%+v: Prepared.Glossary = %v", n, pr.Glossary)
		}
		if n.Instructions != (pr.Instruction != "") {
			t.Errorf("%+v: Instruction = %q", n, pr.Instruction)
		}
		_, err := pr.Finish([]string{"Bitte melden Sie sich bei Acme an."})
		var ve *VerifyError
		if !errors.As(err, &ve) || !cmp.Equal(ve.Lost, []Item{{ItemTerm, "sign in"}, {ItemTerm, "Acme"}}) {
			t.Errorf("%+v: err = %v, want both terms lost", n, err)
		}
		if _, err := pr.Finish([]string{"Anmelden bei ACME, bitte."}); err != nil {
			t.Errorf("%+v: targets present: %v", n, err)
		}
	}
	if got := p.Prepare(src, Native{Instructions: true}).Instruction; got != "Translate these terms exactly as given (source => target):\n\"sign in\" => \"anmelden\"\n\"Acme\" => \"ACME\"\n" {
		t.Errorf("instruction %q", got)
	}
}

// TestNativeMarkup: an engine that takes HTML gets the tags as they are, placeholders
// masked, and its answer is checked for the source's tags and well-formedness.
func TestNativeMarkup(t *testing.T) {
	p := mustNew(t, Options{Format: FormatHTML})
	n := Native{Formats: []Format{FormatHTML, FormatXML}}
	src := `<p class="x">Hello <b>{name}</b> ⟦</p>`
	pr := p.Prepare(src, n)
	if want := `<p class="x">Hello <b>⟦0⟧</b> ⟦1⟧</p>`; pr.Format != FormatHTML || !cmp.Equal(pr.Texts, []string{want}) {
		t.Fatalf("sent %v %q", pr.Format, pr.Texts)
	}
	got, err := pr.Finish([]string{`<p class="x">Hallo <b>⟦0⟧</b> & ⟦1⟧</p>`})
	if err != nil || got != `<p class="x">Hallo <b>{name}</b> & ⟦</p>` {
		t.Errorf("got %q, %v", got, err)
	}
	_, err = pr.Finish([]string{`<p class="x">Hallo <i>⟦0⟧</b> ⟦1⟧</p>`})
	var ve *VerifyError
	if !errors.As(err, &ve) || !ve.Malformed || !cmp.Equal(ve.Lost, []Item{{ItemMarkup, "<b>"}}) || !cmp.Equal(ve.Extra, []Item{{ItemMarkup, "<i>"}}) {
		t.Errorf("broken answer: %v", err)
	}
}

// TestNativeMarkupTokenMarks: a literal ⟦ or ⟧ inside native markup (a tag name, an
// attribute value) is masked like one in text, so the engine's answer restores byte for
// byte and a token the source wrote in a tag is not taken for one of ours. Written as a
// character reference instead (the pipeline's first way), the tag came back changed:
// FuzzPipeline found "<A⟧>" lost.
func TestNativeMarkupTokenMarks(t *testing.T) {
	p := mustNew(t, Options{Format: FormatHTML})
	src := `<A⟧ title="⟦0⟧">Hello ⟦</A⟧>`
	pr := p.Prepare(src, Native{Formats: []Format{FormatHTML}})
	sent := `<A⟦0⟧ title="⟦1⟧0⟦2⟧">Hello ⟦3⟧</A⟦4⟧>`
	if !cmp.Equal(pr.Texts, []string{sent}) {
		t.Fatalf("sent %q", pr.Texts)
	}
	if got, err := pr.Finish([]string{sent}); err != nil || got != src {
		t.Errorf("echo: got %q, %v", got, err)
	}
	got, err := pr.Finish([]string{`<A⟦0⟧ title="⟦1⟧0⟦2⟧">Hallo ⟦3⟧</A⟦4⟧>`})
	if err != nil || got != `<A⟧ title="⟦0⟧">Hallo ⟦</A⟧>` {
		t.Errorf("translated: got %q, %v", got, err)
	}
}

func TestSplit(t *testing.T) {
	p := mustNew(t, Options{Format: FormatHTML})
	src := `<p>One sentence here.</p> <p>Another <a href="/a/very/long/path">one</a> here.</p>`
	for _, n := range []Native{{}, {Formats: []Format{FormatHTML}}} {
		pr := p.Prepare(src, n)
		for max := 1; max < 40; max++ {
			segs := pr.Split(0, max)
			joined, err := segs.Join(segs.Parts)
			if err != nil || joined != pr.Texts[0] {
				t.Fatalf("max %d: join %q, %v", max, joined, err)
			}
			for _, part := range segs.Parts {
				if strings.Count(part, "⟦") != strings.Count(part, "⟧") || strings.Count(part, "<") != strings.Count(part, ">") {
					t.Fatalf("native %v max %d: part %q cuts a token or tag", n.Formats, max, part)
				}
			}
		}
		segs := pr.Split(0, 30)
		parts := make([]string, len(segs.Parts))
		for i, part := range segs.Parts {
			parts[i] = rewriteOutsideTags(part)
		}
		body, _ := segs.Join(parts)
		if _, err := pr.Finish([]string{body}); err != nil {
			t.Errorf("native %v: segmented translation: %v", n.Formats, err)
		}
	}
}

func TestOptionsValidation(t *testing.T) {
	if _, err := New(Options{Format: 7}); err == nil {
		t.Error("format 7 accepted")
	}
	if _, err := New(Options{Placeholders: 0x80}); err == nil {
		t.Error("syntax 0x80 accepted")
	}
	if f, err := ParseFormat("html"); f != FormatHTML || err != nil {
		t.Errorf("ParseFormat(html) = %v, %v", f, err)
	}
	if _, err := ParseFormat("markdown"); err == nil {
		t.Error("markdown parsed")
	}
	p := mustNew(t, Options{NoPlaceholders: true})
	if got := p.Prepare("{name} %s", Native{}).Texts[0]; got != "{name} %s" {
		t.Errorf("NoPlaceholders masked %q", got)
	}
	pr := p.Prepare("a", Native{})
	if _, err := pr.Finish([]string{"a", "b"}); err == nil {
		t.Error("two answers for one text accepted")
	}
}

// rewriteOutsideTags is an engine that takes markup: it rewrites the words outside tags.
func rewriteOutsideTags(s string) string {
	var b strings.Builder
	for s != "" {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(rewrite(s))
			break
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			b.WriteString(rewrite(s))
			break
		}
		b.WriteString(rewrite(s[:i]) + s[i:i+j+1])
		s = s[i+j+1:]
	}
	return b.String()
}

// TestConcurrentUse: one Pipeline and one Prepared serve goroutines at once (run with
// -race), each restoring its own answer.
func TestConcurrentUse(t *testing.T) {
	g := mustGlossary(t, Term{Source: "cloud", Target: "Wolke"})
	p := mustNew(t, Options{Format: FormatHTML, Glossary: g})
	src := `<p title="a cloud">{n} <b>cloud</b> %s</p>`
	shared := p.Prepare(src, Native{})
	done := make(chan error, 8)
	for i := range 8 {
		go func() {
			pr := shared
			if i%2 == 0 {
				pr = p.Prepare(src, Native{})
			}
			for range 50 {
				outs := []string{rewrite(pr.Texts[0]), rewrite(pr.Texts[1])}
				if _, err := pr.Finish(outs); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func TestTextAttributes(t *testing.T) {
	doc := `<img alt="red shoes" data-label="new" title="x">`
	for _, tt := range []struct {
		f     Format
		attrs []string
		want  []string
	}{
		{FormatHTML, nil, []string{"⟦0⟧⟦1⟧", "red shoes", "x"}}, // a stray </img> is an atom
		{FormatHTML, []string{"DATA-label"}, []string{"⟦0⟧⟦1⟧", "new"}},
		{FormatHTML, []string{}, []string{"⟦0⟧⟦1⟧"}},
		{FormatXML, nil, []string{"⟦0⟧⟦1⟧"}},
		{FormatXML, []string{"alt"}, []string{"⟦0⟧⟦1⟧", "red shoes"}},
	} {
		p := mustNew(t, Options{Format: tt.f, TextAttributes: tt.attrs})
		got := p.Prepare(doc+"</img>", Native{}).Texts
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%v %q (-want +got):\n%s", tt.f, tt.attrs, diff)
		}
	}
}

// TestTermBesidePlaceholder: a term found right after a placeholder ("%XCloud": the term
// is the text piece "Cloud") is verified the way it was found, the placeholder cutting
// words, in every format and for an engine that applies the glossary itself too.
func TestTermBesidePlaceholder(t *testing.T) {
	g := mustGlossary(t, Term{Source: "cloud", Target: "Wolke"})
	for _, f := range []Format{FormatText, FormatHTML, FormatXML} {
		p := mustNew(t, Options{Format: f, Placeholders: Printf, Glossary: g})
		for _, n := range []Native{{}, {Glossary: true}} {
			pr := p.Prepare("00%XCloud", n)
			outs := []string{strings.Replace(pr.Texts[0], "Cloud", "Wolke", 1)}
			got, err := pr.Finish(outs)
			if err != nil || got != "00%XWolke" {
				t.Errorf("%v %+v: %q -> %q, %v; want 00%%XWolke", f, n, pr.Texts, got, err)
			}
		}
	}
}
