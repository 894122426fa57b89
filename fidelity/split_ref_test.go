package fidelity

import (
	"strings"
	"testing"
)

// For an engine that takes markup natively, Split never cuts inside a character
// reference, even where only a hard cut is left (tags and references with no white
// space between them).
func TestSplitKeepsReferencesWhole(t *testing.T) {
	p, err := New(Options{Format: FormatHTML})
	if err != nil {
		t.Fatal(err)
	}
	doc := `<p>` + strings.Repeat(`</i><i class="c4" title="light house">&lt;&amp;&#x27E6;&#169;`, 4) + `</p>`
	pr := p.Prepare(doc, Native{Formats: []Format{FormatHTML}})
	for max := 1; max <= 60; max++ {
		for _, part := range pr.Split(0, max).Parts {
			amp, semi := strings.Count(part, "&"), strings.Count(part, ";")
			if amp != semi || strings.Count(part, "<") != strings.Count(part, ">") {
				t.Fatalf("Split(0, %d) cut inside a reference or tag: %q", max, part)
			}
		}
	}
}
