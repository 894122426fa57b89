package ph

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/fanyi-go/translate/fidelity/internal/mask"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var all = Scanner{Set: ICU | Printf | Mustache | Colon}

// masked returns the masked text and the tokens' originals.
func masked(sc Scanner, s string) (string, []string) {
	var bd mask.Builder
	sc.Mask(s, &bd)
	var origs []string
	for _, t := range bd.Toks {
		origs = append(origs, t.Orig)
	}
	return bd.String(), origs
}

func TestMask(t *testing.T) {
	tests := []struct {
		name, in, want string
		origs          []string
	}{
		{"icu simple", "Hello {name}!", "Hello ⟦0⟧!", []string{"{name}"}},
		{"icu typed", "Total {n, number, ::currency/EUR} now", "Total ⟦0⟧ now", []string{"{n, number, ::currency/EUR}"}},
		{
			"icu plural: messages translatable, # masked",
			"{count, plural, one {# item} other {# items}}",
			"⟦0⟧⟦1⟧ item⟦2⟧⟦3⟧ items⟦4⟧",
			[]string{"{count, plural, one {", "#", "} other {", "#", "}}"},
		},
		{
			"icu select nested in plural",
			"{n, plural, =0 {none} other {{g, select, male {his #} other {their #}}}}",
			"⟦0⟧none⟦1⟧⟦2⟧his ⟦3⟧⟦4⟧their ⟦5⟧⟦6⟧⟦7⟧",
			[]string{"{n, plural, =0 {", "} other {", "{g, select, male {", "#", "} other {", "#", "}}", "}}"},
		},
		{"icu select: # is text", "{g, select, other {# left}}", "⟦0⟧# left⟦1⟧", []string{"{g, select, other {", "}}"}},
		{"not icu", "code { return x; } and {}", "code { return x; } and {}", nil},
		{"printf", "%s has %1$s and %d, %.2f%% off", "⟦0⟧ has ⟦1⟧ and ⟦2⟧, ⟦3⟧⟦4⟧ off", []string{"%s", "%1$s", "%d", "%.2f", "%%"}},
		{"percent alone", "50% off", "50% off", nil},
		{"mustache", "Hi {{name}}, {{{raw}}} {{#list}}x{{/list}}", "Hi ⟦0⟧, ⟦1⟧ ⟦2⟧x⟦3⟧", []string{"{{name}}", "{{{raw}}}", "{{#list}}", "{{/list}}"}},
		{"colon", "Dear :name, at 10:30 see http://x or Re:y (:id)", "Dear ⟦0⟧, at 10:30 see http://x or Re:y (⟦1⟧)", []string{":name", ":id"}},
		{"literal marks", "a ⟦0⟧ b", "a ⟦0⟧0⟦1⟧ b", []string{"⟦", "⟧"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, origs := masked(all, tt.in)
			if got != tt.want {
				t.Errorf("masked %q, want %q", got, tt.want)
			}
			if diff := cmp.Diff(tt.origs, origs); diff != "" {
				t.Errorf("originals (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMaskSyntaxesOff(t *testing.T) {
	in := "{name} %s {{x}} :id"
	if got, _ := masked(Scanner{}, in); got != in {
		t.Errorf("no syntax masked %q", got)
	}
	if got, _ := masked(Scanner{Set: Printf}, in); got != "{name} ⟦0⟧ {{x}} :id" {
		t.Errorf("printf only: %q", got)
	}
}

func TestMaskPattern(t *testing.T) {
	sc := Scanner{Set: ICU, Pattern: regexp.MustCompile(`\$\w+|x*`)}
	got, origs := masked(sc, "Pay $amount to {name}")
	if got != "Pay ⟦0⟧ to ⟦1⟧" || !cmp.Equal(origs, []string{"$amount", "{name}"}) {
		t.Errorf("got %q %q", got, origs)
	}
}

// TestPluralShuffled: an engine that moves the plural's keys and '#' around gets them back
// in source order at the places it left tokens in, so the plural stays a valid ICU
// argument with each '#' in a message.
func TestPluralShuffled(t *testing.T) {
	var bd mask.Builder
	all.Mask("{n, plural, one {# day} other {# days}}", &bd)
	// The engine put the close first and swapped the keys.
	out := "⟦4⟧⟦2⟧⟦1⟧ TAG⟦3⟧⟦0⟧ TAGE"
	got, probs := bd.Restore(out, nil, nil)
	if !probs.OK() {
		t.Fatal(probs)
	}
	if want := "{n, plural, one {#} other { TAG#}} TAGE"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// FuzzMask: masking then restoring an unchanged text gives it back; a text whose letters
// are all rewritten keeps every token.
func FuzzMask(f *testing.F) {
	for _, s := range []string{"{n, plural, one {# x} other {{g, select, a {b} other {c}}}}", "%1$s %% {{x}} :y ⟦1⟧", "{a, b, c}", "{", "%", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var bd mask.Builder
		all.Mask(s, &bd)
		got, probs := bd.Restore(bd.String(), nil, nil)
		if !probs.OK() || got != s {
			t.Fatalf("%q -> %q -> %q %v", s, bd.String(), got, probs)
		}
		up := strings.ToUpper(bd.String())
		if _, probs := bd.Restore(up, nil, nil); !probs.OK() {
			t.Fatalf("%q: upper-casing lost tokens: %v", s, probs)
		}
	})
}
