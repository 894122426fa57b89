// Package placeholder finds the placeholders of a text — {name}, {{name}}, printf verbs and
// markup tags — so the Client can tell when an engine's output lost one (a KindBadOutput
// failure). The functions are pure and safe for concurrent use.
//
// What counts as a placeholder:
//
//   - {name}: a brace, a name of letters, digits, '_', '.' and '-' starting with a letter,
//     digit or '_', and a closing brace: {name}, {0}, {user.first_name}. "{}", "{ x }" and
//     code such as "{ return y; }" are not placeholders.
//   - {{name}}: double braces around any non-empty text without braces or newlines:
//     {{name}}, {{ count }}.
//   - printf verbs: '%', an optional position (1$), flags (-+#0), an optional argument index
//     ([1]), width and precision (digits or '*', with optional indexes), an optional C length
//     modifier (h, hh, l, ll, L, z, j, q, t) and a verb among b c d e E f F g G i o O p q s t
//     T u U v w x X @ — so %s, %-5s, %05.2f, %1$s, %[1]d, %lld and %@ count. "%%" is a
//     literal percent sign, and a '%' followed by a space or the end of the text
//     ("50% off", "50%") is not a placeholder.
//   - markup tags: <name ...>, </name> and <name/>, where name starts with an ASCII letter.
//     Tags are compared by lower-cased name and kind, so <a href="/en"> and <A href="/es">
//     are the same placeholder, written "<a>"; </b> is "</b>" and <br /> is "<br/>". A tag
//     with attributes needs at least one name=value attribute, so "<3", "a < b", "x<y" and
//     "if x<y and y>z" are not tags.
package placeholder

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// kind is the kind of a token.
type kind uint8

const (
	kindBrace kind = iota + 1 // {name} or {{name}}
	kindVerb                  // a printf verb
	kindOpen                  // <name ...>
	kindClose                 // </name>
	kindSelf                  // <name/>
)

// token is one placeholder in a string: s[start:end], and for tags the name s[ns:ne].
type token struct {
	kind       kind
	start, end int
	ns, ne     int
}

// text returns the token's canonical form: the text itself for braces and verbs, and
// "<name>", "</name>" or "<name/>" with a lower-cased name for tags.
func (t token) text(s string) string {
	switch t.kind {
	case kindOpen:
		return "<" + strings.ToLower(s[t.ns:t.ne]) + ">"
	case kindClose:
		return "</" + strings.ToLower(s[t.ns:t.ne]) + ">"
	case kindSelf:
		return "<" + strings.ToLower(s[t.ns:t.ne]) + "/>"
	}
	return s[t.start:t.end]
}

// same reports whether token a of s and token b of u are the same placeholder.
func same(s string, a token, u string, b token) bool {
	if a.kind != b.kind {
		return false
	}
	if a.kind >= kindOpen {
		return strings.EqualFold(s[a.ns:a.ne], u[b.ns:b.ne])
	}
	return s[a.start:a.end] == u[b.start:b.end]
}

// hasMarker reports whether s contains '{', '%' or '<', the bytes every placeholder starts
// with.
func hasMarker(s string) bool {
	if len(s) < 16 {
		return indexMarker(s) >= 0 // cheaper than three calls for short strings
	}
	return strings.IndexByte(s, '{') >= 0 || strings.IndexByte(s, '%') >= 0 || strings.IndexByte(s, '<') >= 0
}

// Find returns the placeholders of s in order, in the canonical form described in the
// package documentation, or nil when there are none.
func Find(s string) []string {
	if !hasMarker(s) {
		return nil
	}
	var out []string
	var t token
	for i := 0; next(s, i, &t); i = t.end {
		out = append(out, t.text(s))
	}
	return out
}

// Lost returns the placeholders of src that out lacks, counting multiplicity, in src order
// and canonical form: Lost("{a} {a} {b}", "{a}") is ["{a}", "{b}"]. It returns nil when
// none is lost, and then does not allocate (for up to 32 placeholders in each text); when src
// contains none of '{', '%', '<' it returns nil at once without looking at out.
//
// Lost takes time linear in len(src) + len(out): when both texts hold more than 32
// placeholders it counts out's placeholders in a map once and takes src's from it.
func Lost(src, out string) []string {
	if !hasMarker(src) {
		return nil
	}
	var srcBuf, outBuf [smallTokens]token
	st, srcMany := collectFew(src, srcBuf[:0])
	if len(st) == 0 {
		return nil
	}
	if !srcMany {
		return lostFew(src, st, out, collect(out, outBuf[:0]))
	}
	ot, outMany := collectFew(out, outBuf[:0])
	if outMany {
		return lostMany(src, out)
	}
	return lostFew(src, collect(src, nil), out, ot)
}

