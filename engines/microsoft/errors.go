package microsoft

import (
	"encoding/json"
	"net/http"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/internal/httpx"
)

// apiError is the spec's ErrorResponse: {"error": {"code": 400036, "message": "..."}}.
// The code is the HTTP status followed by three digits.
type apiError struct {
	Error struct {
		Code    json.Number `json:"code"`
		Message string      `json:"message"`
	} `json:"error"`
}

// codeKinds sorts Microsoft's documented error codes where the HTTP status alone would
// mislead.
var codeKinds = map[int64]translate.Kind{
	400003: translate.KindUnsupported, // a language specifier is missing or invalid
	400004: translate.KindUnsupported, // target script specifier missing or invalid
	400006: translate.KindUnsupported, // the combination of language and script isn't valid
	400018: translate.KindUnsupported, // source script specifier missing or invalid
	400019: translate.KindUnsupported, // one of the specified languages isn't supported
	400023: translate.KindUnsupported, // one of the specified language pairs isn't valid
	400035: translate.KindUnsupported, // the source language ("From" field) isn't valid
	400036: translate.KindUnsupported, // the target language ("To" field) is missing or invalid
	400075: translate.KindUnsupported, // the language pair and category combination isn't valid
	400079: translate.KindUnsupported, // the custom system for from -> to doesn't exist
	400050: translate.KindTextTooLong, // the input text is too long
	400077: translate.KindTextTooLong, // the maximum request size has been exceeded
	401000: translate.KindUnauthorized,
	401015: translate.KindUnauthorized,   // credentials are for the Speech API
	403000: translate.KindUnauthorized,   // the operation isn't allowed
	403001: translate.KindQuotaExhausted, // the subscription has exceeded its free quota
	405000: translate.KindInvalidInput,
	408001: translate.KindUnavailable, // the requested system is being prepared; retry in minutes
	408002: translate.KindTimeout,     // request timed out waiting on incoming stream
	415000: translate.KindInvalidInput,
	429000: translate.KindRateLimited,
	429001: translate.KindRateLimited,
	429002: translate.KindRateLimited,
	500000: translate.KindUnavailable,
	503000: translate.KindUnavailable,
}

// classify turns a non-2xx response into a *translate.Error: by the documented code, else
// by its first three digits (the HTTP status it stands for), else by the HTTP status.
func classify(engine string, resp *httpx.Response, secrets ...string) *translate.Error {
	var ae apiError
	_ = json.Unmarshal(resp.Body, &ae)
	msg := ae.Error.Message
	if msg == "" {
		msg = http.StatusText(resp.Status)
	}
	kind := httpx.StatusKind(resp.Status)
	if code, err := ae.Error.Code.Int64(); err == nil {
		if k, ok := codeKinds[code]; ok {
			kind = k
		} else if code >= 100000 && code <= 599999 {
			kind = httpx.StatusKind(int(code / 1000))
		}
		msg = ae.Error.Code.String() + " " + msg
	}
	if kind == translate.KindUnknown {
		kind = httpx.StatusKind(resp.Status)
	}
	return httpx.Error(engine, kind, resp, msg, secrets...)
}
