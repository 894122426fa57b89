package translate_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/fidelity/glossary"
)

// wordEngine rewrites what it is sent with fn and records every request it got.
type wordEngine struct {
	name string
	fn   func(text string, req *translate.EngineRequest) string

	mu   sync.Mutex
	reqs []translate.EngineRequest
}

func (e *wordEngine) Name() string { return e.name }

func (e *wordEngine) Translate(_ context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	e.mu.Lock()
	cp := *req
	cp.Texts = slices.Clone(req.Texts)
	e.reqs = append(e.reqs, cp)
	e.mu.Unlock()
	out := make([]string, len(req.Texts))
	for i, t := range req.Texts {
		out[i] = e.fn(t, req)
	}
	return &translate.EngineResult{Texts: out}, nil
}

func (e *wordEngine) got() []translate.EngineRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.reqs)
}

// words applies f to every run of letters of s outside tags and character references
// (markup stays as it is, as a vendor with tag handling does; masked text has none).
func words(s string, f func(string) string) string {
	var b strings.Builder
	inTag := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case inTag:
			inTag = r != '>'
		case r == '<':
			inTag = true
		case r == '&':
			if j := strings.IndexByte(s[i:], ';'); j > 0 {
				b.WriteString(s[i : i+j+1])
				i += j + 1
				continue
			}
		case unicode.IsLetter(r):
			j := i
			for j < len(s) {
				r, n := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsLetter(r) {
					break
				}
				j += n
			}
			b.WriteString(f(s[i:j]))
			i = j
			continue
		}
		b.WriteString(s[i : i+size])
		i += size
	}
	return b.String()
}

// rewrite makes every word another: "Hello" -> "HELLOx".
func rewrite(s string, _ *translate.EngineRequest) string {
	return words(s, func(w string) string { return strings.ToUpper(w) + "x" })
}

// shuffle rewrites every word and reverses the order of the words of each text run.
func shuffle(s string, req *translate.EngineRequest) string {
	var ws []string
	words(s, func(w string) string { ws = append(ws, w); return w })
	slices.Reverse(ws)
	k := 0
	return words(s, func(string) string { w := ws[k]; k++; return strings.ToUpper(w) + "y" })
}

// vendorHTML is what a vendor with tag handling does: fn on the text, the content of
// script elements left as it is.
func vendorHTML(fn func(string, *translate.EngineRequest) string) func(string, *translate.EngineRequest) string {
	return func(s string, req *translate.EngineRequest) string {
		head, script, ok := strings.Cut(s, "<script>")
		if !ok {
			return fn(s, req)
		}
		body, tail, _ := strings.Cut(script, "</script>")
		return fn(head, req) + "<script>" + body + "</script>" + fn(tail, req)
	}
}

var htmlNative = fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML}}

const page = `<h1 title="Fast storage">Hello {name}</h1>` +
	`<p class="lead" id="p1">Buy <b>now</b> &amp; save %d%%: <a href="/buy?x=1">the offer</a>.</p>` +
	`<img src="a.png" alt="A red box"><script>var x = "keep";</script>`

// tagsOf returns the tags of an HTML text with their attributes, and the values of its
// text attributes apart, in order.
var tagRE = regexp.MustCompile(`<[^>]*>`)