// smallTokens is the number of tokens Lost keeps on the stack, and the bound under which it
// matches tokens pairwise: with one side this small, pairwise matching is linear in the
// other side and allocates nothing.
const smallTokens = 32

// lostFew matches src's tokens st against out's tokens ot pairwise. It costs at most
// len(st)*len(ot) comparisons, so Lost calls it only when one side has at most smallTokens.
func lostFew(src string, st []token, out string, ot []token) []string {
	var usedBuf [smallTokens]bool
	var used []bool
	if len(ot) <= len(usedBuf) {
		used = usedBuf[:len(ot)]
	} else {
		used = make([]bool, len(ot))
	}
	var lost []string
	hint := 0 // engines mostly keep the order: start looking after the last match
	for _, t := range st {
		found := false
		for k := range ot {
			j := hint + k
			if j >= len(ot) {
				j -= len(ot)
			}
			if !used[j] && same(src, t, out, ot[j]) {
				used[j], found, hint = true, true, j+1
				break
			}
		}
		if !found {
			lost = append(lost, t.text(src))
		}
	}
	return lost
}

// tokenKey identifies a placeholder for counting: the kind and the text, or the lower-cased
// name for tags.
type tokenKey struct {
	kind kind
	text string
}

func keyOf(s string, t token) tokenKey {
	if t.kind >= kindOpen {
		return tokenKey{t.kind, strings.ToLower(s[t.ns:t.ne])} // no copy when already lower case
	}
	return tokenKey{t.kind, s[t.start:t.end]}
}

// lostMany is the multiset difference of src's and out's tokens, in linear time: out's
// tokens are counted once, and each of src's takes one from its count.
func lostMany(src, out string) []string {
	left := make(map[tokenKey]int32)
	var t token
	for i := 0; next(out, i, &t); i = t.end {
		left[keyOf(out, t)]++
	}
	var lost []string
	for i := 0; next(src, i, &t); i = t.end {
		k := keyOf(src, t)
		if n := left[k]; n > 0 {
			left[k] = n - 1
			continue
		}
		lost = append(lost, t.text(src))
	}
	return lost
}

