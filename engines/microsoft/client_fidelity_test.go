package microsoft

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
)

// dictionaryMarkup is Microsoft's dynamic-dictionary markup around one term.
var dictionaryMarkup = regexp.MustCompile(`<mstrans:dictionary translation="([^"]*)">[^<]*</mstrans:dictionary>`)

// applyDictionary makes s answer as the service does with the dynamic dictionary: each
// marked term becomes the translation the markup gives (the spec server alone echoes the
// markup).
func applyDictionary(s *server) {
	s.override = func(w http.ResponseWriter, _ *http.Request, texts []string) {
		var out []map[string]any
		for _, t := range texts {
			text := enginetest.Expected(dictionaryMarkup.ReplaceAllString(t, "$1"))
			out = append(out, map[string]any{"translations": []map[string]string{{"text": text, "to": "fr"}}})
		}
		b, _ := json.Marshal(out)
		writeJSON(w, 200, b)
	}
}

// TestClientHTMLDictionaryOnTheWire: a Client of the bundled Microsoft engine (its own
// Profile) sends an HTML page with a glossary as textType=Html with each term in the
// dynamic-dictionary markup, tags as they are; the Result keeps the tags, has the term's
// target and names the glossary's revision.
func TestClientHTMLDictionaryOnTheWire(t *testing.T) {
	s := newServer(t, enginetest.Scenario{})
	applyDictionary(s)
	e := s.engine(t)
	g := testGlossary(t)
	c, err := translate.New(translate.WithEngine(e, e.Profile()), translate.WithGlossaries(g))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const page = `<div class="widget"><p>A <b>widget</b> today</p></div>`
	res, err := c.Translate(context.Background(), translate.Request{Text: page, Source: "en", Target: "fr",
		Format: translate.FormatHTML, Glossary: "brand"})
	if err != nil {
		t.Fatal(err)
	}
	var calls []seen
	for _, c := range s.requests() {
		if c.Path == "/translate" {
			calls = append(calls, c)
		}
	}
	if len(calls) != 1 {
		t.Fatalf("%d translate requests, want 1", len(calls))
	}
	wantQuery := map[string][]string{"api-version": {"3.0"}, "to": {"fr"}, "from": {"en"}, "textType": {"Html"}}
	if diff := cmp.Diff(wantQuery, calls[0].Query); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	wantBody := []map[string]any{{"text": `<div class="widget"><p>A <b><mstrans:dictionary translation="bidule">widget</mstrans:dictionary></b> today</p></div>`}}
	if diff := cmp.Diff(wantBody, calls[0].Body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	want := `T:<div class="widget"><p>A <b>bidule</b> today</p></div>`
	if res.Text != want || res.Engine != e.Name() || res.Glossary != g.Revision() {
		t.Errorf("Result = %q by %q, glossary %q; want %q by %q, %q", res.Text, res.Engine, res.Glossary, want, e.Name(), g.Revision())
	}
}
