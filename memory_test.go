package translate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	translate "github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
	"github.com/fanyi-go/translate/engines/fake"
	"github.com/fanyi-go/translate/fidelity/glossary"
	"github.com/fanyi-go/translate/fidelity/memory"
)

// memClient is a Client with one fake engine "a" (or the engines given), no cache, a manual
// clock and a translation memory under p.
func memClient(t *testing.T, p translate.MemoryPolicy, engines ...*fake.Engine) *translate.Client {
	t.Helper()
	if len(engines) == 0 {
		engines = fakes("a")
	}
	opts := []translate.Option{translate.WithClock(newClock()), translate.WithMemory(p)}
	for _, e := range engines {
		opts = append(opts, translate.WithEngine(e, translate.Profile{Quality: 100}))
	}
	return newClient(t, opts...)
}

// sent lists the texts the engines received.
func sent(engines ...*fake.Engine) []string {
	var out []string
	for _, e := range engines {
		for _, r := range e.Requests() {
			out = append(out, r.Texts...)
		}
	}
	return out
}

// sentTexts counts the texts the engines received.
func sentTexts(engines ...*fake.Engine) int {
	n := 0
	for _, e := range engines {
		for _, r := range e.Requests() {
			n += len(r.Texts)
		}
	}
	return n
}

func mustTranslate(t *testing.T, c *translate.Client, r translate.Request) *translate.Result {
	t.Helper()
	res, err := c.Translate(context.Background(), r)
	if err != nil {
		t.Fatalf("Translate(%q): %v", r.Text, err)
	}
	return res
}

// provenance is what a test compares of a Result.
type provenance struct {
	Text, Engine                    string
	FromMemory, FromCache, Degraded bool
	MemoryScore                     float64
	Segments                        int
}

func provOf(r *translate.Result) provenance {
	return provenance{Text: r.Text, Engine: r.Engine, FromMemory: r.FromMemory, FromCache: r.FromCache,
		Degraded: r.Degraded, MemoryScore: r.MemoryScore, Segments: len(r.Segments)}
}

// TestMemoryExact: an engine's translation is kept; the same request again is answered
// from memory, naming the engine, with no call; another style, scene or target is not.
func TestMemoryExact(t *testing.T) {
	a := fake.New("a")
	c := memClient(t, translate.MemoryPolicy{}, a)
	r := req("Save your changes.")
	first := mustTranslate(t, c, r)
	if first.FromMemory || a.Calls() != 1 {
		t.Fatalf("first: %+v, %d calls", provOf(first), a.Calls())
	}
	got := mustTranslate(t, c, r)
	want := provenance{Text: "[es] Save your changes.", Engine: "a", FromMemory: true, MemoryScore: 1}
	if diff := cmp.Diff(want, provOf(got)); diff != "" {
		t.Errorf("second (-want +got):\n%s", diff)
	}
	if a.Calls() != 1 || len(got.Attempts) != 0 || got.Cost != 0 || got.Source != "en" {
		t.Errorf("a memory hit made %d calls, attempts %v, cost %v, source %q", a.Calls(), got.Attempts, got.Cost, got.Source)
	}
	for _, other := range []translate.Request{
		{Text: r.Text, Source: "en", Target: "es", Style: translate.StyleFormal},
		{Text: r.Text, Source: "en", Target: "es", Scene: translate.SceneLegal},
		{Text: r.Text, Source: "en", Target: "fr"},
		{Text: r.Text, Source: "en", Target: "es", NoCache: true},
		{Text: r.Text, Target: "es"}, // no source: no memory
	} {
		if res := mustTranslate(t, c, other); res.FromMemory {
			t.Errorf("%+v answered from memory", other)
		}
	}
}

// twenty is a text of 20 code points: one edit scores 0.95, two 0.9.
const twenty = "Add to cart for 9 €."

