package lang

import (
	"testing"

	"golang.org/x/text/language"
)

func TestPrivateUse(t *testing.T) {
	for _, tc := range []struct {
		tag     string
		subtags []string
		want    string
	}{
		{"de-Latn", nil, "de-Latn"},
		{"de-Latn", []string{"legal"}, "de-Latn-x-legal"},
		{"de-Latn-AT", []string{"legal", "formal", "html"}, "de-Latn-AT-x-legal-formal-html"},
		{"de-x-a", []string{"b"}, "de-x-a-b"},
	} {
		got := PrivateUse(tc.tag, tc.subtags...)
		if got != tc.want {
			t.Errorf("PrivateUse(%q, %q) = %q, want %q", tc.tag, tc.subtags, got, tc.want)
		}
		if _, err := language.Parse(got); err != nil {
			t.Errorf("PrivateUse(%q, %q) = %q: not BCP 47: %v", tc.tag, tc.subtags, got, err)
		}
	}
}
