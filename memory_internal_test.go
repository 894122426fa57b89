package translate

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestMemorySplit: a document's memory segments are its lines, cut at the limit; joined
// with their white space they give the text back.
func TestMemorySplit(t *testing.T) {
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
		{long + "\nend", append(splitDocument(long, 100).Parts, "end")},
	}
	for _, tt := range tests {
		doc := memorySplit(tt.text, 100)
		if diff := cmp.Diff(tt.parts, doc.Parts); diff != "" {
			t.Errorf("memorySplit(%q) parts (-want +got):\n%s", tt.text, diff)
		}
		texts := append([]string(nil), doc.Parts...)
		if got, err := doc.Join(texts); err != nil || got != tt.text {
			t.Errorf("memorySplit(%q) joins to %q, %v", tt.text, got, err)
		}
		for _, p := range doc.Parts {
			if strings.ContainsAny(p, "\n") || utf8.RuneCountInString(p) > 100 || strings.TrimSpace(p) != p {
				t.Errorf("memorySplit(%q): part %q", tt.text, p)
			}
		}
	}
}
