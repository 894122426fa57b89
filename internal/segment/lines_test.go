package segment

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestLines: a document's memory segments are its lines, cut at the limit; joined
// with their white space they give the text back.
func TestLines(t *testing.T) {
	long := strings.Repeat("word ", 30) // 150 code points
	tests := []struct {
		text  string
		parts []string
	}{
		{"", nil},
		{" \n\t\n", nil},
		{"One line.", []string{"One line."}},
		{"\n  First.\r\nSecond. \n\n\nThird.\n", []string{"First.", "Second.", "Third."}},
		{"a\n \nb", []string{"a", "b"}},
		{long + "\nend", append(Split(long, 100).Parts, "end")},
	}
	for _, tt := range tests {
		doc := Lines(tt.text, 100)
		if diff := cmp.Diff(tt.parts, doc.Parts); diff != "" {
			t.Errorf("Lines(%q) parts (-want +got):\n%s", tt.text, diff)
		}
		texts := append([]string(nil), doc.Parts...)
		if got, err := doc.Join(texts); err != nil || got != tt.text {
			t.Errorf("Lines(%q) joins to %q, %v", tt.text, got, err)
		}
		for _, p := range doc.Parts {
			if strings.ContainsAny(p, "\n") || utf8.RuneCountInString(p) > 100 || strings.TrimSpace(p) != p {
				t.Errorf("Lines(%q): part %q", tt.text, p)
			}
		}
	}
}

// TestSplitFrom: parts from next on longer than max are split, the parts before next and
// the joined text stay, and the white space before a re-split part is kept.
func TestSplitFrom(t *testing.T) {
	long := strings.Repeat("word ", 30) // 150 code points
	for _, next := range []int{0, 1} {
		doc := Segments{Prefix: " ", Parts: []string{"head", "  " + strings.TrimSpace(long), "tail"}, Seps: []string{"\n", "\n\n", ""}}
		text, _ := doc.Join(doc.Parts)
		doc.SplitFrom(next, 40)
		if doc.Parts[0] != "head" {
			t.Errorf("next %d: part 0 = %q, want head kept", next, doc.Parts[0])
		}
		for _, p := range doc.Parts[1:] {
			if utf8.RuneCountInString(p) > 40 {
				t.Errorf("next %d: part of %d code points after SplitFrom(40)", next, utf8.RuneCountInString(p))
			}
		}
		if got, err := doc.Join(doc.Parts); err != nil || got != text {
			t.Errorf("next %d: joins to %q, %v; want %q", next, got, err, text)
		}
	}
}
