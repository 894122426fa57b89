// Package runes measures and cuts text by code points, the standard characters quotas and
// costs are counted in, with fast paths for ASCII text.
package runes

import (
	"encoding/binary"
	"strings"
	"unicode/utf8"
)

// Scan counts the code points of s and reports whether it is blank (empty or white space
// only) and valid UTF-8, in one pass for ASCII text.
func Scan(s string) (chars int, blank, valid bool) {
	i := 0
	for ; i+8 <= len(s); i += 8 { // eight bytes at a time while they are ASCII
		if binary.LittleEndian.Uint64([]byte(s[i:i+8]))&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.RuneCountInString(s), strings.TrimSpace(s) == "", utf8.ValidString(s)
		}
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; b != ' ' && (b < '\t' || b > '\r') {
			return len(s), false, true
		}
	}
	return len(s), true, true
}

// Count counts the code points of s.
func Count(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.RuneCountInString(s)
		}
	}
	return len(s)
}

// Longest returns the longest of ss in bytes (the first of equals), or "" for none.
func Longest(ss []string) string {
	l := ""
	for _, s := range ss {
		if len(s) > len(l) {
			l = s
		}
	}
	return l
}

// Cap returns s when it has at most n bytes, or else s cut to at most n bytes on a code
// point boundary, with "..." after it.
func Cap(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// Fit returns how many of the first parts go in one call of at most maxTexts parts and
// maxChars code points in all (no character limit when maxChars <= 0): at least one when
// parts has any, however long it is. It inlines: one part, or no character limit, costs
// no call.
func Fit(parts []string, maxTexts, maxChars int) int {
	if maxChars > 0 && len(parts) > 1 {
		return fitChars(parts, maxTexts, maxChars)
	}
	return min(len(parts), maxTexts)
}

// fitChars is Fit for two parts or more under a character limit. It is kept out of line
// so that Fit stays under the inlining budget.
//
//go:noinline
func fitChars(parts []string, maxTexts, maxChars int) int {
	n := min(len(parts), maxTexts)
	sum := 0
	for k, p := range parts[:n] {
		if sum += Count(p); sum > maxChars && k > 0 {
			return k
		}
	}
	return n
}
