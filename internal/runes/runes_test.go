package runes

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScan(t *testing.T) {
	type scan struct {
		Chars        int
		Blank, Valid bool
	}
	tests := []struct {
		in   string
		want scan
	}{
		{"", scan{0, true, true}},
		{" \t\r\n\v\f", scan{6, true, true}},
		{"hello", scan{5, false, true}},
		{"hello, world", scan{12, false, true}},      // past eight bytes, ASCII
		{"        x", scan{9, false, true}},          // the word after the first eight
		{"héllo wörld", scan{11, false, true}},       // non-ASCII in the first eight
		{"abcdefghé", scan{9, false, true}},          // non-ASCII after the first eight
		{"\u3000\u00a0", scan{2, true, true}},        // Unicode white space
		{"éabcdefghijklmnop", scan{17, false, true}}, // non-ASCII only in the first eight
		{"ab\xffcd", scan{5, false, false}},          // invalid UTF-8
		{strings.Repeat("a", 16) + "\xc3", scan{17, false, false}},
	}
	for _, tt := range tests {
		var got scan
		got.Chars, got.Blank, got.Valid = Scan(tt.in)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Scan(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0}, {"abc", 3}, {"日本語", 3}, {"aé", 2}, {"\xff", 1},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Count(tt.in)); diff != "" {
			t.Errorf("Count(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestLongest(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{nil, ""}, {[]string{"a"}, "a"}, {[]string{"ab", "abc", "xyz", "a"}, "abc"},
		{[]string{"", ""}, ""},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Longest(tt.in)); diff != "" {
			t.Errorf("Longest(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestCap(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 5, "short"},
		{"longer", 5, "longe..."},
		{"aé", 2, "a..."}, // é's second byte at the cut: back to its start
		{"日本", 4, "日..."}, // a cut inside the second rune
		{"日本", 3, "日..."}, // a cut on a boundary
		{"日", 2, "..."},   // nothing whole fits
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Cap(tt.in, tt.n)); diff != "" {
			t.Errorf("Cap(%q, %d) (-want +got):\n%s", tt.in, tt.n, diff)
		}
	}
}

func TestFit(t *testing.T) {
	tests := []struct {
		name               string
		parts              []string
		maxTexts, maxChars int
		want               int
	}{
		{"none", nil, 10, 5, 0},
		{"text limit", []string{"a", "b", "c"}, 2, 0, 2},
		{"text limit under a char limit", []string{"a", "b", "c"}, 2, 10, 2},
		{"no char limit", []string{"aaaa", "bbbb"}, 10, 0, 2},
		{"chars fit", []string{"ab", "cd"}, 10, 4, 2},
		{"chars overflow", []string{"ab", "cd", "e"}, 10, 4, 2},
		{"first alone too long", []string{"abcdef", "g"}, 10, 4, 1},
		{"counted in code points", []string{"日本", "語x"}, 10, 4, 2},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Fit(tt.parts, tt.maxTexts, tt.maxChars)); diff != "" {
			t.Errorf("%s: Fit(%q, %d, %d) (-want +got):\n%s", tt.name, tt.parts, tt.maxTexts, tt.maxChars, diff)
		}
	}
}
