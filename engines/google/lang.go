package google

import (
	"github.com/fanyi-go/translate/engines/internal/langcode"
	"golang.org/x/text/language"
)

// variants are the regional and script variants Google lists as codes of their own, keyed by
// the explicit base-Script or base-REGION of a tag.
var variants = map[string]string{
	"pt-PT":    "pt-PT",
	"fr-CA":    "fr-CA",
	"mni-Mtei": "mni-Mtei",
	"pa-Arab":  "pa-Arab",
	"ms-Arab":  "ms-Arab",
}

// aliases are base languages Google names differently from x/text's canonical form.
var aliases = map[string]string{
	"nb":  "no",       // Norwegian Bokmål: Google has one Norwegian, "no"
	"fil": "tl",       // Filipino: Google lists "fil or tl"
	"mni": "mni-Mtei", // Meitei is only offered in Meitei Mayek script
}

// code maps t to Google's language code: zh-CN for Simplified and zh-TW for Traditional
// Chinese (by script, so zh-HK and zh-Hant land on zh-TW), the listed variants, and
// otherwise the base language. A tag without a language, or a private-use one, is
// KindUnsupported. which is "source" or "target", for the message.
func (e *Engine) code(t language.Tag, which string) (string, error) {
	if c, ok := googleCode(t); ok {
		return c, nil
	}
	return "", langcode.Unsupported(e.name, "Google", which, t)
}

func googleCode(t language.Tag) (string, bool) {
	base, ok := langcode.Base(t)
	if !ok {
		return "", false
	}
	if base == "zh" {
		if sc, _ := t.Script(); sc.String() == "Hant" {
			return "zh-TW", true
		}
		return "zh-CN", true
	}
	return langcode.Lookup(t, base, variants, aliases), true
}
