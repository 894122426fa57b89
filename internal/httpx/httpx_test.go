package httpx

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"": 0, "3": 3 * time.Second, "1.5": 1500 * time.Millisecond, "-1": 0, "soon": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
	} {
		h := http.Header{}
		if in != "" {
			h.Set("Retry-After", in)
		}
		if got := RetryAfter(h, now); got != want {
			t.Errorf("RetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestStatusKind(t *testing.T) {
	for code, want := range map[int]translate.Kind{
		400: translate.KindInvalidInput, 401: translate.KindUnauthorized, 403: translate.KindUnauthorized,
		408: translate.KindTimeout, 413: translate.KindTextTooLong, 429: translate.KindRateLimited,
		500: translate.KindUnavailable, 503: translate.KindUnavailable, 302: translate.KindUnknown,
	} {
		if got := StatusKind(code); got != want {
			t.Errorf("StatusKind(%d) = %v, want %v", code, got, want)
		}
	}
}

func TestTransportErrorHidesKeyInURL(t *testing.T) {
	err := &url.Error{Op: "Post", URL: "https://api.example/v2?key=SECRET123", Err: errors.New("connection refused")}
	got := TransportError(context.Background(), "x", err, "SECRET123")
	if strings.Contains(got.Error(), "SECRET123") || translate.KindOf(got) != translate.KindUnavailable {
		t.Fatalf("got %v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := TransportError(ctx, "x", err); !errors.Is(got, context.Canceled) || translate.KindOf(got) != translate.KindCanceled {
		t.Fatalf("canceled: got %v", got)
	}
}

func TestRedactAndTruncate(t *testing.T) {
	if got := Redact("key abc and abc", "abc", ""); got != "key [REDACTED] and [REDACTED]" {
		t.Errorf("Redact = %q", got)
	}
	if got := Truncate("héllo", 2); got != "h…" {
		t.Errorf("Truncate = %q", got)
	}
}

func TestBaseURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://api.deepl.com":     "https://api.deepl.com",
		"http://127.0.0.1:5000/v1/": "http://127.0.0.1:5000/v1",
		" https://x.example/ ":      "https://x.example",
	} {
		if got, err := BaseURL(raw); err != nil || got != want {
			t.Errorf("BaseURL(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{"", "://x", "ftp://x.example", "/v2", "https://x.example/?key=1", "https://u:hunter2@/"} {
		_, err := BaseURL(raw)
		if err == nil {
			t.Errorf("BaseURL(%q) accepted", raw)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("BaseURL error quotes the URL: %v", err)
		}
	}
}

// TestErrorRedactsTheCallsSecrets: a response remembers the secrets Do sent it with, and
// Error removes them even when its caller passes none (a key a key function picked for the
// call, which the adapter's decoder never saw).
func TestErrorRedactsTheCallsSecrets(t *testing.T) {
	const key = "sk-rotated-SECRET-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("key " + r.Header.Get("Authorization") + " is over its budget"))
	}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", key)
	resp, err := Do(srv.Client(), "x", req, key, "customer text")
	if err != nil {
		t.Fatal(err)
	}
	got := Error("x", translate.KindBadOutput, resp, string(resp.Body)).Error()
	if want := "translate: x: bad_output (HTTP 200): key [REDACTED] is over its budget"; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
}
