package lang

import "testing"

// TestPairTableMostSpecificWins: "src-tgt" before "*-tgt" before "src-*", and an entry
// counts only for the scenes it sets.
func TestPairTableMostSpecificWins(t *testing.T) {
	const en, de, ja = 1, 2, 3
	tb := NewPairTable(3)
	set := func(src, tgt, scene int, q float64) {
		p := tb.Entry(src, tgt, 4)
		p.Has |= 1 << scene
		p.Q[scene] = q
	}
	set(en, de, 0, 90)
	set(0, de, 0, 70)
	set(0, de, 1, 71)
	set(en, 0, 1, 60)
	set(en, 0, 2, 61)
	for _, c := range []struct {
		src, tgt, scene int
		want            float64
		ok              bool
	}{
		{en, de, 0, 90, true}, // exact
		{en, de, 1, 71, true}, // exact does not set scene 1: *-de does
		{en, de, 2, 61, true}, // only en-* sets scene 2
		{ja, de, 0, 70, true}, // *-de
		{en, ja, 1, 60, true}, // en-*
		{ja, en, 0, 0, false}, // nothing
		{en, de, 3, 0, false}, // no entry sets scene 3
	} {
		p, ok := tb.Find(c.src, c.tgt, c.scene)
		if ok != c.ok || ok && p.Q[c.scene] != c.want {
			t.Errorf("Find(%d, %d, scene %d) = %v, %v; want %v, %v", c.src, c.tgt, c.scene, p, ok, c.want, c.ok)
		}
	}
	if n := testing.AllocsPerRun(100, func() { tb.Find(en, de, 1) }); n != 0 {
		t.Errorf("Find allocates %v times", n)
	}
}
