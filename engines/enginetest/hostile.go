package enginetest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"golang.org/x/text/language"
)

// CanaryKey is a credential with every character that escapes differently in a URL, a
// query, JSON and HTML, for leak tests: a leak shows up in whichever form it took.
const CanaryKey = `SECRET/CANARY+123&x=y<z>"q`

// CanaryText is a customer text for leak tests, with characters that JSON and URLs escape.
const CanaryText = `CANARY-TEXT: the customer's confidential <b>draft</b> & "plan" 4711`

// Forms returns s in every encoding a leak may take: raw, URL query- and path-escaped,
// JSON-escaped with and without HTML escaping, and standard and URL-safe base64.
func Forms(s string) []string {
	jsonOf := func(html bool) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(s)
		out := strings.TrimSuffix(b.String(), "\n")
		return out[1 : len(out)-1]
	}
	return []string{s, url.QueryEscape(s), url.PathEscape(s), jsonOf(true), jsonOf(false),
		base64.StdEncoding.EncodeToString([]byte(s)), base64.URLEncoding.EncodeToString([]byte(s)),
		base64.RawStdEncoding.EncodeToString([]byte(s))}
}

// Leaks returns every form (see Forms) of every secret that occurs in s.
func Leaks(s string, secrets ...string) []string {
	var found []string
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		for _, f := range Forms(sec) {
			if strings.Contains(s, f) {
				found = append(found, f)
			}
		}
	}
	return found
}

// Echo returns everything a request carried, the way a careless vendor quotes it back in
// an error: method and URL (with its query, decoded too), every header value, the raw body
// and, for a form or JSON body, every value decoded.
func Echo(r *http.Request, body []byte) string {
	var b strings.Builder
	b.WriteString(r.Method + " " + r.URL.String() + " ")
	for _, vs := range r.URL.Query() {
		b.WriteString(strings.Join(vs, " ") + " ")
	}
	for k, vs := range r.Header {
		b.WriteString(k + ": " + strings.Join(vs, ", ") + " ")
	}
	b.Write(body)
	b.WriteString(" ")
	if form, err := url.ParseQuery(string(body)); err == nil {
		for _, vs := range form {
			b.WriteString(strings.Join(vs, " ") + " ")
		}
	}
	var v any
	if json.Unmarshal(body, &v) == nil {
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case string:
				b.WriteString(v + " ")
			case []any:
				for _, x := range v {
					walk(x)
				}
			case map[string]any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		walk(v)
	}
	return b.String()
}

// FuzzHarness connects FuzzVendor to one adapter.
type FuzzHarness struct {
	// NewEngine returns the adapter with credential key, sending every request through hc.
	NewEngine func(hc *http.Client, key string) (translate.Engine, error)
	// Secrets returns what must never appear in an error besides CanaryKey and CanaryText
	// (an APP ID, say); may be nil.
	Secrets []string
	// Source and Target: a pair the engine supports; zero means en -> es.
	Source, Target language.Tag
}

// Placeholders a fuzz seed body may contain; the vendor replaces them with what the
// request carried, JSON-escaped, so that a seed can make the vendor echo the request.
const (
	EchoRequest = "{{ECHO}}" // Echo of the request
	EchoKey     = "{{KEY}}"  // CanaryKey
)

// FuzzVendor fuzzes an adapter's decoding of vendor answers: status, Retry-After,
// x-ratelimit-* headers and body all come from the fuzzer, and the body may echo the
// request. Whatever the answer, Translate must not panic, must return len(req.Texts) texts
// or a *translate.Error naming the engine, with RetryAfter within [0, 5m], and no error
// text may hold CanaryKey, CanaryText or a harness secret in any form. seeds are bodies the
// vendor documents (successes and errors), for the corpus; each is tried with statuses 200,
// 400, 401, 429 and 500.
func FuzzVendor(f *testing.F, h FuzzHarness, seeds ...string) {
	addVendorSeeds(f, seeds)
	src, tgt := h.pair()
	f.Fuzz(func(t *testing.T, status int, retryAfter, reset, body string) {
		hc := &http.Client{Transport: fuzzedVendor(httpStatus(status), retryAfter, reset, body)}
		e, err := h.NewEngine(hc, CanaryKey)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req := &translate.EngineRequest{Texts: []string{CanaryText, "second text"}, Source: src, Target: tgt}
		res, err := e.Translate(ctx, req)
		if err == nil {
			checkFuzzedResult(t, req, res)
			return
		}
		checkFuzzedError(t, e.Name(), err, h.Secrets)
	})
}

