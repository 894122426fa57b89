package glossary

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func mustNew(t *testing.T, terms ...Term) *Glossary {
	t.Helper()
	g, err := New("g", "en", "de", terms)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestFind(t *testing.T) {
	g := mustNew(t,
		Term{Source: "cloud", Target: "Wolke"},
		Term{Source: "Acme Cloud", Target: "Acme Cloud"},
		Term{Source: "iOS", Target: "iOS", CaseSensitive: true},
		Term{Source: "用户", Target: "Benutzer"},
		Term{Source: "C++", Target: "C++"},
	)
	tests := []struct {
		text string
		want []string
	}{
		{"ACME CLOUD and cloud", []string{"ACME CLOUD", "cloud"}},
		{"clouds, cloudy, mycloud", nil},
		{"(cloud)", []string{"cloud"}},
		{"ios IOS iOS", []string{"iOS"}},
		{"新用户注册", []string{"用户"}},
		{"C++ and C+++", []string{"C++", "C++"}},
	}
	for _, tt := range tests {
		var got []string
		for _, m := range g.Find(tt.text) {
			got = append(got, tt.text[m.Start:m.End])
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Find(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

func TestMissing(t *testing.T) {
	g := mustNew(t, Term{Source: "sign in", Target: "anmelden"}, Term{Source: "cart", Target: "Warenkorb"})
	tests := []struct {
		src, out string
		want     []string
	}{
		{"Sign in to see your cart.", "Anmelden, um den Warenkorb zu sehen.", nil},
		{"Sign in to see your cart.", "Bitte anmelden, Korb ansehen.", []string{"cart"}},
		{"Sign in.", "Anmeldung.", []string{"sign in"}}, // a different form is a miss
		{"Sign in.", "ANMELDEN.", []string{"sign in"}},  // only the first letter's case is free
		{"No terms here.", "Keine.", nil},               // nothing to check
		{"cart cart", "Warenkorb", nil},                 // present once is enough
		{"cart", "Warenkorb\u0308", []string{"cart"}},   // NFC: "b̈" is not "b"
	}
	for _, tt := range tests {
		var got []string
		for _, m := range g.Missing(tt.src, tt.out) {
			got = append(got, m.Source)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Missing(%q, %q) (-want +got):\n%s", tt.src, tt.out, diff)
		}
	}
}

func TestNew(t *testing.T) {
	if _, err := New("g", "en", "de", []Term{{Source: "a", Target: "b"}, {Source: "A", Target: "c"}}); err == nil {
		t.Error("duplicate source accepted")
	}
	if _, err := New("g", "en", "de", []Term{{Source: "", Target: "b"}}); err == nil {
		t.Error("empty source accepted")
	}
	if _, err := New("g", "en", "de", []Term{{Source: strings.Repeat("a", MaxTermSize+1), Target: "b"}}); err == nil {
		t.Error("long source accepted")
	}
	if _, err := New("", "en", "de", nil); err == nil {
		t.Error("empty name accepted")
	}
	if _, err := New("g", "en", "de", make([]Term, MaxTerms+1)); err == nil {
		t.Error("too many terms accepted")
	}
}

func TestRevision(t *testing.T) {
	a := mustNew(t, Term{Source: "x", Target: "y"}, Term{Source: "p", Target: "q"})
	b, _ := New("other name", "EN", "de", []Term{{Source: "p", Target: "q"}, {Source: "x", Target: "y"}})
	c := mustNew(t, Term{Source: "x", Target: "y"}, Term{Source: "p", Target: "Q"})
	if a.Revision() != b.Revision() {
		t.Error("same terms in another order or name: revisions differ")
	}
	if a.Revision() == c.Revision() {
		t.Error("changed target: same revision")
	}
	if len(a.Revision()) != 24 {
		t.Errorf("revision %q", a.Revision())
	}
}

func TestBook(t *testing.T) {
	mk := func(name, s, tg string) *Glossary {
		g, err := New(name, s, tg, []Term{{Source: "x", Target: name}})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	legal, brands, fr := mk("legal", "en", "de"), mk("brands", "en", "de"), mk("brands", "en", "fr")
	b, err := NewBook([]*Glossary{legal, brands, fr}, "brands")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, s, tg string
		want        *Glossary
	}{
		{"legal", "en", "de", legal},
		{"", "en-US", "de-AT", brands},
		{"", "EN", "fr", fr},
		{"", "en", "ja", nil},
		{"legal", "en", "fr", nil},
	} {
		got, ok := b.Lookup(tt.name, tt.s, tt.tg)
		if got != tt.want || ok != (tt.want != nil) {
			t.Errorf("Lookup(%q, %s, %s) = %v, %v", tt.name, tt.s, tt.tg, got, ok)
		}
	}
	if _, err := NewBook([]*Glossary{legal, legal}); err == nil {
		t.Error("duplicate accepted")
	}
	if _, err := NewBook([]*Glossary{legal, brands}, "legal", "brands"); err == nil {
		t.Error("two defaults for en->de accepted")
	}
	if _, err := NewBook([]*Glossary{legal}, "nope"); err == nil {
		t.Error("unknown default accepted")
	}
	var nilBook *Book
	if _, ok := nilBook.Lookup("", "en", "de"); ok {
		t.Error("nil book found one")
	}
}

// FuzzFind: finds are in order, do not overlap, lie on the text and match a term.
func FuzzFind(f *testing.F) {
	g, _ := New("g", "en", "de", []Term{{Source: "cloud", Target: "W"}, {Source: "Acme Cloud", Target: "A"}, {Source: "İ", Target: "i"}, {Source: "日本", Target: "J"}})
	for _, s := range []string{"acme cloud cloud", "İİ", "日本日本", "\xff cloud"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		end := 0
		for _, m := range g.Find(s) {
			if m.Start < end || m.End > len(s) || !strings.EqualFold(s[m.Start:m.End], m.Term.Source) {
				t.Fatalf("%q: bad match %+v after %d", s, m, end)
			}
			end = m.End
		}
		g.Missing(s, s)
	})
}
