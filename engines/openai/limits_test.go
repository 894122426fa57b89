package openai

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"
)

func TestVendorLimits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-ratelimit-remaining-requests", "59")
		w.Header().Set("x-ratelimit-remaining-tokens", "garbage")
		w.Header().Set("x-ratelimit-reset-requests", "20ms")
		w.Header().Set("x-ratelimit-reset-tokens", "6m0s")
		w.Write([]byte(`{"choices":[{"message":{"content":"Hola"},"finish_reason":"stop"}]}`))
	}))
	defer srv.Close()
	e, err := New("k", "m", WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"Hello"}, Target: language.Spanish})
	if err != nil {
		t.Fatal(err)
	}
	want := &translate.VendorLimits{RemainingRequests: 59, RemainingTokens: -1,
		ResetRequests: 20 * time.Millisecond, ResetTokens: 6 * time.Minute}
	if diff := cmp.Diff(want, res.Limits); diff != "" {
		t.Errorf("Limits (-want +got):\n%s", diff)
	}
}

func TestRetryAfterMsClamped(t *testing.T) {
	for v, want := range map[string]time.Duration{"250": 250 * time.Millisecond, "1e300": 0, "99999999999": 5 * time.Minute} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("retry-after-ms", v)
			w.WriteHeader(429)
			w.Write([]byte(`{"error":{"message":"slow down","type":"requests"}}`))
		}))
		e, _ := New("k", "m", WithBaseURL(srv.URL))
		_, err := e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"Hello"}, Target: language.Spanish})
		srv.Close()
		te, ok := err.(*translate.Error)
		if !ok || te.RetryAfter != want {
			t.Errorf("retry-after-ms %q: %v, want RetryAfter %v", v, err, want)
		}
	}
}
