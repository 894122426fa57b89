// Package markup reads HTML and XML into tags and text, masks the tags for engines that
// do not take markup, and checks structure. It is a small tokenizer, not a parser: it
// never builds a tree, never rewrites what it does not understand, and treats a '<'
// that starts no valid tag as text. The functions are pure and safe for concurrent use.
package markup

import (
	"strings"
)

// Kind is the kind of a piece of a document.
type Kind uint8

// The kinds.
const (
	Text      Kind = iota // character data, entities included
	Start                 // <name attr="v">
	End                   // </name>
	SelfClose             // <name/>
	Comment               // <!-- ... -->
	Decl                  // <!DOCTYPE ...> and other <!...>
	PI                    // <?target ...?>
	CData                 // <![CDATA[ ... ]]>
	RawText               // the content of an HTML script or style element
)

// Attr is one attribute of a tag: its name, and its value doc[Val[0]:Val[1]] without
// quotes (Val[0] < 0 when the attribute has no value); Quote is '"', '\” or 0.
type Attr struct {
	Name  string
	Val   [2]int
	Quote byte
}

// Piece is doc[Start:End], of kind Kind; tags have a Name and Attrs.
type Piece struct {
	Kind       Kind
	Start, End int
	Name       string
	Attrs      []Attr
}

// maxTag bounds a tag, in bytes: a longer one is read as text.
const maxTag = 16 << 10

// Tokenize cuts doc into pieces; their concatenation is doc. html selects HTML's rules:
// raw text in script and style, names compared without case.
func Tokenize(doc string, html bool) []Piece {
	var out []Piece
	tk := tokenizer{doc: doc, html: html}
	text := 0 // start of the pending text
	for i := 0; i < len(doc); {
		j := strings.IndexByte(doc[i:], '<')
		if j < 0 {
			break
		}
		i += j
		p, ok := tk.tagAt(i)
		if !ok {
			i++
			continue
		}
		if text < i {
			out = append(out, Piece{Kind: Text, Start: text, End: i})
		}
		out = append(out, p)
		i, text = p.End, p.End
		if html && p.Kind == Start && isRawText(p.Name) {
			end := rawEnd(doc, i, p.Name)
			if end > i {
				out = append(out, Piece{Kind: RawText, Start: i, End: end})
			}
			i, text = end, end
		}
	}
	if text < len(doc) {
		out = append(out, Piece{Kind: Text, Start: text, End: len(doc)})
	}
	return out
}

func isRawText(name string) bool {
	return strings.EqualFold(name, "script") || strings.EqualFold(name, "style")
}

// rawEnd returns where the raw text after <name> ends: at "</name" followed by a space,
// '/' or '>', or at the end of doc.
func rawEnd(doc string, i int, name string) int {
	for k := i; k < len(doc); {
		j := strings.Index(doc[k:], "</")
		if j < 0 {
			break
		}
		k += j
		e := k + 2 + len(name)
		if e <= len(doc) && strings.EqualFold(doc[k+2:e], name) &&
			(e == len(doc) || strings.IndexByte(" \t\r\n\f/>", doc[e]) >= 0) {
			return k
		}
		k += 2
	}
	return len(doc)
}

// tokenizer remembers which closing strings the rest of a document lacks, so that many
// unclosed "<!--" cost one search, not one each.
type tokenizer struct {
	doc     string
	html    bool
	missing [4]bool // "-->", "]]>", ">", "?>" not found after some position
}

// tagAt reads the markup at doc[i] == '<'.
func (tk *tokenizer) tagAt(i int) (Piece, bool) {
	doc, rest := tk.doc, tk.doc[i:]
	switch {
	case strings.HasPrefix(rest, "<!--"):
		return tk.until(i, 4, 0, Comment)
	case strings.HasPrefix(rest, "<![CDATA["):
		return tk.until(i, 9, 1, CData)
	case strings.HasPrefix(rest, "<!") && len(rest) > 2 && isLetter(rest[2]):
		return tk.until(i, 2, 2, Decl)
	case strings.HasPrefix(rest, "<?"):
		if tk.html {
			return tk.until(i, 2, 2, PI)
		}
		return tk.until(i, 2, 3, PI)
	case strings.HasPrefix(rest, "</"):
		return endTag(doc, i)
	case len(rest) > 1 && isLetter(rest[1]):
		return startTag(doc, i)
	}
	return Piece{}, false
}