// HTML goes through engines that rewrite or shuffle every word, with the markup masked
// (an engine without tag handling, as most bundled profiles) or native: the tags, every
// attribute that is not text, the script and the placeholders come back as they were, and
// the text attributes are translated.
func TestHTMLKeepsStructureAndPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		name   string
		native fidelity.Native
		fn     func(string, *translate.EngineRequest) string
		format translate.Format // what the engine is sent
	}{
		{"masked rewrite", fidelity.Native{}, rewrite, translate.FormatText},
		{"masked shuffle", fidelity.Native{}, shuffle, translate.FormatText},
		{"native rewrite", htmlNative, vendorHTML(rewrite), translate.FormatHTML},
		{"native shuffle", htmlNative, vendorHTML(shuffle), translate.FormatHTML},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &wordEngine{name: "e", fn: tc.fn}
			c := newClient(t, translate.WithEngine(e, translate.Profile{Native: tc.native}))
			res, err := c.Translate(context.Background(), translate.Request{Text: page, Source: "en", Target: "de", Format: translate.FormatHTML})
			if err != nil {
				t.Fatalf("Translate: %v", err)
			}
			// The structure: tags other than text attributes are the source's.
			strip := func(s string) []string {
				var out []string
				for _, tag := range tagRE.FindAllString(s, -1) {
					out = append(out, regexp.MustCompile(` (title|alt)="[^"]*"`).ReplaceAllString(tag, ""))
				}
				return out
			}
			if diff := cmp.Diff(strip(page), strip(res.Text)); diff != "" {
				t.Errorf("tags changed (-want +got):\n%s\ngot %s", diff, res.Text)
			}
			for _, keep := range []string{"{name}", "%d%%", `var x = "keep";`, "&amp;", `href="/buy?x=1"`} {
				if strings.Count(res.Text, keep) != 1 {
					t.Errorf("%q not kept once in %s", keep, res.Text)
				}
			}
			for _, gone := range []string{"Hello", "offer", "A red box", "Fast storage"} {
				if tc.format == translate.FormatHTML && (gone == "A red box" || gone == "Fast storage") {
					continue // a vendor with tag handling decides about attributes
				}
				if strings.Contains(res.Text, gone) {
					t.Errorf("%q not translated in %s", gone, res.Text)
				}
			}
			for _, r := range e.got() {
				if r.Format != tc.format {
					t.Errorf("engine was sent %v, want %v", r.Format, tc.format)
				}
				for _, s := range r.Texts {
					if strings.Contains(s, "{name}") || tc.format == translate.FormatText && (strings.Contains(s, "keep") || strings.Contains(s, "/buy")) {
						t.Errorf("engine was sent a protected part: %q", s)
					}
				}
			}
		})
	}
}

// An engine that breaks the structure (it drops a masked tag) is bad output: the request
// fails over to the next engine, and the error says what was lost, never the text.
func TestBrokenMarkupFailsOver(t *testing.T) {
	drop := &wordEngine{name: "drop", fn: func(s string, _ *translate.EngineRequest) string {
		return strings.Replace(rewrite(s, nil), "⟦1⟧", "", 1)
	}}
	good := &wordEngine{name: "good", fn: rewrite}
	c := newClient(t, translate.WithEngine(drop, translate.Profile{MaxTexts: 10}), translate.WithEngine(good, translate.Profile{MaxTexts: 10}))
	res, err := c.Translate(context.Background(), translate.Request{Text: page, Source: "en", Target: "de", Format: translate.FormatHTML,
		Engine: "drop", AllowFallback: true})
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	if res.Engine != "good" || len(res.Attempts) != 2 || translate.KindOf(res.Attempts[0].Err) != translate.KindBadOutput {
		t.Fatalf("served by %s after %v; want good after drop's bad output", res.Engine, res.Attempts)
	}
	if msg := res.Attempts[0].Err.Error(); strings.Contains(msg, "Hello") || strings.Contains(msg, "<h1") {
		t.Errorf("error quotes the text: %s", msg)
	}
}

