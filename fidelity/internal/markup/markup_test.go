package markup

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/fanyi-go/translate/fidelity/internal/mask"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func kinds(doc string, html bool) []string {
	var out []string
	for _, p := range Tokenize(doc, html) {
		out = append(out, []string{"text", "start", "end", "self", "comment", "decl", "pi", "cdata", "raw"}[p.Kind]+":"+doc[p.Start:p.End])
	}
	return out
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		name, doc string
		html      bool
		want      []string
	}{
		{"tags and text", `<p class=x>Hi <b>you</b><br/></p>`, true, []string{"start:<p class=x>", "text:Hi ", "start:<b>", "text:you", "end:</b>", "self:<br/>", "end:</p>"}},
		{"a < b is text", `a < b <3 x<y`, true, []string{"text:a < b <3 x<y"}},
		{"bare attribute", `<input disabled>`, true, []string{"start:<input disabled>"}},
		{"unterminated quote is text", `<a title="x>y`, true, []string{`text:<a title="x>y`}},
		{"comment, doctype, pi, cdata", `<!DOCTYPE html><!-- c --><?xml v?><![CDATA[<b>]]>`, false, []string{"decl:<!DOCTYPE html>", "comment:<!-- c -->", "pi:<?xml v?>", "cdata:<![CDATA[<b>]]>"}},
		{"script raw", `<script>if (a<b) x="</p>"</script>t`, true, []string{"start:<script>", `raw:if (a<b) x="</p>"`, "end:</script>", "text:t"}},
		{"script in xml is not raw", `<script>a<b/></script>`, false, []string{"start:<script>", "text:a", "self:<b/>", "end:</script>"}},
		{"unclosed script", `<style>a{}`, true, []string{"start:<style>", "raw:a{}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, kinds(tt.doc, tt.html)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func maskDoc(doc string, html bool) (*mask.Builder, []AttrText) {
	m := Masker{HTML: html}
	if html {
		m.TextAttrs = HTMLTextAttrs
	}
	var bd mask.Builder
	return &bd, m.Mask(doc, &bd)
}

func TestMask(t *testing.T) {
	doc := `<p title="Big &amp; red" alt=plain class="c">Shoes &amp; <b>hats</b> <code>x<y</code> <span translate="no">Acme</span></p>`
	bd, attrs := maskDoc(doc, true)
	if got, want := bd.String(), "⟦0⟧Shoes ⟦1⟧ ⟦2⟧hats⟦3⟧ ⟦4⟧ ⟦5⟧⟦6⟧"; got != want {
		t.Errorf("body %q, want %q", got, want)
	}
	var texts []string
	for _, a := range attrs {
		texts = append(texts, a.String())
	}
	if diff := cmp.Diff([]string{"Big ⟦0⟧ red", "plain"}, texts); diff != "" {
		t.Errorf("attribute texts (-want +got):\n%s", diff)
	}
	// Translate the attributes, one with a quote and a space.
	a0, _ := attrs[0].Restore(`Gros ⟦0⟧ "rouge"`, nil, Escaper(attrs[0].Quote))
	a1, _ := attrs[1].Restore("tout simple", nil, Escaper(attrs[1].Quote))
	got, probs := bd.Restore("⟦0⟧Chaussures ⟦1⟧ ⟦2⟧chapeaux⟦3⟧ ⟦4⟧ ⟦5⟧⟦6⟧", []string{a0, a1}, EscapeText)
	if !probs.OK() {
		t.Fatal(probs)
	}
	want := `<p title="Gros &amp; &quot;rouge&quot;" alt=tout&#32;simple class="c">Chaussures &amp; <b>chapeaux</b> <code>x<y</code> <span translate="no">Acme</span></p>`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if !WellFormed(want, true) {
		t.Error("want is not well-formed")
	}
}

func TestWellFormed(t *testing.T) {
	tests := []struct {
		doc        string
		html, want bool
	}{
		{`<p>a<br>b<img src=x></p>`, true, true},
		{`<p>a</b></p>`, true, false},
		{`<p><b>a</p></b>`, true, false},
		{`<p>a`, true, false},
		{`<a>x &amp; y<b/></a>tail`, false, true},
		{`<a>x & y</a>`, false, false},
		{`<a>x &nbsp; y</a>`, false, false},
		{`<a><b></a></b>`, false, false},
		{`<a>`, false, false},
	}
	for _, tt := range tests {
		if got := WellFormed(tt.doc, tt.html); got != tt.want {
			t.Errorf("WellFormed(%q, %v) = %v, want %v", tt.doc, tt.html, got, tt.want)
		}
	}
}

// FuzzTokenize: the pieces cover the document exactly, in order, whatever it is.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{`<p a="1" b='2' c=3 d>x</p>`, `<script>a</script`, `<!-- x`, `<![CDATA[`, `<?x?>`, `</a >`, "<a\n/>"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, doc string, html bool) {
		end := 0
		for _, p := range Tokenize(doc, html) {
			if p.Start != end || p.End <= p.Start {
				t.Fatalf("%q: piece %+v after %d", doc, p, end)
			}
			for _, a := range p.Attrs {
				if a.Val[0] >= 0 && (a.Val[0] < p.Start || a.Val[1] > p.End || a.Val[0] > a.Val[1]) {
					t.Fatalf("%q: attribute %+v outside %+v", doc, a, p)
				}
			}
			end = p.End
		}
		if end != len(doc) {
			t.Fatalf("%q: pieces end at %d", doc, end)
		}
	})
}

// FuzzMaskDocument: an unchanged answer restores the document byte for byte; an answer
// whose letters are upper-cased keeps every token and, when the document was well-formed,
// stays well-formed.
func FuzzMaskDocument(f *testing.F) {
	for _, s := range []string{`<p title="a &amp; b" alt=c>x &lt; <b>y</b><code>z</code></p>`, `<a><b></a></b>`, `x ⟦1⟧ &#x1F; & <`} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, doc string, html bool) {
		bd, attrs := maskDoc(doc, html)
		restored := make([]string, len(attrs))
		upper := make([]string, len(attrs))
		for i, a := range attrs {
			var probs mask.Problems
			restored[i], probs = a.Restore(a.String(), nil, Escaper(a.Quote))
			upper[i], _ = a.Restore(strings.ToUpper(a.String()), nil, Escaper(a.Quote))
			if !probs.OK() {
				t.Fatalf("%q: attribute %d: %v", doc, i, probs)
			}
		}
		got, probs := bd.Restore(bd.String(), restored, EscapeText)
		if !probs.OK() || got != doc {
			t.Fatalf("%q -> %q -> %q %v", doc, bd.String(), got, probs)
		}
		up, probs := bd.Restore(strings.ToUpper(bd.String()), upper, EscapeText)
		if !probs.OK() {
			t.Fatalf("%q: upper-casing lost tokens: %v", doc, probs)
		}
		if WellFormed(doc, html) && !WellFormed(up, html) {
			t.Fatalf("%q -> %q: no longer well-formed", doc, up)
		}
	})
}
