// Package segment splits a long text into parts an engine with a per-call limit
// (Profile.MaxChars) accepts, and stitches the translated parts back together with the
// original whitespace. The functions are pure and safe for concurrent use.
package segment

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Segments is a text cut into parts. Prefix + Parts[0] + Seps[0] + Parts[1] + Seps[1] + ...
// is the original text: Prefix is its leading whitespace and Seps[i] the whitespace after
// Parts[i] (often ""), so no part is empty or has leading or trailing whitespace. The zero
// value is the empty text.
type Segments struct {
	Prefix string
	Parts  []string
	Seps   []string // len(Seps) == len(Parts)
}

// Split cuts text into parts of at most max code points; max <= 0 means no limit. Each
// part is as long as possible, and cut at the best break in reach, preferring, in order:
//
//  1. paragraph breaks: whitespace holding a blank line (two newlines), then whitespace
//     holding one newline;
//  2. sentence ends: . ! ? … followed by whitespace, and the CJK 。！？；．｡ with or without
//     whitespace after, each with any closing quotes or brackets that follow;
//  3. clause marks: , ; : followed by whitespace, and the CJK ，、：；
//  4. whitespace;
//  5. a hard cut on a rune boundary, moved back so as not to separate a combining mark,
//     emoji modifier or zero-width joiner from what precedes it, and not to cut inside a
//     {placeholder} or <tag>, when the part can still be non-empty.
//
// Breaks inside a {placeholder} or <tag> are not used at any level. A text of at most max code
// points gives one part; a text that is all whitespace gives no parts (Prefix = text).
// Invalid UTF-8 bytes count as one code point each and are never split.
func Split(text string, max int) Segments {
	start := 0
	for start < len(text) {
		r, size := utf8.DecodeRuneInString(text[start:])
		if !unicode.IsSpace(r) {
			break
		}
		start += size
	}
	if start == len(text) {
		return Segments{Prefix: text}
	}
	end := len(text) // after the last non-space rune
	for {
		r, size := utf8.DecodeLastRuneInString(text[:end])
		if !unicode.IsSpace(r) {
			break
		}
		end -= size
	}
	s := Segments{Prefix: text[:start]}
	pos := start
	for {
		window, fits := advance(text, pos, end, max)
		if fits {
			s.Parts = append(s.Parts, text[pos:end])
			s.Seps = append(s.Seps, text[end:])
			return s
		}
		c := cut(text, pos, window)
		partEnd := c
		for {
			r, size := utf8.DecodeLastRuneInString(text[:partEnd])
			if !unicode.IsSpace(r) {
				break
			}
			partEnd -= size
		}
		next := skipSpace(text, c)
		s.Parts = append(s.Parts, text[pos:partEnd])
		s.Seps = append(s.Seps, text[partEnd:next])
		pos = next
	}
}

