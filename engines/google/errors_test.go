package google

import (
	"encoding/json"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/google/go-cmp/cmp"
)

// TestKindOf covers each branch of kindOf on decoded bodies: reasons (v2 errors[] and
// google.rpc.ErrorInfo, first match wins, daily rate limits as quota), the status (given,
// or derived from the HTTP code), and the HTTP-code fallback for a status it does not know.
func TestKindOf(t *testing.T) {
	tests := []struct {
		name string
		code int
		body string
		want translate.Kind
	}{
		{"v2 quota reason", 403, `{"error":{"code":403,"errors":[{"reason":"quotaExceeded"}]}}`, translate.KindQuotaExhausted},
		{"v2 rate reason", 403, `{"error":{"code":403,"errors":[{"reason":"rateLimitExceeded"}]}}`, translate.KindRateLimited},
		{"v2 rate reason per day", 403, `{"error":{"code":403,"message":"Limit per day","errors":[{"reason":"rateLimitExceeded"}]}}`, translate.KindQuotaExhausted},
		{"v2 auth reason", 400, `{"error":{"code":400,"errors":[{"reason":"keyInvalid"}]}}`, translate.KindUnauthorized},
		{"first reason wins", 429, `{"error":{"code":429,"errors":[{"reason":"authError"},{"reason":"quotaExceeded"}]}}`, translate.KindUnauthorized},
		{"ErrorInfo reason", 400, `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"x","details":[{"reason":""},{"reason":"API_KEY_INVALID"}]}}`, translate.KindUnauthorized},
		{"ErrorInfo rate reason daily metadata", 429, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"reason":"RATE_LIMIT_EXCEEDED","metadata":{"quota_limit":"CharactersPerDay"}}]}}`, translate.KindQuotaExhausted},
		{"unknown reason falls to status", 400, `{"error":{"code":400,"message":"bad","errors":[{"reason":"badRequest"}],"details":[{"reason":""}]}}`, translate.KindInvalidInput},
		{"resource exhausted", 429, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}`, translate.KindRateLimited},
		{"resource exhausted daily violation", 429, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"violations":[{"subject":"s","description":"Daily limit"}]}]}}`, translate.KindQuotaExhausted},
		{"429 without status", 429, `{"error":{"code":429,"message":"slow down"}}`, translate.KindRateLimited},
		{"unauthenticated", 401, `{"error":{"code":401,"status":"UNAUTHENTICATED"}}`, translate.KindUnauthorized},
		{"permission denied", 403, `{"error":{"code":403,"status":"PERMISSION_DENIED"}}`, translate.KindUnauthorized},
		{"401 without status", 401, `{"error":{"code":401,"message":"x"}}`, translate.KindUnauthorized},
		{"403 without status", 403, `{"error":{"code":403,"message":"x"}}`, translate.KindUnauthorized},
		{"failed precondition language", 400, `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"Bad language"}}`, translate.KindUnsupported},
		{"out of range too long", 400, `{"error":{"code":400,"status":"OUT_OF_RANGE","message":"Text too long"}}`, translate.KindTextTooLong},
		{"invalid argument", 400, `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"bad"}}`, translate.KindInvalidInput},
		{"not found", 404, `{"error":{"code":404,"status":"NOT_FOUND"}}`, translate.KindUnauthorized},
		{"405 without status", 405, `{"error":{"code":405,"message":"x"}}`, translate.KindUnauthorized},
		{"deadline", 504, `{"error":{"code":504,"status":"DEADLINE_EXCEEDED"}}`, translate.KindTimeout},
		{"504 without status", 504, `{"error":{"code":504,"message":"x"}}`, translate.KindTimeout},
		{"unavailable", 503, `{"error":{"code":503,"status":"UNAVAILABLE"}}`, translate.KindUnavailable},
		{"internal", 500, `{"error":{"code":500,"status":"INTERNAL"}}`, translate.KindUnavailable},
		{"unknown", 500, `{"error":{"code":500,"status":"UNKNOWN"}}`, translate.KindUnavailable},
		{"aborted", 409, `{"error":{"code":409,"status":"ABORTED"}}`, translate.KindUnavailable},
		{"cancelled", 499, `{"error":{"code":499,"status":"CANCELLED"}}`, translate.KindUnavailable},
		{"499 without status", 499, `{"error":{"code":499,"message":"x"}}`, translate.KindUnavailable},
		{"data loss", 500, `{"error":{"code":500,"status":"DATA_LOSS"}}`, translate.KindUnavailable},
		{"502 without status", 502, `{"error":{"code":502,"message":"x"}}`, translate.KindUnavailable},
		{"unimplemented", 501, `{"error":{"code":501,"status":"UNIMPLEMENTED"}}`, translate.KindUnsupported},
		{"501 without status", 501, `{"error":{"code":501,"message":"x"}}`, translate.KindUnsupported},
		{"status beats code", 400, `{"error":{"code":400,"status":"UNAVAILABLE"}}`, translate.KindUnavailable},
		{"unknown status: code", 409, `{"error":{"code":409,"status":"ALREADY_EXISTS"}}`, translate.KindUnknown},
		{"unknown status: 413", 413, `{"error":{"code":413,"status":"SOMETHING_NEW"}}`, translate.KindTextTooLong},
		{"no status for 413", 413, `{"error":{"code":413,"message":"x"}}`, translate.KindTextTooLong},
		{"no status for 418", 418, `{"error":{"code":418,"message":"x"}}`, translate.KindUnknown},
	}
	want := map[string]translate.Kind{}
	got := map[string]translate.Kind{}
	for _, tt := range tests {
		var ae apiError
		if err := json.Unmarshal([]byte(tt.body), &ae); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		want[tt.name] = tt.want
		got[tt.name] = kindOf(tt.code, ae)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kindOf (-want +got):\n%s", diff)
	}
}
