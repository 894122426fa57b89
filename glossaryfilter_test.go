package translate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/fidelity/glossary"
)

// brandOnly is an engine that applies the glossary "brand" only (translate.GlossaryFilter).
type brandOnly struct{ *wordEngine }

func (brandOnly) AppliesGlossary(g *glossary.Glossary) bool { return g.Name() == "brand" }

// TestGlossaryFilterNarrowsNative: an engine whose AppliesGlossary does not take the
// request's glossary (Google v3 without a resource for it) gets the terms masked, even
// when the walk comes to it from an engine that applies every glossary and whose prepared
// text (terms unmasked) would otherwise be reused.
func TestGlossaryFilterNarrowsNative(t *testing.T) {
	g, err := glossary.New("other", "en", "de", []glossary.Term{{Source: "widget", Target: "Dings"}})
	if err != nil {
		t.Fatal(err)
	}
	all := fake.New("all")
	all.Down(translate.KindUnavailable)
	// some applies only the glossary "brand": anything else it translates without one.
	some := &wordEngine{name: "some", fn: func(s string, req *translate.EngineRequest) string {
		if req.Glossary != nil {
			s = strings.ReplaceAll(s, "widget", "Dings")
		}
		return "[de] " + s
	}}
	c := newClient(t, translate.WithGlossaries(g),
		translate.WithEngine(all, translate.Profile{Native: fidelity.Native{Glossary: true}}),
		translate.WithEngine(brandOnly{some}, translate.Profile{Native: fidelity.Native{Glossary: true}}))
	res, err := c.Translate(context.Background(), translate.Request{Text: "A widget ships.", Source: "en", Target: "de",
		Glossary: "other", Engine: "all", AllowFallback: true})
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	if res.Engine != "some" || !strings.Contains(res.Text, "Dings") {
		t.Errorf("Result = %q by %q, want the target term by some", res.Text, res.Engine)
	}
	for _, r := range some.got() {
		if r.Glossary != nil || strings.Contains(r.Texts[0], "widget") {
			t.Errorf("some got glossary %v, text %q; want none and the term masked", r.Glossary != nil, r.Texts[0])
		}
	}
}
