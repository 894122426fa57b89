// Package mask replaces the parts of a text an engine must not touch (tags, entities,
// placeholders, glossary terms) by tokens the engine keeps, and puts them back afterwards.
//
// A token is "⟦N⟧": U+27E6, the decimal index N of the masked part, U+27E7. An engine
// treats it as an opaque word: it has no letters to translate and no space to cut. Literal
// ⟦ and ⟧ of the source are masked themselves, so every token in an engine's output is one
// of ours. Restore accepts spaces an engine may add inside a token ("⟦ 3 ⟧").
//
// Tokens have roles. An Atom stands alone and may move anywhere. Open, Mid and Close tokens
// of one group bracket text (<b>…</b>, an ICU "{n, plural, one {…} other {…}}"): Restore
// keeps the engine's order of them when it nests and keeps each group's own order,
// and otherwise puts them back in source order at the places the engine left tokens, so
// a structure that was valid in the source is valid in the result.
//
// A Table is built by one goroutine and then only read; reading is safe for concurrent use.
package mask

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Role is the place of a token in a structure.
type Role uint8

// The roles.
const (
	Atom  Role = iota // stands alone
	Open              // opens a group
	Mid               // separates two parts of the open group (ICU "} other {")
	Close             // closes a group
)

// Kind says what a masked part is, for error reports.
type Kind uint8

// The kinds.
const (
	Markup      Kind = iota // a tag, entity, comment, or a literal character the format escapes
	Placeholder             // a placeholder: {name}, %s, {{x}}, :name, a user pattern
	Term                    // a glossary term, replaced by its target
	Literal                 // a literal ⟦ or ⟧ of the source
)

// Token is one masked part.
type Token struct {
	Orig  string // the text put back; for a tag with translated attributes, see Parts
	Label string // what an error may show: the placeholder, "<b>", a glossary term; never customer text
	Kind  Kind
	Role  Role
	Group int // the group of an Open, Mid or Close token; 0 for an Atom
	// Parts and Slots rebuild a tag whose attributes are translated: Parts[0] +
	// attr[Slots[0]] + Parts[1] + ... + Parts[len(Slots)], attr being the restored texts of
	// the attribute values. Empty Slots means Orig.
	Parts []string
	Slots []int
}

// Table holds the masked parts of one text in token order.
type Table struct {
	Toks   []Token
	groups int
}

// Tokens are written as "⟦" + index + "⟧".
const (
	LeftMark  = '⟦'
	RightMark = '⟧'
	left      = "⟦"
	right     = "⟧"
)

// Add appends t and returns its token text.
func (tb *Table) Add(t Token) string {
	tb.Toks = append(tb.Toks, t)
	return Text(len(tb.Toks) - 1)
}

// NewGroup returns a fresh group number, never 0.
func (tb *Table) NewGroup() int {
	tb.groups++
	return tb.groups
}

// Text returns the token text of index i.
func Text(i int) string { return left + strconv.Itoa(i) + right }

// Found is one token in an engine's output: out[Start:End] is token Index.
type Found struct {
	Index, Start, End int
}

// maxIndexDigits bounds the digits of a token index Scan accepts.
const maxIndexDigits = 9

// Scan returns the well-formed tokens of out in order, whatever their index.
func Scan(out string) []Found {
	var found []Found
	for i := 0; ; {
		j := strings.Index(out[i:], left)
		if j < 0 {
			return found
		}
		start := i + j
		if f, ok := tokenAt(out, start); ok {
			found = append(found, f)
			i = f.End
			continue
		}
		i = start + len(left)
	}
}

// tokenAt parses a token at out[start:], which begins with "⟦".
func tokenAt(out string, start int) (Found, bool) {
	k := skipSpaces(out, start+len(left))
	d := k
	for k < len(out) && '0' <= out[k] && out[k] <= '9' && k-d < maxIndexDigits {
		k++
	}
	if k == d {
		return Found{}, false
	}
	n, _ := strconv.Atoi(out[d:k])
	k = skipSpaces(out, k)
	if !strings.HasPrefix(out[k:], right) {
		return Found{}, false
	}
	return Found{Index: n, Start: start, End: k + len(right)}, true
}

// skipSpaces skips ASCII spaces and the no-break spaces engines put around words.
func skipSpaces(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != ' ' && r != '\u00a0' && r != '\u202f' && r != '\t' {
			return i
		}
		i += size
	}
	return i
}
