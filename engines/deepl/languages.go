package deepl

import (
	"strings"

	"github.com/fanyi-go/translate"
	"golang.org/x/text/language"
)

// The codes DeepL lists on GET /v2/languages, from DeepL's mock server configuration
// (deepl-mock v1.21.0, config/languages: Languages without TargetOnlyLanguages and
// HideFromV2Endpoint for sources, without HideFromV2Endpoint and HideFromV2TargetEndpoint
// for targets). Space-separated, with a space at both ends, so that a lookup is
// strings.Contains(list, " "+code+" ").
const (
	sourceCodes = " AF AN AR AS AY AZ BA BE BG BN BR BS CA CS CY DA DE EL EN EO ES ET EU FA FI FR GA GL GN" +
		" GU HA HE HI HR HT HU HY ID IG IS IT JA JV KA KK KO KY LA LB LN LT LV MG MI MK ML MN MR MS MT MY" +
		" NB NE NL OC OM PA PL PS PT QU RO RU SA SK SL SQ SR ST SU SV SW TA TE TG TH TK TL TN TR TS TT UK" +
		" UR UZ VI WO XH YI ZH ZU "
	targetCodes = " AF AN AR AS AY AZ BA BE BG BN BR BS CA CS CY DA DE EL EN-GB EN-US EO ES ES-419 ET EU FA FI" +
		" FR GA GL GN GU HA HE HI HR HT HU HY ID IG IS IT JA JV KA KK KO KY LA LB LN LT LV MG MI MK ML MN" +
		" MR MS MT MY NB NE NL OC OM PA PL PS PT-BR PT-PT QU RO RU SA SK SL SQ SR ST SU SV SW TA TE TG TH" +
		" TK TL TN TR TS TT UK UR UZ VI WO XH YI ZH ZH-HANS ZH-HANT ZU "
	// formalityCodes are the targets with the "formality" feature.
	formalityCodes = " DE ES ES-419 FR IT JA NL PL PT-BR PT-PT RU "
)

// Tags whose parent chain decides a DeepL variant.
var (
	tagEN001 = language.MustParse("en-001")
	tagPTPT  = language.MustParse("pt-PT")
	tagES419 = language.MustParse("es-419")
)

func inList(list, code string) bool { return strings.Contains(list, " "+code+" ") }

// baseCode is the upper-case DeepL base code of t: "EN" for en-GB, "NB" for no, "TL" for
// fil, "ZH" for cmn. It is "" for language.Und.
func baseCode(t language.Tag) string {
	if t == language.Und {
		return ""
	}
	b, _ := t.Base()
	switch s := b.String(); s {
	case "no":
		return "NB"
	case "fil":
		return "TL"
	case "cmn":
		return "ZH"
	default:
		return strings.ToUpper(s)
	}
}

// inChain reports whether t or one of its parents is p.
func inChain(t, p language.Tag) bool {
	for ; t != language.Und; t = t.Parent() {
		if t == p {
			return true
		}
	}
	return false
}

// targetCode maps t to a DeepL target_lang, or a KindUnsupported error.
func (e *Engine) targetCode(t language.Tag) (string, error) {
	if t == language.Und {
		return "", e.errorf(translate.KindInvalidInput, "target language is required")
	}
	code := baseCode(t)
	switch code {
	case "EN":
		code = "EN-US"
		if inChain(t, tagEN001) {
			code = "EN-GB"
		}
	case "PT":
		code = "PT-BR"
		if inChain(t, tagPTPT) {
			code = "PT-PT"
		}
	case "ZH":
		code = "ZH-HANS"
		if s, _ := t.Script(); s.String() == "Hant" {
			code = "ZH-HANT"
		}
	case "ES":
		if inChain(t, tagES419) {
			code = "ES-419"
		}
	}
	if !inList(targetCodes, code) {
		return "", e.errorf(translate.KindUnsupported, "target language %s is not supported by DeepL", t)
	}
	return code, nil
}

// sourceCode maps t to a DeepL source_lang ("" for language.Und: detect), or a
// KindUnsupported error.
func (e *Engine) sourceCode(t language.Tag) (string, error) {
	if t == language.Und {
		return "", nil
	}
	code := baseCode(t)
	if !inList(sourceCodes, code) {
		return "", e.errorf(translate.KindUnsupported, "source language %s is not supported by DeepL", t)
	}
	return code, nil
}

func supportsFormality(target string) bool { return inList(formalityCodes, target) }

// parseCode turns a DeepL code ("EN", "EN-GB", "ZH-HANS") into a tag; language.Und if it
// does not parse.
func parseCode(code string) language.Tag {
	t, err := language.Parse(code)
	if err != nil {
		return language.Und
	}
	return t
}
