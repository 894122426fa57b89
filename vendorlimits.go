package translate

import (
	"time"

	"github.com/fanyi-go/translate/internal/httpx/retryafter"
)

// lowRequests is how few requests left in a vendor's window count as running low: from
// there on the Client spreads the remaining requests over the time to the window's reset.
const lowRequests = 5

// heedLimits slows e when the vendor says its rate limits run low (EngineResult.Limits),
// before the vendor answers 429. It runs after every call that reported limits and was
// billed or succeeded, and applies this rule to each window the vendor reported:
//
//   - A window is ignored when its Remaining is negative (not reported) or its Reset is not
//     positive (unknown: nothing says how long to wait). A Reset longer than 5 minutes is
//     taken as 5 minutes, so an absurd header cannot take an engine out for good.
//   - Nothing left (Remaining 0, requests or tokens): the engine is out until the reset,
//     as after a Retry-After.
//   - Few requests left (1..lowRequests): the remaining requests are spread over the time
//     to the reset: the engine rests Reset/(Remaining+1) after the call, so that the
//     last request lands near the reset rather than at once.
//
// A resting engine is left out of routing like one cooling down after a Retry-After
// (reason "out"); other engines serve meanwhile. Tokens are only heeded at 0: a token
// count says nothing of how many calls are left without knowing a call's size. A rest
// only ever extends the time the engine is out. Going out on an exhausted window is logged
// once (warn), when the engine was not out already.
func (c *Client) heedLimits(e *engine, l *VendorLimits, now int64) {
	rest := max(limitRest(l.RemainingRequests, l.ResetRequests, lowRequests),
		limitRest(l.RemainingTokens, l.ResetTokens, 0))
	if rest <= 0 {
		return
	}
	until := now + int64(rest)
	if until <= e.coolUntil.Load() {
		return
	}
	exhausted := (l.RemainingRequests == 0 && l.ResetRequests > 0) || (l.RemainingTokens == 0 && l.ResetTokens > 0)
	wasOut := now < e.offUntil.Load()
	e.outFor(&e.coolUntil, until)
	if exhausted && !wasOut {
		c.obs.warn("engine out until the vendor's rate-limit window resets", e.name)
	}
}

// limitRest is how long an engine should rest after a report of one window: remaining
// calls (or tokens) left before reset; low is the remaining count from which the rest
// is spread over the window (0: only an empty window counts).
func limitRest(remaining int64, reset time.Duration, low int64) time.Duration {
	if remaining < 0 || reset <= 0 {
		return 0
	}
	reset = retryafter.Clamp(reset)
	switch {
	case remaining == 0:
		return reset
	case remaining <= low:
		return reset / time.Duration(remaining+1)
	}
	return 0
}
