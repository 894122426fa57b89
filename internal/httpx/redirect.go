package httpx

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
)

// MaxRedirects is how many same-host redirects one request follows.
const MaxRedirects = 3

// ErrRedirect is the cause (Error.Err) of every refused redirect: to another host, from
// https to http, or more than MaxRedirects in a row.
var ErrRedirect = errors.New("redirect refused")

// RedirectError is a refused redirect. It names the hosts, never the URLs, which may carry
// credentials in their query.
type RedirectError struct {
	Status   int    // the redirect's HTTP status (301, 302, 303, 307, 308)
	FromHost string // the host the request went to
	ToHost   string // the host the vendor redirected to
	Reason   string // "to another host", "from https to http", "too many redirects"
}

// Error returns "redirect refused (HTTP 302 from a.example to b.example): to another host".
func (e *RedirectError) Error() string {
	return "redirect refused (HTTP " + strconv.Itoa(e.Status) + " from " + e.FromHost + " to " +
		e.ToHost + "): " + e.Reason
}

// Unwrap returns ErrRedirect.
func (e *RedirectError) Unwrap() error { return ErrRedirect }

// Client returns hc (httpx.DefaultClient() when nil) as a new *http.Client that shares hc's
// Transport, Jar and Timeout but never follows a redirect to another host.
//
// Go's client follows up to 10 redirects and, to another host, re-sends custom headers
// (X-Goog-Api-Key, Ocp-Apim-Subscription-Key) and, on 307 and 308, the body (a
// LibreTranslate api_key, Baidu's appid and sign, every customer text). The returned client
// follows a redirect only to the same scheme and host (host:port, compared exactly) or
// from http to https on the same host, at most MaxRedirects times; anything else stops with
// a *RedirectError before a byte is sent to the new location. hc's own CheckRedirect, if
// any, still runs for redirects this policy allows. hc is not modified.
func Client(hc *http.Client) *http.Client {
	if hc == nil {
		hc = DefaultClient()
	}
	c := *hc
	inner := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := checkRedirect(req, via); err != nil {
			return err
		}
		if inner != nil {
			return inner(req, via)
		}
		return nil
	}
	return &c
}

func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	re := &RedirectError{FromHost: first.URL.Host, ToHost: req.URL.Host}
	if req.Response != nil {
		re.Status = req.Response.StatusCode
	}
	switch {
	case !strings.EqualFold(req.URL.Host, first.URL.Host):
		re.Reason = "to another host"
	case req.URL.Scheme != first.URL.Scheme && !(first.URL.Scheme == "http" && req.URL.Scheme == "https"):
		re.Reason = "from " + first.URL.Scheme + " to " + req.URL.Scheme
	case len(via) > MaxRedirects:
		re.Reason = "too many redirects"
	default:
		return nil
	}
	return re
}
