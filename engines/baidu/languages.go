package baidu

import (
	"github.com/fanyi-go/translate/engines/internal/langcode"
	"golang.org/x/text/language"
)

// baiduCodes lists the languages Baidu translates between, in the order of
// Profile.Languages: each as a BCP 47 tag with Baidu's code for it. It is the one list both
// code and tagOf read; never modified.
var baiduCodes = [...]struct{ tag, code string }{
	{"zh", "zh"}, {"zh-Hant", "cht"}, {"yue", "yue"}, {"lzh", "wyw"}, {"en", "en"},
	{"ja", "jp"}, {"ko", "kor"}, {"fr", "fra"}, {"es", "spa"}, {"th", "th"}, {"ar", "ara"},
	{"ru", "ru"}, {"pt", "pt"}, {"de", "de"}, {"it", "it"}, {"el", "el"}, {"nl", "nl"},
	{"pl", "pl"}, {"bg", "bul"}, {"et", "est"}, {"da", "dan"}, {"fi", "fin"}, {"cs", "cs"},
	{"ro", "rom"}, {"sl", "slo"}, {"sv", "swe"}, {"hu", "hu"}, {"vi", "vie"},
}

// codeOf maps a tag of baiduCodes (as written there) to Baidu's code, and tagOfCode maps
// Baidu's code back to the parsed tag. Both are built once from baiduCodes and never
// modified.
var codeOf, tagOfCode = codeTables()

// codeTables builds codeOf and tagOfCode from baiduCodes.
func codeTables() (map[string]string, map[string]language.Tag) {
	codes := make(map[string]string, len(baiduCodes))
	tags := make(map[string]language.Tag, len(baiduCodes))
	for _, c := range baiduCodes {
		codes[c.tag] = c.code
		tags[c.code] = language.MustParse(c.tag)
	}
	return codes, tags
}

// code returns Baidu's code for t, "" when Baidu does not translate it. Only t's explicit
// base language counts (langcode.Base gives "", which has no code, for und and private
// use), except for Chinese, where Traditional script, explicit or implied by the region
// (zh-TW, zh-HK), picks "cht".
func code(t language.Tag) string {
	base, _ := langcode.Base(t)
	if base == "zh" && traditional(t) {
		return codeOf["zh-Hant"]
	}
	return codeOf[base]
}

// traditional reports whether t is written, or most likely written, in Traditional script.
func traditional(t language.Tag) bool {
	s, _ := t.Script()
	return s.String() == "Hant"
}

// tagOf maps a Baidu code back to a tag, language.Und when unknown ("", "auto", or a code
// Baidu does not send).
func tagOf(c string) language.Tag {
	if t, ok := tagOfCode[c]; ok {
		return t
	}
	return language.Und
}

// languages lists the tags Baidu translates between, for Profile.Languages.
func languages() []string {
	out := make([]string, len(baiduCodes))
	for i, c := range baiduCodes {
		out[i] = c.tag
	}
	return out
}