// An engine that takes HTML natively and sends the document back untranslated, as it was
// or with its tags rewritten, echoed it: the next engine serves, and a second request
// gets that engine's translation, not a cached echo. A part that is all tags still comes
// back as it is (TestRandomHTMLRoundTrip, TestLongHTMLNeverCutInsideATag).
func TestNativeMarkupEchoFailsOver(t *testing.T) {
	src := `<p class="x">Hello world, how are you today? The weather is nice.</p>`
	for name, fn := range map[string]func(string, *translate.EngineRequest) string{
		"as it was": func(s string, _ *translate.EngineRequest) string { return s },
		"tags rewritten": func(s string, _ *translate.EngineRequest) string {
			return strings.ReplaceAll(s, `class="x"`, `class='x' `)
		},
	} {
		echo := &wordEngine{name: "echo", fn: fn}
		good := &wordEngine{name: "good", fn: rewrite}
		c := newClient(t, translate.WithEngine(echo, translate.Profile{Quality: 90, Native: htmlNative}),
			translate.WithEngine(good, translate.Profile{Quality: 50, Native: htmlNative}))
		req := translate.Request{Text: src, Source: "en", Target: "de", Format: translate.FormatHTML, AllowFallback: true}
		for round := range 2 {
			res, err := c.Translate(context.Background(), req)
			if err != nil {
				t.Fatalf("%s, round %d: %v", name, round, err)
			}
			if res.Engine != "good" || !strings.Contains(res.Text, "HELLOx") {
				t.Errorf("%s, round %d: served %q by %s; want good's translation", name, round, res.Text, res.Engine)
			}
		}
		if len(echo.got()) != 2 {
			t.Errorf("%s: echo was called %d times; want once a request (an echo is never cached)", name, len(echo.got()))
		}
	}
}

