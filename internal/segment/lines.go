package segment

import (
	"strings"
	"unicode/utf8"
)

// Lines cuts a document into each line, each cut further into parts of at most max code
// points (Split). Blank lines give no part. Prefix + Parts[0] + Seps[0] + ... is text.
func Lines(text string, max int) Segments {
	var doc Segments
	space := func(ws string) {
		if n := len(doc.Seps); n > 0 {
			doc.Seps[n-1] += ws
		} else {
			doc.Prefix += ws
		}
	}
	for rest := text; rest != ""; {
		line, tail, found := strings.Cut(rest, "\n")
		s := Split(line, max)
		space(s.Prefix)
		doc.Parts = append(doc.Parts, s.Parts...)
		doc.Seps = append(doc.Seps, s.Seps...)
		if found {
			space("\n")
		}
		rest = tail
	}
	return doc
}

// SplitFrom splits the parts from index next on that are longer than max code points
// (Split), keeping the parts before next, and the text Join gives, as they are. max <= 0
// splits nothing.
func (s *Segments) SplitFrom(next, max int) {
	if max <= 0 {
		return
	}
	var parts, seps []string
	changed := false
	for i := next; i < len(s.Parts); i++ {
		p := s.Parts[i]
		sub := Segments{}
		if utf8.RuneCountInString(p) > max {
			sub = Split(p, max)
		}
		if len(sub.Parts) == 0 {
			parts, seps = append(parts, p), append(seps, s.Seps[i])
			continue
		}
		changed = true
		s.addPrefix(next, sub.Prefix, len(parts) > 0, seps)
		parts = append(parts, sub.Parts...)
		seps = append(seps, sub.Seps...)
		seps[len(seps)-1] += s.Seps[i]
	}
	if changed {
		s.Parts = append(s.Parts[:next:next], parts...)
		s.Seps = append(s.Seps[:next:next], seps...)
	}
}

// addPrefix keeps the white space before a re-split part: it joins the separator before it.
func (s *Segments) addPrefix(next int, prefix string, inNew bool, seps []string) {
	switch {
	case prefix == "":
	case inNew:
		seps[len(seps)-1] += prefix
	case next > 0:
		s.Seps[next-1] += prefix
	default:
		s.Prefix += prefix
	}
}
