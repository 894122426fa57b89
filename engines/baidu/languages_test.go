package baidu

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"
)

// TestTablesMatchSwitch compares code, tagOf and languages, read from baiduCodes, with the
// switch statements they replace (switchCode, switchTagOf, switchLanguages below, copied
// verbatim), over every two- and three-letter base with the scripts and regions that
// matter to Chinese, and over every code of up to three lower-case letters.
func TestTablesMatchSwitch(t *testing.T) {
	var inputs []string
	for _, b := range letterCodes() {
		inputs = append(inputs, b)
		for _, suffix := range []string{"-Hant", "-Hans", "-Latn", "-TW", "-HK", "-MO", "-CN", "-SG", "-US", "-Hant-CN", "-Hans-TW"} {
			inputs = append(inputs, b+suffix)
		}
	}
	inputs = append(inputs, "und", "und-TW", "und-Hant", "und-CN", "qaa", "qtz-x-klingon", "cmn", "cmn-Hant", "zh-yue", "i-klingon", "art-lojban", "en-u-nu-arab", "zh-Hant-u-co-pinyin")
	tags := 0
	for _, in := range inputs {
		tag, err := language.Parse(in)
		if err != nil {
			continue
		}
		tags++
		if got, want := code(tag), switchCode(tag); got != want {
			t.Errorf("code(%s) = %q, switch said %q", tag, got, want)
		}
	}
	codes := append(letterCodes(), "", "auto", "AUTO", "Zh", "JP", "zh-Hant", "zh-TW", "en-US", "cht ", " en")
	for _, c := range baiduCodes {
		codes = append(codes, c.code, c.tag)
	}
	eq := cmp.Comparer(func(a, b language.Tag) bool { return a == b })
	for _, c := range codes {
		if diff := cmp.Diff(switchTagOf(c), tagOf(c), eq); diff != "" {
			t.Errorf("tagOf(%q) (-switch +table):\n%s", c, diff)
		}
	}
	if diff := cmp.Diff(switchLanguages(), languages()); diff != "" {
		t.Errorf("languages() (-switch +table):\n%s", diff)
	}
	t.Logf("compared %d tags and %d codes", tags, len(codes))
}

// letterCodes is every string of one to three lower-case ASCII letters.
func letterCodes() []string {
	var out []string
	for a := 'a'; a <= 'z'; a++ {
		out = append(out, string(a))
		for b := 'a'; b <= 'z'; b++ {
			out = append(out, string([]rune{a, b}))
			for c := 'a'; c <= 'z'; c++ {
				out = append(out, string([]rune{a, b, c}))
			}
		}
	}
	return out
}

// switchCode returns Baidu's code for t, "" when Baidu does not translate it.
func switchCode(t language.Tag) string {
	base, conf := t.Base()
	if conf != language.Exact {
		return ""
	}
	switch b := base.String(); b {
	case "zh":
		if s, _ := t.Script(); s.String() == "Hant" {
			return "cht"
		}
		return "zh"
	case "ja":
		return "jp"
	case "ko":
		return "kor"
	case "fr":
		return "fra"
	case "es":
		return "spa"
	case "ar":
		return "ara"
	case "bg":
		return "bul"
	case "et":
		return "est"
	case "da":
		return "dan"
	case "fi":
		return "fin"
	case "ro":
		return "rom"
	case "sl":
		return "slo"
	case "sv":
		return "swe"
	case "vi":
		return "vie"
	case "lzh":
		return "wyw"
	case "en", "th", "ru", "pt", "de", "it", "el", "nl", "pl", "cs", "hu", "yue":
		return b
	}
	return ""
}

// switchTagOf maps a Baidu code back to a tag, language.Und when unknown.
func switchTagOf(c string) language.Tag {
	switch c {
	case "", "auto":
		return language.Und
	case "cht":
		return language.TraditionalChinese
	case "jp":
		return language.Japanese
	case "kor":
		return language.Korean
	case "fra":
		return language.French
	case "spa":
		return language.Spanish
	case "ara":
		return language.Arabic
	case "bul":
		return language.Bulgarian
	case "est":
		return language.Estonian
	case "dan":
		return language.Danish
	case "fin":
		return language.Finnish
	case "rom":
		return language.Romanian
	case "slo":
		return language.Slovenian
	case "swe":
		return language.Swedish
	case "vie":
		return language.Vietnamese
	case "wyw":
		return language.Make("lzh")
	}
	t, err := language.Parse(c)
	if err != nil || switchCode(t) != c {
		return language.Und
	}
	return t
}

// switchLanguages lists the tags Baidu translates between, for Profile.Languages.
func switchLanguages() []string {
	return []string{
		"zh", "zh-Hant", "yue", "lzh", "en", "ja", "ko", "fr", "es", "th", "ar", "ru", "pt",
		"de", "it", "el", "nl", "pl", "bg", "et", "da", "fi", "cs", "ro", "sl", "sv", "hu", "vi",
	}
}