// addVendorSeeds adds FuzzVendor's corpus: seeds and bodies that echo the request or the
// key in the forms vendors use, each with statuses 200, 400, 401, 429 and 500, then
// Retry-After and reset headers out of range.
func addVendorSeeds(f *testing.F, seeds []string) {
	echoes := []string{
		"", "{", "null", EchoRequest, `{"error":"` + EchoRequest + `"}`,
		`{"message":"` + EchoRequest + `","detail":"` + EchoKey + `"}`,
		`{"error":{"code":400,"message":"` + EchoRequest + `","status":"INVALID_ARGUMENT"}}`,
		`[{"error":{"code":403,"message":"key ` + EchoKey + `","errors":[{"reason":"keyInvalid","message":"` + EchoRequest + `"}]}}]`,
		`{"error":{"code":401000,"message":"` + EchoRequest + `"}}`,
		`{"error":{"message":"` + EchoRequest + `","type":"invalid_request_error","code":"` + EchoKey + `"}}`,
		`{"error_code":"54001","error_msg":"` + EchoRequest + `"}`,
		`{"error_code":52003,"error_msg":"` + EchoKey + `"}`,
		`{"status":"error","code":400,"message":"` + EchoRequest + `","explanation":"` + EchoRequest + `"}`,
		`{"responseStatus":500,"responseDetails":"` + EchoRequest + `"}`,
		`{"choices":[],"error":{"message":"` + EchoRequest + `"}}`,
	}
	for _, s := range append(seeds, echoes...) {
		for _, st := range []int{200, 400, 401, 429, 500} {
			f.Add(st, "7", "1s", s)
		}
	}
	f.Add(429, "9223372037", "6m0s", `{"message":"slow down"}`)
	f.Add(429, "1e300", "NaN", `{}`)
}

// pair is the harness's language pair, en -> es where it is zero.
func (h FuzzHarness) pair() (src, tgt language.Tag) {
	src, tgt = h.Source, h.Target
	if src == language.Und {
		src = language.English
	}
	if tgt == language.Und {
		tgt = language.Spanish
	}
	return src, tgt
}

// httpStatus folds a fuzzed status outside 100..599 into 200..599.
func httpStatus(status int) int {
	if status < 100 || status > 599 {
		return 200 + (status%400+400)%400
	}
	return status
}

// fuzzedVendor is a transport that answers every request with status, body and the
// Retry-After and x-ratelimit-* headers; EchoRequest and EchoKey in body become the
// request (see Echo) and CanaryKey, JSON-escaped.
func fuzzedVendor(status int, retryAfter, reset, body string) http.RoundTripper {
	return roundTrip(func(r *http.Request) (*http.Response, error) {
		var sent []byte
		if r.Body != nil {
			sent, _ = io.ReadAll(r.Body)
		}
		b := strings.ReplaceAll(body, EchoRequest, jsonQuote(Echo(r, sent)))
		b = strings.ReplaceAll(b, EchoKey, jsonQuote(CanaryKey))
		hdr := http.Header{"Content-Type": {"application/json"}}
		hdr.Set("Retry-After", retryAfter)
		hdr.Set("X-Ratelimit-Reset-Requests", reset)
		hdr.Set("X-Ratelimit-Remaining-Requests", retryAfter)
		return &http.Response{StatusCode: status, Header: hdr, Body: io.NopCloser(strings.NewReader(b)), Request: r}, nil
	})
}

// jsonQuote is s JSON-escaped, without the quotes.
func jsonQuote(s string) string {
	q, _ := json.Marshal(s)
	return string(q[1 : len(q)-1])
}

// checkFuzzedResult fails t unless res has one text per text of req and vendor limits,
// if any, within range.
func checkFuzzedResult(t *testing.T, req *translate.EngineRequest, res *translate.EngineResult) {
	t.Helper()
	if res == nil || len(res.Texts) != len(req.Texts) {
		t.Fatalf("(%v, nil) for %d texts", res, len(req.Texts))
	}
	if l := res.Limits; l != nil && (l.ResetRequests < 0 || l.ResetTokens < 0 || l.RemainingRequests < -1 || l.RemainingTokens < -1) {
		t.Fatalf("Limits %+v", l)
	}
}

// checkFuzzedError fails t unless err is a *translate.Error of engine with RetryAfter
// within [0, 5m] whose text holds neither CanaryKey, CanaryText nor any of secrets.
func checkFuzzedError(t *testing.T, engine string, err error, secrets []string) {
	t.Helper()
	var te *translate.Error
	if !errors.As(err, &te) || te.Engine != engine {
		t.Fatalf("err %v (%T): want a *translate.Error of engine %q", err, err, engine)
	}
	if te.RetryAfter < 0 || te.RetryAfter > 5*time.Minute {
		t.Fatalf("RetryAfter %v outside [0, 5m]", te.RetryAfter)
	}
	if leaks := Leaks(err.Error(), append([]string{CanaryKey, CanaryText}, secrets...)...); len(leaks) > 0 {
		t.Fatalf("error %q leaks %q", err, leaks)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
