package microsoft

import (
	"github.com/fanyi-go/translate/engines/internal/langcode"
	"golang.org/x/text/language"
)

// variants are the regional variants Microsoft lists as codes of their own, keyed by the
// explicit base-REGION of a tag.
var variants = map[string]string{
	"pt-PT": "pt-PT",
	"fr-CA": "fr-CA",
}

// scripts are the languages Microsoft lists only with a script: the tag's script (explicit
// or most likely) picks the code, the first entry is the default.
var scripts = map[string][]string{
	"zh":  {"zh-Hans", "zh-Hant"},
	"sr":  {"sr-Cyrl", "sr-Latn"},
	"mn":  {"mn-Cyrl", "mn-Mong"},
	"tlh": {"tlh-Latn", "tlh-Piqd"},
	"iu":  {"iu", "iu-Latn"},
}

// aliases are base languages Microsoft names differently from x/text's canonical form.
var aliases = map[string]string{
	"no": "nb",  // Norwegian: Microsoft lists Bokmål, "nb"
	"tl": "fil", // Tagalog: Microsoft lists Filipino, "fil"
}

// code maps t to Microsoft's language code. A tag without a language, or a private-use one,
// is KindUnsupported. which is "source" or "target", for the message.
func (e *Engine) code(t language.Tag, which string) (string, error) {
	if c, ok := msCode(t); ok {
		return c, nil
	}
	return "", langcode.Unsupported(e.name, "Microsoft", which, t)
}

func msCode(t language.Tag) (string, bool) {
	base, ok := langcode.Base(t)
	if !ok {
		return "", false
	}
	if codes, ok := scripts[base]; ok {
		sc, _ := t.Script()
		for _, c := range codes {
			if len(c) > len(base) && c[len(base)+1:] == sc.String() {
				return c, true
			}
		}
		return codes[0], true
	}
	return langcode.Lookup(t, base, variants, aliases), true
}
