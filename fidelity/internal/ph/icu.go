package ph

import (
	"strings"

	"github.com/fanyi-go/translate/fidelity/internal/mask"
)

// maxArg bounds an ICU argument, in bytes.
const maxArg = 4096

// icu parses one ICU argument of s starting at a '{'.
type icu struct {
	s      string
	depth  int
	plural bool     // the argument is a plural or selectordinal
	msgs   [][2]int // the messages of a plural or select: their text is s[m[0]:m[1]]
}

// argument returns the end of the ICU argument at s[i] == '{' and whether it is a plural
// or select, or -1.
func argument(s string, i, depth int) (int, bool) {
	p := icu{s: s[:min(len(s), i+maxArg)], depth: depth}
	end := p.arg(i)
	return end, end > 0 && p.msgs != nil
}

// emitComplex masks a plural or select argument: its head, separators and end become one
// structure of tokens, and its messages are masked again as text.
//
// plural is the group of the innermost plural around arg, 0 for none; the '#' of the
// messages belongs to it.
func (sc Scanner) emitComplex(arg string, bd *mask.Builder, plural, depth int) {
	p := icu{s: arg, depth: depth}
	p.arg(0)
	g := 0
	last := 0
	for k, m := range p.msgs {
		if k == 0 {
			g = bd.Open(arg[:m[0]], arg[:m[0]], mask.Placeholder)
			if p.plural {
				plural = g
			}
		} else {
			bd.Mid(arg[last:m[0]], arg[last:m[0]], mask.Placeholder, g)
		}
		sc.mask(arg[m[0]:m[1]], bd, plural, depth+1)
		last = m[1]
	}
	bd.Close(arg[last:], arg[last:], mask.Placeholder, g)
}

func (p *icu) space(i int) int {
	for i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[i]) >= 0 {
		i++
	}
	return i
}

// word returns the end of a run of name bytes at i; dashes and dots only after the first.
func (p *icu) word(i int, extra string) int {
	j := i
	for j < len(p.s) {
		c := p.s[j]
		if !(isASCIILetter(c) || '0' <= c && c <= '9' || c == '_' || c >= 0x80 ||
			j > i && strings.IndexByte(extra, c) >= 0) {
			break
		}
		j++
	}
	return j
}

// arg parses {name}, {name, type}, {name, type, style} or a plural or select at i and
// returns its end, or -1.
func (p *icu) arg(i int) int {
	if i >= len(p.s) || p.s[i] != '{' || p.depth >= maxDepth {
		return -1
	}
	j := p.space(i + 1)
	k := p.word(j, ".-")
	if k == j {
		return -1
	}
	j = p.space(k)
	if j < len(p.s) && p.s[j] == '}' {
		return j + 1
	}
	if j >= len(p.s) || p.s[j] != ',' {
		return -1
	}
	return p.typed(p.space(j + 1))
}

// typed parses the "type}", "type, style}" or "plural|select, options}" rest of an
// argument at i and returns its end, or -1.
func (p *icu) typed(j int) int {
	k := p.word(j, "")
	typ := p.s[j:k]
	if k == j {
		return -1
	}
	j = p.space(k)
	switch {
	case j < len(p.s) && p.s[j] == '}':
		return j + 1
	case j >= len(p.s) || p.s[j] != ',':
		return -1
	case typ == "plural" || typ == "selectordinal" || typ == "select":
		p.plural = typ != "select"
		return p.options(j + 1)
	}
	end := strings.IndexAny(p.s[j+1:], "{}")
	if end < 0 || p.s[j+1+end] != '}' {
		return -1
	}
	return j + 1 + end + 1
}

// options parses "[offset:N] key {message} ... }" at i and returns its end, or -1.
func (p *icu) options(i int) int {
	j := p.space(i)
	if strings.HasPrefix(p.s[j:], "offset:") {
		j = p.space(j + len("offset:"))
		k := j
		for k < len(p.s) && '0' <= p.s[k] && p.s[k] <= '9' {
			k++
		}
		if k == j {
			return -1
		}
		j = p.space(k)
	}
	n := 0
	for {
		if j < len(p.s) && p.s[j] == '}' && n > 0 {
			return j + 1
		}
		k := p.word(j, "=-")
		if k == j && j < len(p.s) && p.s[j] == '=' {
			k = p.word(j+1, "")
		}
		if k == j {
			return -1
		}
		j = p.space(k)
		end := p.message(j)
		if end < 0 {
			return -1
		}
		n++
		j = p.space(end)
	}
}

// message parses "{text}" at i, text holding nested arguments, and returns its end, or -1.
func (p *icu) message(i int) int {
	if i >= len(p.s) || p.s[i] != '{' {
		return -1
	}
	for j := i + 1; j < len(p.s); {
		switch p.s[j] {
		case '}':
			p.msgs = append(p.msgs, [2]int{i + 1, j})
			return j + 1
		case '{':
			q := icu{s: p.s, depth: p.depth + 1}
			end := q.arg(j)
			if end < 0 {
				return -1
			}
			j = end
		default:
			j++
		}
	}
	return -1
}
