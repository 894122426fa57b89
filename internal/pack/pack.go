// Package pack is the bookkeeping of packed batches: grouping a batch's requests into packs
// that may share engine calls, the distinct texts of a pack and the items sharing each, the
// split of a failed pack in halves, and the source detected for one text of a call.
package pack

import (
	"math/bits"

	"golang.org/x/text/language"
)

// Group splits items 0..n-1 into tasks: each item key reports as unpackable (ok false) is a
// task of its own, in order; the others are grouped by key, in the order each key first
// appears, into packs of at most size items (size at least 1).
func Group[K comparable](n, size int, key func(i int) (k K, ok bool)) [][]int {
	var tasks [][]int
	groups := map[K][]int{}
	var order []K
	for i := range n {
		k, ok := key(i)
		if !ok {
			tasks = append(tasks, []int{i})
			continue
		}
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range order {
		g := groups[k]
		for len(g) > 0 {
			n := min(len(g), size)
			tasks = append(tasks, g[:n:n])
			g = g[n:]
		}
	}
	return tasks
}

// Slot places an item in its pack: Lead is the index (in the pack) of the item whose text
// it shares, itself if none; Part, for a lead, is the index of its text among the pack's
// texts. A lead comes before the items that share its text.
type Slot struct{ Lead, Part int }

// Index is where a pack's distinct texts are, by text: the index of the item that leads
// each. Make one per pack with Index{} (the caller's own map, which may stay on its stack).
type Index map[string]int

// Add places the pack's next item, the k-th, whose text is text: a lead whose text is
// appended to parts (the pack's distinct texts, in the order they came), or sharing the
// text of an earlier item. It returns the item's slot and parts.
func (x Index) Add(parts []string, k int, text string) (Slot, []string) {
	if lead, ok := x[text]; ok {
		return Slot{Lead: lead}, parts
	}
	x[text] = k
	return Slot{Lead: k, Part: len(parts)}, append(parts, text)
}

// Half is half a pack: its texts and the items that share them.
type Half[T any] struct {
	Items []T
	Texts []string
}

// Halve splits a pack's texts in two halves, each with the items whose text it holds, their
// slots (reached through slot) renumbered within the half.
func Halve[T any](items []T, texts []string, slot func(*T) *Slot) [2]Half[T] {
	h := len(texts) / 2
	out := [2]Half[T]{{Texts: texts[:h]}, {Texts: texts[h:]}}
	at := make([]int, len(items)) // each item's index in its half
	for k := range items {
		side := 0
		if slot(&items[slot(&items[k]).Lead]).Part >= h {
			side = 1
		}
		half := &out[side]
		at[k] = len(half.Items)
		half.Items = append(half.Items, items[k])
		s := slot(&half.Items[at[k]])
		if s.Lead == k {
			s.Part -= side * h
		}
		s.Lead = at[s.Lead] // a lead comes before the items that share its text
	}
	return out
}

// Splits is how many more walks splitting a pack of n texts may add: 4 × log2(n).
func Splits(n int) int { return 4 * bits.Len(uint(n)) }

// TextSource is the source an engine detected for text i of a call of n texts: per[i] when
// it detected one per text (len(per) == n), else call; "" when it reported none.
func TextSource(call language.Tag, per []language.Tag, n, i int) string {
	if len(per) == n {
		call = per[i]
	}
	if call == language.Und {
		return ""
	}
	return call.String()
}
