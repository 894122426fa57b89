package deepl

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
	"github.com/fanyi-go/translate/engines/fake"
	"golang.org/x/text/language"
)

// applyGlossary wraps the spec server s as DeepL does with a glossary: in the answer to a
// translation that names a glossary the server holds, every source term of it becomes its
// target (the spec server alone replaces only texts that are a whole term). With drop set
// it answers as if the glossary were ignored: the term check must catch it.
type applyGlossary struct {
	s    *server
	drop bool
}

func (a applyGlossary) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v2/translate" || a.drop {
		a.s.ServeHTTP(w, r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	var in struct {
		GlossaryID string `json:"glossary_id"`
	}
	_ = json.Unmarshal(raw, &in)
	rec := httptest.NewRecorder()
	a.s.ServeHTTP(rec, r)
	a.s.mu.Lock()
	g := a.s.glossaries[in.GlossaryID]
	a.s.mu.Unlock()
	body := rec.Body.Bytes()
	if g != nil && rec.Code == http.StatusOK {
		var out map[string][]map[string]any
		if err := json.Unmarshal(body, &out); err != nil {
			a.s.t.Errorf("answer: %v", err)
		}
		for _, tr := range out["translations"] {
			text, _ := tr["text"].(string)
			for src, tgt := range g.entries {
				text = strings.ReplaceAll(text, src, tgt)
			}
			tr["text"] = text
		}
		body, _ = json.Marshal(out)
	}
	writeJSON(w, rec.Code, body)
}

// newClientServer is a Client of the bundled DeepL engine (its own Profile) pointed at a
// spec server that applies glossaries, with opts added.
func newClientServer(t *testing.T, drop bool, opts ...translate.Option) (*translate.Client, *server) {
	t.Helper()
	s, _ := newServer(t, enginetest.Scenario{})
	hs := httptest.NewServer(applyGlossary{s: s, drop: drop})
	t.Cleanup(hs.Close)
	e, err := New(testKey, WithBaseURL(hs.URL+"/"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := translate.New(append([]translate.Option{translate.WithEngine(e, e.Profile())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, s
}

const productPage = `<div class="product"><h1>Acme widget</h1><p>The widget ships <b>today</b>.</p></div>`

// TestClientHTMLGlossaryOnTheWire: a Client of the bundled DeepL engine sends an HTML page
// with a glossary as DeepL's spec writes it: tag_handling=html and the glossary_id of a
// glossary created once through POST /v3/glossaries; the Result keeps the tags and names
// the glossary's revision; a second request reuses the glossary.
func TestClientHTMLGlossaryOnTheWire(t *testing.T) {
	g := newGlossary(t, "brand", "en", "de", "widget", "Dings")
	c, s := newClientServer(t, false, translate.WithGlossaries(g))
	ctx := context.Background()
	res, err := c.Translate(ctx, translate.Request{Text: productPage, Source: "en", Target: "de",
		Format: translate.FormatHTML, Glossary: "brand"})
	if err != nil {
		t.Fatal(err)
	}
	want := `T:<div class="product"><h1>Acme Dings</h1><p>The Dings ships <b>today</b>.</p></div>`
	if res.Text != want || res.Engine != "deepl" || res.Glossary != g.Revision() {
		t.Errorf("Result = %q by %q, glossary %q; want %q by deepl, glossary %q", res.Text, res.Engine, res.Glossary, want, g.Revision())
	}
	second := `<p>One widget</p>`
	if _, err := c.Translate(ctx, translate.Request{Text: second, Source: "en", Target: "de",
		Format: translate.FormatHTML, Glossary: "brand"}); err != nil {
		t.Fatal(err)
	}
	creations := s.creations()
	if len(creations) != 1 || creations[0].Dictionaries[0].Entries != "widget\tDings" {
		t.Fatalf("creations = %+v, want one with widget\\tDings", creations)
	}
	id := "def3a26b-3e84-45b3-84ae-000000000001"
	wantBodies := []translateBody{
		{Text: []string{productPage}, TargetLang: "DE", SourceLang: "EN", ShowBilledCharacters: true, TagHandling: "html", GlossaryID: id},
		{Text: []string{second}, TargetLang: "DE", SourceLang: "EN", ShowBilledCharacters: true, TagHandling: "html", GlossaryID: id},
	}
	if diff := cmp.Diff(wantBodies, s.bodies()); diff != "" {
		t.Errorf("bodies (-want +got):\n%s", diff)
	}
}

// TestClientGlossaryMissFailsOver: DeepL's answer without the glossary's target term is
// bad output: the Client fails over to the next engine, whose answer has the term.
func TestClientGlossaryMissFailsOver(t *testing.T) {
	g := newGlossary(t, "brand", "en", "de", "widget", "Dings")
	backup := fake.New("backup", fake.WithTranslator(func(text string, _, _ language.Tag) string {
		return "[de] " + strings.ReplaceAll(text, "widget", "Dings")
	}))
	c, s := newClientServer(t, true, translate.WithGlossaries(g), translate.WithEngine(backup, translate.Profile{}))
	res, err := c.Translate(context.Background(), translate.Request{Text: "The widget ships today.", Source: "en", Target: "de",
		Glossary: "brand", Engine: "deepl", AllowFallback: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Engine != "backup" || !strings.Contains(res.Text, "Dings") || res.Glossary != g.Revision() {
		t.Errorf("Result = %q by %q, glossary %q; want the term by backup", res.Text, res.Engine, res.Glossary)
	}
	if len(res.Attempts) != 2 || res.Attempts[0].Engine != "deepl" || translate.KindOf(res.Attempts[0].Err) != translate.KindBadOutput {
		t.Errorf("attempts = %+v, want deepl's bad output first", res.Attempts)
	}
	if got := backup.Requests(); len(got) != 1 || strings.Contains(got[0].Texts[0], "widget") {
		t.Errorf("backup got %+v, want one call with the term masked (it has no glossaries)", got)
	}
	if b := s.bodies(); len(b) != 1 || b[0].GlossaryID == "" {
		t.Errorf("deepl bodies = %+v, want one with the glossary", b)
	}
}

// TestClientGlossaryDeepLCannotHold: a glossary of languages DeepL has no glossaries for
// (en -> hi) is not DeepL's to apply: the Client masks its terms and inserts their targets,
// no glossary is created or sent, and the answer has the target term (it failed the term
// check every time when DeepL declared every glossary its own).
func TestClientGlossaryDeepLCannotHold(t *testing.T) {
	g := newGlossary(t, "brand", "en", "hi", "widget", "विजेट")
	c, s := newClientServer(t, false, translate.WithGlossaries(g))
	res, err := c.Translate(context.Background(), translate.Request{Text: "The widget ships today.", Source: "en", Target: "hi",
		Glossary: "brand"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "विजेट") || res.Glossary != g.Revision() {
		t.Errorf("Result = %q, glossary %q; want the target term, %q", res.Text, res.Glossary, g.Revision())
	}
	b := s.bodies()
	if n := len(s.creations()); n != 0 || len(b) != 1 || b[0].GlossaryID != "" || strings.Contains(b[0].Text[0], "widget") {
		t.Errorf("%d creations, bodies %+v; want none, and one body with the term masked", n, b)
	}
}
