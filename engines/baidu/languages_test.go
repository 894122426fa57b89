package baidu

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"
)

// TestCodesBothWays pins every language Baidu translates, both ways: code(tag) and
// tagOf(code), and what neither direction maps. The list is written out here, apart from
// baiduCodes, and was checked against the switch statements baiduCodes replaced.
func TestCodesBothWays(t *testing.T) {
	pairs := []struct{ tag, code string }{
		{"zh", "zh"}, {"zh-Hant", "cht"}, {"yue", "yue"}, {"lzh", "wyw"}, {"en", "en"},
		{"ja", "jp"}, {"ko", "kor"}, {"fr", "fra"}, {"es", "spa"}, {"th", "th"}, {"ar", "ara"},
		{"ru", "ru"}, {"pt", "pt"}, {"de", "de"}, {"it", "it"}, {"el", "el"}, {"nl", "nl"},
		{"pl", "pl"}, {"bg", "bul"}, {"et", "est"}, {"da", "dan"}, {"fi", "fin"},
		{"cs", "cs"}, {"ro", "rom"}, {"sl", "slo"}, {"sv", "swe"}, {"hu", "hu"}, {"vi", "vie"},
	}
	eq := cmp.Comparer(func(a, b language.Tag) bool { return a == b })
	var tags []string
	for _, p := range pairs {
		tag := language.MustParse(p.tag)
		if got := code(tag); got != p.code {
			t.Errorf("code(%s) = %q, want %q", p.tag, got, p.code)
		}
		if diff := cmp.Diff(tag, tagOf(p.code), eq); diff != "" {
			t.Errorf("tagOf(%q) (-want +got):\n%s", p.code, diff)
		}
		tags = append(tags, p.tag)
	}
	if diff := cmp.Diff(tags, languages()); diff != "" {
		t.Errorf("languages() (-want +got):\n%s", diff)
	}
	for _, c := range []string{"", "auto", "fr", "ja", "ZH", "CHT", "zh-Hant", "en-US", "lzh", "ron", " en"} {
		if got := tagOf(c); got != language.Und {
			t.Errorf("tagOf(%q) = %s, want und", c, got)
		}
	}
	for _, in := range []string{"und", "und-TW", "und-Hant", "qaa", "he", "cmn", "mn-Mong"} {
		if got := code(language.MustParse(in)); got != "" {
			t.Errorf("code(%s) = %q, want none", in, got)
		}
	}
	for in, want := range map[string]string{"zh-TW": "cht", "zh-HK": "cht", "zh-MO": "cht",
		"zh-Hant-CN": "cht", "zh-Hans-TW": "zh", "zh-SG": "zh", "zh-x-private": "zh", "ro-MD": "rom", "pt-BR": "pt"} {
		if got := code(language.MustParse(in)); got != want {
			t.Errorf("code(%s) = %q, want %q", in, got, want)
		}
	}
}
