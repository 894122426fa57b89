package lang

import (
	"errors"
	"strings"

	"golang.org/x/text/language"
)

// ErrPairKey is returned by SplitPair for a malformed pair.
var ErrPairKey = errors.New(`wants "src-tgt", each side "*" or a language with an optional script ("en", "zh-Hant")`)

// SplitPair splits a language pair written "src-tgt", such as "en-de", "*-ja", "en-*" or
// "zh-Hant-en", into its two sides. Each side is "*" (any language) or a language with an
// optional script and nothing else (no region: engines are matched by language and script);
// "*-*" is not a pair. It returns ErrPairKey otherwise.
func SplitPair(pair string) (src, tgt string, err error) {
	parts := strings.Split(pair, "-")
	n := 1 // parts of the source: a language, and its script when the next part is one
	if len(parts) > 2 && len(parts[1]) == 4 {
		n = 2
	}
	src, tgt = strings.Join(parts[:n], "-"), strings.Join(parts[n:], "-")
	if src == "*" && tgt == "*" || !pairSide(src) || !pairSide(tgt) {
		return "", "", ErrPairKey
	}
	return src, tgt, nil
}

// pairSide accepts "*" or a language with an optional script.
func pairSide(side string) bool {
	if side == "*" {
		return true
	}
	t, err := language.Parse(side)
	if err != nil || t == language.Und || strings.Count(side, "-") > 1 {
		return false
	}
	_, script := t.Script()
	_, region := t.Region()
	return region != language.Exact && (!strings.Contains(side, "-") || script == language.Exact)
}
