package placeholder

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

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
		{"brace at its longest", "{" + strings.Repeat("x", 62) + "}", []string{"{" + strings.Repeat("x", 62) + "}"}},
		{"brace too long", "{" + strings.Repeat("x", 63) + "}", nil},
		{"closing tag with attribute", "</b x>", nil},
		{"closing tag unclosed", "</b ", nil},
		{"self closing with bare attribute", "<br clear/>", nil},
		{"attribute value missing at end", "<a href=  ", nil},
		{"attribute value empty", "<a href= >", nil},
		{"attribute quote unclosed", `<a href="x>`, nil},
		{"attribute quote unclosed before the end", `<a href=">`, nil},
		{"attribute value followed by junk", `<a href="x"y>`, nil},
		{"space before slash", `<img src="x" />`, []string{"<img/>"}},
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

// mixed returns n placeholders of every kind (most {name}s and {{name}}s distinct), each
// followed by a word; the same placeholders in reverse order with every 100th left out; and
// what that leaves out, in src order. Reversal defeats the in-order hint of pairwise matching: with it, matching pairwise
// costs n²/2 comparisons.
func mixed(n int) (src, out string, lost []string) {
	kinds := []func(i int) (text, canon string){
		func(i int) (string, string) { s := fmt.Sprintf("{n%d}", i); return s, s },
		func(i int) (string, string) { s := fmt.Sprintf("{{v%d}}", i); return s, s },
		func(int) (string, string) { return "%s", "%s" },
		func(int) (string, string) { return "%d", "%d" },
		func(i int) (string, string) { s := fmt.Sprintf("%%%d$s", i%9+1); return s, s },
		func(i int) (string, string) {
			if i%2 == 0 {
				return `<a href="/x">`, "<a>"
			}
			return "</B>", "</b>"
		},
	}
	toks := make([]string, n)
	canon := make([]string, n)
	for i := range n {
		toks[i], canon[i] = kinds[i%len(kinds)](i / len(kinds))
	}
	var sb, ob strings.Builder
	for _, t := range toks {
		sb.WriteString(t)
		sb.WriteString(" w ")
	}
	for i := n - 1; i >= 0; i-- {
		if i%100 == 7 {
			continue
		}
		ob.WriteString(strings.ToLower(toks[i]))
		ob.WriteString(" p ")
	}
	return sb.String(), ob.String(), minus(canon, Find(ob.String()))
}

// minus is the multiset difference a - b in a's order, the first occurrences in a taken first.
func minus(a, b []string) []string {
	left := map[string]int{}
	for _, x := range b {
		left[x]++
	}
	var out []string
	for _, x := range a {
		if left[x] > 0 {
			left[x]--
			continue
		}
		out = append(out, x)
	}
	return out
}

// bestOf returns the shortest of a few timings of f, so that a busy machine does not decide
// the outcome.
func bestOf(f func()) time.Duration {
	best := time.Duration(1<<63 - 1)
	for range 7 {
		start := time.Now()
		f()
		best = min(best, time.Since(start))
	}
	return best
}

// Lost is linear: 40,000 placeholders on each side, in reverse order with some lost, take
// under two seconds (pairwise matching took 24 s; linear matching takes a few milliseconds).
// The ratio to 4,000 is logged, not checked: on a busy machine it ranged from 30x to 67x
// (linear is 10x, pairwise 100x), too close to tell apart reliably.
func TestLostLinear(t *testing.T) {
	src4, out4, want4 := mixed(4_000)
	src40, out40, want40 := mixed(40_000)
	if len(want40) == 0 || len(want4) == 0 {
		t.Fatal("test texts lose nothing")
	}
	if diff := cmp.Diff(want4, Lost(src4, out4)); diff != "" {
		t.Fatalf("Lost, 4k placeholders (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want40, Lost(src40, out40)); diff != "" {
		t.Fatalf("Lost, 40k placeholders (-want +got):\n%s", diff)
	}
	d40 := bestOf(func() { Lost(src40, out40) })
	d4 := bestOf(func() { Lost(src4, out4) })
	t.Logf("4k placeholders (%d KiB): %v; 40k (%d KiB): %v", len(src4)>>10, d4, len(src40)>>10, d40)
	if d40 > 2*time.Second {
		t.Errorf("Lost with 40k placeholders took %v, want well under 2s", d40)
	}
}

func TestLostFewAgainstMany(t *testing.T) {
	// One side small, the other huge: pairwise matching stays linear.
	src, out, _ := mixed(40_000)
	if got := Lost("{n1} %s <b>", out); !slices.Equal(got, []string{"<b>"}) {
		t.Errorf("Lost(few, many) = %q, want [<b>]", got)
	}
	if got := Lost(src, "{n1}"); len(got) != 39_999 {
		t.Errorf("Lost(many, one) lost %d, want 39999", len(got))
	}
}

func TestStrip(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"Hello, world.", "Hello, world."},
		{"Hello {name}!", "Hello !"},
		{"{a}{b}", ""},
		{"{{ count }} items, %d%% off, %1$s", " items, %% off, "},
		{`Click <a href="/x">here</a>`, "Click here"},
		{"50% off, a < b, x<y, {}, { return y; }", "50% off, a < b, x<y, {}, { return y; }"},
		{"%%s", "%%s"},
		{"点击<b>这里</b>查看{count}条", "点击这里查看条"},
	}
	for _, tt := range tests {
		if got := Strip(tt.in); got != tt.want {
			t.Errorf("Strip(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	plain := "The quick brown fox, 50% of it."
	if n := testing.AllocsPerRun(100, func() { Strip(plain) }); n != 0 {
		t.Errorf("Strip of a text without placeholders allocates %v times, want 0", n)
	}
}

func BenchmarkLostMany(b *testing.B) {
	for _, n := range []int{4_000, 40_000} {
		src, out, _ := mixed(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(src) + len(out)))
			b.ReportAllocs()
			for b.Loop() {
				Lost(src, out)
			}
		})
	}
}

