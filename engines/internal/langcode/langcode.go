// Package langcode holds what the vendor adapters share in mapping BCP 47 tags to a
// vendor's language codes and a vendor's language list to translate.LanguagePairs. What
// each vendor calls its languages (zh-CN or zh-Hans, nb or no) stays in its adapter; this
// package only has the steps that are the same for all. Only packages under engines/ use it.
package langcode

import (
	"strconv"

	"github.com/fanyi-go/translate"
	"golang.org/x/text/language"
)

// Base returns t's base language subtag as given, without inference ("pt" for pt-PT, "zh"
// for zh-Hant), and false when t has none (und-…) or a private-use one (qaa…).
func Base(t language.Tag) (string, bool) {
	b, _, _ := t.Raw()
	if b.String() == "und" || b.IsPrivateUse() {
		return "", false
	}
	return b.String(), true
}

// Lookup is a vendor's code for t, whose base language is base: variants[base-Script] for
// t's explicit script, else variants[base-REGION] for its explicit region, else
// aliases[base], else base itself. variants and aliases are the vendor's tables; either may
// be nil.
func Lookup(t language.Tag, base string, variants, aliases map[string]string) string {
	_, s, r := t.Raw()
	if s.String() != "Zzzz" {
		if v, ok := variants[base+"-"+s.String()]; ok {
			return v
		}
	}
	if r.String() != "ZZ" {
		if v, ok := variants[base+"-"+r.String()]; ok {
			return v
		}
	}
	if a, ok := aliases[base]; ok {
		return a
	}
	return base
}

// Unsupported is the KindUnsupported error of engine for a tag t the vendor has no code
// for: "no Google language code for target qaa". vendor is the vendor's name as the message
// spells it; which is "source" or "target".
func Unsupported(engine, vendor, which string, t language.Tag) *translate.Error {
	return &translate.Error{Kind: translate.KindUnsupported, Engine: engine,
		Message: "no " + vendor + " language code for " + which + " " + t.String()}
}

// MaxLanguages bounds the distinct languages Pairs takes from one side of a vendor's list.
// The pairs grow as the product of the two sides, so a list far longer than any vendor's
// (Google's and Microsoft's name a few hundred) would cost gigabytes: 600 a side is 360,000
// pairs, about 17 MB.
const MaxLanguages = 600

// Pairs builds the pairs of a vendor that translates every listed source into every listed
// target of another language: for each target in list order, language.Und (detect) ->
// target, then each source -> target. Codes that do not parse, parse to language.Und, or
// repeat an earlier tag are left out. A side of more than MaxLanguages languages is the
// engine's KindBadOutput: the list is refused, not cut, since any cut would drop real pairs.
func Pairs(engine string, sources, targets []string) ([]translate.LanguagePair, error) {
	src, tgt := tags(sources), tags(targets)
	if n := max(len(src), len(tgt)); n > MaxLanguages {
		return nil, &translate.Error{Kind: translate.KindBadOutput, Engine: engine,
			Message: "the language list names " + strconv.Itoa(n) + " languages, more than " + strconv.Itoa(MaxLanguages)}
	}
	out := make([]translate.LanguagePair, 0, len(tgt)*(len(src)+1))
	for _, t := range tgt {
		out = append(out, translate.LanguagePair{Source: language.Und, Target: t})
		for _, s := range src {
			if s != t {
				out = append(out, translate.LanguagePair{Source: s, Target: t})
			}
		}
	}
	return out, nil
}

// tags parses codes, leaving out the ones that do not parse, und, and repeats.
func tags(codes []string) []language.Tag {
	seen := make(map[language.Tag]bool, len(codes))
	var out []language.Tag
	for _, c := range codes {
		t, err := language.Parse(c)
		if err != nil || t == language.Und || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}
