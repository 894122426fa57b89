package microsoft

import (
	"context"
	"strings"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/fidelity/glossary"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"
)

func TestProfileNative(t *testing.T) {
	e, err := New(testKey, "")
	if err != nil {
		t.Fatal(err)
	}
	want := fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML}, Glossary: true}
	if diff := cmp.Diff(want, e.Profile().Native); diff != "" {
		t.Errorf("Native (-want +got):\n%s", diff)
	}
}

func testGlossary(t *testing.T) *glossary.Glossary {
	t.Helper()
	g, err := glossary.New("brand", "en", "fr", []glossary.Term{
		{Source: "widget", Target: "bidule"},
		{Source: "Acme Cloud", Target: `"Acme" <Nuage>`},
		{Source: "AT&T", Target: "AT et T"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestFormatAndDictionaryOnTheWire checks textType and the body Microsoft's spec and its
// dynamic-dictionary markup require, for each format with and without a glossary.
func TestFormatAndDictionaryOnTheWire(t *testing.T) {
	const (
		plain = "A widget from Acme Cloud, not AT&T; widgets stay."
		page  = `<p title="widget">A <b class="widget">widget</b> by Acme Cloud</p><!-- widget --><img alt='x > widget'> 1 < 2 widget`
	)
	wrapPlain := `A <mstrans:dictionary translation="bidule">widget</mstrans:dictionary> from Acme Cloud, not AT&T; widgets stay.`
	wrapPage := `<p title="widget">A <b class="widget"><mstrans:dictionary translation="bidule">widget</mstrans:dictionary></b> by ` +
		`<mstrans:dictionary translation="&#34;Acme&#34; &lt;Nuage&gt;">Acme Cloud</mstrans:dictionary></p>` +
		`<!-- widget --><img alt='x > widget'> 1 < 2 <mstrans:dictionary translation="bidule">widget</mstrans:dictionary>`
	tests := []struct {
		name     string
		format   translate.Format
		glossary bool
		text     string
		wantType string
		wantText string
	}{
		{"text", translate.FormatText, false, plain, "Plain", plain},
		{"html", translate.FormatHTML, false, page, "Html", page},
		{"text glossary", translate.FormatText, true, plain, "Plain", wrapPlain},
		{"html glossary", translate.FormatHTML, true, page, "Html", wrapPage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, enginetest.Scenario{})
			req := &translate.EngineRequest{Texts: []string{tt.text, ""}, Source: language.English,
				Target: language.French, Format: tt.format}
			if tt.glossary {
				req.Glossary = testGlossary(t)
			}
			res, err := s.engine(t).Translate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			calls := s.requests()
			if len(calls) != 1 {
				t.Fatalf("%d requests, want 1", len(calls))
			}
			wantQuery := map[string][]string{"api-version": {"3.0"}, "to": {"fr"}, "from": {"en"}, "textType": {tt.wantType}}
			if diff := cmp.Diff(wantQuery, calls[0].Query); diff != "" {
				t.Errorf("query (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]map[string]any{{"text": tt.wantText}}, calls[0].Body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			// The answer is the service's, as it is: nothing stripped.
			if diff := cmp.Diff([]string{enginetest.Expected(tt.wantText), ""}, res.Texts); diff != "" {
				t.Errorf("texts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestXMLUnsupported: Microsoft takes no XML; nothing is sent.
func TestXMLUnsupported(t *testing.T) {
	s := newServer(t, enginetest.Scenario{})
	_, err := s.engine(t).Translate(context.Background(), &translate.EngineRequest{Texts: []string{"<a>x</a>"},
		Target: language.French, Format: translate.FormatXML})
	if translate.KindOf(err) != translate.KindUnsupported || len(s.requests()) != 0 {
		t.Errorf("err = %v after %d requests, want KindUnsupported before any", err, len(s.requests()))
	}
}

// TestDictionaryOverLimit: a text the markup would take over the request's limit goes as
// it is.
func TestDictionaryOverLimit(t *testing.T) {
	g := testGlossary(t)
	long := make([]byte, 0, maxChars)
	for len(long)+len("widget ") <= maxChars {
		long = append(long, "widget "...)
	}
	got := withDictionary(g, []string{string(long), "widget"}, false)
	want := []string{string(long), `<mstrans:dictionary translation="bidule">widget</mstrans:dictionary>`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestTextRuns(t *testing.T) {
	const s = `a<b c="x>y">d</b><!-- e -->f < g<!DOCTYPE html>h<?pi?>i<!-- open`
	var got []string
	for _, r := range textRuns(s, true) {
		got = append(got, s[r[0]:r[1]])
	}
	want := []string{"a", "d", "f < g", "h", "i<!-- open"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

// FuzzDictionary: the dictionary markup only wraps whole terms of the glossary, never
// inside a tag of an HTML text, and removing it gives the text back.
func FuzzDictionary(f *testing.F) {
	for _, s := range []string{"A widget from Acme Cloud", `<p title="widget">A <b>widget</b></p><!-- widget -->`,
		"x < widget > y & AT&T", "<a href='widget>'>widget</a", "ÄCME CLOUD widgetwidget"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	g, err := glossary.New("brand", "en", "fr", []glossary.Term{
		{Source: "widget", Target: "bidule"}, {Source: "Acme Cloud", Target: `"Acme" <Nuage>`}, {Source: "AT&T", Target: "AT et T"},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string, markup bool) {
		if strings.Contains(text, "mstrans") {
			t.Skip()
		}
		out := wrapTerms(g, text, markup)
		var back strings.Builder
		rest := out
		for {
			i := strings.Index(rest, dictOpen)
			if i < 0 {
				back.WriteString(rest)
				break
			}
			back.WriteString(rest[:i])
			rest = rest[i+len(dictOpen):]
			j := strings.Index(rest, dictMid)
			k := strings.Index(rest, dictClose)
			if j < 0 || k < j {
				t.Fatalf("broken markup in %q", out)
			}
			term := rest[j+len(dictMid) : k]
			if ms := g.Find(term); len(ms) != 1 || ms[0].Start != 0 || ms[0].End != len(term) {
				t.Fatalf("wrapped %q, not a whole term, in %q", term, out)
			}
			if markup && !inRun(textRuns(text, true), back.Len(), back.Len()+len(term)) {
				t.Fatalf("wrapped %q at %d, inside markup of %q", term, back.Len(), text)
			}
			back.WriteString(term)
			rest = rest[k+len(dictClose):]
		}
		if back.String() != text {
			t.Fatalf("without the markup %q, want %q", back.String(), text)
		}
	})
}

// inRun reports whether [start, end) lies within one of runs.
func inRun(runs [][2]int, start, end int) bool {
	for _, r := range runs {
		if r[0] <= start && end <= r[1] {
			return true
		}
	}
	return false
}
