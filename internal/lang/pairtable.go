package lang

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// PairTable maps language pairs, named by the ids of a Cache with 0 standing for any
// language ("*"), to values per scene, and finds the most specific entry for a pair:
// "src-tgt", then "*-tgt", then "src-*". It is built once and then only read: safe for
// concurrent reads, and Find allocates nothing.
type PairTable struct {
	m map[uint64]*PairEntry
}

// PairEntry is what a PairTable holds for one pair: bit s of Has is set when the entry sets
// scene s; Q and Fac are the caller's values per scene.
type PairEntry struct {
	Has    uint32
	Q, Fac []float64
}

// NewPairTable returns an empty table sized for n pairs.
func NewPairTable(n int) *PairTable { return &PairTable{m: make(map[uint64]*PairEntry, n)} }

// PairKey is the map key of the pair src->tgt (language ids).
func PairKey(src, tgt int) uint64 { return uint64(uint32(src))<<32 | uint64(uint32(tgt)) }

// Entry returns the entry of src->tgt, adding one with room for scenes scenes when the
// table has none.
func (t *PairTable) Entry(src, tgt, scenes int) *PairEntry {
	k := PairKey(src, tgt)
	p := t.m[k]
	if p == nil {
		p = &PairEntry{Q: make([]float64, scenes), Fac: make([]float64, scenes)}
		t.m[k] = p
	}
	return p
}

// Find returns the most specific entry that sets scene for src->tgt ("src-tgt", then
// "*-tgt", then "src-*"); ok is false when none does.
func (t *PairTable) Find(src, tgt, scene int) (p *PairEntry, ok bool) {
	for _, k := range [3]uint64{PairKey(src, tgt), PairKey(0, tgt), PairKey(src, 0)} {
		if p, ok = t.m[k]; ok && p.Has&(1<<scene) != 0 {
			return p, true
		}
	}
	return nil, false
}

// Factor returns Fac[scene] of the most specific entry that sets scene for src->tgt (Find),
// 1 when none does.
func (t *PairTable) Factor(src, tgt, scene int) float64 {
	if p, ok := t.Find(src, tgt, scene); ok {
		return p.Fac[scene]
	}
	return 1
}

// BuildPairTable builds a table from m, which maps pair keys (ParseKey with scenes; valid)
// to qualities. An entry's Q is the key's quality in its scene, or in every scene for a key
// that names none, and its Fac is fac(scene, quality) there; keys without a scene go in
// first, so that a key with one overrides them for its scene. id gives a language's id (0
// for "*"). has is the union of the entries' Has bits.
func BuildPairTable(m map[string]float64, scenes []string, id func(tag string) int,
	fac func(scene int, q float64) float64) (t *PairTable, has uint32) {
	t = NewPairTable(len(m))
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		return cmp.Compare(strings.Count(a, "/"), strings.Count(b, "/"))
	})
	for _, key := range keys {
		src, tgt, scene, _ := ParseKey(key, scenes)
		p := t.Entry(id(src), id(tgt), len(scenes))
		for s := range scenes {
			if scene < 0 || s == scene {
				p.Has |= 1 << s
				p.Q[s] = m[key]
				p.Fac[s] = fac(s, p.Q[s])
			}
		}
		has |= p.Has
	}
	return t, has
}
