package deadline

import (
	"context"
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

// Span returns when a request that started at t0 starts and must end, on Now's clock: total
// after t0, or ctx's deadline when it comes first. A ctx deadline already past at the start
// counts as the start: the request fails at once, as with any deadline past, and no instant
// lies so far back that arithmetic on it could overflow. total must be far from overflowing
// (the Client bounds it by an hour).
func Span(ctx context.Context, t0 time.Time, total time.Duration) (start, end int64) {
	start = At(t0)
	end = start + int64(total)
	if d, ok := ctx.Deadline(); ok {
		end = min(end, max(At(d), start))
	}
	return start, end
}

// Backoff returns the wait before retry n+1 (n calls made): d x 4^(n-1), scaled by 0.8 +
// 0.4u for a draw u in [0, 1) (+-20% jitter).
func Backoff(d time.Duration, n int, u float64) time.Duration {
	for i := 1; i < n; i++ {
		d *= 4
	}
	return time.Duration(float64(d) * (0.8 + 0.4*u))
}
