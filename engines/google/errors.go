package google

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/internal/httpx"
)

// apiError is Google's error body. v2 sends the legacy form (code, message, errors[] with
// reason and domain); v3 and newer v2 front ends send google.rpc.Status (code, message,
// status, details[] such as google.rpc.ErrorInfo). Both fit here.
type apiError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Errors  []struct {
			Reason   string `json:"reason"`
			Domain   string `json:"domain"`
			Message  string `json:"message"`
			Location string `json:"location"`
		} `json:"errors"`
		Details []struct {
			Type     string            `json:"@type"`
			Reason   string            `json:"reason"`
			Domain   string            `json:"domain"`
			Metadata map[string]string `json:"metadata"`
			// QuotaFailure
			Violations []struct {
				Subject     string `json:"subject"`
				Description string `json:"description"`
			} `json:"violations"`
			// BadRequest
			FieldViolations []struct {
				Field       string `json:"field"`
				Description string `json:"description"`
			} `json:"fieldViolations"`
		} `json:"details"`
	} `json:"error"`
}

// Reasons of the v2 errors[] list and of google.rpc.ErrorInfo.
var (
	quotaReasons = map[string]bool{
		"dailyLimitExceeded": true, "dailyLimitExceededUnreg": true, "quotaExceeded": true,
	}
	rateReasons = map[string]bool{
		"userRateLimitExceeded": true, "rateLimitExceeded": true,
		"userRateLimitExceededUnreg": true, "RATE_LIMIT_EXCEEDED": true,
	}
	authReasons = map[string]bool{
		"keyInvalid": true, "keyExpired": true, "API_KEY_INVALID": true, "API_KEY_EXPIRED": true,
		"API_KEY_SERVICE_BLOCKED": true, "API_KEY_HTTP_REFERRER_BLOCKED": true,
		"API_KEY_IP_ADDRESS_BLOCKED": true, "accessNotConfigured": true, "SERVICE_DISABLED": true,
		"BILLING_DISABLED": true, "ipRefererBlocked": true, "forbidden": true,
		"authError": true, "ACCESS_TOKEN_EXPIRED": true,
		"ACCESS_TOKEN_SCOPE_INSUFFICIENT": true, "CREDENTIALS_MISSING": true,
		"IAM_PERMISSION_DENIED": true, "USER_PROJECT_DENIED": true, "CONSUMER_INVALID": true,
	}
)

// classify turns a non-2xx response into a *translate.Error.
func classify(engine string, resp *httpx.Response, secrets ...string) *translate.Error {
	ae, ok := parseAPIError(resp.Body)
	msg := ae.Error.Message
	if msg == "" {
		msg = http.StatusText(resp.Status)
	}
	k := httpx.StatusKind(resp.Status)
	if ok {
		k = kindOf(resp.Status, ae)
	}
	return httpx.Error(engine, k, resp, msg, secrets...)
}

// parseAPIError decodes the error body, also in the list form [{"error": ...}] some Google
// front ends send.
func parseAPIError(body []byte) (apiError, bool) {
	var ae apiError
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var list []apiError
		if json.Unmarshal(body, &list) != nil || len(list) == 0 {
			return ae, false
		}
		ae = list[0]
	} else if json.Unmarshal(body, &ae) != nil {
		return ae, false
	}
	e := ae.Error
	return ae, e.Code != 0 || e.Message != "" || e.Status != ""
}

// kindOf classifies a decoded Google error of HTTP status code: by the first reason it
// knows, else by its status (named in the body, or the one the HTTP code stands for), else
// by the HTTP code.
func kindOf(code int, ae apiError) translate.Kind {
	daily := perDay(ae)
	if k, ok := reasonKind(reasons(ae), daily); ok {
		return k
	}
	status := ae.Error.Status
	if status == "" {
		status = statusOf(code)
	}
	if k, ok := statusKind(status, daily, ae); ok {
		return k
	}
	return httpx.StatusKind(code)
}

// reasons lists an error's reasons in order: those of the v2 errors[] list, then the
// non-empty ones of its details (google.rpc.ErrorInfo).
func reasons(ae apiError) []string {
	var out []string
	for _, r := range ae.Error.Errors {
		out = append(out, r.Reason)
	}
	for _, d := range ae.Error.Details {
		if d.Reason != "" {
			out = append(out, d.Reason)
		}
	}
	return out
}