// advance returns the byte index max code points after pos, or end and true when
// text[pos:end] has at most max code points.
func advance(text string, pos, end, max int) (int, bool) {
	if max <= 0 {
		return end, true
	}
	i := pos
	for n := 0; n < max; n++ {
		if i >= end {
			return end, true
		}
		if text[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	return i, i >= end
}

// skipSpace returns the index of the first non-space rune at or after i.
func skipSpace(text string, i int) int {
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += size
	}
	return i
}

// Break levels, best first.
const (
	levelBlank = iota // white space holding a blank line
	levelParagraph
	levelSentence
	levelClause
	levelSpace
	levels
)

// cut returns where the part starting at pos (a non-space rune) ends: a byte index in
// (pos, window], window being the index max code points after pos. It is the best break in
// reach, or else a hard cut.
func cut(text string, pos, window int) int {
	best, sp := breaks(text, pos, window)
	for _, c := range best {
		if c > pos {
			return c
		}
	}
	return hardCut(text, pos, window, sp)
}

// span is the byte range of a {placeholder} or <tag>: no break is taken inside it.
type span struct{ start, end int }

// holds reports whether a break at c would fall inside the span.
func (sp span) holds(c int) bool { return sp.start < c && c < sp.end }

// breaks scans the part starting at pos and returns the latest break at each level (0 when
// there is none: a break is always > pos) and the last span it met. Breaks end at most at
// window, and a space right at window still counts: it ends a part of max code points.
func breaks(text string, pos, window int) (best [levels]int, sp span) {
	sp = span{-1, -1}
	for i := pos; i < window || i == window && followedBySpace(text, i); {
		if isASCIIAlnum(text[i]) {
			i++ // fast path: ASCII letters and digits never break
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if i >= sp.end && (r == '{' || r == '<') {
			if e := spanAt(text, i); e > 0 {
				sp = span{i, e}
			}
		}
		if unicode.IsSpace(r) {
			end, level := spaceRun(text, i)
			if !sp.holds(i) {
				best[level] = i
			}
			i = end
			continue
		}
		if isBreakMark(r) {
			if j, level := markBreak(text, i, r, size, window); j > 0 && !sp.holds(j) {
				best[level] = j
			}
		}
		i += size
	}
	return best, sp
}

// spaceRun returns the end of the white space starting at text[i] and its break level.
func spaceRun(text string, i int) (end, level int) {
	newlines := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsSpace(r) {
			break
		}
		if r == '\n' {
			newlines++
		}
		i += size
	}
	return i, spaceLevel(newlines)
}

// markBreak returns the break after the sentence or clause mark r at text[i] and its level,
// or 0 when there is none in reach of window: a Latin mark needs white space after it and
// its closers, a CJK mark does not.
func markBreak(text string, i int, r rune, size, window int) (j, level int) {
	if isLatinStop(r) || isCJKStop(r) {
		j, cjk := afterPunct(text, i)
		if j <= window && (cjk || followedBySpace(text, j)) {
			return j, levelSentence
		}
		return 0, 0
	}
	j = afterClosers(text, i+size)
	if j <= window && (isCJKClause(r) || followedBySpace(text, j)) {
		return j, levelClause
	}
	return 0, 0
}

// hardCut returns where a part with no break in reach ends: at window, or at the start of
// the span window falls in, moved back so as not to separate a rune from the one before it
// in the same character, unless that leaves the part empty.
func hardCut(text string, pos, window int, sp span) int {
	c := window
	if sp.holds(c) && sp.start > pos {
		c = sp.start
	}
	hard := c
	for c > pos && joinsPrevious(text, c) {
		_, size := utf8.DecodeLastRuneInString(text[:c])
		c -= size
	}
	if c == pos {
		return hard
	}
	return c
}

// isASCIIAlnum reports whether c is an ASCII letter or digit.
func isASCIIAlnum(c byte) bool {
	b := c | 0x20
	return 'a' <= b && b <= 'z' || '0' <= c && c <= '9'
}

// isBreakMark reports whether r is a sentence or clause mark: isLatinStop, isCJKStop,
// isLatinClause or isCJKClause, in one switch.
func isBreakMark(r rune) bool {
	switch r {
	case '.', '!', '?', '…', '。', '！', '？', '；', '．', '｡', ',', ';', ':', '，', '、', '：', '､':
		return true
	}
	return false
}

// spaceLevel is the break level of white space holding n newlines.
func spaceLevel(n int) int {
	switch {
	case n >= 2:
		return levelBlank
	case n == 1:
		return levelParagraph
	}
	return levelSpace
}

// afterPunct returns the index after the run of sentence punctuation and closers starting at
// i, and whether the run holds a CJK stop.
func afterPunct(text string, i int) (int, bool) {
	cjk := false
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isCJKStop(r):
			cjk = true
		case isLatinStop(r) || isCloser(r):
		default:
			return i, cjk
		}
		i += size
	}
	return i, cjk
}

// afterClosers returns the index after the closing quotes and brackets at i.
func afterClosers(text string, i int) int {
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isCloser(r) {
			break
		}
		i += size
	}
	return i
}

func followedBySpace(text string, j int) bool {
	r, _ := utf8.DecodeRuneInString(text[j:])
	return j < len(text) && unicode.IsSpace(r)
}

func isLatinStop(r rune) bool { return r == '.' || r == '!' || r == '?' || r == '…' }

func isCJKStop(r rune) bool {
	return r == '。' || r == '！' || r == '？' || r == '；' || r == '．' || r == '｡'
}

