package placeholder

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFind(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"none", "Hello, world.", nil},
		{"empty", "", nil},
		{"brace", "Hello {name}!", []string{"{name}"}},
		{"brace index", "{0} of {1}", []string{"{0}", "{1}"}},
		{"brace dotted", "{user.first_name}", []string{"{user.first_name}"}},
		{"brace unicode", "{名前}", []string{"{名前}"}},
		{"double brace", "Hi {{name}}, {{ count }}", []string{"{{name}}", "{{ count }}"}},
		{"double brace unclosed falls back to single", "{{name}", []string{"{name}"}},
		{"empty braces", "{} {{}} { }", nil},
		{"code block", "if (x) { return y; }", nil},
		{"brace with space", "{first name}", nil},
		{"verbs", "%s %d %v %f %x %q %T %w", []string{"%s", "%d", "%v", "%f", "%x", "%q", "%T", "%w"}},
		{"flags width precision", "%-5s %05.2f %+d %#x %*d %.*f %8.3e", []string{"%-5s", "%05.2f", "%+d", "%#x", "%*d", "%.*f", "%8.3e"}},
		{"indexed", "%1$s %2$d %[1]d %[2]*[1]d", []string{"%1$s", "%2$d", "%[1]d", "%[2]*[1]d"}},
		{"c length and objc", "%ld %lld %zu %hhd %@ %lu", []string{"%ld", "%lld", "%zu", "%hhd", "%@", "%lu"}},
		{"escaped percent", "100%% sure, %%d", nil},
		{"percent then verb", "%%%s", []string{"%s"}},
		{"percent space", "50% off", nil},
		{"percent end", "50%", nil},
		{"percent unknown verb", "%y %!", nil},
		{"percent space flag is not a verb", "% d", nil},
		{"tags", "<b>bold</b> and <i>it</i>", []string{"<b>", "</b>", "<i>", "</i>"}},
		{"self closing", "a<br/>b<br />c<br>", []string{"<br/>", "<br/>", "<br>"}},
		{"attributes", `<a href="https://x.y/?a=1&b=2" class='c'>link</a >`, []string{"<a>", "</a>"}},
		{"unquoted attribute", `<font size=3>x</font>`, []string{"<font>", "</font>"}},
		{"case folded", "<B>x</B>", []string{"<b>", "</b>"}},
		{"heart", "I <3 Go", nil},
		{"spaced less than", "a < b and c > d", nil},
		{"math", "x<y", nil},
		{"math both ways", "if x<y and y>z", nil},
		{"math operators", "a<b && c>d", nil},
		{"unclosed tag", "<b", nil},
		{"comment", "<!-- note -->", nil},
		{"cjk", "点击<a href=\"/x\">这里</a>查看{count}条消息", []string{"<a>", "</a>", "{count}"}},
		{"mixed order", "<b>{n}</b> %d", []string{"<b>", "{n}", "</b>", "%d"}},
		{"repeated", "{a} {a} %s %s", []string{"{a}", "{a}", "%s", "%s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Find(tt.in)); diff != "" {
				t.Errorf("Find(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestLost(t *testing.T) {
	tests := []struct {
		name     string
		src, out string
		want     []string
	}{
		{"no placeholders", "Hello", "Hola", nil},
		{"no placeholders, out has some", "Hello", "Hola {x}", nil},
		{"kept", "Hello {name}", "Hola {name}", nil},
		{"kept, moved", "{a} then {b}", "{b} luego {a}", nil},
		{"lost brace", "Hello {name}", "Hola", []string{"{name}"}},
		{"renamed brace", "Hello {name}", "Hola {nombre}", []string{"{name}"}},
		{"double brace became single", "Hi {{name}}", "Hola {name}", []string{"{{name}}"}},
		{"lost verb", "%d files", "archivos", []string{"%d"}},
		{"changed verb", "%d files", "%s archivos", []string{"%d"}},
		{"multiplicity", "{a} and {a} and {b}", "{a} y", []string{"{a}", "{b}"}},
		{"lost closing tag", "<b>bold</b>", "<b>negrita", []string{"</b>"}},
		{"tag attributes may change", `<a href="/en">x</a>`, `<a href="/es" title="y">x</a>`, nil},
		{"tag case may change", "<b>x</b>", "<B>x</B>", nil},
		{"self closing changed kind", "a<br/>b", "a<br>b", []string{"<br/>"}},
		{"percent literal", "50% off", "50 % de descuento", nil},
		{"escaped percent lost is fine", "100%% %s", "100 % %s", nil},
		{"all lost in src order", "<i>{x}</i> %1$s", "", []string{"<i>", "{x}", "</i>", "%1$s"}},
		{"empty src", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Lost(tt.src, tt.out)); diff != "" {
				t.Errorf("Lost(%q, %q) mismatch (-want +got):\n%s", tt.src, tt.out, diff)
			}
		})
	}
}