// reasonKind is the Kind of the first reason that names one, false when none does. A rate
// limit that is per day (daily) is KindQuotaExhausted.
func reasonKind(reasons []string, daily bool) (translate.Kind, bool) {
	for _, r := range reasons {
		switch {
		case quotaReasons[r]:
			return translate.KindQuotaExhausted, true
		case rateReasons[r]:
			return rateKind(daily), true
		case authReasons[r]:
			return translate.KindUnauthorized, true
		}
	}
	return translate.KindUnknown, false
}

// rateKind is the Kind of a rate limit: KindQuotaExhausted when it is per day (daily),
// KindRateLimited otherwise.
func rateKind(daily bool) translate.Kind {
	if daily {
		return translate.KindQuotaExhausted
	}
	return translate.KindRateLimited
}

// statusKind is the Kind of a google.rpc.Code name, false for a name it does not know. A
// RESOURCE_EXHAUSTED that is per day (daily) is KindQuotaExhausted; bad requests are split
// by badRequestKind.
func statusKind(status string, daily bool, ae apiError) (translate.Kind, bool) {
	switch status {
	case "RESOURCE_EXHAUSTED":
		return rateKind(daily), true
	case "UNAUTHENTICATED", "PERMISSION_DENIED":
		return translate.KindUnauthorized, true
	case "INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE":
		return badRequestKind(ae), true
	case "NOT_FOUND":
		// The project, location or path does not exist: a configuration error that no
		// request can get past, so the engine is set aside until reconfigured.
		return translate.KindUnauthorized, true
	case "DEADLINE_EXCEEDED":
		return translate.KindTimeout, true
	case "UNAVAILABLE", "INTERNAL", "UNKNOWN", "ABORTED", "CANCELLED", "DATA_LOSS":
		return translate.KindUnavailable, true
	case "UNIMPLEMENTED":
		return translate.KindUnsupported, true
	}
	return translate.KindUnknown, false
}

// statusOf is the canonical google.rpc.Code name for an HTTP status, for errors that carry
// no status (the legacy v2 form).
func statusOf(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404, 405:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 501:
		return "UNIMPLEMENTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if code >= 500 {
		return "INTERNAL"
	}
	return ""
}

// badRequestKind splits Google's 400s: an API key rejected as invalid is KindUnauthorized, a
// language Google does not take KindUnsupported, an oversized request KindTextTooLong, the
// rest KindInvalidInput.
func badRequestKind(ae apiError) translate.Kind {
	e := ae.Error
	texts := []string{e.Message}
	langField := false
	for _, r := range e.Errors {
		texts = append(texts, r.Message)
		if r.Location == "target" || r.Location == "source" {
			langField = true
		}
	}
	for _, d := range e.Details {
		for _, v := range d.FieldViolations {
			texts = append(texts, v.Description)
			if strings.HasSuffix(v.Field, "language_code") || strings.HasSuffix(v.Field, "LanguageCode") {
				langField = true
			}
		}
	}
	all := strings.ToLower(strings.Join(texts, "\n"))
	switch {
	case strings.Contains(all, "api key not valid"), strings.Contains(all, "api key expired"):
		return translate.KindUnauthorized
	case langField, strings.Contains(all, "language"):
		return translate.KindUnsupported
	case strings.Contains(all, "too long"), strings.Contains(all, "payload size exceeds"),
		strings.Contains(all, "too large"):
		return translate.KindTextTooLong
	}
	return translate.KindInvalidInput
}

// perDay reports whether an error names a per-day quota (Google's daily character or
// request limits), which does not recover within seconds like a per-minute rate.
func perDay(ae apiError) bool {
	e := ae.Error
	texts := []string{e.Message}
	for _, r := range e.Errors {
		texts = append(texts, r.Message)
	}
	for _, d := range e.Details {
		for k, v := range d.Metadata {
			if strings.HasPrefix(k, "quota") {
				texts = append(texts, v)
			}
		}
		for _, v := range d.Violations {
			texts = append(texts, v.Subject, v.Description)
		}
	}
	all := strings.ToLower(strings.Join(texts, "\n"))
	return strings.Contains(all, "per day") || strings.Contains(all, "perday") ||
		strings.Contains(all, "daily")
}
