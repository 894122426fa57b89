// Package ph finds the placeholders of a text — ICU arguments, printf verbs, {{mustache}},
// :name and a caller's pattern — and masks them through a mask.Builder, leaving the
// translatable text around and inside them (the branches of an ICU plural or select) to
// the engine.
//
// The syntaxes, each on when its bit is set:
//
//   - ICU: {name}, {name, type} and {name, type, style} are one token each
//     ({n, number, ::currency/EUR}); {name, plural|selectordinal|select, [offset:N]
//     key {message} ...} masks its head "{name, plural, key {", each "} key {" and the
//     closing "}}" as one structure, and the messages stay translatable — '#' inside a
//     plural message is a token, and nested arguments are parsed again. A name is letters,
//     digits, '_', '.' and '-', not starting with '.' or '-'. ICU apostrophe quoting is not
//     interpreted. Nesting deeper than 8 levels is left as text.
//   - Printf: the verbs internal/placeholder recognises (%s, %1$s, %-5d, %.2f, %[1]d, %@,
//     %lld), and "%%".
//   - Mustache: {{name}}, {{{name}}}, {{#section}}, {{/section}}: double or triple braces
//     around up to 60 bytes without braces or newlines.
//   - Colon: :name, a ':' then an ASCII letter or '_' then letters, digits and '_', when
//     the ':' follows neither a letter, a digit, ':' nor '/' ("10:30", "http://x" and
//     "Re:x" hold none).
//
// A caller's pattern wins over the syntaxes where its matches start; an empty match is
// ignored. The functions are pure and safe for concurrent use.
package ph

import (
	"regexp"
	"unicode"
	"unicode/utf8"

	"github.com/fanyi-go/translate/fidelity/internal/mask"
	"github.com/fanyi-go/translate/internal/placeholder"
)

// Set is a set of syntaxes.
type Set uint8

// The syntaxes.
const (
	ICU Set = 1 << iota
	Printf
	Mustache
	Colon
)

// Scanner masks placeholders. The zero value masks none but the caller's pattern.
type Scanner struct {
	Set     Set
	Pattern *regexp.Regexp // nil: none
}

// Mask writes s to bd, masking its placeholders and writing the rest with bd.Text.
func (sc Scanner) Mask(s string, bd *mask.Builder) {
	sc.mask(s, bd, 0, 0)
}

// maxDepth bounds the nesting of ICU arguments.
const maxDepth = 8

// Groups returns where Mask finds the ICU plurals and selects of s: the byte range of
// each outermost one, in order.
func (sc Scanner) Groups(s string) [][2]int {
	var out [][2]int
	sc.each(s, false, 0, func(i, end int, complex bool) {
		if complex {
			out = append(out, [2]int{i, end})
		}
	})
	return out
}

// mask writes s; plural is the group of the plural s is a message of, whose '#' is a
// token bound to it, or 0.
func (sc Scanner) mask(s string, bd *mask.Builder, plural, depth int) {
	last := 0
	sc.each(s, plural != 0, depth, func(i, end int, complex bool) {
		bd.Text(s[last:i])
		switch {
		case complex:
			sc.emitComplex(s[i:end], bd, plural, depth)
		case s[i] == '#' && end == i+1 && plural != 0:
			bd.Bound("#", "#", mask.Placeholder, plural)
		default:
			bd.Atom(s[i:end], s[i:end], mask.Placeholder)
		}
		last = end
	})
	bd.Text(s[last:])
}

// each calls f with the placeholders of s in order: where each is and whether it is an ICU
// plural or select.
func (sc Scanner) each(s string, inPlural bool, depth int, f func(i, end int, complex bool)) {
	var user [][]int
	if sc.Pattern != nil {
		user = sc.Pattern.FindAllStringIndex(s, -1)
	}
	for i := 0; i < len(s); {
		for len(user) > 0 && user[0][0] < i {
			user = user[1:]
		}
		end, complex := sc.at(s, i, user, inPlural, depth)
		if end < 0 {
			i++
			continue
		}
		f(i, end, complex)
		i = end
	}
}

// at returns the end of the placeholder at s[i], and whether it is an ICU plural or
// select, or -1.
func (sc Scanner) at(s string, i int, user [][]int, inPlural bool, depth int) (int, bool) {
	if len(user) > 0 && user[0][0] == i && user[0][1] > i {
		return user[0][1], false
	}
	switch s[i] {
	case '{':
		return sc.brace(s, i, depth)
	case '%':
		if sc.Set&Printf != 0 {
			if i+1 < len(s) && s[i+1] == '%' {
				return i + 2, false
			}
			return placeholder.VerbEnd(s, i), false
		}
	case ':':
		if sc.Set&Colon != 0 {
			return colon(s, i), false
		}
	case '#':
		if inPlural {
			return i + 1, false
		}
	}
	return -1, false
}

// brace returns the end of the mustache or ICU placeholder at s[i] == '{', and whether it
// is an ICU plural or select, or -1.
func (sc Scanner) brace(s string, i, depth int) (int, bool) {
	if sc.Set&Mustache != 0 {
		if e := mustache(s, i); e > 0 {
			return e, false
		}
	}
	if sc.Set&ICU != 0 && depth < maxDepth {
		return argument(s, i, depth)
	}
	return -1, false
}

// maxMustache bounds a mustache placeholder's inner text, in bytes.
const maxMustache = 60

// mustache returns the end of {{x}} or {{{x}}} at s[i], or -1.
func mustache(s string, i int) int {
	n := 0
	for n < 3 && i+n < len(s) && s[i+n] == '{' {
		n++
	}
	if n < 2 {
		return -1
	}
	j := i + n
	for k := j; k < len(s) && k-j <= maxMustache; k++ {
		switch s[k] {
		case '{', '\n':
			return -1
		case '}':
			if k == j || k+n > len(s) {
				return -1
			}
			for m := 0; m < n; m++ {
				if s[k+m] != '}' {
					return -1
				}
			}
			return k + n
		}
	}
	return -1
}

// colon returns the end of :name at s[i] == ':', or -1.
func colon(s string, i int) int {
	if i > 0 {
		r, _ := utf8.DecodeLastRuneInString(s[:i])
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == ':' || r == '/' {
			return -1
		}
	}
	j := i + 1
	if j >= len(s) || !(isASCIILetter(s[j]) || s[j] == '_') {
		return -1
	}
	for j < len(s) && (isASCIILetter(s[j]) || s[j] == '_' || '0' <= s[j] && s[j] <= '9') {
		j++
	}
	return j
}

func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
