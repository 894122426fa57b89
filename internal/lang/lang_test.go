package lang

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestKeys(t *testing.T) {
	cases := map[string]string{
		"zh": "zh-Hans", "zh-CN": "zh-Hans", "zh-Hans": "zh-Hans", "zh-SG": "zh-Hans",
		"zh-TW": "zh-Hant", "zh-Hant": "zh-Hant", "zh-Hant-HK": "zh-Hant", "zh-HK": "zh-Hant",
		"en": "en-Latn", "en-US": "en-Latn", "EN-gb": "en-Latn", "pt-BR": "pt-Latn",
		"sr-Latn": "sr-Latn", "sr": "sr-Cyrl", "ja": "ja-Jpan",
	}
	c := NewCache()
	for in, want := range cases {
		got, err := c.Lookup(in)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", in, err)
		}
		if got.Key != want {
			t.Errorf("Lookup(%q).Key = %q, want %q", in, got.Key, want)
		}
	}
}

func TestMalformed(t *testing.T) {
	c := NewCache()
	for _, in := range []string{"", "x", "english!", "zh_", "und"} {
		if _, err := c.Lookup(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("Lookup(%q) err = %v, want ErrMalformed", in, err)
		}
	}
}

// TestDuplicateSingleton: a tag with an extension singleton twice (BCP 47 allows each
// once; golang.org/x/text parses it anyway) is malformed: its full key, composed again,
// merged or dropped extensions ("en-a-bc-a-de" keyed as "en-Latn-a-de"), and looked up
// again changed (FuzzLookup). A singleton inside private use ("x-...") is not one.
func TestDuplicateSingleton(t *testing.T) {
	c := NewCache()
	for _, in := range []string{"en-u-ca-gregory-u-nu-arab", "en-a-bc-a-de", "en-t-ja-t-ko",
		"AA-u-00-u-00-X-0000000-u-00"} {
		if _, err := c.Lookup(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("Lookup(%q) err = %v, want ErrMalformed", in, err)
		}
	}
	for _, in := range []string{"en-u-ca-gregory-nu-arab", "en-a-bc-u-nu-arab", "en-u-00-x-u-00",
		"en-x-u-00-u-00", "en-a-bc-x-a-de", "en-0-abc-p-def", "en-1-abc-q-def"} {
		in1, err := c.Lookup(in)
		if err != nil {
			t.Errorf("Lookup(%q): %v", in, err)
			continue
		}
		if in2, err := c.Lookup(in1.Full); err != nil || in2.Full != in1.Full {
			t.Errorf("Lookup(%q).Full = %q, and of that %+v, %v", in, in1.Full, in2, err)
		}
	}
}

func TestSetMatchesByBaseAndScript(t *testing.T) {
	c := NewCache()
	s, err := NewSet(c, []string{"en", "zh-Hant"})
	if err != nil {
		t.Fatal(err)
	}
	for tag, want := range map[string]bool{"en-GB": true, "zh-TW": true, "zh-Hant-HK": true, "zh-CN": false, "zh": false, "fr": false} {
		in, _ := c.Lookup(tag)
		if got := s.Has(in.ID); got != want {
			t.Errorf("Has(%s) = %v, want %v", tag, got, want)
		}
	}
	var any *Set
	if !any.Has(12345) {
		t.Error("nil set must hold everything")
	}
	if _, err := NewSet(c, []string{"en", "!!"}); err == nil {
		t.Error("NewSet accepted a malformed tag")
	}
}

func TestLookupPair(t *testing.T) {
	c := NewCache()
	for i := 0; i < 2; i++ { // the second time from the pair cache
		s, tg, err := c.LookupPair("zh-TW", "en")
		if err != nil || s.Key != "zh-Hant" || tg.Key != "en-Latn" {
			t.Fatalf("LookupPair = %v %v %v", s, tg, err)
		}
		s, tg, err = c.LookupPair("", "zh")
		if err != nil || s != nil || tg.Key != "zh-Hans" {
			t.Fatalf("LookupPair(\"\", zh) = %v %v %v", s, tg, err)
		}
	}
	if _, _, err := c.LookupPair("en", "!!"); !errors.Is(err, ErrMalformed) {
		t.Errorf("bad target: %v", err)
	}
	if _, _, err := c.LookupPair("!!", "en"); !errors.Is(err, ErrMalformed) {
		t.Errorf("bad source: %v", err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _, _ = c.LookupPair("zh-TW", "en") }); n != 0 {
		t.Errorf("allocs = %v, want 0", n)
	}
}

func TestLookupDoesNotAllocateWhenSeen(t *testing.T) {
	c := NewCache()
	if _, err := c.Lookup("zh-TW"); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = c.Lookup("zh-TW") }); n != 0 {
		t.Errorf("allocs = %v, want 0", n)
	}
}

// TestCacheBoundsItsKeys: every key a Cache sees is kept for good, so past maxIDs a tag
// with a new key is refused (ErrTooManyLanguages), interning nothing, while tags of the
// keys it holds are still looked up.
func TestCacheBoundsItsKeys(t *testing.T) {
	defer func(n int) { maxIDs = n }(maxIDs)
	maxIDs = 3
	c := NewCache()
	for _, tag := range []string{"en", "de", "fr", "en-GB", "de-CH"} {
		if _, err := c.Lookup(tag); err != nil {
			t.Fatalf("Lookup(%s) with room: %v", tag, err)
		}
	}
	for _, tag := range []string{"ja", "zh-Hant"} {
		if in, err := c.Lookup(tag); !errors.Is(err, ErrTooManyLanguages) {
			t.Errorf("Lookup(%s) past maxIDs = %+v, %v; want ErrTooManyLanguages", tag, in, err)
		}
	}
	if n := len(c.ids); n != 3 {
		t.Errorf("the Cache holds %d keys, want 3", n)
	}
	if in, err := c.Lookup("fr-CA"); err != nil || in.ID == 0 {
		t.Errorf("Lookup(fr-CA), a key it holds: %+v, %v", in, err)
	}
}

// TestQuoteCutsWholeCharacters: a long tag is quoted cut to 40 bytes, never inside a
// character, so an error naming it stays valid UTF-8.
func TestQuoteCutsWholeCharacters(t *testing.T) {
	got := quote(strings.Repeat("é", 30)) // 60 bytes: byte 40 starts an é, byte 39 is inside one
	if !utf8.ValidString(got) || got != `"`+strings.Repeat("é", 20)+`…"` {
		t.Errorf("quote = %q", got)
	}
	got = quote("x" + strings.Repeat("é", 30)) // byte 40 is inside an é
	if !utf8.ValidString(got) || got != `"x`+strings.Repeat("é", 19)+`…"` {
		t.Errorf("quote = %q", got)
	}
}