// TestMemoryFuzzy: a fuzzy match at or above the threshold is the last degradation step
// (Degraded, its score, its engine) when every engine failed; below the threshold, or
// while an engine serves, it is not used.
func TestMemoryFuzzy(t *testing.T) {
	tests := []struct {
		name      string
		threshold float64
		text      string
		score     float64 // 0: the request fails
	}{
		{"at the threshold", 0, "Add to cart for 8 €.", 0.95},
		{"below the threshold", 0, "Add to cart for 88 €", 0},
		{"threshold above the score", 0.96, "Add to cart for 8 €.", 0},
		{"threshold below the score", 0.85, "Add to cart for 88 €", memory.Score(twenty, "Add to cart for 88 €")},
		{"exact, engines down", 0, twenty, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := fake.New("a")
			c := memClient(t, translate.MemoryPolicy{Threshold: tt.threshold}, a)
			mustTranslate(t, c, req(twenty))
			a.Down(translate.KindUnavailable)
			res, err := c.Translate(context.Background(), req(tt.text))
			if tt.score == 0 {
				if err == nil || translate.KindOf(err) != translate.KindUnavailable {
					t.Fatalf("got %+v, %v; want the engine's error", res, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := provenance{Text: "[es] " + twenty, Engine: "a", FromMemory: true, Degraded: tt.score < 1, MemoryScore: tt.score}
			got := provOf(res)
			if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if (len(res.Attempts) == 0) != (tt.score == 1) { // an exact match answers first
				t.Errorf("attempts %v", res.Attempts)
			}
		})
	}
}

// TestMemoryFuzzyOnlyAsDegradation: while the engine serves, a similar text goes to it;
// with FuzzyFirst the fuzzy match answers first, not Degraded, and nothing is sent.
func TestMemoryFuzzyOnlyAsDegradation(t *testing.T) {
	a := fake.New("a")
	c := memClient(t, translate.MemoryPolicy{}, a)
	mustTranslate(t, c, req(twenty))
	res := mustTranslate(t, c, req("Add to cart for 8 €."))
	if res.FromMemory || res.Text != "[es] Add to cart for 8 €." || a.Calls() != 2 {
		t.Errorf("without FuzzyFirst: %+v after %d calls; want the engine's answer", provOf(res), a.Calls())
	}

	b := fake.New("b")
	c = memClient(t, translate.MemoryPolicy{FuzzyFirst: true}, b)
	mustTranslate(t, c, req(twenty))
	res = mustTranslate(t, c, req("Add to cart for 7 €."))
	want := provenance{Text: "[es] " + twenty, Engine: "b", FromMemory: true, MemoryScore: 0.95}
	if diff := cmp.Diff(want, provOf(res), cmpopts.EquateApprox(0, 1e-9)); diff != "" || b.Calls() != 1 {
		t.Errorf("FuzzyFirst after %d calls (-want +got):\n%s", b.Calls(), diff)
	}
}

// TestMemoryDegradedNotKept: a fuzzy answer is neither kept in memory nor cached: once
// the engine is back, the text goes to it.
func TestMemoryDegradedNotKept(t *testing.T) {
	a := fake.New("a")
	c := newClient(t, translate.WithClock(newClock()), translate.WithMemory(translate.MemoryPolicy{}),
		translate.WithCache(100, 1<<40), translate.WithEngine(a, translate.Profile{}))
	mustTranslate(t, c, req(twenty))
	a.Down(translate.KindUnavailable)
	if res := mustTranslate(t, c, req("Add to cart for 8 €.")); !res.Degraded {
		t.Fatalf("not degraded: %+v", provOf(res))
	}
	a.Up()
	res := mustTranslate(t, c, req("Add to cart for 8 €."))
	if res.FromMemory || res.FromCache || res.Text != "[es] Add to cart for 8 €." {
		t.Errorf("after the engine is back: %+v", provOf(res))
	}

	// A fallback engine's answer is degraded: not kept either.
	p, f := fake.New("p"), fake.New("f")
	c = newClient(t, translate.WithClock(newClock()), translate.WithMemory(translate.MemoryPolicy{}),
		translate.WithEngine(p, translate.Profile{}), translate.WithEngine(f, translate.Profile{FallbackOnly: true}))
	p.Down(translate.KindUnavailable)
	if res := mustTranslate(t, c, req("Fallback text.")); !res.Degraded || res.Engine != "f" {
		t.Fatalf("fallback: %+v", provOf(res))
	}
	var tmx bytes.Buffer
	if err := c.ExportMemory(&tmx); err != nil || strings.Contains(tmx.String(), "Fallback") {
		t.Errorf("a fallback engine's answer was kept (%v):\n%s", err, tmx.String())
	}
}

// TestMemoryPinAndRegions: a pin without fallback takes only its engine's entries; a
// request limited to regions only entries of an engine in them.
func TestMemoryPinAndRegions(t *testing.T) {
	tests := []struct {
		name     string
		engine   string
		fallback bool
		regions  []string
		memory   bool
	}{
		{"pinned to a", "a", false, nil, true},
		{"pinned to b", "b", false, nil, false},
		{"pinned to b with fallback", "b", true, nil, true},
		{"regions eu", "", false, []string{"eu"}, true},
		{"regions us", "", false, []string{"us"}, false},
	}
	for _, tt := range tests {
		a, b := fake.New("a"), fake.New("b")
		c := newClient(t, translate.WithClock(newClock()), translate.WithMemory(translate.MemoryPolicy{}),
			translate.WithEngine(a, translate.Profile{Region: "eu"}), translate.WithEngine(b, translate.Profile{Region: "us"}))
		r := req("Pinned text.")
		r.Engine = "a"
		mustTranslate(t, c, r)
		r.Engine, r.AllowFallback, r.Regions = tt.engine, tt.fallback, tt.regions
		res := mustTranslate(t, c, r)
		if res.FromMemory != tt.memory || (a.Calls()+b.Calls() == 1) != tt.memory {
			t.Errorf("%s: %+v after %d calls", tt.name, provOf(res), a.Calls()+b.Calls())
		}
		if res.FromMemory && res.Engine != "a" {
			t.Errorf("%s: engine %q", tt.name, res.Engine)
		}
	}
}

// document is ten lines; the ninth and tenth differ only by their numbers.
func document() (lines []string, text string) {
	for i := range 10 {
		lines = append(lines, fmt.Sprintf("Paragraph %d says something of its own.", i))
	}
	return lines, "\n" + strings.Join(lines[:5], "\n") + "\n\n" + strings.Join(lines[5:], "\r\n") + "\n"
}

// TestMemoryDocument: a document with 9 of its 10 segments in memory sends one; the answer
// is stitched with the source's layout and says where each segment came from.
func TestMemoryDocument(t *testing.T) {
	a := fake.New("a")
	c := memClient(t, translate.MemoryPolicy{}, a)
	lines, text := document()
	for i, l := range lines {
		if i != 7 {
			mustTranslate(t, c, req(l))
		}
	}
	a.Reset()
	res := mustTranslate(t, c, req(text))
	if diff := cmp.Diff([]string{lines[7]}, sent(a)); diff != "" {
		t.Errorf("sent (-want +got):\n%s", diff)
	}
	want := strings.ReplaceAll(text, "Paragraph", "[es] Paragraph")
	if res.Text != want {
		t.Errorf("text %q\nwant %q", res.Text, want)
	}
	var from []bool
	for _, s := range res.Segments {
		from = append(from, s.FromMemory)
	}
	wantFrom := []bool{true, true, true, true, true, true, true, false, true, true}
	if diff := cmp.Diff(wantFrom, from); diff != "" || res.FromMemory || res.Engine != "a" {
		t.Errorf("segments from memory (-want +got):\n%s\nresult %+v", diff, provOf(res))
	}

	// With a RequestID: the segment sent carries the document's id and its index.
	a.Reset()
	r := req(strings.Replace(text, lines[2], "A new second paragraph.", 1))
	r.RequestID = "doc-1"
	res = mustTranslate(t, c, r)
	if got := a.Requests(); len(got) != 1 || got[0].RequestID != "doc-1#2" || res.RequestID != "doc-1" {
		t.Errorf("request ids: sent %+v, result %q", got, res.RequestID)
	}

	// Again: every segment is known now, nothing is sent.
	a.Reset()
	res = mustTranslate(t, c, req(text))
	if n := sentTexts(a); n != 0 || !res.FromMemory || res.Text != want {
		t.Errorf("all known: sent %d, %+v", n, provOf(res))
	}
}

// TestMemoryDocumentFirstTime: a new document's segments all go out, packed, and are kept
// one by one; one line's error is the document's.
func TestMemoryDocumentFirstTime(t *testing.T) {
	a := fake.New("a")
	c := newClient(t, translate.WithClock(newClock()), translate.WithMemory(translate.MemoryPolicy{}),
		translate.WithEngine(a, translate.Profile{MaxTexts: 50}))
	lines, text := document()
	res := mustTranslate(t, c, req(text))
	if a.Calls() != 1 || sentTexts(a) != 10 || len(res.Segments) != 10 {
		t.Errorf("%d calls, %d texts, %d segments; want 1 call of 10", a.Calls(), sentTexts(a), len(res.Segments))
	}
	if got := mustTranslate(t, c, req(lines[3])); !got.FromMemory {
		t.Errorf("a document's line is not kept: %+v", provOf(got))
	}

	// A text of more than 1,000 lines goes as one text, not as a call per line.
	a.Reset()
	many := strings.Repeat("x\n", 1001)
	if res := mustTranslate(t, c, req(many)); a.Calls() != 1 || res.Segments != nil {
		t.Errorf("1,001 lines: %d calls, %d segments", a.Calls(), len(res.Segments))
	}

	a.Down(translate.KindUnauthorized)
	if _, err := c.Translate(context.Background(), req(text+"\nA new line.")); translate.KindOf(err) != translate.KindUnauthorized {
		t.Errorf("a new line with the engine down: %v", err)
	}
}

// TestMemoryBatchAndStream: TranslateBatch and TranslateStream send only what the memory
// does not know.
func TestMemoryBatchAndStream(t *testing.T) {
	a := fake.New("a")
	c := newClient(t, translate.WithClock(newClock()), translate.WithMemory(translate.MemoryPolicy{}),
		translate.WithEngine(a, translate.Profile{MaxTexts: 50}))
	lines, text := document()
	for _, l := range lines[:8] {
		mustTranslate(t, c, req(l))
	}
	a.Reset()
	var reqs []translate.Request
	for _, l := range lines {
		reqs = append(reqs, req(l))
	}
	for i, out := range c.TranslateBatch(context.Background(), reqs) {
		if out.Err != nil || out.Result.FromMemory != (i < 8) {
			t.Errorf("batch %d: %+v, %v", i, out.Result, out.Err)
		}
	}
	if diff := cmp.Diff(lines[8:], sent(a)); diff != "" {
		t.Errorf("batch sent (-want +got):\n%s", diff)
	}

	a.Reset()
	var b strings.Builder
	for ch, err := range c.TranslateStream(context.Background(), req(text+"One more line.")) {
		if err != nil {
			t.Fatal(err)
		}
		if !ch.Partial {
			b.WriteString(ch.Text)
			if ch.FromMemory != (ch.Segment < 10) {
				t.Errorf("stream chunk %d: FromMemory %v", ch.Segment, ch.FromMemory)
			}
		}
	}
	if diff := cmp.Diff([]string{"One more line."}, sent(a)); diff != "" {
		t.Errorf("stream sent (-want +got):\n%s", diff)
	}
	if want := strings.ReplaceAll(text+"One more line.", "Paragraph", "[es] Paragraph"); !strings.HasPrefix(b.String(), want[:len(want)-len("One more line.")]) {
		t.Errorf("stream text %q", b.String())
	}
}

// TestMemoryTMXRoundTrip: what one Client's memory exports, another imports and answers
// from, engines and scenes kept; a TMX made elsewhere answers requests with the default
// scene and style.
func TestMemoryTMXRoundTrip(t *testing.T) {
	a := fake.New("a")
	c1 := memClient(t, translate.MemoryPolicy{}, a)
	rs := []translate.Request{req("First text."), req("Second text."),
		{Text: "Third text.", Source: "en", Target: "pt-BR", Scene: translate.SceneLegal, Style: translate.StyleFormal}}
	var want []provenance
	for _, r := range rs {
		res := mustTranslate(t, c1, r)
		want = append(want, provenance{Text: res.Text, Engine: "a", FromMemory: true, MemoryScore: 1})
	}
	var tmx bytes.Buffer
	if err := c1.ExportMemory(&tmx); err != nil {
		t.Fatal(err)
	}

	b := fake.New("b")
	c2 := memClient(t, translate.MemoryPolicy{}, b)
	stored, skipped, err := c2.ImportMemory(context.Background(), bytes.NewReader(tmx.Bytes()))
	if err != nil || stored != 3 || skipped != 0 {
		t.Fatalf("import: %d stored, %d skipped, %v\n%s", stored, skipped, err, tmx.String())
	}
	var got []provenance
	for _, r := range rs {
		got = append(got, provOf(mustTranslate(t, c2, r)))
	}
	if diff := cmp.Diff(want, got); diff != "" || b.Calls() != 0 {
		t.Errorf("after import, %d calls (-want +got):\n%s", b.Calls(), diff)
	}
	var again bytes.Buffer
	if err := c2.ExportMemory(&again); err != nil || again.String() != tmx.String() {
		t.Errorf("export of the import differs (%v):\n%s\nwant\n%s", err, again.String(), tmx.String())
	}

	const foreign = `<?xml version="1.0"?><tmx version="1.4"><header srclang="en-US"/><body>
<tu><tuv xml:lang="en-US"><seg>Checkout</seg></tuv><tuv xml:lang="de-DE"><seg>Zur Kasse</seg></tuv><tuv xml:lang="???"><seg>x</seg></tuv></tu>
</body></tmx>`
	stored, skipped, err = c2.ImportMemory(context.Background(), strings.NewReader(foreign))
	if err != nil || stored != 1 || skipped != 1 {
		t.Fatalf("foreign import: %d stored, %d skipped, %v", stored, skipped, err)
	}
	res := mustTranslate(t, c2, translate.Request{Text: "Checkout", Source: "en", Target: "de"})
	if diff := cmp.Diff(provenance{Text: "Zur Kasse", Engine: "memory", FromMemory: true, MemoryScore: 1}, provOf(res)); diff != "" {
		t.Errorf("foreign entry (-want +got):\n%s", diff)
	}
}

// TestMemoryBounded: past MaxEntries the least recently used entries go.
func TestMemoryBounded(t *testing.T) {
	a := fake.New("a")
	c := memClient(t, translate.MemoryPolicy{MaxEntries: 3}, a)
	for i := range 5 {
		mustTranslate(t, c, req(fmt.Sprint("Text number ", i)))
	}
	var tmx bytes.Buffer
	if err := c.ExportMemory(&tmx); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(tmx.String(), "<tu "); n != 3 {
		t.Errorf("%d entries kept, want 3", n)
	}
	a.Reset()
	if res := mustTranslate(t, c, req("Text number 0")); res.FromMemory || a.Calls() != 1 {
		t.Errorf("an evicted entry answered: %+v", provOf(res))
	}
	if res := mustTranslate(t, c, req("Text number 4")); !res.FromMemory {
		t.Errorf("a recent entry did not answer: %+v", provOf(res))
	}
}

// TestMemoryOff: without WithMemory nothing is kept, and Export and Import say so.
func TestMemoryOff(t *testing.T) {
	a := fake.New("a")
	c := newClient(t, translate.WithEngine(a, translate.Profile{}))
	mustTranslate(t, c, req("Hello."))
	if res := mustTranslate(t, c, req("Hello.")); res.FromMemory || a.Calls() != 2 {
		t.Errorf("memory without WithMemory: %+v", provOf(res))
	}
	if err := c.ExportMemory(&bytes.Buffer{}); translate.KindOf(err) != translate.KindInvalidInput {
		t.Errorf("ExportMemory: %v", err)
	}
	if _, _, err := c.ImportMemory(context.Background(), strings.NewReader("")); translate.KindOf(err) != translate.KindInvalidInput {
		t.Errorf("ImportMemory: %v", err)
	}
}

// TestMemoryConfig: the config file's "memory" section turns the memory on, its numbers
// checked as New checks them.
func TestMemoryConfig(t *testing.T) {
	all.Register()
	cfg, err := translate.ParseConfig([]byte(`{"engines":[{"type":"fake"}],"cache":{"disabled":true},"memory":{"max_entries":5,"threshold":0.9}}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&translate.MemoryPolicy{MaxEntries: 5, Threshold: 0.9}, cfg.Memory); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_, err = translate.ParseConfig([]byte(`{"engines":[{"type":"fake"}],"memory":{"threshold":0.4}}`))
	var e *translate.Error
	if !errors.As(err, &e) || !strings.Contains(e.Message, "memory.threshold: must be within 0.5..1") {
		t.Errorf("threshold 0.4: %v", err)
	}
	c := newClient(t, translate.WithConfig(cfg))
	mustTranslate(t, c, req("Configured."))
	if res := mustTranslate(t, c, req("Configured.")); !res.FromMemory {
		t.Errorf("config's memory off: %+v", provOf(res))
	}
}

// BenchmarkMemoryHit is an exact memory hit (no cache): what a known segment costs.
func BenchmarkMemoryHit(b *testing.B) {
	c := benchClient(b, translate.WithoutCache(), translate.WithMemory(translate.MemoryPolicy{}))
	ctx := context.Background()
	if _, err := c.Translate(ctx, benchReq); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if res, err := c.Translate(ctx, benchReq); err != nil || !res.FromMemory {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkMemoryMissFuzzyFirst is a miss with FuzzyFirst over a full memory (10,000
// entries of the request's pair, none similar: each is compared with the text), and the
// answer kept.
func BenchmarkMemoryMissFuzzyFirst(b *testing.B) {
	c := benchClient(b, translate.WithoutCache(), translate.WithMemory(translate.MemoryPolicy{FuzzyFirst: true}))
	ctx := context.Background()
	var tmx strings.Builder
	tmx.WriteString(`<tmx version="1.4"><header srclang="en"/><body>`)
	for i := range 10_000 {
		fmt.Fprintf(&tmx, `<tu><tuv xml:lang="en"><seg>Entry number %d of the memory.</seg></tuv><tuv xml:lang="es"><seg>x</seg></tuv></tu>`, i)
	}
	tmx.WriteString(`</body></tmx>`)
	if n, _, err := c.ImportMemory(ctx, strings.NewReader(tmx.String())); err != nil || n != 10_000 {
		b.Fatal(n, err)
	}
	texts := make([]string, 1<<15) // more than the memory keeps: each comes back evicted
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range texts {
		texts[i] = fmt.Sprintf("%016x %016x", rng.Uint64(), rng.Uint64()) // random: no two alike
	}
	r := benchReq
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r.Text = texts[i%len(texts)]
		i++
		if res, err := c.Translate(ctx, r); err != nil || res.FromMemory {
			b.Fatal(res, err)
		}
	}
}

// TestMemoryKeyHoldsFormatAndGlossary checks that a translation kept for a plain text, or
// under one glossary revision, never answers the same text as HTML or under another
// revision, and that a multi-line HTML text goes whole (lines are no units of markup).
func TestMemoryKeyHoldsFormatAndGlossary(t *testing.T) {
	g1, err := glossary.New("brand", "en", "es", []glossary.Term{{Source: "Acme", Target: "Acme"}})
	if err != nil {
		t.Fatal(err)
	}
	a := fake.New("a")
	c := newClient(t, translate.WithoutCache(), translate.WithMemory(translate.MemoryPolicy{}),
		translate.WithGlossaries(g1), translate.WithEngine(a, translate.Profile{}))
	ctx := context.Background()
	plain := translate.Request{Text: "Acme sells tools", Source: "en", Target: "es", Glossary: translate.NoGlossary}
	if _, err := c.Translate(ctx, plain); err != nil {
		t.Fatal(err)
	}
	for _, r := range []translate.Request{
		{Text: "Acme sells tools", Source: "en", Target: "es", Glossary: "brand"},
		{Text: "Acme sells tools", Source: "en", Target: "es", Glossary: translate.NoGlossary, Format: translate.FormatHTML},
	} {
		res, err := c.Translate(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if res.FromMemory {
			t.Errorf("%+v answered from the memory of a plain text without glossary", r)
		}
	}
	before := a.Calls()
	html := translate.Request{Text: "<p>one\ntwo</p>\n<p>three</p>", Source: "en", Target: "es", Format: translate.FormatHTML}
	res, err := c.Translate(ctx, html)
	if err != nil {
		t.Fatal(err)
	}
	if res.Segments != nil || a.Calls()-before != 1 {
		t.Errorf("multi-line HTML: %d calls, segments %v; want it sent whole, in 1 call", a.Calls()-before, res.Segments)
	}
}
