package main

import (
	"net/http"

	"github.com/fanyi-go/translate"
)

// A response's code is 0 on success; otherwise the HTTP status times 100 plus a number that
// tells failures with the same status apart. The README's table lists them all; keep it in
// step with this file (TestErrorTable checks the table against kindCodes).
const (
	codeOK = 0

	codeBadRequest     = 40001 // the body is not valid JSON for this endpoint
	codeInvalidInput   = 40002 // translate.KindInvalidInput: empty text, bad language tag, ...
	codeBadUTF8        = 40003 // the body is not valid UTF-8 (or escapes half a surrogate pair)
	codeDuplicate      = 40004 // a member name appears twice in one object
	codeNameCase       = 40005 // a member name differs from a field's only in case (TEXT for text)
	codeBudgetExceeded = 40201 // translate.KindBudgetExceeded: the daily budget is spent
	codeNotFound       = 40401
	codeMethod         = 40501
	codeTooLarge       = 41301 // the body exceeds -max-body, or a batch exceeds -max-batch
	codeMediaType      = 41501 // Content-Type is not application/json
	codeCharset        = 41502 // Content-Type names a charset other than utf-8
	codeUnsupported    = 42201 // translate.KindUnsupported: no engine translates this pair or option
	codeTextTooLong    = 42202 // translate.KindTextTooLong
	codeRateLimited    = 42901 // translate.KindRateLimited: Retry-After says when to come back
	codeQuota          = 42902 // translate.KindQuotaExhausted: the engines' quotas are spent
	codeCanceled       = 49901 // translate.KindCanceled with the client gone (nginx's 499)
	codeInternal       = 50001 // translate.KindUnknown
	codeUnauthorized   = 50201 // translate.KindUnauthorized: the server's engine credentials were refused
	codeBadOutput      = 50202 // translate.KindBadOutput: engines answered, but not with a translation
	codeNoEngine       = 50301 // translate.KindNoEngine: no engine could serve the request
	codeUnavailable    = 50302 // translate.KindUnavailable
	codeClosed         = 50303 // translate.KindClosed: the server is shutting down
	codeTimeout        = 50401 // translate.KindTimeout, or KindCanceled by the server's own deadline
)

// kindCodes maps every translate.Kind to its code.
var kindCodes = map[translate.Kind]int{
	translate.KindUnknown:        codeInternal,
	translate.KindInvalidInput:   codeInvalidInput,
	translate.KindUnsupported:    codeUnsupported,
	translate.KindUnauthorized:   codeUnauthorized,
	translate.KindQuotaExhausted: codeQuota,
	translate.KindRateLimited:    codeRateLimited,
	translate.KindUnavailable:    codeUnavailable,
	translate.KindTimeout:        codeTimeout,
	translate.KindTextTooLong:    codeTextTooLong,
	translate.KindBadOutput:      codeBadOutput,
	translate.KindBudgetExceeded: codeBudgetExceeded,
	translate.KindNoEngine:       codeNoEngine,
	translate.KindCanceled:       codeTimeout,
	translate.KindClosed:         codeClosed,
}

// codeOf returns the code of a translation error. clientGone tells a KindCanceled caused by
// the caller hanging up (499) from one caused by the server's own timeout (504).
func codeOf(err error, clientGone bool) int {
	k := translate.KindOf(err)
	if k == translate.KindCanceled && clientGone {
		return codeCanceled
	}
	if c, ok := kindCodes[k]; ok {
		return c
	}
	return codeInternal
}

// status is the HTTP status of a code.
func status(code int) int {
	if code == codeOK {
		return http.StatusOK
	}
	return code / 100
}
