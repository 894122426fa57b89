package contentkit

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate/fidelity"
)

func TestShapeOf(t *testing.T) {
	html := fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML}, Glossary: true}
	for _, tc := range []struct {
		name  string
		f     fidelity.Format
		n     fidelity.Native
		limit int
		want  Shape
	}{
		{"plain text is never native", fidelity.FormatText, html, 0, Shape{Glossary: true}},
		{"html to an html engine", fidelity.FormatHTML, html, 50, Shape{Native: true, Glossary: true, Limit: 50}},
		{"xml to an html engine", fidelity.FormatXML, html, 0, Shape{Glossary: true}},
		{"instructions", fidelity.FormatHTML, fidelity.Native{Instructions: true}, 9, Shape{Instructions: true, Limit: 9}},
	} {
		if diff := cmp.Diff(tc.want, ShapeOf(tc.f, tc.n, tc.limit)); diff != "" {
			t.Errorf("%s: ShapeOf (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestCut(t *testing.T) {
	p, err := fidelity.New(fidelity.Options{Format: fidelity.FormatHTML})
	if err != nil {
		t.Fatal(err)
	}
	pr := p.Prepare(`<p title="One title here. Two">First sentence. Second sentence.</p>`, fidelity.Native{})
	var c Cut
	parts := c.Reset(pr, 20)
	var want []string
	for i := range pr.Texts {
		want = append(want, pr.Split(i, 20).Parts...)
	}
	if diff := cmp.Diff(want, parts); diff != "" || len(pr.Texts) < 2 || len(parts) <= len(pr.Texts) {
		t.Fatalf("Reset: %d texts, parts (-want +got):\n%s", len(pr.Texts), diff)
	}
	texts, err := c.Join(parts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pr.Texts, texts); diff != "" {
		t.Errorf("Join of the parts themselves (-want +got):\n%s", diff)
	}
	if _, err := c.Join(parts[:len(parts)-1]); err == nil {
		t.Error("Join of one answer too few: no error")
	}
	parts = c.Reset(pr, 0) // reused: the parts of the first Reset are gone
	if texts, err := c.Join(parts); len(parts) != len(pr.Texts) || err != nil || !cmp.Equal(pr.Texts, texts) {
		t.Errorf("Reset without a limit: %d parts for %d texts, joined to %q, %v", len(parts), len(pr.Texts), texts, err)
	}
}

func TestMayHavePlaceholders(t *testing.T) {
	for _, tc := range []struct {
		text    string
		syntax  fidelity.Syntax
		pattern bool
		want    bool
	}{
		{"plain text", fidelity.ICU, false, false},
		{"plain text", fidelity.ICU, true, true},
		{"hello {name}", fidelity.ICU, false, true},
		{"100%", 0, false, true},
		{"at 10:30", fidelity.ICU, false, false},
		{"at 10:30", fidelity.ICU | fidelity.Colon, false, true},
	} {
		if got := MayHavePlaceholders(tc.text, tc.syntax, tc.pattern); got != tc.want {
			t.Errorf("MayHavePlaceholders(%q, %v, %v) = %v, want %v", tc.text, tc.syntax, tc.pattern, got, tc.want)
		}
	}
}

func TestVerifyMessage(t *testing.T) {
	secret := fidelity.Item{Kind: fidelity.ItemTerm, Label: "Secret Term"}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"not a VerifyError", errors.New("Secret Term"), "fidelity: answers do not match the texts sent"},
		{"counts by kind", &fidelity.VerifyError{
			Lost:  []fidelity.Item{secret, {Kind: fidelity.ItemPlaceholder, Label: "{x}"}, secret, {Kind: fidelity.ItemMarkup, Label: "<b>"}},
			Extra: []fidelity.Item{{Kind: fidelity.ItemPlaceholder, Label: "{y}"}},
		}, "fidelity: lost 1 markup(s); lost 1 placeholder(s); lost 2 term(s); doubled 1 placeholder(s)"},
		{"made up and malformed", &fidelity.VerifyError{Unknown: 3, Malformed: true},
			"fidelity: 3 made-up token(s); markup not well-formed"},
		{"wrapped", errors.Join(errors.New("x"), &fidelity.VerifyError{Extra: []fidelity.Item{secret}}), "fidelity: doubled 1 term(s)"},
	} {
		got := VerifyMessage(tc.err)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: VerifyMessage (-want +got):\n%s", tc.name, diff)
		}
		if strings.Contains(got, "Secret") {
			t.Errorf("%s: VerifyMessage quotes the text: %q", tc.name, got)
		}
	}
}

func TestValidTag(t *testing.T) {
	for tag, want := range map[string]bool{"en": true, "zh-Hant-TW": true, "de-x-legal": true, "": false, "not a tag": false, "e": false} {
		if got := ValidTag(tag); got != want {
			t.Errorf("ValidTag(%q) = %v, want %v", tag, got, want)
		}
	}
}