// Strip returns s with every placeholder removed — the same placeholders Find and Lost see;
// the text around them, "%%" included, is kept as it is. It returns s itself, without
// allocating, when s holds no placeholder. The Client compares stripped texts to tell an
// engine that echoed its input from one that translated only the words around placeholders.
func Strip(s string) string {
	if !hasMarker(s) {
		return s
	}
	var t token
	var b strings.Builder
	last := 0
	for i := 0; next(s, i, &t); i = t.end {
		if last == 0 && b.Cap() == 0 {
			b.Grow(len(s) - (t.end - t.start))
		}
		b.WriteString(s[last:t.start])
		last = t.end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// collectFew appends up to cap(buf) tokens of s to buf, and reports whether s holds more.
func collectFew(s string, buf []token) ([]token, bool) {
	var t token
	for i := 0; next(s, i, &t); i = t.end {
		if len(buf) == cap(buf) {
			return buf, true
		}
		buf = append(buf, t)
	}
	return buf, false
}

// collect appends the tokens of s to buf.
func collect(s string, buf []token) []token {
	var t token
	for i := 0; next(s, i, &t); i = t.end {
		buf = append(buf, t)
	}
	return buf
}

// next finds the first token of s at or after byte i, stores it in *t and reports whether
// there is one.
func next(s string, i int, t *token) bool {
	for i < len(s) {
		j := indexMarker(s[i:])
		if j < 0 {
			return false
		}
		j += i
		var ok bool
		switch s[j] {
		case '{':
			ok = brace(s, j, t)
		case '%':
			if j+1 < len(s) && s[j+1] == '%' {
				i = j + 2 // "%%" is a literal percent sign
				continue
			}
			ok = verb(s, j, t)
		case '<':
			ok = tag(s, j, t)
		}
		if ok {
			return true
		}
		i = j + 1
	}
	return false
}

func indexMarker(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{', '%', '<':
			return i
		}
	}
	return -1
}

const maxBrace = 64 // longest brace placeholder, in bytes, braces included

// brace parses {{text}} or {name} at s[i] == '{': a non-empty name of letters, digits and
// '_', with '.' and '-' after its first rune, closed within maxBrace bytes.
func brace(s string, i int, t *token) bool {
	if i+1 < len(s) && s[i+1] == '{' {
		return doubleBrace(s, i, t) // when false, the caller retries at i+1 for {name}
	}
	for j := i + 1; j < len(s) && j-i < maxBrace; {
		r, size := utf8.DecodeRuneInString(s[j:])
		switch {
		case r == '}':
			if j == i+1 {
				return false
			}
			*t = token{kind: kindBrace, start: i, end: j + 1}
			return true
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
		case (r == '.' || r == '-') && j > i+1:
		default:
			return false
		}
		j += size
	}
	return false
}

// doubleBrace parses {{text}} at s[i:]: the text must close within maxBrace bytes, hold a
// non-space, and hold no brace or newline.
func doubleBrace(s string, i int, t *token) bool {
	end := strings.Index(s[i+2:min(len(s), i+maxBrace)], "}}")
	if end < 0 {
		return false
	}
	inner := s[i+2 : i+2+end]
	if strings.TrimSpace(inner) == "" || strings.ContainsAny(inner, "{}\n") {
		return false
	}
	*t = token{kind: kindBrace, start: i, end: i + 2 + end + 2}
	return true
}

// verb parses a printf verb at s[i] == '%' (not "%%"): an optional position, flags, width,
// precision and length modifier, then a verb.
func verb(s string, i int, t *token) bool {
	j := position(s, i+1)
	for j < len(s) && strings.IndexByte("-+#0", s[j]) >= 0 {
		j++
	}
	j = width(s, index(s, j))
	if j < len(s) && s[j] == '.' {
		j = width(s, index(s, j+1))
	}
	j = index(s, j)
	if j < len(s) && strings.IndexByte("hlLzjqt", s[j]) >= 0 {
		j = lengthModifier(s, j) // only then: most verbs have none
	}
	if j < len(s) && isVerb(s[j]) {
		*t = token{kind: kindVerb, start: i, end: j + 1}
		return true
	}
	return false
}

// position returns the index after a C position "n$" (as in %1$s) at s[j:], or j.
func position(s string, j int) int {
	if k := digits(s, j); k > j && k < len(s) && s[k] == '$' {
		return k + 1
	}
	return j
}

// width returns the index after a width or precision at s[j:]: '*' or digits, or none.
func width(s string, j int) int {
	if j < len(s) && s[j] == '*' {
		return j + 1
	}
	return digits(s, j)
}

// lengthModifier returns the index after a C length modifier at s[j:], or j: a modifier
// counts only when a C verb follows it.
func lengthModifier(s string, j int) int {
	switch {
	case j+2 < len(s) && (s[j:j+2] == "hh" || s[j:j+2] == "ll") && isCVerb(s[j+2]):
		return j + 2
	case j+1 < len(s) && strings.IndexByte("hlLzjqt", s[j]) >= 0 && isCVerb(s[j+1]):
		return j + 1
	}
	return j
}

// digits returns the index after the ASCII digits at s[j:].
func digits(s string, j int) int {
	for j < len(s) && '0' <= s[j] && s[j] <= '9' {
		j++
	}
	return j
}

// index returns the index after a Go argument index "[n]" at s[j:], or j.
func index(s string, j int) int {
	if j < len(s) && s[j] == '[' {
		if k := digits(s, j+1); k > j+1 && k < len(s) && s[k] == ']' {
			return k + 1
		}
	}
	return j
}

func isVerb(c byte) bool {
	return c < 128 && strings.IndexByte("bcdeEfFgGioOpqstTuUvwxX@", c) >= 0
}

func isCVerb(c byte) bool {
	return c < 128 && strings.IndexByte("diouxXeEfFgGcsp", c) >= 0
}

const maxTag = 1024 // longest tag, in bytes

// tag parses <name ...>, </name> or <name/> at s[i] == '<': a name starting with an ASCII
// letter, then the rest of a closing or an opening tag within maxTag bytes.
func tag(s string, i int, t *token) bool {
	j := i + 1
	closing := j < len(s) && s[j] == '/'
	if closing {
		j++
	}
	ns := j
	if j >= len(s) || !isASCIILetter(s[j]) {
		return false
	}
	for j < len(s) && isNameByte(s[j]) {
		j++
	}
	limit := min(len(s), i+maxTag)
	var k kind
	var end int
	switch {
	case closing:
		k, end = kindClose, closeEnd(s, j, limit)
	case j < limit && s[j] == '>':
		k, end = kindOpen, j+1 // <name>, most tags: openEnd would say the same
	default:
		k, end = openEnd(s, j, limit)
	}
	if end < 0 {
		return false
	}
	*t = token{kind: k, start: i, end: end, ns: ns, ne: j}
	return true
}

// closeEnd returns the index after the '>' of a closing tag whose name ends at j, or -1:
// only white space may come between.
func closeEnd(s string, j, limit int) int {
	j = skipSpace(s, j, limit)
	if j < limit && s[j] == '>' {
		return j + 1
	}
	return -1
}

// openEnd reads the attributes of an opening tag whose name ends at j and returns its kind
// (kindOpen for '>', kindSelf for "/>") and the index after it, or -1 when the text is not a
// tag: attributes are separated by white space, and a tag with attributes needs at least
// one name=value among them ("<b a=1 c>", but not "if x<y and y>z").
func openEnd(s string, j, limit int) (kind, int) {
	attrs, values := 0, 0
	for j < limit {
		switch c := s[j]; {
		case c == '>':
			return tagEnd(kindOpen, j+1, attrs, values)
		case c == '/' && j+1 < limit && s[j+1] == '>':
			return tagEnd(kindSelf, j+2, attrs, values)
		case isSpace(c):
			j = skipSpace(s, j, limit)
			if j >= limit || s[j] == '>' || s[j] == '/' {
				continue
			}
			var valued bool
			if j, valued = attribute(s, j, limit); j < 0 {
				return 0, -1
			}
			attrs++
			if valued {
				values++
			}
		default:
			return 0, -1
		}
	}
	return 0, -1
}

// tagEnd returns k and end, or -1 when the tag has attributes but none with a value.
func tagEnd(k kind, end, attrs, values int) (kind, int) {
	if attrs > 0 && values == 0 {
		return 0, -1
	}
	return k, end
}

// attribute reads the attribute at s[j:] — a name, optionally '=' and a value — and returns
// the index after it and whether it has a value, or -1 when it is no attribute or is not
// followed by white space, '>' or '/'.
func attribute(s string, j, limit int) (int, bool) {
	if !isAttrStart(s[j]) {
		return -1, false
	}
	for j < limit && (isNameByte(s[j]) || s[j] == '@') {
		j++
	}
	valued := false
	if a := skipSpace(s, j, limit); a < limit && s[a] == '=' {
		if j = attrValue(s, a+1, limit); j < 0 {
			return -1, false
		}
		valued = true
	}
	if j < limit && !isSpace(s[j]) && s[j] != '>' && s[j] != '/' {
		return -1, false
	}
	return j, valued
}

// attrValue returns the index after the attribute value at s[v:] (after the '=' and any white
// space), or -1 when there is none: a value quoted with " or ', closed within limit, or a
// non-empty run of bytes other than white space, quotes, '=', '<', '>' and '`'.
func attrValue(s string, v, limit int) int {
	v = skipSpace(s, v, limit)
	if v >= limit {
		return -1
	}
	if q := s[v]; q == '"' || q == '\'' {
		end := strings.IndexByte(s[v+1:limit], q)
		if end < 0 {
			return -1
		}
		return v + 1 + end + 1
	}
	start := v
	for v < limit && !isSpace(s[v]) && strings.IndexByte("\"'=<>`", s[v]) < 0 {
		v++
	}
	if v == start {
		return -1
	}
	return v
}

func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// isAttrStart reports whether c may start an attribute name.
func isAttrStart(c byte) bool { return isASCIILetter(c) || c == '_' || c == ':' || c == '@' }

func isNameByte(c byte) bool {
	return isASCIILetter(c) || '0' <= c && c <= '9' || c == '-' || c == '_' || c == ':' || c == '.'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func skipSpace(s string, j, limit int) int {
	for j < limit && isSpace(s[j]) {
		j++
	}
	return j
}

// VerbEnd returns the end of the printf verb at s[i] == '%' as Find sees it, or -1 when
// there is none there. "%%" is not a verb: VerbEnd returns -1 for it.
func VerbEnd(s string, i int) int {
	if i < 0 || i >= len(s) || s[i] != '%' || i+1 < len(s) && s[i+1] == '%' {
		return -1
	}
	var t token
	if verb(s, i, &t) {
		return t.end
	}
	return -1
}