func isLatinClause(r rune) bool { return r == ',' || r == ';' || r == ':' }

func isCJKClause(r rune) bool { return r == '，' || r == '、' || r == '：' || r == '､' }

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '”', '’', '»', '›', '」', '』', '）', '】', '〉', '》', '〕', '］', '〗':
		return true
	}
	return false
}

// joinsPrevious reports whether cutting text at c would separate a rune from the one before
// it in the same user-perceived character: a combining mark, emoji modifier, variation
// selector or tag at c, or either side of a zero-width joiner.
func joinsPrevious(text string, c int) bool {
	r, _ := utf8.DecodeRuneInString(text[c:])
	prev, _ := utf8.DecodeLastRuneInString(text[:c])
	switch {
	case prev == '\u200d', r == '\u200d':
		return true
	case 0x1F3FB <= r && r <= 0x1F3FF: // emoji skin-tone modifiers
		return true
	case 0xE0020 <= r && r <= 0xE007F: // emoji tag sequences
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc)
}

// spanAt returns the index after the {placeholder}, {{placeholder}} or <tag> starting at
// text[i], or -1 if none starts there.
func spanAt(text string, i int) int {
	switch text[i] {
	case '{':
		return braceEnd(text, i)
	case '<':
		return tagEnd(text, i)
	}
	return -1
}

// braceEnd returns the index after the {{placeholder}} or {placeholder} at text[i] == '{',
// or -1: it closes within 64 bytes, holds no '{' or newline, and {} does not count.
func braceEnd(text string, i int) int {
	limit := min(len(text), i+64)
	if i+1 < len(text) && text[i+1] == '{' {
		if k := strings.Index(text[i+2:limit], "}}"); k >= 0 && !strings.ContainsAny(text[i+2:i+2+k], "{\n") {
			return i + 2 + k + 2
		}
		return -1
	}
	if k := strings.IndexByte(text[i+1:limit], '}'); k > 0 && !strings.ContainsAny(text[i+1:i+1+k], "{\n") {
		return i + 1 + k + 1
	}
	return -1
}

// tagEnd returns the index after the <tag> at text[i] == '<', or -1: a letter, '/' or '!'
// follows the '<', and the tag closes within 512 bytes with no '<' or newline inside.
func tagEnd(text string, i int) int {
	if i+1 >= len(text) {
		return -1
	}
	if c := text[i+1] | 0x20; !('a' <= c && c <= 'z') && text[i+1] != '/' && text[i+1] != '!' {
		return -1
	}
	limit := min(len(text), i+512)
	if k := strings.IndexByte(text[i+1:limit], '>'); k >= 0 && !strings.ContainsAny(text[i+1:i+1+k], "<\n") {
		return i + 1 + k + 1
	}
	return -1
}

// Join returns the text with each part replaced by the corresponding element of parts (its
// translation), keeping the Prefix and separators. It returns an error when len(parts)
// differs from len(s.Parts) or s is malformed (len(s.Seps) != len(s.Parts)).
func (s Segments) Join(parts []string) (string, error) {
	if len(parts) != len(s.Parts) {
		return "", fmt.Errorf("segment: join: got %d parts, want %d", len(parts), len(s.Parts))
	}
	if len(s.Seps) != len(s.Parts) {
		return "", fmt.Errorf("segment: join: malformed segments: %d parts, %d separators", len(s.Parts), len(s.Seps))
	}
	n := len(s.Prefix)
	for i, p := range parts {
		n += len(p) + len(s.Seps[i])
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(s.Prefix)
	for i, p := range parts {
		b.WriteString(p)
		b.WriteString(s.Seps[i])
	}
	return b.String(), nil
}

// Lead is the white space before part i that belongs with it: Prefix for the first part,
// "" for the others.
func (s *Segments) Lead(i int) string {
	if i == 0 {
		return s.Prefix
	}
	return ""
}

// Around is text, the translation of part i, with the source's white space around part i:
// Lead(i) before it and Seps[i] after it. Around(0, t0) + Around(1, t1) + ... is the
// translated text.
func (s *Segments) Around(i int, text string) string {
	return s.Lead(i) + text + s.Seps[i]
}
