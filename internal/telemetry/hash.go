package telemetry

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

// TextHash is a keyed hash of texts, to correlate log lines without logging the text.
// The zero TextHash is keyed with the empty key; NewTextHash draws a random one.
type TextHash struct {
	key []byte
}

// NewTextHash returns a TextHash under a key drawn at random.
func NewTextHash() TextHash {
	key := make([]byte, 32)
	rand.Read(key)
	return TextHash{key: key}
}

// Sum returns the first 8 hex digits of HMAC-SHA256 of s under h's key.
func (h TextHash) Sum(s string) string {
	m := hmac.New(sha256.New, h.key)
	m.Write([]byte(s))
	var sum [sha256.Size]byte
	return hex.EncodeToString(m.Sum(sum[:0])[:4])
}