func brands(t *testing.T, name string, terms ...glossary.Term) *glossary.Glossary {
	t.Helper()
	g, err := glossary.New(name, "en", "de", terms)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A glossary applied natively by an engine that ignores one term is bad output: the next
// engine's answer, which has the term, is served, with the glossary's revision.
func TestGlossaryMissFailsOver(t *testing.T) {
	g := brands(t, "brands", glossary.Term{Source: "Acme Cloud", Target: "Acme Wolke"}, glossary.Term{Source: "cart", Target: "Warenkorb"})
	apply := func(ignore string) func(string, *translate.EngineRequest) string {
		return func(s string, req *translate.EngineRequest) string {
			if req.Glossary != nil {
				for _, tm := range req.Glossary.Terms() {
					if tm.Source != ignore {
						s = strings.ReplaceAll(s, tm.Source, tm.Target)
					}
				}
			}
			return strings.ReplaceAll(s, "your", "Ihr")
		}
	}
	sloppy := &wordEngine{name: "sloppy", fn: apply("cart")}
	careful := &wordEngine{name: "careful", fn: apply("")}
	native := fidelity.Native{Glossary: true}
	c := newClient(t, translate.WithEngine(sloppy, translate.Profile{Quality: 99, Native: native}),
		translate.WithEngine(careful, translate.Profile{Quality: 10, Native: native}),
		translate.WithGlossaries(g), translate.WithDefaultGlossaries("brands"))
	res, err := c.Translate(context.Background(), translate.Request{Text: "Acme Cloud: your cart", Source: "en", Target: "de",
		Engine: "sloppy", AllowFallback: true})
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	want := "Acme Wolke: Ihr Warenkorb"
	if res.Text != want || res.Engine != "careful" || res.Glossary != g.Revision() {
		t.Errorf("got %q by %s (glossary %q); want %q by careful (%q)", res.Text, res.Engine, res.Glossary, want, g.Revision())
	}
	if k := translate.KindOf(res.Attempts[0].Err); k != translate.KindBadOutput {
		t.Errorf("sloppy's attempt: %v, want BadOutput", res.Attempts[0].Err)
	}
	if msg := res.Attempts[0].Err.Error(); strings.Contains(msg, "cart") || strings.Contains(msg, "Acme") {
		t.Errorf("error quotes the text: %s", msg)
	}
	if r := sloppy.got(); r[0].Glossary != g {
		t.Errorf("sloppy was not sent the glossary: %+v", r[0])
	}
	// An engine without a glossary of its own gets the terms masked: it cannot miss them.
	plain := &wordEngine{name: "plain", fn: apply("")}
	c2 := newClient(t, translate.WithEngine(plain, translate.Profile{}), translate.WithGlossaries(g))
	res, err = c2.Translate(context.Background(), translate.Request{Text: "Acme Cloud: your cart", Source: "en", Target: "de", Glossary: "brands"})
	if err != nil || res.Text != want {
		t.Fatalf("masked glossary: %v, %v; want %q", res, err, want)
	}
	if s := plain.got()[0].Texts[0]; strings.Contains(s, "cart") || plain.got()[0].Glossary != nil {
		t.Errorf("plain engine was sent %q (glossary %v): the terms should be masked", s, plain.got()[0].Glossary)
	}
}

// The cache key holds the glossary's revision: a request under another glossary (other
// terms) or none is a miss, the same one again a hit.
func TestGlossaryRevisionInCacheKey(t *testing.T) {
	v1 := brands(t, "v1", glossary.Term{Source: "cart", Target: "Korb"})
	v2 := brands(t, "v2", glossary.Term{Source: "cart", Target: "Warenkorb"})
	e := &wordEngine{name: "e", fn: rewrite}
	c, err := translate.New(translate.WithEngine(e, translate.Profile{}), translate.WithGlossaries(v1, v2))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ask := func(gl string, format translate.Format) *translate.Result {
		t.Helper()
		res, err := c.Translate(context.Background(), translate.Request{Text: "the cart", Source: "en", Target: "de", Glossary: gl, Format: format})
		if err != nil {
			t.Fatalf("Translate(%q): %v", gl, err)
		}
		return res
	}
	var hits []bool
	for _, gl := range []string{"v1", "v1", "v2", translate.NoGlossary, "v2"} {
		hits = append(hits, ask(gl, translate.FormatText).FromCache)
	}
	hits = append(hits, ask("v1", translate.FormatHTML).FromCache)
	if diff := cmp.Diff([]bool{false, true, false, false, true, false}, hits); diff != "" {
		t.Errorf("cache hits (-want +got):\n%s", diff)
	}
	if res := ask("v2", translate.FormatText); res.Glossary != v2.Revision() || !strings.Contains(res.Text, "Warenkorb") {
		t.Errorf("hit: %q with glossary %q; want Warenkorb, %q", res.Text, res.Glossary, v2.Revision())
	}
}

// Requests that name what does not exist, and streams of markup, are refused clearly.
func TestContentRefusals(t *testing.T) {
	g := brands(t, "brands", glossary.Term{Source: "cart", Target: "Korb"})
	c := newClient(t, translate.WithEngine(&wordEngine{name: "e", fn: rewrite}, translate.Profile{}), translate.WithGlossaries(g))
	for name, r := range map[string]translate.Request{
		"unknown glossary":  {Text: "a cart", Source: "en", Target: "de", Glossary: "nope"},
		"other pair":        {Text: "a cart", Source: "en", Target: "fr", Glossary: "brands"},
		"glossary detected": {Text: "a cart", Target: "de", Glossary: "brands"},
		"unknown format":    {Text: "a cart", Source: "en", Target: "de", Format: 9},
	} {
		if _, err := c.Translate(context.Background(), r); !errors.Is(err, translate.ErrInvalidInput) {
			t.Errorf("%s: %v, want InvalidInput", name, err)
		}
	}
	for _, err := range c.TranslateStream(context.Background(), translate.Request{Text: "<p>a</p>", Source: "en", Target: "de", Format: translate.FormatHTML}) {
		if !errors.Is(err, translate.ErrInvalidInput) {
			t.Errorf("stream of HTML: %v, want InvalidInput", err)
		}
		break
	}
}

// TranslateBatch honours Format and Glossary: such requests are translated alone, through
// the pipeline, next to packed plain ones.
func TestBatchHonoursContent(t *testing.T) {
	g := brands(t, "brands", glossary.Term{Source: "cart", Target: "Korb"})
	e := &wordEngine{name: "e", fn: rewrite}
	c := newClient(t, translate.WithEngine(e, translate.Profile{MaxTexts: 50}), translate.WithGlossaries(g))
	out := c.TranslateBatch(context.Background(), []translate.Request{
		{Text: "<b>a</b> cart", Source: "en", Target: "de", Format: translate.FormatHTML, Glossary: "brands"},
		{Text: "one", Source: "en", Target: "de"},
		{Text: "two", Source: "en", Target: "de"},
	})
	var got []string
	for _, o := range out {
		if o.Err != nil {
			t.Fatalf("batch: %v", o.Err)
		}
		got = append(got, o.Result.Text)
	}
	if diff := cmp.Diff([]string{"<b>Ax</b> Korb", "ONEx", "TWOx"}, got); diff != "" {
		t.Errorf("batch (-want +got):\n%s", diff)
	}
	if out[0].Result.Glossary != g.Revision() {
		t.Errorf("batch result glossary %q, want %q", out[0].Result.Glossary, g.Revision())
	}
}

// A long HTML text is cut for an engine's limit between tags, never inside one.
func TestLongHTMLNeverCutInsideATag(t *testing.T) {
	e := &wordEngine{name: "e", fn: rewrite}
	c := newClient(t, translate.WithEngine(e, translate.Profile{MaxTextChars: 40, MaxChars: 40, Native: htmlNative}))
	var b strings.Builder
	for range 20 {
		b.WriteString(`<p class="a long class name">Some words here. <a href="/a/very/long/link">and a link</a></p> `)
	}
	res, err := c.Translate(context.Background(), translate.Request{Text: b.String(), Source: "en", Target: "de", Format: translate.FormatHTML})
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	if got, want := tagRE.FindAllString(res.Text, -1), tagRE.FindAllString(b.String(), -1); !slices.Equal(got, want) {
		t.Errorf("tags changed")
	}
	calls := e.got()
	if len(calls) < 10 {
		t.Fatalf("%d calls; want the text cut", len(calls))
	}
	for _, r := range calls {
		for _, s := range r.Texts {
			if strings.Count(s, "<") != strings.Count(s, ">") {
				t.Fatalf("a tag was cut: %q", s)
			}
		}
	}
}

// Placeholders in plain text are protected for every engine, by default and with a
// pattern of the caller's own: an engine that rewrites every word never sees them.
func TestPlaceholdersProtected(t *testing.T) {
	const text = "Hello {name}, you have {count, plural, one {# item} other {# items}} in %1$s {{cart}} for $user"
	for _, tc := range []struct {
		name string
		opts []translate.Option
		keep []string
	}{
		{"defaults", nil, []string{"{name}", "{count, plural, one {", "%1$s", "{{cart}}"}},
		{"pattern", []translate.Option{translate.WithPlaceholders(0, regexp.MustCompile(`\$[a-z]+`))}, []string{"{name}", "%1$s", "$user"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &wordEngine{name: "e", fn: rewrite}
			c := newClient(t, append(tc.opts, translate.WithEngine(e, translate.Profile{}))...)
			res, err := c.Translate(context.Background(), translate.Request{Text: text, Source: "en", Target: "de"})
			if err != nil {
				t.Fatalf("Translate: %v", err)
			}
			for _, k := range tc.keep {
				if !strings.Contains(res.Text, k) {
					t.Errorf("%q lost: %s", k, res.Text)
				}
				if strings.Contains(e.got()[0].Texts[0], k) {
					t.Errorf("engine was sent %q: %s", k, e.got()[0].Texts[0])
				}
			}
			if !strings.Contains(res.Text, "ITEMx") || res.Glossary != "" {
				t.Errorf("plural messages not translated, or a glossary reported: %+v", res)
			}
		})
	}
}

// Every engine serves HTML, masked when it has no tag handling: an engine without
// Native.Formats alone serves an HTML request; an engine declaring instructions gets the
// glossary as an instruction.
func TestEveryEngineServesMarkupAndInstructions(t *testing.T) {
	g := brands(t, "brands", glossary.Term{Source: "cart", Target: "Warenkorb"})
	llm := &wordEngine{name: "llm", fn: func(s string, req *translate.EngineRequest) string {
		if strings.Contains(req.Instruction, "Warenkorb") {
			s = strings.ReplaceAll(s, "cart", "Warenkorb")
		}
		return strings.ReplaceAll(s, "the", "der")
	}}
	c := newClient(t, translate.WithEngine(llm, translate.Profile{Native: fidelity.Native{Instructions: true}}),
		translate.WithGlossaries(g), translate.WithDefaultGlossaries("brands"))
	res, err := c.Translate(context.Background(), translate.Request{Text: "<p>the <i>cart</i></p>", Source: "en", Target: "de", Format: translate.FormatXML})
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	if res.Text != "<p>der <i>Warenkorb</i></p>" {
		t.Errorf("Translate = %q", res.Text)
	}
	got := llm.got()[0]
	if got.Format != translate.FormatText || got.Glossary != nil || !strings.Contains(got.Instruction, "cart") {
		t.Errorf("llm was sent %+v; want masked text with the glossary as an instruction", got)
	}
}

// With a Store, what the Store keeps for a request is the restored translation, never the
// engine's masked text.
func TestStoreKeepsRestoredText(t *testing.T) {
	st := &scriptStore{}
	e := &wordEngine{name: "e", fn: rewrite}
	c := newClient(t, translate.WithEngine(e, translate.Profile{MaxTexts: 10}), translate.WithStore(st))
	for _, r := range []translate.Request{
		{Text: "<b>Hello</b> {name}", Source: "en", Target: "de", Format: translate.FormatHTML, RequestID: "id-0"},
		{Text: "Hello {name}", Source: "en", Target: "de", RequestID: "id-1"},
	} {
		res, err := c.Translate(context.Background(), r)
		if err != nil {
			t.Fatalf("Translate: %v", err)
		}
		st.mu.Lock()
		s := st.settles[len(st.settles)-1]
		st.mu.Unlock()
		if s.Answer == nil || s.Answer.Text != res.Text {
			t.Errorf("the Store was given %+v; want the answer %q", s.Answer, res.Text)
		}
	}
}

// A long plain text with placeholders is still translated as units in parallel, each
// with its placeholders masked.
func TestLongTextWithPlaceholdersInUnits(t *testing.T) {
	e := &wordEngine{name: "e", fn: rewrite}
	c := newClient(t, translate.WithEngine(e, translate.Profile{MaxChars: 60}))
	var b strings.Builder
	for range 10 {
		b.WriteString("Hello {name}, you saved 20% on {{item}} today. ")
	}
	res, err := c.Translate(context.Background(), translate.Request{Text: b.String(), Source: "en", Target: "de"})
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	if n := strings.Count(res.Text, "{name}"); n != 10 || strings.Count(res.Text, "{{item}}") != 10 || strings.Contains(res.Text, "Hello") {
		t.Errorf("got %s", res.Text)
	}
	for _, r := range e.got() {
		if strings.Contains(r.Texts[0], "{") {
			t.Errorf("engine was sent a placeholder: %q", r.Texts[0])
		}
	}
}

// icuWords translates words, the ICU keywords too, leaving tokens alone.
func icuWords(s string, _ *translate.EngineRequest) string {
	return "¡" + strings.NewReplacer("plural", "plurale", "one", "uno", "other", "otro", "select", "selecto", "You", "Tu").Replace(s)
}

// A long plain text holding ICU plurals, cut for an engine with a small limit into units
// (Translate) or segments (TranslateStream): each plural goes whole to one piece, so its
// keywords and braces are masked and come back as they were.
func TestLongTextKeepsICUPluralsWhole(t *testing.T) {
	plural := "{n, plural, one {You have one file. It is big.} other {You have # files. They are big.}}"
	src := "Intro sentence here. " + plural + " End here. Another sentence follows. " + plural + " The end."
	check := func(how, got string, e *wordEngine) {
		t.Helper()
		if n := strings.Count(got, "{n, plural, one {"); n != 2 || strings.Count(got, "} other {") != 2 {
			t.Errorf("%s: the answer %q lost the ICU structure", how, got)
		}
		for _, r := range e.got() {
			for _, text := range r.Texts {
				if strings.Contains(text, "plural") || strings.Contains(text, "other {") {
					t.Errorf("%s: the engine was sent ICU syntax: %q", how, text)
				}
			}
		}
	}
	e := &wordEngine{name: "e", fn: icuWords}
	c := newClient(t, translate.WithEngine(e, translate.Profile{MaxChars: 60}))
	req := translate.Request{Text: src, Source: "en", Target: "es"}
	res, err := c.Translate(context.Background(), req)
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	if len(e.got()) < 4 {
		t.Errorf("%d calls; want the text cut", len(e.got()))
	}
	check("Translate", res.Text, e)

	e = &wordEngine{name: "e", fn: icuWords}
	c = newClient(t, translate.WithEngine(e, translate.Profile{MaxChars: 60}))
	var b strings.Builder
	for ch, err := range c.TranslateStream(context.Background(), req) {
		if err != nil {
			t.Fatalf("TranslateStream: %v", err)
		}
		if !ch.Partial {
			b.WriteString(ch.Text)
		}
	}
	check("TranslateStream", b.String(), e)
}

// randomDoc is a random HTML fragment: nested elements with attributes, entities, text
// attributes, placeholders and words.
func randomDoc(r *rand.Rand, depth int) string {
	var b strings.Builder
	wordsOf := []string{"apple", "green", "house", "river", "stone", "light", "Hello", "{name}", "%s", "{{n}}", "&amp;", "&lt;", "®"}
	for range 1 + r.IntN(4) {
		switch k := r.IntN(5); {
		case k < 2 || depth == 0:
			for range 1 + r.IntN(6) {
				b.WriteString(wordsOf[r.IntN(len(wordsOf))])
				b.WriteByte(' ')
			}
		case k == 2:
			b.WriteString(`<img src="/i` + strconv.Itoa(r.IntN(9)) + `.png" alt="green river">`)
		default:
			tag := []string{"p", "b", "i", "span", "a"}[r.IntN(5)]
			b.WriteString("<" + tag + ` class="c` + strconv.Itoa(r.IntN(9)) + `" title="light house">`)
			b.WriteString(randomDoc(r, depth-1))
			b.WriteString("</" + tag + ">")
		}
	}
	return b.String()
}

// fields reverses the whitespace-separated fields of s, tokens included, after rewriting
// every word: the worst a plain-text engine does to masked markup.
func fields(s string, req *translate.EngineRequest) string {
	f := strings.Fields(rewrite(s, req))
	slices.Reverse(f)
	return strings.Join(f, " ")
}

// Random documents through the Client, cut for small engine limits: the tags (text
// attributes aside) and every placeholder come back, in order for an engine that takes
// HTML natively, each once for one that gets it masked and reorders everything (the
// pipeline checks that the result is well-formed).
func TestRandomHTMLRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 3))
	attrs := regexp.MustCompile(` (title|alt)="[^"]*"`)
	tagsOf := func(s string) []string {
		var out []string
		for _, tag := range tagRE.FindAllString(s, -1) {
			out = append(out, attrs.ReplaceAllString(tag, ""))
		}
		return out
	}
	for i := range 60 {
		doc := randomDoc(r, 3)
		limit := []int{0, 40, 120}[r.IntN(3)]
		native := fidelity.Native{}
		fn := fields
		if i%2 == 0 {
			native, fn = htmlNative, rewrite
		}
		e := &wordEngine{name: "e", fn: fn}
		c := newClient(t, translate.WithEngine(e, translate.Profile{MaxTextChars: limit, MaxTexts: 1 + r.IntN(4), Native: native}))
		res, err := c.Translate(context.Background(), translate.Request{Text: doc, Source: "en", Target: "de", Format: translate.FormatHTML})
		if err != nil {
			t.Fatalf("#%d (native %v, limit %d) %s: %v", i, native.Formats != nil, limit, doc, err)
		}
		want, got := tagsOf(doc), tagsOf(res.Text)
		if native.Formats == nil { // a reordering engine may move elements: each tag once, well nested
			slices.Sort(want)
			slices.Sort(got)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("#%d tags changed (-want +got):\n%s\n%s\n%s", i, diff, doc, res.Text)
		}
		for _, p := range []string{"{name}", "%s", "{{n}}", "&amp;", "&lt;"} {
			if strings.Count(doc, p) != strings.Count(res.Text, p) {
				t.Fatalf("#%d: %q count changed:\n%s\n%s", i, p, doc, res.Text)
			}
		}
	}
}

