package lang

import (
	"errors"
	"testing"
)

func TestSplitPair(t *testing.T) {
	ok := []struct{ pair, src, tgt string }{
		{"en-de", "en", "de"}, {"*-ja", "*", "ja"}, {"en-*", "en", "*"}, {"zh-Hant-en", "zh-Hant", "en"},
		{"en-zh-Hans", "en", "zh-Hans"}, {"sr-Latn-sr-Cyrl", "sr-Latn", "sr-Cyrl"}, {"fil-de", "fil", "de"},
	}
	for _, tc := range ok {
		src, tgt, err := SplitPair(tc.pair)
		if err != nil || src != tc.src || tgt != tc.tgt {
			t.Errorf("SplitPair(%q) = %q, %q, %v; want %q, %q", tc.pair, src, tgt, err, tc.src, tc.tgt)
		}
	}
	for _, bad := range []string{"", "en", "*-*", "en-GB-de", "en-de-AT", "en-xx1", "en--de", "-de", "en-de-", "en-Latn-GB-de", "en-und"} {
		if _, _, err := SplitPair(bad); !errors.Is(err, ErrPairKey) {
			t.Errorf("SplitPair(%q) = %v, want ErrPairKey", bad, err)
		}
	}
}
