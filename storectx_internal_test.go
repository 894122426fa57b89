package translate

import (
	"crypto/sha256"
	"strconv"
	"testing"

	"github.com/fanyi-go/translate/internal/lang"
)

// TestContentDigestBytes: the digest hashes exactly what the first store's streaming hasher
// did (each field and a NUL, the format and glossary revision when not text and none, then
// the text), so replicas of two versions share keys.
func TestContentDigestBytes(t *testing.T) {
	tgt := &lang.Info{Full: "es-Latn"}
	src := &lang.Info{Key: "en"}
	for _, r := range []*request{
		{Request: Request{Text: "hello", Scene: 2, Style: 1}, src: src, tgt: tgt},
		{Request: Request{Text: "<b>hi</b>"}, tgt: tgt, key: keyFields{format: FormatHTML}},
	} {
		h := sha256.New()
		for _, f := range []string{"", r.tgt.Full, strconv.Itoa(int(r.Scene)), strconv.Itoa(int(r.Style))} {
			if r.src != nil && f == "" {
				f = r.src.Key
			}
			h.Write([]byte(f))
			h.Write([]byte{0})
		}
		if r.key.format != FormatText {
			h.Write([]byte(r.key.format.String() + "\x00" + "" + "\x00"))
		}
		h.Write([]byte(r.Text))
		var want [sha256.Size]byte
		h.Sum(want[:0])
		if got := contentDigest(r); got != want {
			t.Errorf("contentDigest(%q, %v) = %x, want %x", r.Text, r.key.format, got, want)
		}
	}
}