// TranslateStream applies a glossary to each segment.
func TestStreamHonoursGlossary(t *testing.T) {
	g := brands(t, "brands", glossary.Term{Source: "cart", Target: "Warenkorb"})
	c := newClient(t, translate.WithEngine(&wordEngine{name: "e", fn: rewrite}, translate.Profile{}), translate.WithGlossaries(g))
	var got strings.Builder
	for ch, err := range c.TranslateStream(context.Background(), translate.Request{Text: "the cart\n\nmy cart", Source: "en", Target: "de", Glossary: "brands"}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		if !ch.Partial {
			got.WriteString(ch.Text + "|")
		}
	}
	if got.String() != "THEx Warenkorb\n\nMYx Warenkorb|" {
		t.Errorf("stream = %q", got.String())
	}
}

// BenchmarkMissHTML is a request with markup, placeholders and a glossary through a
// plain-text engine (everything masked), without the cache: what the pipeline adds.
func BenchmarkMissHTML(b *testing.B) {
	g, _ := glossary.New("brands", "en", "de", []glossary.Term{{Source: "storage", Target: "Speicher"}})
	e := &wordEngine{name: "e", fn: func(s string, _ *translate.EngineRequest) string { return s + "!" }}
	c, err := translate.New(translate.WithEngine(e, translate.Profile{MaxTexts: 10}), translate.WithoutCache(),
		translate.WithGlossaries(g), translate.WithDefaultGlossaries("brands"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	r := translate.Request{Text: page, Source: "en", Target: "de", Format: translate.FormatHTML}
	b.ReportAllocs()
	for b.Loop() {
		e.mu.Lock()
		e.reqs = e.reqs[:0]
		e.mu.Unlock()
		if _, err := c.Translate(context.Background(), r); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBatchMasksPlaceholders: a TranslateBatch text with placeholders reaches the engine
// masked, as through Translate, not packed as it is: an engine that rewrites every word
// gives each placeholder back once.
func TestBatchMasksPlaceholders(t *testing.T) {
	e := &wordEngine{name: "e", fn: rewrite}
	c := newClient(t, translate.WithEngine(e, translate.Profile{MaxTexts: 50}))
	out := c.TranslateBatch(context.Background(), []translate.Request{
		{Text: "Hello {name}, %d items", Source: "en", Target: "de"},
		{Text: "one", Source: "en", Target: "de"},
		{Text: "two", Source: "en", Target: "de"},
	})
	for i, o := range out {
		if o.Err != nil {
			t.Fatalf("batch item %d: %v", i, o.Err)
		}
	}
	if got := out[0].Result.Text; !strings.Contains(got, "{name}") || !strings.Contains(got, "%d") {
		t.Errorf("placeholders lost: %q", got)
	}
	for _, r := range e.got() {
		for _, text := range r.Texts {
			if strings.Contains(text, "{name}") || strings.Contains(text, "%d") {
				t.Errorf("the engine was sent a placeholder unmasked: %q", text)
			}
		}
	}
}
