package mask

import "strings"

// Problems lists what kept an output from being restored: tokens that are missing,
// tokens that came back more than once (Extra, their indexes, once each), and the number of
// tokens whose index the table does not have. The zero value means none.
type Problems struct {
	Lost    []int
	Extra   []int
	Unknown int
}

// OK reports whether there is no problem.
func (p Problems) OK() bool { return len(p.Lost) == 0 && len(p.Extra) == 0 && p.Unknown == 0 }

// Restore puts the masked parts back into an engine's output. Text between tokens goes
// through escape (nil means as is); attrs are the restored attribute texts Slots refer to.
// Every token must come back exactly once, else Restore returns the problems and no text.
// The structure is repaired as the package documentation says.
func (tb *Table) Restore(out string, attrs []string, escape func(string) string) (string, Problems) {
	found := Scan(out)
	if p := tb.check(found); !p.OK() {
		return "", p
	}
	tb.repair(found)
	var b strings.Builder
	b.Grow(len(out) + 16*len(found))
	last := 0
	for _, f := range found {
		writeText(&b, out[last:f.Start], escape)
		tb.Toks[f.Index].write(&b, attrs)
		last = f.End
	}
	writeText(&b, out[last:], escape)
	return b.String(), Problems{}
}

func writeText(b *strings.Builder, s string, escape func(string) string) {
	if escape != nil {
		s = escape(s)
	}
	b.WriteString(s)
}

// write writes the token's original text, with its translated attributes.
func (t *Token) write(b *strings.Builder, attrs []string) {
	if len(t.Slots) == 0 {
		b.WriteString(t.Orig)
		return
	}
	for i, s := range t.Slots {
		b.WriteString(t.Parts[i])
		if s >= 0 && s < len(attrs) {
			b.WriteString(attrs[s])
		}
	}
	b.WriteString(t.Parts[len(t.Slots)])
}

// check counts the tokens found against the table.
func (tb *Table) check(found []Found) Problems {
	var p Problems
	seen := make([]uint8, len(tb.Toks))
	for _, f := range found {
		if f.Index >= len(tb.Toks) {
			p.Unknown++
			continue
		}
		if seen[f.Index] == 1 {
			p.Extra = append(p.Extra, f.Index)
		}
		if seen[f.Index] < 2 {
			seen[f.Index]++
		}
	}
	for i, n := range seen {
		if n == 0 {
			p.Lost = append(p.Lost, i)
		}
	}
	return p
}

// repair keeps the engine's order of the structural tokens in found when it nests, and
// otherwise puts them in source order at the same places. found holds each token once.
func (tb *Table) repair(found []Found) {
	if tb.groups == 0 || tb.nests(found) {
		return
	}
	var src []int // structural tokens in source (index) order
	for i, t := range tb.Toks {
		if t.structural() {
			src = append(src, i)
		}
	}
	k := 0
	for i := range found {
		if tb.Toks[found[i].Index].structural() {
			found[i].Index = src[k]
			k++
		}
	}
}

// structural reports whether the token takes part in a structure: an Open, Mid or Close
// token, or an atom bound to a group.
func (t *Token) structural() bool { return t.Role != Atom || t.Group != 0 }

// nests reports whether the structural tokens of found nest: each group opens, has its
// Mid tokens in source order while it is the innermost open group, and closes; a bound
// atom comes while its group is open.
func (tb *Table) nests(found []Found) bool {
	var stack []int
	last := make(map[int]int, tb.groups)
	open := make(map[int]bool, tb.groups)
	for _, f := range found {
		t := tb.Toks[f.Index]
		if t.Role == Atom {
			if t.Group != 0 && !open[t.Group] {
				return false
			}
			continue
		}
		if prev, ok := last[t.Group]; ok && prev > f.Index {
			return false
		}
		last[t.Group] = f.Index
		switch t.Role {
		case Open:
			stack = append(stack, t.Group)
			open[t.Group] = true
		case Mid, Close:
			if len(stack) == 0 || stack[len(stack)-1] != t.Group {
				return false
			}
			if t.Role == Close {
				stack = stack[:len(stack)-1]
				open[t.Group] = false
			}
		}
	}
	return len(stack) == 0
}
