package markup

import (
	"encoding/xml"
	"errors"
	"io"
	"slices"
	"strings"
)

var (
	textEscaper     = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	attrEscaper     = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")
	unquotedEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;",
		" ", "&#32;", "\t", "&#9;", "\n", "&#10;", "\r", "&#13;", "\f", "&#12;", "=", "&#61;", "`", "&#96;")
)

// EscapeText escapes the characters character data cannot hold as they are.
func EscapeText(s string) string { return textEscaper.Replace(s) }

// EscapeAttr escapes the characters a quoted attribute value cannot hold as they are.
func EscapeAttr(s string) string { return attrEscaper.Replace(s) }

// Escaper returns the escaper of an attribute value quoted with quote ('"', '\” or 0
// for none), or of character data for '<'.
func Escaper(quote byte) func(string) string {
	switch quote {
	case '<':
		return EscapeText
	case 0:
		return unquotedEscaper.Replace
	}
	return EscapeAttr
}

// specials returns the characters Escaper(quote) escapes, which the source's own copies
// of are masked so that they come back as written.
func specials(quote byte) string {
	switch quote {
	case '<':
		return "&<>"
	case 0:
		return "&<>\"'=` \t\n\r\f"
	}
	return "&<>\"'"
}

// WellFormed reports whether doc is well-formed. XML: encoding/xml in strict mode reads
// it to the end (a fragment may have several roots, text at the top, and only the five
// predefined entities). HTML: every start tag but a void element's is closed by its end
// tag, nested, with no end tag left over.
func WellFormed(doc string, html bool) bool {
	if !html {
		return xmlWellFormed(doc)
	}
	var stack []string
	for _, p := range Tokenize(doc, true) {
		switch {
		case p.Kind == Start && !voids[strings.ToLower(p.Name)]:
			stack = append(stack, strings.ToLower(p.Name))
		case p.Kind == End:
			n := len(stack)
			if n == 0 || stack[n-1] != strings.ToLower(p.Name) {
				return false
			}
			stack = stack[:n-1]
		}
	}
	return len(stack) == 0
}

func xmlWellFormed(doc string) bool {
	d := xml.NewDecoder(strings.NewReader(doc))
	d.Strict = true
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// Tags returns the labels of doc's tags in order ("<b>", "</b>", "<br/>"; an HTML void
// element is written "<br/>" either way), for comparing the tags of two documents.
func Tags(doc string, html bool) []string { return TagsWithAttrs(doc, html, nil) }

// TagsWithAttrs is Tags with the attributes of each start or self-closing tag in its
// label, sorted by name, except those isText accepts (values translated for people, such
// as alt and title): `<a class="x" href="/p">`. A changed href, class or id then shows as
// another tag. Values are compared as written (entities not decoded). A nil isText leaves
// every attribute out, as Tags does.
func TagsWithAttrs(doc string, html bool, isText func(name string) bool) []string {
	var out []string
	for _, p := range Tokenize(doc, html) {
		switch p.Kind {
		case Start:
			if html && voids[strings.ToLower(p.Name)] {
				p.Kind = SelfClose
			}
			fallthrough
		case End, SelfClose:
			out = append(out, withAttrs(doc, p, isText))
		}
	}
	return out
}

// withAttrs is p's label with its attributes but the text ones, when isText is set.
func withAttrs(doc string, p Piece, isText func(string) bool) string {
	l := label(p)
	if isText == nil || len(p.Attrs) == 0 {
		return l
	}
	var attrs []string
	for _, a := range p.Attrs {
		if isText(a.Name) {
			continue
		}
		kv := strings.ToLower(a.Name)
		if a.Val[0] >= 0 {
			kv += `="` + doc[a.Val[0]:a.Val[1]] + `"`
		}
		attrs = append(attrs, kv)
	}
	if len(attrs) == 0 {
		return l
	}
	slices.Sort(attrs)
	end := len(l) - 1 // before ">"
	if p.Kind == SelfClose {
		end-- // before "/>"
	}
	return l[:end] + " " + strings.Join(attrs, " ") + l[end:]
}
