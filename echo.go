package translate

import (
	"strings"
	"unicode"

	"github.com/fanyi-go/translate/internal/echo"
)

// echoed reports whether an engine sent the source text back as its translation (but for
// white space: see echo.Same): a text
// that must change in translation (echo.Translatable: two or more words, a letter in a
// script the target does not write in, ...) came back unchanged. When the source was
// detected and the engine says it is the target language already, the text is allowed
// back as is.
func echoed(src, got string, r *request, out *EngineResult) bool {
	if !echo.Same(src, got) {
		return false
	}
	if r.src == nil && out.Source.String() != "und" && r.tgt != nil {
		if b1, _ := out.Source.Base(); b1.String() == r.tgt.Key[:strings.IndexByte(r.tgt.Key+"-", '-')] {
			return false
		}
	}
	return echo.Translatable(src, targetScript(r))
}

// targetScript returns the scripts the target language writes in, nil when unknown.
func targetScript(r *request) []*unicode.RangeTable {
	if r.tgt == nil {
		return nil
	}
	sc, _ := r.tgt.Tag.Script()
	return echo.Scripts[sc.String()]
}
