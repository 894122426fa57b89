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
		want  shape
	}{
		{"plain text is never native", fidelity.FormatText, html, 0, shape{glossary: true}},
		{"html to an html engine", fidelity.FormatHTML, html, 50, shape{native: true, glossary: true, limit: 50}},
		{"xml to an html engine", fidelity.FormatXML, html, 0, shape{glossary: true}},
		{"instructions", fidelity.FormatHTML, fidelity.Native{Instructions: true}, 9, shape{instructions: true, limit: 9}},
	} {
		if diff := cmp.Diff(tc.want, shapeOf(tc.f, tc.n, tc.limit), cmp.AllowUnexported(shape{})); diff != "" {
			t.Errorf("%s: shapeOf (-want +got):\n%s", tc.name, diff)
		}
	}
}

const page = `<p title="One title here. Two">First sentence. Second sentence.</p>`

func TestJob(t *testing.T) {
	p, err := fidelity.New(fidelity.Options{Format: fidelity.FormatHTML})
	if err != nil {
		t.Fatal(err)
	}
	var j Job
	parts, fresh := j.Ready(p, page, fidelity.Native{}, 20)
	pr := j.Prepared()
	var want []string
	for i := range pr.Texts {
		want = append(want, pr.Split(i, 20).Parts...)
	}
	if diff := cmp.Diff(want, parts); diff != "" || !fresh || len(pr.Texts) < 2 || len(parts) <= len(pr.Texts) {
		t.Fatalf("Ready: fresh %v, %d texts, parts (-want +got):\n%s", fresh, len(pr.Texts), diff)
	}
	if again, fresh := j.Ready(p, page, fidelity.Native{}, 20); fresh || again != nil || j.Prepared() != pr {
		t.Errorf("Ready for the same shape: %q, fresh %v; want the parts made", again, fresh)
	}
	out, err := j.Finish(parts) // the parts themselves: every token back
	if err != nil || out != page {
		t.Errorf("Finish of the parts = %q, %v; want the page", out, err)
	}
}

// A failed Finish says what failed and makes the next Ready prepare the text anew.
func TestJobFinishFails(t *testing.T) {
	p, err := fidelity.New(fidelity.Options{Format: fidelity.FormatHTML})
	if err != nil {
		t.Fatal(err)
	}
	var j Job
	j.Ready(p, page, fidelity.Native{}, 20)
	parts, fresh := j.Ready(p, page, fidelity.Native{}, 0) // another shape: parts made anew
	if !fresh || len(parts) != len(j.Prepared().Texts) {
		t.Fatalf("Ready without a limit: fresh %v, %d parts for %d texts", fresh, len(parts), len(j.Prepared().Texts))
	}
	if out, err := j.Finish(parts); err != nil || out != page { // reused: the first parts are gone
		t.Errorf("Finish after a new Ready = %q, %v; want the page", out, err)
	}
	if _, err := j.Finish(parts[:len(parts)-1]); VerifyMessage(err) != "fidelity: stitching segments" || j.Prepared() != nil {
		t.Errorf("Finish of one answer too few: %v (%q), prepared %v; want a stitching error and to start over", err, VerifyMessage(err), j.Prepared())
	}
	if _, fresh := j.Ready(p, page, fidelity.Native{}, 0); !fresh {
		t.Error("Ready after a failed Finish: not made anew")
	}
	parts[0] = "nothing kept"
	var ve *fidelity.VerifyError
	if _, err := j.Finish(parts); !errors.As(err, &ve) || j.Prepared() != nil {
		t.Errorf("Finish of an answer that lost the tags: %v, prepared %v; want a *VerifyError and to start over", err, j.Prepared())
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
