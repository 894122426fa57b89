package google

import (
	"context"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/fidelity/glossary"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"
)

const testGlossaryResource = "projects/my-project/locations/us-central1/glossaries/brand-terms"

func brandGlossary(t *testing.T, name string) *glossary.Glossary {
	t.Helper()
	g, err := glossary.New(name, "en", "de", []glossary.Term{{Source: "widget", Target: "Dings"}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestProfileNative(t *testing.T) {
	v2, _ := New(testKey)
	v3, _ := NewV3(testProject, staticToken(testToken))
	v3g, err := NewV3(testProject, staticToken(testToken), WithLocation("us-central1"),
		WithGlossaries(map[string]string{"brand": testGlossaryResource}))
	if err != nil {
		t.Fatal(err)
	}
	html := []fidelity.Format{fidelity.FormatHTML}
	for _, tc := range []struct {
		name string
		e    *Engine
		want fidelity.Native
	}{
		{"v2", v2, fidelity.Native{Formats: html}},
		{"v3", v3, fidelity.Native{Formats: html}},
		{"v3 glossaries", v3g, fidelity.Native{Formats: html, Glossary: true}},
	} {
		if diff := cmp.Diff(tc.want, tc.e.Profile().Native); diff != "" {
			t.Errorf("%s: Native (-want +got):\n%s", tc.name, diff)
		}
	}
	// Google applies only the glossaries WithGlossaries maps; any other is the Client's.
	brand, other := brandGlossary(t, "brand"), brandGlossary(t, "other")
	if !v3g.AppliesGlossary(brand) || v3g.AppliesGlossary(other) || v3.AppliesGlossary(brand) {
		t.Error("AppliesGlossary: want brand only, and only with WithGlossaries")
	}
}

func TestWithGlossariesInvalid(t *testing.T) {
	for name, tc := range map[string]struct {
		v3   bool
		opts []Option
	}{
		"v2":             {false, []Option{WithGlossaries(map[string]string{"brand": testGlossaryResource})}},
		"global":         {true, []Option{WithGlossaries(map[string]string{"brand": "projects/p/locations/global/glossaries/g"})}},
		"other location": {true, []Option{WithLocation("us-central1"), WithGlossaries(map[string]string{"brand": "projects/p/locations/europe-west1/glossaries/g"})}},
		"not a resource": {true, []Option{WithLocation("us-central1"), WithGlossaries(map[string]string{"brand": "brand-terms"})}},
		"empty id":       {true, []Option{WithLocation("us-central1"), WithGlossaries(map[string]string{"brand": "projects/p/locations/us-central1/glossaries/"})}},
		"empty name":     {true, []Option{WithLocation("us-central1"), WithGlossaries(map[string]string{"": testGlossaryResource})}},
	} {
		var err error
		if tc.v3 {
			_, err = NewV3(testProject, staticToken(testToken), tc.opts...)
		} else {
			_, err = New(testKey, tc.opts...)
		}
		if translate.KindOf(err) != translate.KindInvalidInput {
			t.Errorf("%s: err = %v, want KindInvalidInput", name, err)
		}
	}
}

// TestFidelityOnTheWire checks format, mimeType and glossaryConfig in the bodies Google's
// specs require, and that the glossary's translations are the ones returned.
func TestFidelityOnTheWire(t *testing.T) {
	const page = `<p title="x">A <b>widget</b></p>`
	tests := []struct {
		name     string
		v3       bool
		src      language.Tag
		format   translate.Format
		glossary string // the request glossary's name, "" for none
		want     map[string]any
		wantText string
	}{
		{"v2 text", false, language.English, translate.FormatText, "",
			map[string]any{"q": []any{page}, "target": "de", "source": "en", "format": "text"}, "T:" + page},
		{"v2 html", false, language.English, translate.FormatHTML, "",
			map[string]any{"q": []any{page}, "target": "de", "source": "en", "format": "html"}, "T:" + page},
		{"v3 text", true, language.English, translate.FormatText, "",
			map[string]any{"contents": []any{page}, "targetLanguageCode": "de", "sourceLanguageCode": "en", "mimeType": "text/plain"}, "T:" + page},
		{"v3 html", true, language.English, translate.FormatHTML, "",
			map[string]any{"contents": []any{page}, "targetLanguageCode": "de", "sourceLanguageCode": "en", "mimeType": "text/html"}, "T:" + page},
		{"v3 glossary", true, language.English, translate.FormatHTML, "brand",
			map[string]any{"contents": []any{page}, "targetLanguageCode": "de", "sourceLanguageCode": "en", "mimeType": "text/html",
				"glossaryConfig": map[string]any{"glossary": testGlossaryResource}}, "GT:" + page},
		{"v3 glossary detect", true, language.Und, translate.FormatText, "brand",
			map[string]any{"contents": []any{page}, "targetLanguageCode": "de", "sourceLanguageCode": "en", "mimeType": "text/plain",
				"glossaryConfig": map[string]any{"glossary": testGlossaryResource}}, "GT:" + page},
		{"v3 unknown glossary", true, language.English, translate.FormatText, "other",
			map[string]any{"contents": []any{page}, "targetLanguageCode": "de", "sourceLanguageCode": "en", "mimeType": "text/plain"}, "T:" + page},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, enginetest.Scenario{})
			var e *Engine
			if tt.v3 {
				e = s.v3(t, WithLocation("us-central1"), WithGlossaries(map[string]string{"brand": testGlossaryResource}))
			} else {
				e = s.v2(t)
			}
			req := &translate.EngineRequest{Texts: []string{page}, Source: tt.src, Target: language.German, Format: tt.format}
			if tt.glossary != "" {
				req.Glossary = brandGlossary(t, tt.glossary)
			}
			res, err := e.Translate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			calls := s.requests()
			if len(calls) != 1 {
				t.Fatalf("%d requests, want 1", len(calls))
			}
			if diff := cmp.Diff(tt.want, calls[0].Body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{tt.wantText}, res.Texts); diff != "" {
				t.Errorf("texts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestXMLUnsupported: Google takes no XML; nothing is sent.
func TestXMLUnsupported(t *testing.T) {
	s := newServer(t, enginetest.Scenario{})
	for _, e := range []*Engine{s.v2(t), s.v3(t)} {
		_, err := e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"<a>x</a>"},
			Target: language.German, Format: translate.FormatXML})
		if translate.KindOf(err) != translate.KindUnsupported {
			t.Errorf("%s: err = %v, want KindUnsupported", e.Name(), err)
		}
	}
	if n := len(s.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// TestGlossaryRefusedByGoogle: a resource Google refuses does not fail the call: the texts
// go again without it, and it is not sent again; another resource stays in use.
func TestGlossaryRefusedByGoogle(t *testing.T) {
	const missing = "projects/my-project/locations/us-central1/glossaries/missing"
	s := newServer(t, enginetest.Scenario{})
	e := s.v3(t, WithLocation("us-central1"), WithGlossaries(map[string]string{"brand": missing, "ok": testGlossaryResource}))
	ctx := context.Background()
	for range 2 {
		res, err := e.Translate(ctx, &translate.EngineRequest{Texts: []string{"widget"}, Source: language.English,
			Target: language.German, Glossary: brandGlossary(t, "brand")})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"T:widget"}, res.Texts); diff != "" {
			t.Errorf("texts (-want +got):\n%s", diff)
		}
	}
	if _, err := e.Translate(ctx, &translate.EngineRequest{Texts: []string{"widget"}, Source: language.English,
		Target: language.German, Glossary: brandGlossary(t, "ok")}); err != nil {
		t.Fatal(err)
	}
	var sent []string
	for _, c := range s.requests() {
		g, _ := c.Body["glossaryConfig"].(map[string]any)
		r, _ := g["glossary"].(string)
		sent = append(sent, r)
	}
	if diff := cmp.Diff([]string{missing, "", "", testGlossaryResource}, sent); diff != "" {
		t.Errorf("glossaries sent (-want +got):\n%s", diff)
	}
}
