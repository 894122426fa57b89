package echo

import (
	"testing"
	"unicode"
)

// TestTranslatable: texts the same in every language may come back unchanged; words,
// foreign letters and dense scripts may not.
func TestTranslatable(t *testing.T) {
	latin := Scripts["Latn"]
	for _, tc := range []struct {
		text   string
		target []*unicode.RangeTable
		want   bool
	}{
		{"iPhone 15", latin, false},
		{"SKU-42 NASA", latin, false},
		{"{name} %1$s <b> https://example.com a@b.c", latin, false},
		{"Hello", latin, false},
		{"Hello world", latin, true},
		{"Привет", latin, true}, // a letter Latin does not have
		{"你好", nil, true},       // two Han letters
		{"你", nil, false},
	} {
		if got := Translatable(tc.text, tc.target); got != tc.want {
			t.Errorf("Translatable(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}
