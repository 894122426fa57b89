// Package storekey builds the keys a Client hands its Store for one request's content: the
// content's digest (the second-level cache key) and the request id bound to that content.
// Both are the same in every process, so they hash full language keys, never a process's
// interned ids. Which requests may use a shared entry stays in the root package.
package storekey

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/fanyi-go/translate/internal/lang"
)

// Content is what a request's digest covers.
type Content struct {
	Source       string // the source language's key; "" when detected
	Target       string // the target language's full key
	Scene, Style int64
	// Format and Revision are the format's name and the glossary's revision; both are
	// hashed when Format is not "" (a format other than text, or a glossary), else neither.
	Format, Revision string
	// Placeholders stands for the Client's placeholder settings when they are not the
	// default ones (hex digits); "" for the default, which leaves the digest as it was.
	Placeholders string
	Text         string
}

// Sum hashes the content with SHA-256.
func (c *Content) Sum() [sha256.Size]byte {
	var stack [512]byte // a short text hashes without an allocation
	buf := stack[:0]
	if c.Placeholders != "" { // first, behind a byte no language key starts with: no digest without it is the same
		buf = append(append(append(buf, 1), c.Placeholders...), 0)
	}
	buf = append(buf, c.Source...)
	buf = append(append(buf, 0), c.Target...)
	buf = strconv.AppendInt(append(buf, 0), c.Scene, 10)
	buf = strconv.AppendInt(append(buf, 0), c.Style, 10)
	buf = append(buf, 0)
	if c.Format != "" {
		buf = append(append(append(append(buf, c.Format...), 0), c.Revision...), 0)
	}
	buf = append(buf, c.Text...)
	return sha256.Sum256(buf)
}

// Digest is a request's content digest in hex, computed at most once per source and
// glossary revision (a detected source, or a glossary updated meanwhile, changes the
// content). The zero value is empty.
type Digest struct {
	hex string
	src *lang.Info
	rev string
}

// Stale reports whether the digest must be (re)computed for source src and revision rev.
func (d *Digest) Stale(src *lang.Info, rev string) bool {
	return d.hex == "" || d.src != src || d.rev != rev
}

// Set keeps sum, the digest for source src and revision rev.
func (d *Digest) Set(sum [sha256.Size]byte, src *lang.Info, rev string) {
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	d.hex, d.src, d.rev = string(h[:]), src, rev
}

// Hex is the digest in hex, "" before Set.
func (d *Digest) Hex() string { return d.hex }

// RequestID binds the caller's request id to the content's digest in hex: the id, "#" and
// its first 32 hex digits. An id reused with other content is another id on every replica.
func RequestID(id, hex string) string { return id + "#" + hex[:32] }

// Placeholders is what a Client's placeholder settings add to its keys: 28 hex digits of a
// SHA-256 of the syntax bits and the pattern's source (the Store's keys and request ids),
// and the same digits as private-use subtags "p" and 7 digits each (the memory's target).
// The caller passes none for its default settings, which add nothing.
func Placeholders(syntax uint64, pattern string, hasPattern bool) (digits, subtags string) {
	b := strconv.AppendUint(nil, syntax, 10)
	if hasPattern {
		b = append(append(b, 0), pattern...)
	}
	sum := sha256.Sum256(b)
	digits = hex.EncodeToString(sum[:14])
	return digits, PrivateSubtags('p', digits)
}

// PrivateSubtags writes digits as private-use subtags joined by "-", each of tag and up to
// 7 digits: PrivateSubtags('g', "0123456789") is "g0123456-g789".
func PrivateSubtags(tag byte, digits string) string {
	b := make([]byte, 0, len(digits)+2*(len(digits)/7+1))
	for i := 0; i < len(digits); i += 7 {
		if i > 0 {
			b = append(b, '-')
		}
		b = append(append(b, tag), digits[i:min(i+7, len(digits))]...)
	}
	return string(b)
}
