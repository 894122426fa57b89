// Package httpx holds the HTTP plumbing every vendor adapter shares: a default client with
// timeouts, a redirect policy that never carries credentials or text to another host,
// bounded response reads, transport errors classified into translate Kinds, clamped
// Retry-After parsing, status-to-Kind defaults, redaction of credentials and customer text
// from every message, rotating keys, and the steps of a JSON call (EncodeJSON, NewRequest,
// Send with the vendor's Classify for a non-2xx answer, Decode).
//
// A vendor is untrusted: it may redirect anywhere, echo the request and the key in its
// error messages, send an endless body or absurd headers. Everything here assumes so.
package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/internal/httpx/retryafter"
)

// MaxBody is the most of a response body an adapter reads: 8 MiB, far above any
// translation answer (DeepL takes 128 KiB per request). A longer body is not read further:
// Do returns a *translate.Error wrapping ErrBodyTooLarge.
const MaxBody = 8 << 20

// MaxHeaderBytes is the most response header bytes DefaultClient's transport reads; more
// fails the call as KindUnavailable. Clients passed with an adapter's WithHTTPClient keep
// their own transport's limit (net/http's default is about 1 MiB).
const MaxHeaderBytes = 64 << 10

// ErrBodyTooLarge is the cause (Error.Err) when a response body exceeds MaxBody.
var ErrBodyTooLarge = errors.New("response body exceeds " + strconv.Itoa(MaxBody>>20) + " MiB")

// MaxRetryAfter is the longest Retry-After any vendor header can impose (5 minutes); longer
// values are cut to it. It equals retryafter.Max, which the root package uses to clamp an
// engine's own Error.RetryAfter.
const MaxRetryAfter = retryafter.Max

// MaxIdleConnsPerHost is how many idle keep-alive connections DefaultClient's transport
// keeps per vendor host: 256. It is sized to the calls a service keeps in flight to one
// vendor (net/http's default is 2; 32 made a server at concurrency 50 close and re-open
// connections on every burst): up to that many calls at once reuse their connections. Idle
// connections close after 90s. HTTP/2 vendors multiplex over one connection anyway.
const MaxIdleConnsPerHost = 256

// DefaultClient returns a new *http.Client with connection, TLS, header and overall timeouts,
// a MaxHeaderBytes limit on response headers and an idle pool of MaxIdleConnsPerHost. It is
// never http.DefaultClient. Adapters pass it (or the caller's client) through Client, which
// adds the redirect policy. The overall timeout is a backstop: the Client's per-attempt
// context deadline is normally shorter.
func DefaultClient() *http.Client {
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   5 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           MaxIdleConnsPerHost, // one transport per adapter: mostly one host
		MaxIdleConnsPerHost:    MaxIdleConnsPerHost,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    5 * time.Second,
		ResponseHeaderTimeout:  60 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: MaxHeaderBytes,
	}
	return &http.Client{Transport: tr, Timeout: 120 * time.Second}
}

// Response is a fully read HTTP response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// secrets are those of the call that got the response (see Do): Error redacts them
	// whatever its caller passes, so that a key a key function chose for this one call,
	// which the adapter's decoder never saw, is still kept out of the error.
	secrets []string
}

// Do sends req with hc and reads the body, at most MaxBody bytes. A transport failure
// becomes a *translate.Error for engine: KindTimeout when the attempt's deadline passed,
// KindCanceled when ctx was canceled (wrapping ctx.Err(), so errors.Is(err, context.Canceled)
// holds), KindUnavailable otherwise; a refused redirect (see Client) is KindUnavailable
// wrapping a *RedirectError; a body over MaxBody is the status's Kind (KindBadOutput for a
// 2xx) wrapping ErrBodyTooLarge. The request URL's query (which may carry a key) and every
// secret are removed from the error text. Any status is returned as a Response, not an
// error. secrets are the call's credentials and customer texts (see Redact).
func Do(hc *http.Client, engine string, req *http.Request, secrets ...string) (*Response, error) {
	ctx := req.Context()
	resp, err := hc.Do(req)
	if err != nil {
		return nil, TransportError(ctx, engine, err, secrets...)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return nil, TransportError(ctx, engine, err, secrets...)
	}
	r := &Response{Status: resp.StatusCode, Header: resp.Header, Body: body, secrets: secrets}
	if len(body) > MaxBody {
		r.Body = nil
		kind := StatusKind(r.Status)
		if r.Status/100 == 2 || kind == translate.KindUnknown {
			kind = translate.KindBadOutput
		}
		e := Error(engine, kind, r, "response body not read past "+strconv.Itoa(MaxBody)+" bytes")
		e.Err = ErrBodyTooLarge
		return nil, e
	}
	return r, nil
}

