package storekey

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate/internal/lang"
)

func TestSum(t *testing.T) {
	long := string(make([]byte, 600)) // past the stack buffer
	cases := []struct {
		c    Content
		want string // the bytes hashed
	}{
		{Content{Source: "en", Target: "zh-Hans", Scene: 2, Style: 1, Text: "hi"}, "en\x00zh-Hans\x002\x001\x00hi"},
		{Content{Target: "de", Text: "hi"}, "\x00de\x000\x000\x00hi"},
		{Content{Source: "en", Target: "de", Format: "html", Text: "<b>hi</b>"}, "en\x00de\x000\x000\x00html\x00\x00<b>hi</b>"},
		{Content{Source: "en", Target: "de", Format: "text", Revision: "r7", Text: "hi"}, "en\x00de\x000\x000\x00text\x00r7\x00hi"},
		{Content{Source: "en", Target: "de", Revision: "ignored without Format", Text: "hi"}, "en\x00de\x000\x000\x00hi"},
		{Content{Source: "en", Target: "de", Text: long}, "en\x00de\x000\x000\x00" + long},
		{Content{Source: "en", Target: "de", Placeholders: "0a1b", Text: "hi"}, "\x010a1b\x00en\x00de\x000\x000\x00hi"},
		{Content{Target: "de", Placeholders: "0a1b", Format: "html", Text: "hi"}, "\x010a1b\x00\x00de\x000\x000\x00html\x00\x00hi"},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(sha256.Sum256([]byte(tc.want)), tc.c.Sum()); diff != "" {
			t.Errorf("Sum(%+v) is not the hash of %q (-want +got):\n%s", tc.c.Format, tc.want, diff)
		}
	}
}

func TestDigest(t *testing.T) {
	en, de := &lang.Info{Key: "en"}, &lang.Info{Key: "de"}
	sum := sha256.Sum256([]byte("x"))
	var d Digest
	type state struct {
		Hex   string
		Stale []bool // for (en, ""), (de, ""), (en, "r2")
	}
	read := func() state {
		return state{d.Hex(), []bool{d.Stale(en, ""), d.Stale(de, ""), d.Stale(en, "r2")}}
	}
	if diff := cmp.Diff(state{"", []bool{true, true, true}}, read()); diff != "" {
		t.Errorf("empty digest (-want +got):\n%s", diff)
	}
	d.Set(sum, en, "")
	if diff := cmp.Diff(state{hex.EncodeToString(sum[:]), []bool{false, true, true}}, read()); diff != "" {
		t.Errorf("after Set (-want +got):\n%s", diff)
	}
	d.Set(sum, en, "r2")
	if diff := cmp.Diff(state{hex.EncodeToString(sum[:]), []bool{true, true, false}}, read()); diff != "" {
		t.Errorf("after Set with a revision (-want +got):\n%s", diff)
	}
	if got, want := RequestID("req-1", d.Hex()), "req-1#"+hex.EncodeToString(sum[:16]); got != want {
		t.Errorf("RequestID = %q, want %q", got, want)
	}
}

func TestPrivateSubtags(t *testing.T) {
	for digits, want := range map[string]string{
		"0123456789":     "g0123456-g789",
		"0123456":        "g0123456",
		"01234567890123": "g0123456-g7890123",
		"":               "",
	} {
		if got := PrivateSubtags('g', digits); got != want {
			t.Errorf("PrivateSubtags(g, %q) = %q, want %q", digits, got, want)
		}
	}
}

// TestPlaceholders: the settings' digits are 28 hex digits, the same for the same settings
// in every process, and differ with the syntax, the pattern, and a pattern's presence.
func TestPlaceholders(t *testing.T) {
	d, sub := Placeholders(7, "", false)
	if len(d) != 28 || sub != PrivateSubtags('p', d) {
		t.Fatalf("Placeholders(7) = %q, %q", d, sub)
	}
	if d2, _ := Placeholders(7, "", false); d2 != d {
		t.Errorf("the same settings gave %q and %q", d, d2)
	}
	seen := map[string]string{d: "7"}
	for name, p := range map[string][3]any{
		"syntax 15":     {uint64(15), "", false},
		"pattern x":     {uint64(7), "x", true},
		"empty pattern": {uint64(7), "", true},
	} {
		got, _ := Placeholders(p[0].(uint64), p[1].(string), p[2].(bool))
		if other, ok := seen[got]; ok {
			t.Errorf("%s gives the digits of %s", name, other)
		}
		seen[got] = name
	}
}
