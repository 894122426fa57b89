package google

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
)

// applyGlossary makes s answer as Google does with a glossary: glossaryTranslations in
// which the glossary's term (widget -> Dings, brandGlossary) is applied, beside the plain
// translations, for a request that sent glossaryConfig.
func applyGlossary(s *server) {
	s.override = func(w http.ResponseWriter, _ *http.Request, texts []string) {
		calls := s.requests()
		_, glossary := calls[len(calls)-1].Body["glossaryConfig"]
		type tr struct {
			TranslatedText string `json:"translatedText"`
		}
		var out struct {
			Translations         []tr `json:"translations"`
			GlossaryTranslations []tr `json:"glossaryTranslations,omitempty"`
		}
		for _, c := range texts {
			out.Translations = append(out.Translations, tr{enginetest.Expected(c)})
			if glossary {
				out.GlossaryTranslations = append(out.GlossaryTranslations, tr{"G" + enginetest.Expected(strings.ReplaceAll(c, "widget", "Dings"))})
			}
		}
		b, _ := json.Marshal(out)
		writeJSON(w, 200, b)
	}
}

// newV3Client is a Client of the bundled v3 engine (its own Profile, glossary "brand"
// mapped to testGlossaryResource) on a spec server that applies glossaries; the Client
// has the glossaries "brand" and "other" (unmapped), both widget -> Dings for en -> de.
func newV3Client(t *testing.T) (*translate.Client, *server) {
	t.Helper()
	s := newServer(t, enginetest.Scenario{})
	applyGlossary(s)
	e := s.v3(t, WithLocation("us-central1"), WithGlossaries(map[string]string{"brand": testGlossaryResource}))
	c, err := translate.New(translate.WithEngine(e, e.Profile()),
		translate.WithGlossaries(brandGlossary(t, "brand"), brandGlossary(t, "other")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, s
}

// translateCalls are the bodies of the :translateText requests s saw.
func translateCalls(s *server) []map[string]any {
	var out []map[string]any
	for _, c := range s.requests() {
		if strings.HasSuffix(c.Path, ":translateText") {
			out = append(out, c.Body)
		}
	}
	return out
}

// TestClientV3GlossaryOnTheWire: through a Client, an HTML request with a glossary that
// WithGlossaries maps to a resource goes as mimeType text/html with glossaryConfig, and
// Google's glossary translation is served.
func TestClientV3GlossaryOnTheWire(t *testing.T) {
	c, s := newV3Client(t)
	const page = `<p class="x">A <b>widget</b></p>`
	g := brandGlossary(t, "brand")
	res, err := c.Translate(context.Background(), translate.Request{Text: page, Source: "en", Target: "de",
		Format: translate.FormatHTML, Glossary: "brand"})
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"contents": []any{page}, "targetLanguageCode": "de", "sourceLanguageCode": "en",
		"mimeType": "text/html", "glossaryConfig": map[string]any{"glossary": testGlossaryResource}}}
	if diff := cmp.Diff(want, translateCalls(s)); diff != "" {
		t.Errorf("bodies (-want +got):\n%s", diff)
	}
	wantText := `GT:<p class="x">A <b>Dings</b></p>`
	if res.Text != wantText || res.Glossary != g.Revision() {
		t.Errorf("Result = %q, glossary %q; want %q, %q", res.Text, res.Glossary, wantText, g.Revision())
	}
}

// TestClientV3UnmappedGlossaryMasked: a glossary WithGlossaries does not map is not
// Google's to apply: the Client masks its terms (the engine never sees them), the request
// carries no glossaryConfig, and the answer has the target term.
func TestClientV3UnmappedGlossaryMasked(t *testing.T) {
	c, s := newV3Client(t)
	res, err := c.Translate(context.Background(), translate.Request{Text: "A widget ships.", Source: "en", Target: "de",
		Glossary: "other"})
	if err != nil {
		t.Fatal(err)
	}
	calls := translateCalls(s)
	if len(calls) != 1 {
		t.Fatalf("%d translate calls, want 1", len(calls))
	}
	if _, ok := calls[0]["glossaryConfig"]; ok {
		t.Errorf("glossaryConfig sent for an unmapped glossary: %v", calls[0])
	}
	if sent := calls[0]["contents"].([]any)[0].(string); strings.Contains(sent, "widget") {
		t.Errorf("term sent unmasked: %q", sent)
	}
	if !strings.Contains(res.Text, "Dings") || strings.Contains(res.Text, "widget") {
		t.Errorf("Result = %q, want the target term", res.Text)
	}
}
