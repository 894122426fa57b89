// Package retryafter parses the delays vendors send in headers (Retry-After, retry-after-ms,
// x-ratelimit-reset-*) into durations that are always within [0, Max].
//
// A vendor's header is untrusted input: "Retry-After: 9223372037" or "1e300" must not
// become a negative duration that overflows, nor an hour-long outage. Every function here
// returns 0 for anything malformed and clamps what parses to Max.
//
// It has no dependency on the translate package, so that the root package can clamp an
// engine's own Error.RetryAfter with the same Max.
package retryafter

import (
	"net/http"
	"strings"
	"time"
)

// Max is the longest delay a vendor header can impose: 5 minutes. A longer Retry-After is
// cut to Max; the Client clamps an engine's Error.RetryAfter to it as well.
const Max = 5 * time.Minute

// maxLen bounds the header values looked at; a longer value is malformed.
const maxLen = 64

// Header parses a Retry-After header value, in delay-seconds ("120", also "1.5") or as an
// HTTP date relative to now. It returns 0 for an empty, negative, malformed ("soon", "NaN",
// "Inf", "1e3", "+5") or past value, and Max for anything longer than Max.
func Header(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > maxLen {
		return 0
	}
	if d, ok := decimal(v, time.Second); ok {
		return d
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	return Clamp(t.Sub(now))
}

// Millis parses a delay in milliseconds, such as OpenAI's retry-after-ms ("250", "1.5"),
// with the rules of Header.
func Millis(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > maxLen {
		return 0
	}
	d, _ := decimal(v, time.Millisecond)
	return d
}

// Reset parses a rate-limit window's reset time as OpenAI's x-ratelimit-reset-* headers
// send it: a Go-style duration ("1s", "6m0s", "20ms", "1h2m3.5s"), or plain seconds ("30").
// It returns 0 for a malformed or negative value, and clamps to limit (Max when limit is 0).
func Reset(v string, limit time.Duration) time.Duration {
	if limit <= 0 {
		limit = Max
	}
	v = strings.TrimSpace(v)
	if v == "" || len(v) > maxLen {
		return 0
	}
	if d, ok := decimal(v, time.Second); ok {
		return min(d, limit)
	}
	if v[0] == '-' || v[0] == '+' {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0
	}
	return min(d, limit)
}

// Clamp returns d within [0, Max].
func Clamp(d time.Duration) time.Duration {
	return max(0, min(d, Max))
}

// decimal parses digits with an optional fraction ("12", "1.5") as a count of unit, clamped
// to Max. Anything else (signs, exponents, NaN, Inf, spaces) is not ok.
func decimal(v string, unit time.Duration) (time.Duration, bool) {
	whole, frac, hasDot := strings.Cut(v, ".")
	if whole == "" || !digits(whole) || (hasDot && (frac == "" || !digits(frac))) {
		return 0, false
	}
	limit := int64(Max / unit) // whole units that still fit within Max
	var n int64
	for i := 0; i < len(whole); i++ {
		n = n*10 + int64(whole[i]-'0')
		if n > limit {
			return Max, true
		}
	}
	d := time.Duration(n) * unit
	// Up to 9 fraction digits are enough for nanoseconds of a second.
	scale := unit
	for i := 0; i < len(frac) && i < 9; i++ {
		scale /= 10
		d += time.Duration(frac[i]-'0') * scale
	}
	return min(d, Max), true
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
