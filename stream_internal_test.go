package translate

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestSplitDocument(t *testing.T) {
	for _, tc := range []struct {
		text  string
		limit int
		want  []string
	}{
		{"One.", 10, []string{"One."}},
		{"  One.\n\nTwo.\n", 10, []string{"One.\n\nTwo."}}, // short paragraphs merge
		{"  One.\n\nTwo.\n", 5, []string{"One.", "Two."}},
		{"Line one\nline two.\n\nNext.", 20, []string{"Line one\nline two.", "Next."}},
		{"A.\r\n\r\nB.\n \t\nC.\n\n\n\nD.", 3, []string{"A.", "B.", "C.", "D."}},
		{"A.\r\n\r\nB.\n \t\nC.\n\n\n\nD.", 12, []string{"A.\r\n\r\nB.", "C.\n\n\n\nD."}},
		{"No break. Just sentences. Many.", 100, []string{"No break. Just sentences. Many."}},
		{"No break. Just sentences. Many.", 20, []string{"No break.", "Just sentences.", "Many."}},
		{"全角。\n\n第二段。", 4, []string{"全角。", "第二段。"}},
	} {
		doc := splitDocument(tc.text, tc.limit)
		if diff := cmp.Diff(tc.want, doc.Parts); diff != "" {
			t.Errorf("splitDocument(%q, %d) parts (-want +got):\n%s", tc.text, tc.limit, diff)
		}
		if got, _ := doc.Join(doc.Parts); got != tc.text {
			t.Errorf("splitDocument(%q, %d) joins to %q", tc.text, tc.limit, got)
		}
	}
}

// Any text splits into non-blank parts of at most the limit that join back to the text.
func TestSplitDocumentProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"word", " ", "\n", "\n\n", "\r\n", "\t", ". ", "é", "長", "{x}", strings.Repeat("long", 300), "<b>", "\u00a0"}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(200) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		limit := []int{streamSegmentChars, 50, 7}[rng.IntN(3)]
		doc := splitDocument(text, limit)
		if got, err := doc.Join(doc.Parts); err != nil || got != text {
			t.Fatalf("splitDocument(%q) joins to %q, %v", text, got, err)
		}
		for _, p := range doc.Parts {
			if strings.TrimSpace(p) != p || p == "" {
				t.Fatalf("splitDocument(%q): part %q is blank or has white space around it", text, p)
			}
			if utf8.RuneCountInString(p) > limit {
				t.Fatalf("splitDocument(%q, %d): part of %d code points", text, limit, utf8.RuneCountInString(p))
			}
		}
	}
}
