package document

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate/internal/segment"
)

func TestID(t *testing.T) {
	if got := ID("req-7", 12); got != "req-7#12" {
		t.Errorf("ID = %q, want req-7#12", got)
	}
}

func TestJoin(t *testing.T) {
	doc := segment.Lines("  one\ntwo\n\nthree\n", 0)
	mem := func(text string, score float64) Segment {
		return Segment{Text: text, Engine: "memory", FromMemory: true, MemoryScore: score}
	}
	for _, tc := range []struct {
		name string
		segs []Segment
		want Answer
	}{
		{"all from memory: the lowest score", []Segment{mem("eins", 1), mem("zwei", 0.9), mem("drei", 0.95)},
			Answer{Text: "  eins\nzwei\n\ndrei\n", Engine: "memory", FromMemory: true, MemoryScore: 0.9}},
		{"mixed: engines in order, a run once", []Segment{
			mem("eins", 1),
			{Text: "zwei", Engine: "deepl", Degraded: true},
			{Text: "drei", Engine: "deepl", FromCache: true},
		}, Answer{Text: "  eins\nzwei\n\ndrei\n", Engine: "memory+deepl", Degraded: true}},
		{"all cached", []Segment{
			{Text: "a", Engine: "x", FromCache: true}, {Text: "b", Engine: "y", FromCache: true}, {Text: "c", Engine: "x", FromCache: true},
		}, Answer{Text: "  a\nb\n\nc\n", Engine: "x+y+x", FromCache: true}},
	} {
		got, err := Join(doc, tc.segs)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: Join (-want +got):\n%s", tc.name, diff)
		}
	}
	if _, err := Join(doc, []Segment{mem("eins", 1)}); err == nil {
		t.Error("Join of 1 segment for 3 parts: no error")
	}
}
