package markup

import (
	"strings"

	"github.com/fanyi-go/translate/fidelity/internal/mask"
)

// Masker masks a document's markup. Tags and entities become tokens, tags that open and
// close an element become one structure, the content of script, style and code elements
// and of elements marked translate="no" is one token with its tags, and the values of
// the attributes in TextAttrs become texts of their own.
type Masker struct {
	HTML bool
	// TextAttrs are the attributes whose values are translated (HTML: alt, title,
	// placeholder, aria-label); the values of all others are never sent.
	TextAttrs []string
	// Text masks translatable text (placeholders, terms) into a builder; nil writes it
	// with Builder.Text.
	Text func(s string, bd *mask.Builder)
	// NewBuilder returns the builder of an attribute text quoted with quote ('"', '\''
	// or 0); nil means a zero Builder.
	NewBuilder func(quote byte) *mask.Builder
}

// HTMLTextAttrs are the HTML attributes whose values are text for people.
var HTMLTextAttrs = []string{"alt", "title", "placeholder", "aria-label"}

// voids are the HTML elements without content or end tag.
var voids = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "param": true, "source": true,
	"track": true, "wbr": true,
}

// opaques are the HTML elements whose content is never translated.
var opaques = map[string]bool{"script": true, "style": true, "code": true}

// AttrText is the text of an attribute value, masked, and how the value was quoted in the
// tag ('"', '\” or 0): restore it with Escaper(Quote).
type AttrText struct {
	*mask.Builder
	Quote byte
}

// Mask writes doc masked into bd and returns the attribute texts, in the order of the
// Slots of bd's tokens.
func (m Masker) Mask(doc string, bd *mask.Builder) []AttrText {
	pieces := Tokenize(doc, m.HTML)
	match := m.pair(doc, pieces)
	w := maskWriter{m: m, doc: doc, bd: bd, groups: make(map[int]int)}
	for i := 0; i < len(pieces); i++ {
		p := pieces[i]
		if j, ok := match[i]; ok && m.opaque(doc, p) {
			name := strings.ToLower(p.Name)
			w.bd.Atom(doc[p.Start:pieces[j].End], "<"+name+">…</"+name+">", mask.Markup)
			i = j
			continue
		}
		w.piece(i, p, match)
	}
	return w.attrs
}

// pair matches start tags to end tags by name, innermost first, as a stack does; a tag
// that closes nothing or is never closed is left out. The map goes both ways.
func (m Masker) pair(doc string, pieces []Piece) map[int]int {
	match := make(map[int]int)
	var stack []int
	open := make(map[string]int) // names on the stack, so an end tag that closes nothing costs no scan
	for i, p := range pieces {
		switch {
		case p.Kind == Start && !(m.HTML && voids[strings.ToLower(p.Name)]):
			stack = append(stack, i)
			open[m.key(p.Name)]++
		case p.Kind == End && open[m.key(p.Name)] > 0:
			k := len(stack) - 1
			for ; k >= 0 && !m.sameName(pieces[stack[k]].Name, p.Name); k-- {
			}
			match[stack[k]], match[i] = i, stack[k]
			for _, j := range stack[k:] {
				open[m.key(pieces[j].Name)]--
			}
			stack = stack[:k]
		}
	}
	return match
}

// key is how pair counts a name.
func (m Masker) key(name string) string {
	if m.HTML {
		return strings.ToLower(name)
	}
	return name
}

