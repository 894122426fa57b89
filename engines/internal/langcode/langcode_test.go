package langcode

import (
	"errors"
	"strconv"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"
)

func TestBase(t *testing.T) {
	for in, want := range map[string]string{
		"pt-PT": "pt", "zh-Hant": "zh", "zh-TW": "zh", "en": "en", "mni-Mtei": "mni",
		"und": "", "und-CN": "", "qaa": "", "qtz-x-klingon": "",
	} {
		got, ok := Base(language.MustParse(in))
		if got != want || ok != (want != "") {
			t.Errorf("Base(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestLookup(t *testing.T) {
	variants := map[string]string{"pa-Arab": "pa-Arab", "pt-PT": "pt-PT", "pa-PK": "pa-PK-region"}
	aliases := map[string]string{"nb": "no", "fil": "tl"}
	for in, want := range map[string]string{
		"pt-PT":      "pt-PT",
		"pt-BR":      "pt",
		"pt":         "pt", // no explicit region: no variant
		"pa-Arab-PK": "pa-Arab",
		"pa-PK":      "pa-PK-region",
		"nb":         "no",
		"nb-NO":      "no",
		"fil":        "tl",
		"de-CH":      "de",
	} {
		tag := language.MustParse(in)
		base, _ := Base(tag)
		if got := Lookup(tag, base, variants, aliases); got != want {
			t.Errorf("Lookup(%s) = %q, want %q", in, got, want)
		}
	}
	if got := Lookup(language.MustParse("pt-PT"), "pt", nil, nil); got != "pt" {
		t.Errorf("Lookup with no tables = %q, want pt", got)
	}
}

func TestUnsupported(t *testing.T) {
	got := Unsupported("google-v3", "Google", "target", language.MustParse("qaa"))
	want := &translate.Error{Kind: translate.KindUnsupported, Engine: "google-v3",
		Message: "no Google language code for target qaa"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Unsupported (-want +got):\n%s", diff)
	}
}

func TestPairs(t *testing.T) {
	en, de, fr, und := language.English, language.German, language.French, language.Und
	got, err := Pairs("g", []string{"en", "de", "EN", "not a code", "und"}, []string{"de", "fr", "fr", ""})
	if err != nil {
		t.Fatal(err)
	}
	want := []translate.LanguagePair{
		{Source: und, Target: de}, {Source: en, Target: de},
		{Source: und, Target: fr}, {Source: en, Target: fr}, {Source: de, Target: fr},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b language.Tag) bool { return a == b })); diff != "" {
		t.Errorf("Pairs (-want +got):\n%s", diff)
	}
	if got, err := Pairs("g", nil, nil); len(got) != 0 || err != nil {
		t.Errorf("Pairs(nil, nil) = %v, %v", got, err)
	}
}

// TestPairsRefusesHugeLists: the pairs grow as the product of the sides, so a hostile
// vendor's 2,000-language list (45 KB) would cost 4 million pairs; a list of MaxLanguages is
// taken whole, one more is the engine's bad output and builds nothing.
func TestPairsRefusesHugeLists(t *testing.T) {
	codes := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "en-x-" + strconv.FormatInt(int64(i), 36)
		}
		return out
	}
	if got, err := Pairs("g", codes(MaxLanguages), codes(2)); err != nil || len(got) != 2*MaxLanguages {
		t.Errorf("Pairs of %d sources = %d pairs, %v; want %d, nil", MaxLanguages, len(got), err, 2*MaxLanguages)
	}
	for _, side := range []string{"sources", "targets"} {
		src, tgt := codes(MaxLanguages+1), codes(2)
		if side == "targets" {
			src, tgt = tgt, src
		}
		got, err := Pairs("g", src, tgt)
		var te *translate.Error
		if !errors.As(err, &te) || te.Kind != translate.KindBadOutput || te.Engine != "g" || got != nil {
			t.Errorf("%s: Pairs of %d = %d pairs, %v; want a KindBadOutput of g", side, MaxLanguages+1, len(got), err)
		}
	}
}