func BenchmarkStrip(b *testing.B) {
	s := strings.Repeat(`Hi {name}, you have <b>%d</b> new messages. `, 20)
	b.ReportAllocs()
	for b.Loop() {
		Strip(s)
	}
}

// FuzzLost checks that a text never loses placeholders against itself, that Lost is the
// multiset difference of what Find finds in either text, both for few placeholders (matched
// pairwise) and for many (counted in a map: the texts repeated 40 times), and that Strip
// removes exactly the placeholders. TestLostLinear checks the time.
func FuzzLost(f *testing.F) {
	for _, s := range [][2]string{
		{"", ""}, {"Hi {name}", "Hola {name}"}, {"<a href='x'>%1$s</a>", "<A>%1$s"},
		{"{{x}} %% %d <br/>", "%d {x}"}, {"x<y>z", "x<y>z"}, {"%[1]*.[2]f", ""}, {"<b a=1 c>", "<b>"},
		{"{a} {a} {b}", "{a}"}, {"{{a}b}", "{b}"}, {"<p>%s</P>", "</p>%s<p>"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, src, out string) {
		if got := Lost(src, src); got != nil {
			t.Fatalf("Lost(s, s) = %q, want nil", got)
		}
		if diff := cmp.Diff(Find(src), Lost(src, "")); diff != "" {
			t.Fatalf("Lost(s, \"\") vs Find(s) (-find +lost):\n%s", diff)
		}
		if diff := cmp.Diff(minus(Find(src), Find(out)), Lost(src, out)); diff != "" {
			t.Fatalf("Lost(%q, %q) vs Find (-find +lost):\n%s", src, out, diff)
		}
		// 40 copies, separated so that no placeholder spans two, exceed smallTokens on
		// each side whenever each text holds one placeholder.
		bigSrc := strings.Repeat(src+"\n ", 40)
		bigOut := strings.Repeat(out+"\n ", 40)
		if diff := cmp.Diff(minus(Find(bigSrc), Find(bigOut)), Lost(bigSrc, bigOut)); diff != "" {
			t.Fatalf("Lost(40*%q, 40*%q) vs Find (-find +lost):\n%s", src, out, diff)
		}
		stripped, found := Strip(src), Find(src)
		if (stripped == src) != (found == nil) {
			t.Fatalf("Strip(%q) = %q with placeholders %q", src, stripped, found)
		}
		var kept int
		var tk token
		for i := 0; next(src, i, &tk); i = tk.end {
			kept += tk.end - tk.start
		}
		if len(stripped)+kept != len(src) {
			t.Fatalf("Strip(%q) = %q: removed %d bytes, placeholders hold %d", src, stripped, len(src)-len(stripped), kept)
		}
	})
}

func TestVerbEnd(t *testing.T) {
	tests := []struct {
		s    string
		i    int
		want int
	}{
		{"%s", 0, 2},
		{"a %1$s b", 2, 6},
		{"%.2f%%", 0, 4},
		{"%%s", 0, -1}, // a literal percent sign
		{"50% off", 2, -1},
		{"%", 0, -1},
		{"x", 0, -1},
		{"%d", 5, -1},
		{"%d", -1, -1},
	}
	for _, tt := range tests {
		if got := VerbEnd(tt.s, tt.i); got != tt.want {
			t.Errorf("VerbEnd(%q, %d) = %d, want %d", tt.s, tt.i, got, tt.want)
		}
	}
}