func (m Masker) sameName(a, b string) bool {
	if m.HTML {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// opaque reports whether start tag p opens an element whose content is not translated.
func (m Masker) opaque(doc string, p Piece) bool {
	if p.Kind != Start {
		return false
	}
	if m.HTML && opaques[strings.ToLower(p.Name)] {
		return true
	}
	for _, a := range p.Attrs {
		if strings.EqualFold(a.Name, "translate") && a.Val[0] >= 0 &&
			strings.EqualFold(doc[a.Val[0]:a.Val[1]], "no") {
			return true
		}
	}
	return false
}

// maskWriter carries the state of one Mask.
type maskWriter struct {
	m      Masker
	doc    string
	bd     *mask.Builder
	attrs  []AttrText
	groups map[int]int // piece index of a start tag -> its group
}

// piece masks one piece that is not inside an opaque element.
func (w *maskWriter) piece(i int, p Piece, match map[int]int) {
	raw := w.doc[p.Start:p.End]
	switch p.Kind {
	case Text:
		w.text(raw, w.bd, '<')
		return
	case Start, End:
	default:
		w.bd.Atom(raw, label(p), mask.Markup)
		return
	}
	t := w.tag(p)
	if j, ok := match[i]; ok {
		if p.Kind == Start {
			t.Role, t.Group = mask.Open, w.bd.NewGroup()
			w.groups[i] = t.Group
		} else {
			t.Role, t.Group = mask.Close, w.groups[j]
		}
	}
	w.bd.Tag(t)
}

// tag returns the token of a tag, its text attributes cut out into attribute texts.
func (w *maskWriter) tag(p Piece) mask.Token {
	t := mask.Token{Orig: w.doc[p.Start:p.End], Label: label(p), Kind: mask.Markup}
	last := p.Start
	for _, a := range p.Attrs {
		if a.Val[0] < 0 || a.Val[0] == a.Val[1] || !w.isTextAttr(a.Name) {
			continue
		}
		t.Parts = append(t.Parts, w.doc[last:a.Val[0]])
		t.Slots = append(t.Slots, len(w.attrs))
		last = a.Val[1]
		bd := new(mask.Builder)
		if w.m.NewBuilder != nil {
			bd = w.m.NewBuilder(a.Quote)
		}
		w.text(w.doc[a.Val[0]:a.Val[1]], bd, a.Quote)
		w.attrs = append(w.attrs, AttrText{Builder: bd, Quote: a.Quote})
	}
	if len(t.Slots) > 0 {
		t.Parts = append(t.Parts, w.doc[last:p.End])
	}
	return t
}

func (w *maskWriter) isTextAttr(name string) bool {
	for _, n := range w.m.TextAttrs {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// text masks character data: entities and the characters its escaper escapes become
// tokens, the rest goes to Masker.Text. quote is the attribute value's quote, or '<' for
// character data.
func (w *maskWriter) text(s string, bd *mask.Builder, quote byte) {
	special := specials(quote)
	last := 0
	for i := 0; i < len(s); {
		j := strings.IndexAny(s[i:], special)
		if j < 0 {
			break
		}
		i += j
		end := i + 1
		if s[i] == '&' {
			end = max(end, entityEnd(s, i))
		}
		w.plain(s[last:i], bd)
		bd.Atom(s[i:end], s[i:end], mask.Markup)
		i, last = end, end
	}
	w.plain(s[last:], bd)
}

func (w *maskWriter) plain(s string, bd *mask.Builder) {
	switch {
	case s == "":
	case w.m.Text != nil:
		w.m.Text(s, bd)
	default:
		bd.Text(s)
	}
}

// RefEnd returns the end of the character reference at s[i] (&name;, &#123;, &#x1F;), or
// -1 when none starts there.
func RefEnd(s string, i int) int {
	if s[i] != '&' {
		return -1
	}
	return entityEnd(s, i)
}

// entityEnd returns the end of the character reference at s[i] == '&' (&name;, &#123;,
// &#x1F;), or -1.
func entityEnd(s string, i int) int {
	j := i + 1
	isChar, limit := isAlnum, 32
	switch {
	case strings.HasPrefix(s[j:], "#x") || strings.HasPrefix(s[j:], "#X"):
		j, isChar, limit = j+2, isHex, 6
	case strings.HasPrefix(s[j:], "#"):
		j, isChar, limit = j+1, isDigit, 7
	case j >= len(s) || !isLetter(s[j]):
		return -1
	}
	k := j
	for k < len(s) && k-j < limit && isChar(s[k]) {
		k++
	}
	if k == j || k >= len(s) || s[k] != ';' {
		return -1
	}
	return k + 1
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isAlnum(c byte) bool { return isLetter(c) || isDigit(c) }
func isHex(c byte) bool   { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }

// label is how an error names a piece: "<b>", "</b>", "<br/>", "<!---->", never the
// attribute values or comment text.
func label(p Piece) string {
	switch p.Kind {
	case Start:
		return "<" + strings.ToLower(p.Name) + ">"
	case End:
		return "</" + strings.ToLower(p.Name) + ">"
	case SelfClose:
		return "<" + strings.ToLower(p.Name) + "/>"
	case Comment:
		return "<!---->"
	case CData:
		return "<![CDATA[]]>"
	case PI:
		return "<?>"
	case Decl:
		return "<!>"
	}
	return "script/style"
}
