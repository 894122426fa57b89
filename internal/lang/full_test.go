package lang

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFullKeys pins the full-key rule: a region is kept unless it is the likely region of the
// base language and script.
func TestFullKeys(t *testing.T) {
	cases := []struct{ tag, full string }{
		// One Simplified Chinese.
		{"zh", "zh-Hans"}, {"zh-CN", "zh-Hans"}, {"zh-Hans", "zh-Hans"}, {"zh-Hans-CN", "zh-Hans"},
		{"ZH-hans-cn", "zh-Hans"}, {"und-CN", "zh-Hans"},
		// Traditional Chinese: Taiwan is the default, Hong Kong is not.
		{"zh-TW", "zh-Hant"}, {"zh-Hant", "zh-Hant"}, {"zh-Hant-TW", "zh-Hant"},
		{"zh-HK", "zh-Hant-HK"}, {"zh-Hant-HK", "zh-Hant-HK"}, {"zh-SG", "zh-Hans-SG"},
		// English: US is the likely region of en.
		{"en", "en-Latn"}, {"en-US", "en-Latn"}, {"en-Latn-US", "en-Latn"},
		{"en-GB", "en-Latn-GB"}, {"EN-gb", "en-Latn-GB"}, {"en-AU", "en-Latn-AU"},
		// Portuguese: Brazil is the likely region of pt.
		{"pt", "pt-Latn"}, {"pt-BR", "pt-Latn"}, {"pt-PT", "pt-Latn-PT"},
		// Spanish: Spain is the likely region of es; Latin America is not a default.
		{"es", "es-Latn"}, {"es-ES", "es-Latn"}, {"es-419", "es-Latn-419"}, {"es-MX", "es-Latn-MX"},
		// Scripts.
		{"sr", "sr-Cyrl"}, {"sr-RS", "sr-Cyrl"}, {"sr-Latn", "sr-Latn"}, {"sr-Latn-RS", "sr-Latn"},
		{"pa-PK", "pa-Arab"}, {"pa-Arab-PK", "pa-Arab"}, {"pa", "pa-Guru"},
		// Deprecated codes as x/text canonicalises them.
		{"iw", "he-Hebr"}, {"in", "id-Latn"}, {"tl", "fil-Latn"},
		// Variants and extensions are kept.
		{"de-CH-1996", "de-Latn-CH-1996"}, {"de-1901", "de-Latn-1901"},
		{"en-u-nu-arab", "en-Latn-u-nu-arab"}, {"en-US-x-pirate", "en-Latn-x-pirate"},
	}
	c := NewCache()
	for _, tc := range cases {
		in, err := c.Lookup(tc.tag)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", tc.tag, err)
		}
		if in.Full != tc.full {
			t.Errorf("Lookup(%q).Full = %q, want %q", tc.tag, in.Full, tc.full)
		}
	}
}

// TestFullIDs checks that FullID tells apart exactly the tags whose full keys differ.
func TestFullIDs(t *testing.T) {
	c := NewCache()
	id := func(tag string) int {
		t.Helper()
		in, err := c.Lookup(tag)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", tag, err)
		}
		if in.FullID <= 0 {
			t.Fatalf("Lookup(%q).FullID = %d, want > 0", tag, in.FullID)
		}
		return in.FullID
	}
	same := [][]string{
		{"zh", "zh-CN", "zh-Hans", "zh-Hans-CN"},
		{"zh-TW", "zh-Hant-TW", "zh-Hant"},
		{"en", "en-US"},
		{"pt", "pt-BR"},
	}
	for _, group := range same {
		for _, tag := range group[1:] {
			if id(tag) != id(group[0]) {
				t.Errorf("FullID(%s) != FullID(%s), want equal", tag, group[0])
			}
		}
	}
	apart := [][2]string{
		{"pt-BR", "pt-PT"}, {"en-US", "en-GB"}, {"es", "es-419"}, {"zh-TW", "zh-HK"},
		{"zh", "zh-TW"}, {"zh-CN", "zh-SG"}, {"sr-Cyrl", "sr-Latn"}, {"de", "de-CH"},
	}
	for _, p := range apart {
		if id(p[0]) == id(p[1]) {
			t.Errorf("FullID(%s) == FullID(%s), want different", p[0], p[1])
		}
	}
	// Key, unlike Full, is shared by regional variants: engines are matched by it.
	a, _ := c.Lookup("pt-BR")
	b, _ := c.Lookup("pt-PT")
	if a.ID != b.ID {
		t.Errorf("pt-BR and pt-PT have different IDs %d, %d; engines match by base and script", a.ID, b.ID)
	}
}

func TestFullIDsBounded(t *testing.T) {
	c := NewCache()
	c.full = make(map[string]int, MaxFullIDs)
	for i := range MaxFullIDs - 1 {
		c.full["x"+strconv.Itoa(i)] = i + 1
	}
	last, err := c.Lookup("pt-PT")
	if err != nil || last.FullID != MaxFullIDs {
		t.Fatalf("Lookup(pt-PT) = %+v, %v; want FullID %d", last, err, MaxFullIDs)
	}
	over, err := c.Lookup("es-419")
	if err != nil || over.FullID != 0 || over.Full != "es-Latn-419" {
		t.Fatalf("Lookup(es-419) past the bound = FullID %d Full %q, %v; want 0 and es-Latn-419", over.FullID, over.Full, err)
	}
	if again, _ := c.Lookup("pt-PT"); again.FullID != MaxFullIDs {
		t.Errorf("pt-PT FullID changed to %d", again.FullID)
	}
	if got := len(c.full); got != MaxFullIDs {
		t.Errorf("%d full keys interned, bound %d", got, MaxFullIDs)
	}
}

// FuzzLookup checks that Lookup never panics and that normalising is idempotent: the
// canonical tag and the full key, looked up again, give the same key, full key and ids.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{
		"en", "zh-CN", "zh-Hant-HK", "pt-BR", "es-419", "en-US-x-pirate", "de-CH-1996",
		"und-TW", "iw", "sh", "en-US-POSIX", "x-priv", "zh-min-nan", "art-lojban", "i-klingon",
		"qaa-Qabx-AA", "en-u-ca-gregory-nu-arab", "", "!!", "en-", "-en", "zh_TW",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tag string) {
		c := NewCache()
		in, err := c.Lookup(tag)
		if err != nil {
			return
		}
		if in.ID <= 0 || in.FullID <= 0 || in.Key == "" || in.Full == "" {
			t.Fatalf("Lookup(%q) = %+v", tag, in)
		}
		for _, again := range []string{in.Canon, in.Full} {
			got, err := c.Lookup(again)
			if err != nil {
				t.Fatalf("Lookup(%q) gave %q, which does not parse: %v", tag, again, err)
			}
			type norm struct {
				Key, Full  string
				ID, FullID int
			}
			want := norm{in.Key, in.Full, in.ID, in.FullID}
			if diff := cmp.Diff(want, norm{got.Key, got.Full, got.ID, got.FullID}); diff != "" {
				t.Fatalf("Lookup(%q) then Lookup(%q) (-first +second):\n%s", tag, again, diff)
			}
		}
		if got, _ := c.Lookup(in.Canon); got.Canon != in.Canon {
			t.Fatalf("Canon of %q is %q, and of that %q", tag, in.Canon, got.Canon)
		}
	})
}
