package lang

import (
	"errors"
	"maps"
	"slices"
	"strconv"
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

// ParseKey splits a pair key with an optional scene, "en-de", "*-ja", "zh-Hant-en" or
// "en-de/legal", into its source, target ("*" for any) and the scene's index in scenes (-1
// for none).
func ParseKey(key string, scenes []string) (src, tgt string, scene int, err error) {
	pair, sc, hasScene := strings.Cut(key, "/")
	scene = -1
	if hasScene {
		if scene = slices.Index(scenes, sc); scene < 0 {
			return "", "", 0, errors.New("unknown scene (known: " + strings.Join(scenes, ", ") + ")")
		}
	}
	src, tgt, err = SplitPair(pair)
	return src, tgt, scene, err
}

// CheckKeys checks the keys (ParseKey) and values (0..100) of m in key order, and returns
// the first key at fault, quoted and cut to 40 bytes, and what is wrong; problem is "" when
// all are right. Two keys that name the same pair and scene once normalised ("en-de",
// "EN-DE" and "en-Latn-de"; see KeyOf) are at fault: which one a table built from m would
// keep would depend on map order.
func CheckKeys(m map[string]float64, scenes []string) (name, problem string) {
	if len(m) == 0 {
		return "", "" // sorting no keys allocates 3 times
	}
	seen := make(map[string]string, len(m)) // the normalised key -> the key
	for _, key := range slices.Sorted(maps.Keys(m)) {
		name = quoteKey(key)
		src, tgt, scene, err := ParseKey(key, scenes)
		if err != nil {
			return name, err.Error()
		}
		if q := m[key]; !(q >= 0 && q <= 100) {
			return name, "must be within 0..100"
		}
		norm := sideKey(src) + "-" + sideKey(tgt) + "/" + strconv.Itoa(scene)
		if first, dup := seen[norm]; dup {
			return name, "names the same pair as " + quoteKey(first)
		}
		seen[norm] = key
	}
	return "", ""
}

// quoteKey quotes a key for an error, cut to 40 bytes.
func quoteKey(key string) string {
	if len(key) > 40 {
		return strconv.Quote(key[:40] + "…")
	}
	return strconv.Quote(key)
}

// sideKey normalises a side of a valid pair as a Cache keys it: "*", or KeyOf its tag
// ("EN" and "en-Latn" are "en-Latn").
func sideKey(side string) string {
	if side == "*" {
		return side
	}
	_, key, _ := Parse(side) // valid: ParseKey checked it
	return key
}
