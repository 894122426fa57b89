// Package reqid makes request ids: 128 random bits written as 32 lowercase hex digits into
// a buffer the caller owns, so that an id costs no allocation of its own (the caller keeps
// the buffer beside the value the id belongs to).
package reqid

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"unsafe"
)

// Or returns id, or, when id is "", a new random 128-bit id written in hex into buf. The
// string returned for a new id shares buf's memory: buf must not change while it is used.
func Or(id string, buf *[32]byte) string {
	if id != "" {
		return id
	}
	PutHex(buf[:16], rand.Uint64())
	PutHex(buf[16:], rand.Uint64())
	return unsafe.String(&buf[0], len(buf))
}

// PutHex writes x into dst[:16] in lowercase hex, as hex.Encode writes its big-endian
// bytes, eight digits at a time (hex.Encode's loop was a tenth of a miss's id).
func PutHex(dst []byte, x uint64) {
	binary.LittleEndian.PutUint64(dst[:8], hexDigits(uint32(x>>32)))
	binary.LittleEndian.PutUint64(dst[8:16], hexDigits(uint32(x)))
}

// hexDigits returns the eight hex digits of x, the most significant in the lowest byte.
func hexDigits(x uint32) uint64 {
	n := uint64(x) // spread the nibbles, one a byte: nibble i in byte i
	n = (n | n<<16) & 0x0000ffff0000ffff
	n = (n | n<<8) & 0x00ff00ff00ff00ff
	n = (n | n<<4) & 0x0f0f0f0f0f0f0f0f
	n = bits.ReverseBytes64(n)
	letters := (n + 0x0606060606060606) >> 4 & 0x0101010101010101 // 1 in each byte >= 10
	return n + 0x3030303030303030 + letters*('a'-'0'-10)
}
