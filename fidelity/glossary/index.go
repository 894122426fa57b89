package glossary

import (
	"cmp"
	"slices"
	"unicode"
	"unicode/utf8"
)

// index is a trie over the runes of some terms' sources: the terms that start at a place
// of a text are found by walking the text once from there, whatever the number of terms,
// so finding them all costs the text's length times at most the longest term's runes.
//
// A fold index keys a rune by its case-folding orbit (strings.EqualFold's rule), an exact
// index by the rune itself. The first rune is keyed by its lower case too, as matching
// always did: "ſun" and "Sun" fold alike but start differently. A branch that leads to
// one term only is not built: its node keeps the term and the rest is compared rune by
// rune, which keeps the trie near the size of the branching points, not of the terms.
type index struct {
	exact bool
	terms []Term
	root  map[rootKey]int32
	nodes []node
	edges []edge // each node's children, sorted by key, contiguous
}

type rootKey struct{ lower, key rune }

type node struct {
	edges, nEdges int32 // edges[edges : edges+nEdges]
	term          int32 // the term that ends here, or -1
	tail          int32 // the only term below, or -1; its runes from byte tailAt on are compared
	tailAt        int32
}

type edge struct {
	key  rune
	node int32
}

// indexed is a term as the index sorts it.
type indexed struct {
	term int32
	root rootKey
	keys []rune // the key of every rune, the first included
}

// newIndex returns an index of the terms whose positions are given, in order.
func newIndex(terms []Term, which []int, exact bool) *index {
	x := &index{exact: exact, terms: terms, root: make(map[rootKey]int32)}
	list := make([]indexed, len(which))
	for n, k := range which {
		list[n] = indexed{term: int32(k), keys: x.keys(terms[k].Source)}
		r, _ := utf8.DecodeRuneInString(terms[k].Source)
		list[n].root = rootKey{unicode.ToLower(r), list[n].keys[0]}
	}
	slices.SortStableFunc(list, func(a, b indexed) int {
		return cmp.Or(cmp.Compare(a.root.lower, b.root.lower), slices.Compare(a.keys, b.keys))
	})
	for lo := 0; lo < len(list); {
		hi := lo + 1
		for hi < len(list) && list[hi].root == list[lo].root {
			hi++
		}
		x.root[list[lo].root] = x.build(list[lo:hi], 1)
		lo = hi
	}
	return x
}

func (x *index) keys(s string) []rune {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		out = append(out, x.key(r))
	}
	return out
}

// key returns what the index compares r by.
func (x *index) key(r rune) rune {
	if x.exact {
		return r
	}
	return foldKey(r)
}

// foldKey returns the least rune of r's simple case-folding orbit: two runes have the same
// key exactly when strings.EqualFold takes them for one another.
func foldKey(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			r -= 'a' - 'A'
		}
		return r
	}
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

// build adds the node for list, whose terms share their first d keys, and returns it.
func (x *index) build(list []indexed, d int) int32 {
	at := int32(len(x.nodes))
	x.nodes = append(x.nodes, node{term: -1, tail: -1})
	n := node{term: -1, tail: -1}
	for len(list) > 0 && len(list[0].keys) == d { // one: New refuses two with the same keys
		if n.term < 0 {
			n.term = list[0].term
		}
		list = list[1:]
	}
	switch {
	case len(list) == 1:
		n.tail = list[0].term
		n.tailAt = int32(runeOffset(x.terms[n.tail].Source, d))
	case len(list) > 1:
		var kids []edge
		for lo := 0; lo < len(list); {
			hi := lo + 1
			for hi < len(list) && list[hi].keys[d] == list[lo].keys[d] {
				hi++
			}
			kids = append(kids, edge{key: list[lo].keys[d], node: x.build(list[lo:hi], d+1)})
			lo = hi
		}
		n.edges, n.nEdges = int32(len(x.edges)), int32(len(kids))
		x.edges = append(x.edges, kids...)
	}
	x.nodes[at] = n
	return at
}

// runeOffset returns the byte offset of s's d-th rune.
func runeOffset(s string, d int) int {
	for i := range s {
		if d == 0 {
			return i
		}
		d--
	}
	return len(s)
}

// start returns the node of the terms whose first rune is text[i:]'s, and where the rest
// begins.
func (x *index) start(text string, i int) (int32, int, bool) {
	r, size := utf8.DecodeRuneInString(text[i:])
	n, ok := x.root[rootKey{unicode.ToLower(r), x.key(r)}]
	return n, i + size, ok
}

// longest returns the longest term that starts at text[i] and ends where a word may end,
// walking on from node n at text[j]; steps counts the runes compared.
func (x *index) longest(text string, i int, n int32, j int) (term int32, end, steps int) {
	term = -1
	for {
		nd := &x.nodes[n]
		if nd.term >= 0 && x.fits(text, i, j, nd.term) {
			term, end = nd.term, j
		}
		if nd.tail >= 0 {
			e, s := x.tailEnd(text, j, nd)
			if steps += s; e >= 0 && x.fits(text, i, e, nd.tail) {
				term, end = nd.tail, e
			}
			return term, end, steps
		}
		if j >= len(text) || nd.nEdges == 0 {
			return term, end, steps
		}
		r, size := utf8.DecodeRuneInString(text[j:])
		steps++
		next, ok := x.child(nd, x.key(r))
		if !ok {
			return term, end, steps
		}
		n, j = next, j+size
	}
}

// fits reports whether text[i:end] is the term k (the same bytes long: a rune that folds
// to a wider or narrower one does not match) ending where a word may end.
func (x *index) fits(text string, i, end int, k int32) bool {
	return end-i == len(x.terms[k].Source) && boundaryAfter(text, end)
}

// tailEnd compares the rest of nd's tail term with text[j:] and returns where it ends in
// text, or -1.
func (x *index) tailEnd(text string, j int, nd *node) (end, steps int) {
	for _, tr := range x.terms[nd.tail].Source[nd.tailAt:] {
		if j >= len(text) {
			return -1, steps
		}
		r, size := utf8.DecodeRuneInString(text[j:])
		steps++
		if x.key(r) != x.key(tr) {
			return -1, steps
		}
		j += size
	}
	return j, steps
}

func (x *index) child(nd *node, key rune) (int32, bool) {
	kids := x.edges[nd.edges : nd.edges+nd.nEdges]
	k, ok := slices.BinarySearchFunc(kids, key, func(e edge, key rune) int { return cmp.Compare(e.key, key) })
	if !ok {
		return 0, false
	}
	return kids[k].node, true
}
