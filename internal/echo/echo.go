// Package echo tells whether a text must change in translation, so that an engine sending
// it back unchanged has echoed the source. The translate package decides what an echo
// costs (a KindBadOutput answer, never served); this package reads the text.
package echo

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Translatable reports whether s holds words that a translation must change, so that s
// coming back unchanged is an echo: two or more words that are not neutral, any letter
// in a script target (the target language's scripts; nil when unknown) does not have, or
// two or more CJK or Thai letters (scripts written without spaces). Numbers, URLs, e-mail
// addresses, placeholders, product names and codes ("iPhone 15", "SKU-42", "NASA") and
// a single word are the same in every language.
func Translatable(s string, target []*unicode.RangeTable) bool {
	words, dense := 0, 0
	for _, tok := range tokens(s) {
		if neutral(tok) {
			continue
		}
		words++
		for _, c := range tok {
			if !unicode.IsLetter(c) {
				continue
			}
			if len(target) > 0 && !unicode.In(c, target...) {
				return true // a letter the target's script does not have
			}
			if unicode.In(c, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar) {
				dense++
			}
		}
	}
	return words >= 2 || dense >= 2
}

// tokens splits s into words at white space and punctuation, leaving out placeholders
// ({x}, {{x}}, <tag>, %s-style verbs), URLs and e-mail addresses.
func tokens(s string) []string {
	var out []string
	for _, f := range strings.Fields(s) {
		if strings.Contains(f, "://") || strings.Contains(f, "@") || strings.HasPrefix(f, "www.") {
			continue
		}
		f = stripMarkup(f)
		out = append(out, strings.FieldsFunc(f, func(c rune) bool {
			return !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '-' && c != '_'
		})...)
	}
	return out
}

// stripMarkup blanks out {..}, <..> and %-verbs (%s, %d, %1$s, %.2f).
func stripMarkup(f string) string {
	b := []byte(f)
	depth := 0
	for i := 0; i < len(b); i++ {
		switch ch := b[i]; {
		case ch == '{' || ch == '<':
			depth++
			b[i] = ' '
		case ch == '}' || ch == '>':
			depth = max(depth-1, 0)
			b[i] = ' '
		case depth > 0:
			b[i] = ' '
		case ch == '%':
			i = blankVerb(b, i)
		}
	}
	return string(b)
}

// blankVerb blanks the printf verb starting at b[i] ('%') and returns its last index.
func blankVerb(b []byte, i int) int {
	b[i] = ' '
	for i+1 < len(b) && (b[i+1] == '$' || b[i+1] == '.' || b[i+1] >= '0' && b[i+1] <= '9') {
		i++
		b[i] = ' '
	}
	if i+1 < len(b) && (b[i+1] >= 'a' && b[i+1] <= 'z' || b[i+1] >= 'A' && b[i+1] <= 'Z') {
		i++
		b[i] = ' '
	}
	return i
}

// neutral reports whether a word reads the same in every language: it has a digit, an
// upper-case letter after a lower-case one (iPhone, eBay), is all capitals (an acronym), or
// has no letters.
func neutral(tok string) bool {
	letters, upper := 0, 0
	prevLower := false
	for _, c := range tok {
		switch {
		case unicode.IsDigit(c):
			return true
		case unicode.IsUpper(c):
			if prevLower {
				return true
			}
			upper++
			letters++
		case unicode.IsLetter(c):
			letters++
			prevLower = unicode.IsLower(c)
			continue
		}
		prevLower = false
	}
	return letters == 0 || (upper == letters && letters > 1)
}

// Scripts are the scripts a language writes in, by ISO 15924 code.
var Scripts = map[string][]*unicode.RangeTable{
	"Latn": {unicode.Latin}, "Cyrl": {unicode.Cyrillic}, "Grek": {unicode.Greek},
	"Arab": {unicode.Arabic}, "Hebr": {unicode.Hebrew}, "Deva": {unicode.Devanagari},
	"Thai": {unicode.Thai}, "Hang": {unicode.Hangul}, "Hans": {unicode.Han}, "Hant": {unicode.Han},
	"Jpan": {unicode.Han, unicode.Hiragana, unicode.Katakana}, "Kore": {unicode.Hangul, unicode.Han},
}

// Same reports whether got is src but for white space: the same characters in the same
// order, where any run of white space matches any other (a model that joins lines or
// collapses double spaces sends the text back all the same), and space at either end is
// ignored. It allocates nothing, and a translation that differs from the first character
// costs one comparison.
func Same(src, got string) bool {
	src, got = strings.TrimSpace(src), strings.TrimSpace(got)
	if src == got {
		return true
	}
	for src != "" && got != "" {
		rs, ns := utf8.DecodeRuneInString(src)
		rg, ng := utf8.DecodeRuneInString(got)
		spaceS, spaceG := unicode.IsSpace(rs), unicode.IsSpace(rg)
		switch {
		case spaceS && spaceG:
			src, got = strings.TrimLeftFunc(src, unicode.IsSpace), strings.TrimLeftFunc(got, unicode.IsSpace)
		case spaceS || spaceG || rs != rg:
			return false
		default:
			src, got = src[ns:], got[ng:]
		}
	}
	return src == "" && got == ""
}
