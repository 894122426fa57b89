package mask

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sample is "<b>x</b> {n}" with b's tags a group and {n} an atom.
func sample() *Builder {
	var bd Builder
	g := bd.Open("<b>", "<b>", Markup)
	bd.Text("x")
	bd.Close("</b>", "</b>", Markup, g)
	bd.Text(" ")
	bd.Atom("{n}", "{n}", Placeholder)
	return &bd
}

func TestRestore(t *testing.T) {
	bd := sample()
	if got := bd.String(); got != "⟦0⟧x⟦1⟧ ⟦2⟧" {
		t.Fatalf("masked %q", got)
	}
	tests := []struct {
		name, out, want string
		probs           Problems
	}{
		{"kept", "⟦0⟧y⟦1⟧ ⟦2⟧", "<b>y</b> {n}", Problems{}},
		{"spaces inside tokens", "⟦ 0 ⟧y⟦1\u00a0⟧ ⟦2⟧", "<b>y</b> {n}", Problems{}},
		{"atom moved", "⟦2⟧ ⟦0⟧y⟦1⟧", "{n} <b>y</b>", Problems{}},
		{"close before open: source order", "⟦1⟧y ⟦2⟧⟦0⟧", "<b>y {n}</b>", Problems{}},
		{"lost", "⟦0⟧y⟦1⟧", "", Problems{Lost: []int{2}}},
		{"doubled", "⟦0⟧y⟦1⟧ ⟦2⟧⟦2⟧⟦2⟧", "", Problems{Extra: []int{2}}},
		{"made up", "⟦0⟧y⟦1⟧ ⟦2⟧⟦3⟧⟦99999999999⟧", "", Problems{Unknown: 1}},
	}
	for _, tt := range tests {
		got, probs := bd.Restore(tt.out, nil, strings.ToUpper)
		if tt.probs.OK() {
			tt.want = strings.ReplaceAll(tt.want, "y", "Y")
		}
		if got != tt.want || !cmp.Equal(probs, tt.probs) {
			t.Errorf("%s: got %q %+v, want %q %+v", tt.name, got, probs, tt.want, tt.probs)
		}
	}
}

func TestNests(t *testing.T) {
	var bd Builder
	g1 := bd.Open("{", "{", Placeholder)
	bd.Mid("|", "|", Placeholder, g1)
	g2 := bd.Open("(", "(", Markup)
	bd.Close(")", ")", Markup, g2)
	bd.Close("}", "}", Placeholder, g1)
	for out, want := range map[string]string{
		"⟦0⟧⟦1⟧⟦2⟧⟦3⟧⟦4⟧": "{|()}",
		"⟦2⟧⟦3⟧⟦0⟧⟦1⟧⟦4⟧": "(){|}", // nests: kept
		"⟦0⟧⟦2⟧⟦1⟧⟦3⟧⟦4⟧": "{|()}", // Mid inside another group: source order
		"⟦1⟧⟦0⟧⟦2⟧⟦3⟧⟦4⟧": "{|()}", // Mid before its Open
		"⟦0⟧⟦2⟧⟦3⟧⟦4⟧⟦1⟧": "{|()}", // Mid after the Close
	} {
		if got, _ := bd.Restore(out, nil, nil); got != want {
			t.Errorf("%s: got %q, want %q", out, got, want)
		}
	}
}

// TestBound: an atom bound to a group stays where the engine put it while inside the
// group, and goes back to source order when it leaves.
func TestBound(t *testing.T) {
	var bd Builder
	g := bd.Open("{", "{", Placeholder)
	bd.Text("a")
	bd.Bound("#", "#", Placeholder, g)
	bd.Close("}", "}", Placeholder, g)
	for out, want := range map[string]string{
		"⟦0⟧⟦1⟧a⟦2⟧": "{#a}", // moved inside the group: kept
		"⟦0⟧a⟦2⟧⟦1⟧": "{a#}", // after the close: source order
		"⟦1⟧⟦0⟧a⟦2⟧": "{#a}", // before the open: source order
	} {
		if got, _ := bd.Restore(out, nil, nil); got != want {
			t.Errorf("%s: got %q, want %q", out, got, want)
		}
	}
}

// TestMarkup: markup an engine takes natively goes as it is but for its literal ⟦ and ⟧,
// which are masked (in a tag name and an attribute value alike) and come back byte for
// byte; Spans are not looked for in it, only in Text.
func TestMarkup(t *testing.T) {
	bd := Builder{Spans: func(s string) []Span {
		if i := strings.Index(s, "cloud"); i >= 0 {
			return []Span{{Start: i, End: i + len("cloud"), Orig: "cloud", Label: "cloud", Kind: Term}}
		}
		return nil
	}}
	bd.Markup(`<A⟧ title="⟦0⟧ cloud">`)
	bd.Text("cloud ⟧")
	bd.Markup("</A⟧>")
	want := `<A⟦0⟧ title="⟦1⟧0⟦2⟧ cloud">⟦3⟧ ⟦4⟧</A⟦5⟧>`
	if diff := cmp.Diff(want, bd.String()); diff != "" {
		t.Fatalf("masked (-want +got):\n%s", diff)
	}
	got, probs := bd.Restore(want, nil, nil)
	if !probs.OK() || got != `<A⟧ title="⟦0⟧ cloud">cloud ⟧</A⟧>` {
		t.Fatalf("restored %q, %+v", got, probs)
	}
}

// FuzzRestore: whatever an engine answers, Restore does not panic, and when it accepts
// the answer every masked part is in the result and the structure nests.
func FuzzRestore(f *testing.F) {
	f.Add("⟦0⟧x⟦1⟧ ⟦2⟧")
	f.Add("⟦1⟧⟦0⟧⟦2⟧")
	f.Add("⟦⟦0⟧⟧ ⟦ 1⟧⟦2 ⟧")
	f.Fuzz(func(t *testing.T, out string) {
		bd := sample()
		got, probs := bd.Restore(out, nil, func(s string) string { return strings.ReplaceAll(s, "<", "&lt;") })
		if !probs.OK() {
			return
		}
		b, c := strings.Index(got, "<b>"), strings.Index(got, "</b>")
		if b < 0 || c < b || strings.Count(got, "{n}") < 1 {
			t.Fatalf("%q -> %q", out, got)
		}
	})
}