// TransportError classifies an error from sending a request or reading its body.
func TransportError(ctx context.Context, engine string, err error, secrets ...string) error {
	var re *RedirectError
	if errors.As(err, &re) && ctx.Err() == nil {
		return &translate.Error{Kind: translate.KindUnavailable, Engine: engine, StatusCode: re.Status,
			Message: Redact(re.Error(), secrets...), Err: ErrRedirect}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		// The URL may carry a key in its query: keep scheme, host and path only.
		if u, perr := url.Parse(ue.URL); perr == nil {
			u.RawQuery, u.Fragment, u.User = "", "", nil
			ue = &url.Error{Op: ue.Op, URL: u.String(), Err: ue.Err}
		} else {
			ue = &url.Error{Op: ue.Op, URL: "(redacted)", Err: ue.Err}
		}
		err = ue
	}
	msg := Redact(err.Error(), secrets...)
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(cerr, context.DeadlineExceeded) {
			return &translate.Error{Kind: translate.KindTimeout, Engine: engine, Message: msg, Err: cerr}
		}
		return &translate.Error{Kind: translate.KindCanceled, Engine: engine, Message: msg, Err: cerr}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &translate.Error{Kind: translate.KindTimeout, Engine: engine, Message: msg}
	}
	return &translate.Error{Kind: translate.KindUnavailable, Engine: engine, Message: msg}
}

// StatusKind is the default Kind for an HTTP status when the vendor documents nothing more
// specific: 400/404/422 invalid input, 401/403 unauthorized, 408/504 timeout, 413/414 text
// too long, 429 rate limited, 5xx unavailable.
func StatusKind(code int) translate.Kind {
	switch {
	case code == 400 || code == 404 || code == 422:
		return translate.KindInvalidInput
	case code == 401 || code == 403:
		return translate.KindUnauthorized
	case code == 408 || code == 504:
		return translate.KindTimeout
	case code == 413 || code == 414:
		return translate.KindTextTooLong
	case code == 429:
		return translate.KindRateLimited
	case code >= 500:
		return translate.KindUnavailable
	}
	return translate.KindUnknown
}

// RetryAfter parses a Retry-After header (delay-seconds or HTTP-date, relative to now)
// within [0, MaxRetryAfter]: 0 when the header is absent, malformed ("NaN", "1e300", "-1"),
// or in the past; MaxRetryAfter when it is longer. See retryafter.Header.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	return retryafter.Header(h.Get("Retry-After"), now)
}

// Error builds a *translate.Error from an HTTP response: Kind, status, Retry-After (clamped,
// see RetryAfter) and the vendor's message with every secret removed (see Redact) and cut to
// 512 bytes. secrets are the call's credentials and customer texts; those Do was given for
// resp are removed too.
func Error(engine string, kind translate.Kind, resp *Response, msg string, secrets ...string) *translate.Error {
	if resp != nil && len(resp.secrets) > 0 {
		secrets = slices.Concat(secrets, resp.secrets)
	}
	e := &translate.Error{Kind: kind, Engine: engine, Message: Truncate(Redact(msg, secrets...), 512)}
	if resp != nil {
		e.StatusCode = resp.Status
		e.RetryAfter = RetryAfter(resp.Header, time.Now())
	}
	return e
}

// Truncate cuts s to at most n bytes on a rune boundary.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// CountTexts checks that a vendor returned want texts; otherwise it is KindBadOutput.
func CountTexts(engine string, got, want int) error {
	if got != want {
		return &translate.Error{Kind: translate.KindBadOutput, Engine: engine,
			Message: fmt.Sprintf("vendor returned %d texts for %d", got, want)}
	}
	return nil
}

// BaseURL checks that raw is an absolute http(s) URL without query or fragment (adapters
// append the vendor's paths to it) and returns it without trailing slashes. Its error never
// quotes raw, which may carry credentials.
func BaseURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("base URL is not an absolute http(s) URL without query or fragment")
	}
	return strings.TrimRight(u.String(), "/"), nil
}
