package baidu

import "golang.org/x/text/language"

// code returns Baidu's code for t, "" when Baidu does not translate it.
func code(t language.Tag) string {
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

// tagOf maps a Baidu code back to a tag, language.Und when unknown.
func tagOf(c string) language.Tag {
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
	if err != nil || code(t) != c {
		return language.Und
	}
	return t
}

// languages lists the tags Baidu translates between, for Profile.Languages.
func languages() []string {
	return []string{
		"zh", "zh-Hant", "yue", "lzh", "en", "ja", "ko", "fr", "es", "th", "ar", "ru", "pt",
		"de", "it", "el", "nl", "pl", "bg", "et", "da", "fi", "cs", "ro", "sl", "sv", "hu", "vi",
	}
}
