package fidelity

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// moveCutsByScan is moveCuts as it was: every atom looked at for every cut.
func moveCutsByScan(cuts []int, atoms [][2]int) []int {
	out := cuts[:1]
	for _, c := range cuts[1:] {
		for _, a := range atoms {
			if a[0] < c && c < a[1] {
				c = a[0]
				break
			}
		}
		if c > out[len(out)-1] {
			out = append(out, c)
		}
	}
	return out
}

// One pass moves the cuts as looking at every atom did, for atoms as atoms gives them:
// tags and references in order, then the tokens, some inside tags.
func TestMoveCutsAsScanningEveryAtom(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for round := range 2000 {
		var tags, tokens [][2]int
		for pos := 0; pos < 300; pos += 1 + rnd.IntN(8) {
			n := 1 + rnd.IntN(20)
			if rnd.IntN(2) == 0 {
				tags = append(tags, [2]int{pos, pos + n})
				if n > 4 && rnd.IntN(2) == 0 { // a token in the tag
					tokens = append(tokens, [2]int{pos + 1, pos + 1 + rnd.IntN(n-2) + 1})
				}
			} else {
				tokens = append(tokens, [2]int{pos, pos + n})
			}
			pos += n
		}
		atoms := append(tags, tokens...)
		cuts := []int{rnd.IntN(3)}
		for c := cuts[0] + 1 + rnd.IntN(10); c < 320; c += 1 + rnd.IntN(10) {
			cuts = append(cuts, c)
		}
		want := moveCutsByScan(slices.Clone(cuts), slices.Clone(atoms))
		if diff := cmp.Diff(want, moveCuts(cuts, atoms)); diff != "" {
			t.Fatalf("round %d (-scan +pass):\n%s", round, diff)
		}
	}
}

// Split costs the text's length: sixteen times the text takes at most 80 times as long
// (looking at every token for every cut took 14 times as long for 4 times the text, 22 ms
// for 256 KiB, 314 ms for 1 MiB).
func TestSplitIsLinear(t *testing.T) {
	p, err := New(Options{Format: FormatHTML})
	if err != nil {
		t.Fatal(err)
	}
	cost := func(size int) time.Duration {
		pr := p.Prepare(strings.Repeat("<b>x</b> ", size/9), Native{})
		best := time.Hour
		for range 3 {
			t0 := time.Now()
			pr.Split(0, 1000)
			best = min(best, time.Since(t0))
		}
		return best
	}
	small, big := cost(1<<16), cost(1<<20)
	t.Logf("Split(0, 1000): 64 KiB %v, 1 MiB %v", small, big)
	if big > 80*small {
		t.Errorf("Split(0, 1000): 64 KiB %v, 1 MiB %v (x%.1f for 16 times the text)", small, big, float64(big)/float64(small))
	}
}
