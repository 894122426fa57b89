package deadline

import (
	"math"
	"time"
	"unicode/utf8"
)

// Tokens estimates the language-model tokens of texts, generously: one per 4 bytes of ASCII
// (English runs at about 4 characters a token) and one per other character (a CJK character
// is one token or more, other scripts take fewer). It reads each text once.
func Tokens(texts []string) int {
	n := 0
	for _, t := range texts {
		ascii := 0
		for i := 0; i < len(t); {
			if t[i] < utf8.RuneSelf {
				ascii++
				i++
				continue
			}
			_, size := utf8.DecodeRuneInString(t[i:])
			i += size
			n++
		}
		n += (ascii + 3) / 4
	}
	return n
}

// Grown returns base plus perK for every 1,000 tokens of texts (see Tokens), at most the
// longest time.Duration: a call's timeout that grows with its length.
func Grown(base, perK time.Duration, texts []string) time.Duration {
	if perK <= 0 {
		return base
	}
	add := float64(perK) * float64(Tokens(texts)) / 1000
	if add >= float64(math.MaxInt64-base) {
		return math.MaxInt64
	}
	return base + time.Duration(add)
}

// Reserve is the time an attempt leaves, before the request's deadline, for the call after
// it when another engine could make that call: a quarter of the request's deadline total,
// or half the time left when less is left. Each attempt then ends early enough for the next
// to be made, and none is starved by the reserves of the calls after it.
func Reserve(total, left time.Duration) time.Duration {
	return max(0, min(total/4, left/2))
}