var closers = [4]string{"-->", "]]>", ">", "?>"}

// until reads markup of kind k from doc[i] to the end of the first closers[c] after skip
// bytes; without one, it is not markup.
func (tk *tokenizer) until(i, skip, c int, k Kind) (Piece, bool) {
	if tk.missing[c] {
		return Piece{}, false
	}
	j := strings.Index(tk.doc[i+skip:], closers[c])
	if j < 0 {
		tk.missing[c] = true
		return Piece{}, false
	}
	return Piece{Kind: k, Start: i, End: i + skip + j + len(closers[c])}, true
}

func endTag(doc string, i int) (Piece, bool) {
	j := i + 2
	if j >= len(doc) || !isLetter(doc[j]) {
		return Piece{}, false
	}
	k := nameEnd(doc, j)
	e := skipSpace(doc, k)
	if e >= len(doc) || doc[e] != '>' {
		return Piece{}, false
	}
	return Piece{Kind: End, Start: i, End: e + 1, Name: doc[j:k]}, true
}

func startTag(doc string, i int) (Piece, bool) {
	limit := min(len(doc), i+maxTag)
	j := nameEnd(doc, i+1)
	p := Piece{Kind: Start, Start: i, Name: doc[i+1 : j]}
	for j < limit {
		k := skipSpace(doc[:limit], j)
		switch {
		case k < limit && doc[k] == '>':
			p.End = k + 1
			return p, true
		case k+1 < limit && doc[k] == '/' && doc[k+1] == '>':
			p.Kind, p.End = SelfClose, k+2
			return p, true
		case k == j:
			return Piece{}, false // an attribute needs a space before it
		}
		a, next, ok := attr(doc[:limit], k)
		if !ok {
			return Piece{}, false
		}
		p.Attrs = append(p.Attrs, a)
		j = next
	}
	return Piece{}, false
}

// attr reads one attribute at doc[i].
func attr(doc string, i int) (Attr, int, bool) {
	j := i
	for j < len(doc) && strings.IndexByte(" \t\r\n\f\"'>/=<", doc[j]) < 0 {
		j++
	}
	if j == i {
		return Attr{}, 0, false
	}
	a := Attr{Name: doc[i:j], Val: [2]int{-1, -1}}
	k := skipSpace(doc, j)
	if k >= len(doc) || doc[k] != '=' {
		return a, j, true
	}
	v := skipSpace(doc, k+1)
	if v >= len(doc) {
		return Attr{}, 0, false
	}
	if q := doc[v]; q == '"' || q == '\'' {
		e := strings.IndexByte(doc[v+1:], q)
		if e < 0 {
			return Attr{}, 0, false
		}
		a.Val, a.Quote = [2]int{v + 1, v + 1 + e}, q
		return a, v + 1 + e + 1, true
	}
	e := v
	for e < len(doc) && strings.IndexByte(" \t\r\n\f\"'=<>`", doc[e]) < 0 {
		e++
	}
	if e == v {
		return Attr{}, 0, false
	}
	a.Val = [2]int{v, e}
	return a, e, true
}

func nameEnd(doc string, j int) int {
	for j < len(doc) && (isLetter(doc[j]) || '0' <= doc[j] && doc[j] <= '9' || strings.IndexByte("-_:.", doc[j]) >= 0 || doc[j] >= 0x80) {
		j++
	}
	return j
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

func skipSpace(s string, j int) int {
	for j < len(s) && strings.IndexByte(" \t\r\n\f", s[j]) >= 0 {
		j++
	}
	return j
}