func TestLostManyTokens(t *testing.T) {
	// More tokens than the stack buffers hold.
	var src, out strings.Builder
	for i := range 200 {
		src.WriteString("<b>x</b> {n} %d ")
		if i != 150 {
			out.WriteString("{n} <b>y</b> %d ")
		} else {
			out.WriteString("<b>y %d ")
		}
	}
	want := []string{"{n}", "</b>"}
	got := Lost(src.String(), out.String())
	// Which occurrence is reported lost does not matter; the multiset does.
	if diff := cmp.Diff(sorted(want), sorted(got)); diff != "" {
		t.Errorf("Lost mismatch (-want +got):\n%s", diff)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// Lost agrees with Find: what it reports is the multiset difference Find(src) - Find(out).
func TestLostAgreesWithFind(t *testing.T) {
	pairs := [][2]string{
		{"<b>{a}</b> %s {a}", "{a} <b>%s"},
		{"{{x}} {x} %1$s %[1]s", "{x} %[1]s"},
		{`<a href="x">y</a><br/>`, "<A>y</a>"},
	}
	for _, p := range pairs {
		var want []string
		left := Find(p[1])
		for _, tok := range Find(p[0]) {
			found := false
			for i, o := range left {
				if o == tok {
					left = append(left[:i], left[i+1:]...)
					found = true
					break
				}
			}
			if !found {
				want = append(want, tok)
			}
		}
		if diff := cmp.Diff(want, Lost(p[0], p[1])); diff != "" {
			t.Errorf("Lost(%q, %q) vs Find (-find +lost):\n%s", p[0], p[1], diff)
		}
	}
}

func TestLostDoesNotAllocate(t *testing.T) {
	tests := []struct{ name, src, out string }{
		{"plain", "The quick brown fox jumps over the lazy dog.", "El rápido zorro marrón salta sobre el perro perezoso."},
		{"placeholders kept", `Hi {name}, <a href="/x">%d</a> new {{things}}`, `Hola {name}, <a href="/y">%d</a> {{things}} nuevas`},
		{"almost placeholders", "50% off, a < b, x<y, {}", "50% de descuento"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, func() { Lost(tt.src, tt.out) }); n != 0 {
				t.Errorf("Lost allocates %v times per call, want 0", n)
			}
		})
	}
}

func BenchmarkLost(b *testing.B) {
	cases := []struct{ name, src, out string }{
		{"none", "The quick brown fox jumps over the lazy dog.", "El rápido zorro marrón salta sobre el perro perezoso."},
		{"kept", `Hi {name}, you have <b>%d</b> new messages`, `Hola {name}, tienes <b>%d</b> mensajes nuevos`},
		{"lost", `Hi {name}, you have <b>%d</b> new messages`, `Hola, tienes mensajes nuevos`},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Lost(c.src, c.out)
			}
		})
	}
}

func BenchmarkFind(b *testing.B) {
	s := strings.Repeat(`Hi {name}, you have <b>%d</b> new messages. `, 20)
	b.ReportAllocs()
	for b.Loop() {
		Find(s)
	}
}

// FuzzLost checks that a text never loses placeholders against itself, and that Lost
// against an empty output reports exactly what Find finds.
func FuzzLost(f *testing.F) {
	for _, s := range []string{"", "Hi {name}", "<a href='x'>%1$s</a>", "{{x}} %% %d <br/>", "x<y>z", "%[1]*.[2]f", "<b a=1 c>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := Lost(s, s); got != nil {
			t.Fatalf("Lost(s, s) = %q, want nil", got)
		}
		if diff := cmp.Diff(Find(s), Lost(s, "")); diff != "" {
			t.Fatalf("Lost(s, \"\") vs Find(s) (-find +lost):\n%s", diff)
		}
	})
}
