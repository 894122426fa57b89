package eval

import (
	_ "embed"
	"strings"
	"unicode"
)

//go:embed sets/apertium.tsv
var apertiumTSV string

// ApertiumSet returns the evaluation set shipped with the package (sets/apertium.tsv),
// written for the project with its references: 24 everyday, technical and e-commerce
// sentences in each of the pairs Apertium translates in CI, English to Spanish, English to
// Catalan and Spanish to Portuguese.
func ApertiumSet() []Item {
	items, err := ReadSet(strings.NewReader(apertiumTSV))
	if err != nil {
		panic("eval: the shipped set is broken: " + err.Error()) // its test reads it
	}
	return items
}

// Garble returns text with the letters of every word of three or more letters reversed
// ("The house is red." -> "ehT esuoh is der."): the output of an engine that garbles words,
// for drills and tests.
func Garble(text string) string {
	rs := []rune(text)
	for i := 0; i < len(rs); {
		if !unicode.IsLetter(rs[i]) {
			i++
			continue
		}
		j := i
		for j < len(rs) && unicode.IsLetter(rs[j]) {
			j++
		}
		if j-i >= 3 {
			for a, b := i, j-1; a < b; a, b = a+1, b-1 {
				rs[a], rs[b] = rs[b], rs[a]
			}
		}
		i = j
	}
	return string(rs)
}
