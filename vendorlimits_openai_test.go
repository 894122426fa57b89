package translate_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
	"github.com/fanyi-go/translate/engines/openai"
)

// windowVendor is an OpenAI-compatible server with a request rate limit of limit calls per
// window, on the test's clock: every answer carries x-ratelimit-remaining-requests and
// x-ratelimit-reset-requests as OpenAI sends them, and a call past the limit gets 429.
type windowVendor struct {
	clk    *clock
	limit  int
	window time.Duration

	mu      sync.Mutex
	start   time.Time // of the current window
	used    int
	served  int
	refused int // 429s
}

func (v *windowVendor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.clk.Now()
	if v.start.IsZero() || now.Sub(v.start) >= v.window {
		v.start, v.used = now, 0
	}
	v.used++
	reset := v.window - now.Sub(v.start)
	remaining := max(0, v.limit-v.used)
	w.Header().Set("x-ratelimit-limit-requests", strconv.Itoa(v.limit))
	w.Header().Set("x-ratelimit-remaining-requests", strconv.Itoa(remaining))
	w.Header().Set("x-ratelimit-reset-requests", reset.String()) // "59s", "1m0s": OpenAI's form
	if v.used > v.limit {
		v.refused++
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`))
		return
	}
	v.served++
	w.Write([]byte(`{"choices":[{"message":{"content":"Buenos días"},"finish_reason":"stop"}]}`))
}

// TestOpenAIRateLimitHeadersSlowTheEngine: the OpenAI adapter reports the
// x-ratelimit-remaining-requests and x-ratelimit-reset-requests headers, and the Client
// slows the engine as the window runs low, so that a steady stream of requests (one a
// second, the engine preferred by far) never meets a 429 while the vendor still serves
// its whole allowance; the other engine takes the rest.
func TestOpenAIRateLimitHeadersSlowTheEngine(t *testing.T) {
	clk := newClock()
	v := &windowVendor{clk: clk, limit: 10, window: time.Minute}
	srv := httptest.NewServer(v)
	defer srv.Close()
	gpt, err := openai.New("k", "gpt-test", openai.WithBaseURL(srv.URL+"/v1"))
	if err != nil {
		t.Fatal(err)
	}
	other := fake.New("other")
	c := newClient(t, translate.WithClock(clk), sharp,
		translate.WithEngine(gpt, translate.Profile{Quality: 100, Languages: []string{"en", "es"}}),
		translate.WithEngine(other, secondary))
	const seconds = 180 // three windows
	served := map[string]int{}
	for range seconds {
		clk.Advance(time.Second)
		res, err := c.Translate(context.Background(), req("Good morning"))
		if err != nil {
			t.Fatal(err)
		}
		served[res.Engine]++
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.refused != 0 {
		t.Errorf("the vendor answered 429 %d times: the engine was not slowed before its window ran out", v.refused)
	}
	if v.served < 2*v.limit || served[openai.Name] != v.served {
		t.Errorf("the vendor served %d calls (%d requests) in %d windows of %d: the engine was held back more than its allowance",
			v.served, served[openai.Name], seconds/int(v.window/time.Second), v.limit)
	}
	if served["other"] == 0 {
		t.Error("the other engine served nothing")
	}
	t.Logf("served: %v; vendor: %d served, %d refused", served, v.served, v.refused)
}
