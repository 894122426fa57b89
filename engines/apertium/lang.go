package apertium

import (
	"strings"

	"golang.org/x/text/language"
)

// languages holds the ISO 639-3 codes of the languages that appear in Apertium's language
// pairs (released, staging and nursery). A tag outside this set is reported KindUnsupported
// without a request; whether a pair made of two of them is installed is the server's call.
var languages = map[string]bool{
	"afr": true, "ara": true, "arg": true, "ast": true, "bak": true, "bel": true,
	"bre": true, "bul": true, "cat": true, "ces": true, "chv": true, "cos": true,
	"crh": true, "cym": true, "dan": true, "deu": true, "ell": true, "eng": true,
	"epo": true, "est": true, "eus": true, "fao": true, "fas": true, "fin": true,
	"fra": true, "fry": true, "gla": true, "gle": true, "glg": true, "hbs": true,
	"heb": true, "hin": true, "hun": true, "ind": true, "isl": true, "ita": true,
	"kaa": true, "kaz": true, "kir": true, "kmr": true, "lat": true, "lav": true,
	"lit": true, "ltz": true, "mkd": true, "mlt": true, "nld": true, "nno": true,
	"nob": true, "oci": true, "pol": true, "por": true, "ron": true, "rus": true,
	"sah": true, "slk": true, "slv": true, "sma": true, "sme": true, "smj": true,
	"spa": true, "sqi": true, "srd": true, "swe": true, "tat": true, "tur": true,
	"tyv": true, "ukr": true, "urd": true, "uzb": true, "zlm": true,
}

// baseOverrides maps the ISO 639-3 code x/text gives a base language to the code Apertium
// uses for it: Apertium treats Croatian, Serbian and Bosnian as Serbo-Croatian (hbs),
// Norwegian as Bokmål and Malay as Standard Malay (zlm).
var baseOverrides = map[string]string{
	"hrv": "hbs", "srp": "hbs", "bos": "hbs", "nor": "nob", "msa": "zlm",
}

// variant is one of Apertium's language variants, used on the target side of a pair
// (spa-eng_US, spa-por_BR, spa-cat_valencia). A tag matches when its base language's code is
// base and, where set, its explicit region is region and its variants include subtag.
type variant struct {
	base    string       // Apertium base code after baseOverrides, such as "eng" or "hbs"
	iso3    string       // x/text's ISO 639-3 code when it differs from base ("hrv"), else ""
	region  string       // explicit region, such as "US"; "" matches any
	subtag  string       // BCP 47 variant subtag, such as "valencia"; "" matches any
	code    string       // Apertium's code, such as "eng_US"
	reverse language.Tag // the tag SupportedPairs reports for code
}

var variants = []variant{
	{base: "eng", region: "US", code: "eng_US", reverse: language.AmericanEnglish},
	{base: "eng", region: "GB", code: "eng_GB", reverse: language.BritishEnglish},
	{base: "por", region: "BR", code: "por_BR", reverse: language.BrazilianPortuguese},
	{base: "cat", subtag: "valencia", code: "cat_valencia", reverse: language.MustParse("ca-valencia")},
	{base: "oci", subtag: "aranes", code: "oci_aran", reverse: language.MustParse("oc-aranes")},
	{base: "hbs", iso3: "hrv", code: "hbs_HR", reverse: language.Croatian},
	{base: "hbs", iso3: "srp", code: "hbs_SR", reverse: language.Serbian},
	{base: "hbs", iso3: "bos", code: "hbs_BS", reverse: language.MustParse("bs")},
}

// baseCode returns Apertium's code for t's base language, or false when Apertium has no
// pair for it (and for language.Und).
func baseCode(t language.Tag) (code, iso3 string, ok bool) {
	b, conf := t.Base()
	if conf == language.No || t == language.Und {
		return "", "", false
	}
	iso3 = b.ISO3()
	code = iso3
	if o, found := baseOverrides[iso3]; found {
		code = o
	}
	return code, iso3, languages[code]
}

// sourceCode returns the code to send as the source of a pair: always the base language's.
// Apertium names its pairs after the source's base language; its variants are target-side.
func sourceCode(t language.Tag) (string, bool) {
	code, _, ok := baseCode(t)
	return code, ok
}

// targetCodes returns the codes to try, in order, for a target tag: Apertium's variant code
// when the tag names one it has (en-US -> eng_US), then the base code (eng).
func targetCodes(t language.Tag) ([]string, bool) {
	code, iso3, ok := baseCode(t)
	if !ok {
		return nil, false
	}
	region := ""
	if r, conf := t.Region(); conf == language.Exact {
		region = r.String()
	}
	for _, v := range variants {
		if v.base != code || (v.iso3 != "" && v.iso3 != iso3) ||
			(v.region != "" && v.region != region) || (v.subtag != "" && !hasVariant(t, v.subtag)) {
			continue
		}
		return []string{v.code, code}, true
	}
	return []string{code}, true
}

func hasVariant(t language.Tag, subtag string) bool {
	for _, v := range t.Variants() {
		if v.String() == subtag {
			return true
		}
	}
	return false
}

// tagOf returns the language tag for an Apertium code as /listPairs writes it ("spa",
// "eng_US"), or false for a code this package cannot address (an unknown variant suffix).
func tagOf(code string) (language.Tag, bool) {
	for _, v := range variants {
		if v.code == code {
			return v.reverse, true
		}
	}
	if strings.ContainsAny(code, "_-") || code == "" {
		return language.Und, false
	}
	if code == "hbs" {
		return language.MustParse("sh"), true // x/text canonicalises to sr-Latn
	}
	b, err := language.ParseBase(code)
	if err != nil {
		return language.Und, false
	}
	t, err := language.Compose(b)
	if err != nil || t == language.Und {
		return language.Und, false
	}
	return t, true
}
