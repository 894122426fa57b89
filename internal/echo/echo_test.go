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

func TestSame(t *testing.T) {
	for _, tc := range []struct {
		src, got string
		want     bool
	}{
		{"The house is red.", "The house is red.", true},
		{" The house is red.\n", "The house is red.", true},
		{"The house is red.\nThe garden is green.", "The house is red. The garden is green.", true},
		{"The house  is\tred.", "The house is red.", true},
		{"The house is red.", "The house is red!", false},
		{"The house is red.", "Thehouse is red.", false},
		{"The house is red.", "The house is red. And", false},
		{"Das Haus ist rot.", "The house is red.", false},
		{"", "", true},
		{"机密 文件", "机密\u3000文件", true},
	} {
		if got := Same(tc.src, tc.got); got != tc.want {
			t.Errorf("Same(%q, %q) = %v, want %v", tc.src, tc.got, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { Same("The house is red.\nThe garden", "The house is red. The garden") }); n != 0 {
		t.Errorf("Same allocates %v times", n)
	}
}
