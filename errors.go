package translate

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/fanyi-go/translate/internal/enum"
	"github.com/fanyi-go/translate/internal/errtext"
)

// Kind classifies a failure. The Client decides from the Kind whether to retry the same
// engine, fail over to another or return at once (see the Failover section of the package
// documentation). The zero value is KindUnknown.
type Kind uint8

// Kinds.
const (
	KindUnknown        Kind = iota // unclassified; retried once, then failed over
	KindInvalidInput               // the request itself is wrong; returned at once
	KindUnsupported                // the engine does not translate this pair or option
	KindUnauthorized               // bad or revoked credentials
	KindQuotaExhausted             // the engine's quota for its period is spent
	KindRateLimited                // too many requests; may carry RetryAfter
	KindUnavailable                // 5xx, connection refused, overloaded
	KindTimeout                    // an attempt's timeout or the request's deadline (the Client's or ctx's) expired
	KindTextTooLong                // the text exceeds what the engine takes in one call
	KindBadOutput                  // empty, untranslated or placeholders lost
	KindBudgetExceeded             // a budget (the day's, the month's, the tenant's) does not allow the call
	KindNoEngine                   // no engine could serve the request
	KindCanceled                   // the caller canceled its ctx
	KindClosed                     // the Client was closed
)

var kindNames = enum.Kinds

// String returns the kind's snake_case name, as used in metrics: "rate_limited".
func (k Kind) String() string { return enum.Name(kindNames[:], int(k), "kind") }

// Sentinels, one per Kind, for errors.Is. A *Error matches the sentinel of its Kind.
var (
	ErrInvalidInput   = &Error{Kind: KindInvalidInput}
	ErrUnsupported    = &Error{Kind: KindUnsupported}
	ErrUnauthorized   = &Error{Kind: KindUnauthorized}
	ErrQuotaExhausted = &Error{Kind: KindQuotaExhausted}
	ErrRateLimited    = &Error{Kind: KindRateLimited}
	ErrUnavailable    = &Error{Kind: KindUnavailable}
	ErrTimeout        = &Error{Kind: KindTimeout}
	ErrTextTooLong    = &Error{Kind: KindTextTooLong}
	ErrBadOutput      = &Error{Kind: KindBadOutput}
	ErrBudgetExceeded = &Error{Kind: KindBudgetExceeded}
	ErrNoEngine       = &Error{Kind: KindNoEngine}
	// ErrClosed is returned by every call on a closed Client.
	ErrClosed = &Error{Kind: KindClosed, Message: "client closed"}
)

var sentinels = [...]*Error{
	KindInvalidInput: ErrInvalidInput, KindUnsupported: ErrUnsupported,
	KindUnauthorized: ErrUnauthorized, KindQuotaExhausted: ErrQuotaExhausted,
	KindRateLimited: ErrRateLimited, KindUnavailable: ErrUnavailable, KindTimeout: ErrTimeout,
	KindTextTooLong: ErrTextTooLong, KindBadOutput: ErrBadOutput,
	KindBudgetExceeded: ErrBudgetExceeded, KindNoEngine: ErrNoEngine, KindClosed: ErrClosed,
}

// Error is the error type of this package and of every engine adapter. Engines return it
// with the Kind of the failure; the Client returns it (or wraps one) for every failed
// request, with Attempts listing every engine it tried. It never carries a credential or the
// customer's text. The zero value is an error of KindUnknown.
type Error struct {
	Kind       Kind
	Engine     string        // the engine that failed; "" for the Client's own errors
	StatusCode int           // the vendor's HTTP status, 0 if none
	RetryAfter time.Duration // the vendor's Retry-After, 0 if none
	Message    string        // vendor message, credentials removed
	Err        error         // the underlying error, if any
	// Attempts lists every engine call of a failed request, in order (Client errors only).
	Attempts []Attempt
	// Excluded names, for a KindNoEngine error, every engine left out and why
	// ("breaker open", "pair en->xh not supported", ...).
	Excluded map[string]string
}

// Error returns "translate: <engine>: <kind> (HTTP <status>): <message>: <cause>", leaving
// out empty parts, followed by the engines tried when Attempts is set. Nested errors of this
// package are written without their own "translate: " prefix. The text is cut at 64 KiB.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("translate: ")
	e.write(&b)
	return errtext.Cut(b.String())
}

func (e *Error) write(b *strings.Builder) {
	errtext.Head(b, e.Engine, e.Kind.String(), e.StatusCode, e.Message)
	if e.Err != nil && b.Len() < errtext.Max {
		b.WriteString(": ")
		if inner, ok := e.Err.(*Error); ok && inner != nil {
			inner.write(b)
		} else {
			b.WriteString(e.Err.Error())
		}
	}
	if len(e.Attempts) > 0 {
		errtext.Attempts(b, e.tried)
	}
}

// tried yields the engine and outcome ("ok" or the failure's kind) of each attempt.
func (e *Error) tried(yield func(engine, outcome string) bool) {
	for _, a := range e.Attempts {
		outcome := "ok"
		if a.Err != nil {
			outcome = KindOf(a.Err).String()
		}
		if !yield(a.Engine, outcome) {
			return
		}
	}
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's Kind (ErrTimeout for KindTimeout, ...).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || int(e.Kind) >= len(sentinels) {
		return false
	}
	return sentinels[e.Kind] == t && t != nil
}

// KindOf returns the Kind of err: the Kind of the first *Error in its chain, KindTimeout for
// context.DeadlineExceeded, KindCanceled for context.Canceled, KindUnknown otherwise (and
// for nil).
func KindOf(err error) Kind {
	if err == nil {
		return KindUnknown
	}
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e.Kind
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return KindTimeout
	}
	if errors.Is(err, context.Canceled) {
		return KindCanceled
	}
	return KindUnknown
}
