package contentkit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate/fidelity/glossary"
)

func TestGlossaries(t *testing.T) {
	terms := []glossary.Term{{Source: "checkout", Target: "Kasse"}}
	specs := []Spec{
		{Name: "brands", Source: "en", Target: "de", Default: true, Terms: terms},
		{Name: "brands", Source: "en", Target: "fr", Terms: []glossary.Term{{Source: "cart", Target: "panier"}}},
		{Name: "legal", Source: "en", Target: "de", Terms: terms},
	}
	gs, defaults, err := Glossaries(specs)
	if err != nil {
		t.Fatal(err)
	}
	var got [][3]string
	for _, g := range gs {
		got = append(got, [3]string{g.Name(), g.Source(), g.Target()})
	}
	want := [][3]string{{"brands", "en", "de"}, {"brands", "en", "fr"}, {"legal", "en", "de"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("glossaries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"brands"}, defaults); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(terms, gs[0].Terms()); diff != "" {
		t.Errorf("terms (-want +got):\n%s", diff)
	}
}

func TestGlossariesErrors(t *testing.T) {
	ok := Spec{Name: "g", Source: "en", Target: "de", Terms: []glossary.Term{{Source: "a", Target: "b"}}}
	with := func(f func(*Spec)) []Spec {
		s := ok
		s.Terms = append([]glossary.Term(nil), ok.Terms...)
		f(&s)
		return []Spec{ok, s}
	}
	long := strings.Repeat("x", glossary.MaxTermSize+1)
	for _, tc := range []struct {
		name  string
		specs []Spec
		want  PathError
	}{
		{"too many", make([]Spec, MaxGlossaries+1), PathError{"glossaries", "at most 1000 glossaries"}},
		{"no name", with(func(s *Spec) { s.Name = "" }), PathError{"glossaries[1].name", "is required"}},
		{"no source", with(func(s *Spec) { s.Source = "" }), PathError{"glossaries[1].source", "is required"}},
		{"bad target", with(func(s *Spec) { s.Target = "not a tag" }), PathError{"glossaries[1].target", "language is not a valid BCP 47 tag"}},
		{"too many terms", with(func(s *Spec) { s.Terms = make([]glossary.Term, glossary.MaxTerms+1) }), PathError{"glossaries[1].terms", "at most 10000 terms"}},
		{"empty term", with(func(s *Spec) { s.Terms[0].Target = "" }), PathError{"glossaries[1].terms[0].target", "must be 1..256 bytes"}},
		{"long term", with(func(s *Spec) { s.Terms[0].Source = long }), PathError{"glossaries[1].terms[0].source", "must be 1..256 bytes"}},
		{"same source twice", with(func(s *Spec) { s.Name = "h"; s.Terms = append(s.Terms, s.Terms[0]) }), PathError{"glossaries[1].terms", ""}},
		{"same name and pair", with(func(*Spec) {}), PathError{"glossaries[1]", ""}},
		{"two defaults", []Spec{{Name: "a", Source: "en", Target: "de", Default: true, Terms: ok.Terms}, {Name: "b", Source: "en", Target: "de", Default: true, Terms: ok.Terms}}, PathError{"glossaries[1]", ""}},
	} {
		gs, defaults, err := Glossaries(tc.specs)
		pe, isPath := err.(*PathError)
		if !isPath || gs != nil || defaults != nil {
			t.Errorf("%s: Glossaries = %v, %v, %v; want a *PathError", tc.name, gs, defaults, err)
			continue
		}
		if tc.want.Msg == "" { // glossary's own message: only its path is ours
			pe = &PathError{Path: pe.Path}
		}
		if diff := cmp.Diff(tc.want, *pe); diff != "" {
			t.Errorf("%s: error (-want +got):\n%s", tc.name, diff)
		}
	}
	if got := (&PathError{"glossaries[0].name", "is required"}).Error(); got != "glossaries[0].name: is required" {
		t.Errorf("Error() = %q", got)
	}
}
