package microsoft

import (
	"html"
	"strings"
	"unicode/utf8"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity/glossary"
)

// textType is the textType query value for a request's format: "Html" for FormatHTML,
// "Plain" for FormatText. Microsoft takes no XML (ok is false).
func textType(f translate.Format) (tt string, ok bool) {
	switch f {
	case translate.FormatText:
		return "Plain", true
	case translate.FormatHTML:
		return "Html", true
	}
	return "", false
}

// Microsoft's dynamic-dictionary markup around a source term.
const (
	dictOpen  = `<mstrans:dictionary translation="`
	dictMid   = `">`
	dictClose = `</mstrans:dictionary>`
)

// withDictionary returns texts with every glossary term found in them wrapped in the
// dynamic-dictionary markup, so that the service translates it as the term's target. In
// HTML (markup true) only the text between tags is searched, never a tag, attribute or
// comment, and the target is HTML-escaped in the attribute. In plain text, where Microsoft
// documents no escaping, a term whose source or target holds <, >, & or a double quote is
// left as it is. A text the markup would take over maxChars is sent as it is. The Client
// checks every term on the way back whatever happened here.
func withDictionary(g *glossary.Glossary, texts []string, markup bool) []string {
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = t
		if t == "" {
			continue
		}
		if w := wrapTerms(g, t, markup); utf8.RuneCountInString(w) <= maxChars {
			out[i] = w
		}
	}
	return out
}

// wrapTerms wraps the terms found in text (see withDictionary).
func wrapTerms(g *glossary.Glossary, text string, markup bool) string {
	var b strings.Builder
	last := 0
	for _, run := range textRuns(text, markup) {
		for _, m := range g.Find(text[run[0]:run[1]]) {
			start, end := run[0]+m.Start, run[0]+m.End
			target := m.Term.Target
			if markup {
				target = html.EscapeString(target)
			} else if strings.ContainsAny(text[start:end], `<>&"`) || strings.ContainsAny(target, `<>&"`) {
				continue
			}
			b.WriteString(text[last:start])
			b.WriteString(dictOpen)
			b.WriteString(target)
			b.WriteString(dictMid)
			b.WriteString(text[start:end])
			b.WriteString(dictClose)
			last = end
		}
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// textRuns returns the [start, end) byte ranges of text that are text: all of it in plain
// text; in HTML, what lies between tags, comments, declarations and processing
// instructions (a tag ends at the first '>' outside a quoted attribute value).
func textRuns(text string, markup bool) [][2]int {
	if !markup {
		return [][2]int{{0, len(text)}}
	}
	var runs [][2]int
	start := 0
	for i := 0; i < len(text); {
		if text[i] != '<' {
			i++
			continue
		}
		end := markupEnd(text, i)
		if end < 0 { // a lone '<' is text
			i++
			continue
		}
		if i > start {
			runs = append(runs, [2]int{start, i})
		}
		start, i = end, end
	}
	if start < len(text) {
		runs = append(runs, [2]int{start, len(text)})
	}
	return runs
}

// markupEnd returns the index just after the tag, comment or declaration that starts at
// text[i] == '<', or -1 when what follows '<' does not start one or it never ends.
func markupEnd(text string, i int) int {
	rest := text[i:]
	if strings.HasPrefix(rest, "<!--") {
		if j := strings.Index(rest[4:], "-->"); j >= 0 {
			return i + 4 + j + 3
		}
		return -1
	}
	if len(rest) < 2 || !opensTag(rest[1]) {
		return -1
	}
	if j := tagEnd(rest); j >= 0 {
		return i + j
	}
	return -1
}

// opensTag reports whether c, after '<', starts a tag, declaration or processing
// instruction.
func opensTag(c byte) bool {
	return c == '/' || c == '!' || c == '?' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// tagEnd returns the index just after the '>' that ends the tag at the start of rest (the
// first one outside a quoted attribute value), or -1.
func tagEnd(rest string) int {
	var quote byte
	for j := 1; j < len(rest); j++ {
		switch ch := rest[j]; {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == '>':
			return j + 1
		}
	}
	return -1
}
