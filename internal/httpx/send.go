package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/fanyi-go/translate"
)

// EncodeJSON is the JSON request body for v (json.Marshal), nil when v is nil (no body, a
// GET). A v that does not encode is KindInvalidInput with the message "encode request: "
// and encoding/json's error (which names the Go type, never a value).
func EncodeJSON(engine string, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, &translate.Error{Kind: translate.KindInvalidInput, Engine: engine, Message: "encode request: " + err.Error()}
	}
	return b, nil
}

// NewRequest builds a request for a vendor that answers JSON: method to u with ctx, header
// Accept: application/json and, when body is not nil, body as the request body with
// Content-Type contentType (the vendor's own spelling, such as "application/json" or
// "application/json; charset=utf-8"). A nil body sends none (a GET). Its error is
// http.NewRequestWithContext's, for the adapter to wrap in its own words.
func NewRequest(ctx context.Context, method, u string, body []byte, contentType string) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Accept", "application/json")
	if body != nil {
		hreq.Header.Set("Content-Type", contentType)
	}
	return hreq, nil
}

// Classify turns a vendor's answer with a status outside 2xx into the call's error, by the
// vendor's documented error body and status. Its message must quote none of secrets (pass
// them to Error, which redacts them).
type Classify func(engine string, resp *Response, secrets ...string) *translate.Error

// Send is Do for a call that wants a 2xx answer: it sends req like Do (with its transport
// errors, body limit and redaction of secrets), and an answer whose status is not 2xx
// becomes the error classify makes of it, given engine and secrets. secrets are the call's
// credentials and customer texts (see Redact).
func Send(hc *http.Client, engine string, req *http.Request, classify Classify, secrets ...string) (*Response, error) {
	resp, err := Do(hc, engine, req, secrets...)
	if err != nil {
		return nil, err
	}
	if resp.Status/100 != 2 {
		return nil, classify(engine, resp, secrets...)
	}
	return resp, nil
}

// Decode unmarshals the JSON body of a 2xx answer into v. A body that is not that JSON is
// KindBadOutput carrying resp's status and the message "decode response: " and
// encoding/json's error, cut to 512 bytes (encoding/json names at most one byte of the
// body, never a value).
func Decode(engine string, resp *Response, v any) error {
	if err := json.Unmarshal(resp.Body, v); err != nil {
		return &translate.Error{Kind: translate.KindBadOutput, Engine: engine, StatusCode: resp.Status,
			Message: Truncate("decode response: "+err.Error(), 512)}
	}
	return nil
}

// BodyText is the message of a vendor error whose body is not the vendor's documented error
// JSON: the body with surrounding white space trimmed or, when that is empty, the status's
// text ("Bad Gateway"). It quotes the body as sent: pass it to Error, which redacts secrets
// and cuts it.
func BodyText(resp *Response) string {
	if s := strings.TrimSpace(string(resp.Body)); s != "" {
		return s
	}
	return http.StatusText(resp.Status)
}
