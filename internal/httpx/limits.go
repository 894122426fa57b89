package httpx

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/internal/httpx/retryafter"
)

// MaxReset is the longest rate-limit window reset Limits reports (24 hours, a daily window);
// longer values are cut to it.
const MaxReset = 24 * time.Hour

// Limits reads the x-ratelimit-* headers OpenAI and many compatible servers send:
// x-ratelimit-remaining-requests, x-ratelimit-remaining-tokens (non-negative integers) and
// x-ratelimit-reset-requests, x-ratelimit-reset-tokens (durations such as "1s", "6m0s",
// "20ms", see retryafter.Reset, within [0, MaxReset]). A missing or malformed remaining
// count is -1, a missing or malformed reset 0. It returns nil when no header carries a
// usable value.
func Limits(h http.Header) *translate.VendorLimits {
	l := &translate.VendorLimits{
		RemainingRequests: count(h.Get("X-Ratelimit-Remaining-Requests")),
		RemainingTokens:   count(h.Get("X-Ratelimit-Remaining-Tokens")),
		ResetRequests:     retryafter.Reset(h.Get("X-Ratelimit-Reset-Requests"), MaxReset),
		ResetTokens:       retryafter.Reset(h.Get("X-Ratelimit-Reset-Tokens"), MaxReset),
	}
	if l.RemainingRequests < 0 && l.RemainingTokens < 0 && l.ResetRequests == 0 && l.ResetTokens == 0 {
		return nil
	}
	return l
}

// count parses a non-negative decimal count of at most 18 digits; anything else is -1.
func count(v string) int64 {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > 18 || v[0] == '+' || v[0] == '-' {
		return -1
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return -1
	}
	return n
}
