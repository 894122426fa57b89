package httpx

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const canaryKey = `SECRET/CANARY+123&x=y<z>"q`

// keyForms is every encoding of canaryKey a leak test looks for.
func keyForms(s string) []string {
	return []string{s, url.QueryEscape(s), url.PathEscape(s), jsonEscape(s, true), jsonEscape(s, false),
		base64.StdEncoding.EncodeToString([]byte(s)), base64.RawURLEncoding.EncodeToString([]byte(s))}
}

func TestRedactEveryForm(t *testing.T) {
	for _, f := range keyForms(canaryKey) {
		msg := "bad key " + f + " given"
		got := Redact(msg, canaryKey)
		if strings.Contains(got, f) || !strings.Contains(got, Redaction) {
			t.Errorf("Redact(%q) = %q", msg, got)
		}
	}
	// Lower-case escapes, as some servers re-encode.
	if got := Redact("k="+lowerEscapes(url.QueryEscape(canaryKey)), canaryKey); strings.Contains(got, "CANARY") {
		t.Errorf("lower-case escapes kept: %q", got)
	}
}

func TestRedactPartialQuotes(t *testing.T) {
	text := "Bonjour tout le monde, ceci est un texte confidentiel."
	for _, msg := range []string{
		"invalid text 'Bonjour tout le mo...'",
		"text: ceci est un texte confidentiel (truncated)",
		`q="` + jsonEscape(text[:30], true) + `"`,
	} {
		got := Redact(msg, text)
		if strings.Contains(got, "tout le mo") || strings.Contains(got, "texte confid") {
			t.Errorf("Redact(%q) = %q", msg, got)
		}
	}
	// A short word shared with the text is not a quote.
	if got := Redact("the request is invalid", "the cat"); got != "the request is invalid" {
		t.Errorf("over-redacted: %q", got)
	}
	if got := Redact("x", ""); got != "x" {
		t.Errorf("empty secret: %q", got)
	}
}

// FuzzRedact checks that neither a secret nor any QuoteWindow-long run of it survives
// Redact, whatever surrounds it.
func FuzzRedact(f *testing.F) {
	f.Add("prefix ", canaryKey, " suffix")
	f.Add("", "Hello, world. This is customer text.", "")
	f.Add("a\"b", "<script>&amp;</script>", "\u2028")
	f.Fuzz(func(t *testing.T, pre, secret, post string) {
		if len(secret) < 4 || strings.Contains(Redaction, secret) || strings.Contains(secret, "[") {
			t.Skip()
		}
		for _, form := range keyForms(secret) {
			msg := pre + " " + form + " " + post
			got := Redact(msg, secret)
			kept := strings.Contains(got, " "+form+" ")
			if len(form) >= QuoteWindow {
				kept = strings.Contains(got, form)
			}
			if len(msg) <= maxScrubInput && kept {
				t.Fatalf("Redact kept %q in %q", form, got)
			}
		}
	})
}

func TestRedirectToAnotherHostRefused(t *testing.T) {
	var leaked atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
	}))
	defer evil.Close()
	for _, code := range []int{301, 302, 303, 307, 308} {
		vendor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Same port, another host name: still another host.
			http.Redirect(w, r, evil.URL+"/steal?key=x", code)
		}))
		req, _ := http.NewRequest(http.MethodPost, vendor.URL+"/v2", strings.NewReader("text"))
		req.Header.Set("X-Goog-Api-Key", canaryKey)
		_, err := Do(Client(nil), "eng", req, canaryKey)
		vendor.Close()
		var te *translate.Error
		if !errors.As(err, &te) || te.Kind != translate.KindUnavailable || te.StatusCode != code || !errors.Is(err, ErrRedirect) {
			t.Fatalf("%d: err = %v", code, err)
		}
		if strings.Contains(err.Error(), "key=x") || strings.Contains(err.Error(), "CANARY") {
			t.Errorf("%d: error quotes the URL: %v", code, err)
		}
	}
	if n := leaked.Load(); n != 0 {
		t.Fatalf("the other host got %d requests", n)
	}
}

func TestRedirectSameHostFollowedAFewTimes(t *testing.T) {
	var hops atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/loop" {
			hops.Add(1)
			http.Redirect(w, r, "/loop", http.StatusTemporaryRedirect)
			return
		}
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusPermanentRedirect)
			return
		}
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/old", strings.NewReader("body"))
	resp, err := Do(Client(nil), "eng", req)
	if err != nil || string(resp.Body) != "body" {
		t.Fatalf("same-host redirect: %v %v", resp, err)
	}
	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/loop", nil)
	_, err = Do(Client(nil), "eng", req)
	if !errors.Is(err, ErrRedirect) || hops.Load() != MaxRedirects+1 {
		t.Fatalf("loop: hops %d, err %v", hops.Load(), err)
	}
}

func TestClientKeepsCallersClient(t *testing.T) {
	called := false
	hc := &http.Client{Timeout: 7 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		called = true
		return http.ErrUseLastResponse
	}}
	c := Client(hc)
	if c == hc || c.Timeout != hc.Timeout || hc.CheckRedirect == nil {
		t.Fatal("Client must copy, not modify")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/x", http.StatusFound)
	}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	resp, err := Do(c, "eng", req)
	if err != nil || resp.Status != http.StatusFound || !called {
		t.Fatalf("caller's CheckRedirect not used: %v %v %v", resp, err, called)
	}
}

func TestHTTPSDowngradeRefused(t *testing.T) {
	req := &http.Request{URL: &url.URL{Scheme: "http", Host: "a.example"}, Response: &http.Response{StatusCode: 302}}
	via := []*http.Request{{URL: &url.URL{Scheme: "https", Host: "a.example"}}}
	if err := checkRedirect(req, via); !errors.Is(err, ErrRedirect) {
		t.Fatalf("https -> http allowed: %v", err)
	}
	req.URL.Scheme, via[0].URL.Scheme = "https", "http"
	if err := checkRedirect(req, via); err != nil {
		t.Fatalf("http -> https refused: %v", err)
	}
	req.URL.Host = "A.EXAMPLE"
	if err := checkRedirect(req, via); err != nil {
		t.Fatalf("host case: %v", err)
	}
}

// endless is a body that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

func TestBodyCap(t *testing.T) {
	for _, status := range []int{200, 429, 503} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(status)
			io.Copy(w, endless{})
		}))
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		_, err := Do(Client(nil), "eng", req)
		srv.Close()
		want := map[int]translate.Kind{200: translate.KindBadOutput, 429: translate.KindRateLimited, 503: translate.KindUnavailable}[status]
		var te *translate.Error
		if !errors.As(err, &te) || te.Kind != want || !errors.Is(err, ErrBodyTooLarge) || te.StatusCode != status {
			t.Fatalf("%d: err = %v", status, err)
		}
		if status == 429 && te.RetryAfter != 2*time.Second {
			t.Errorf("RetryAfter = %v", te.RetryAfter)
		}
	}
	// Exactly MaxBody is fine.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.CopyN(w, endless{}, MaxBody)
	}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	if resp, err := Do(Client(nil), "eng", req); err != nil || len(resp.Body) != MaxBody {
		t.Fatalf("MaxBody body: %v", err)
	}
}

func TestHeaderCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Junk", strings.Repeat("j", 2*MaxHeaderBytes))
	}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	_, err := Do(Client(nil), "eng", req)
	if translate.KindOf(err) != translate.KindUnavailable {
		t.Fatalf("err = %v", err)
	}
}

func TestErrorClampsRetryAfter(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"9223372037": MaxRetryAfter, "1e300": 0, "NaN": 0, "Inf": 0, "7": 7 * time.Second,
	} {
		resp := &Response{Status: 429, Header: http.Header{"Retry-After": {v}}}
		if got := Error("eng", translate.KindRateLimited, resp, "slow down").RetryAfter; got != want {
			t.Errorf("Retry-After %q: %v, want %v", v, got, want)
		}
	}
}

func TestErrorRedactsKeyAndText(t *testing.T) {
	text := "The customer's confidential sentence."
	msg := `{"message":"key ` + jsonEscape(canaryKey, true) + ` invalid for text ` + text + `"}`
	e := Error("eng", translate.KindUnauthorized, &Response{Status: 403}, msg, canaryKey, text)
	for _, f := range append(keyForms(canaryKey), text, "confidential") {
		if strings.Contains(e.Error(), f) {
			t.Errorf("error %q holds %q", e.Error(), f)
		}
	}
}

func TestWithKeyRotation(t *testing.T) {
	ctx := context.Background()
	unauthorized := &translate.Error{Kind: translate.KindUnauthorized}
	t.Run("rotated", func(t *testing.T) {
		keys := []string{"old", "new"}
		var reads int
		k := NewKey("", func(context.Context) (string, error) {
			reads++
			return keys[min(reads-1, 1)], nil
		})
		var used []string
		v, err := WithKey(ctx, k, "eng", func(key string) (string, error) {
			used = append(used, key)
			if key == "old" {
				return "", unauthorized
			}
			return "ok", nil
		})
		if err != nil || v != "ok" || !cmp.Equal(used, []string{"old", "new"}) || reads != 2 {
			t.Fatalf("v %q err %v used %v reads %d", v, err, used, reads)
		}
	})
	t.Run("unchanged", func(t *testing.T) {
		var calls, reads int
		k := NewKey("", func(context.Context) (string, error) { reads++; return "same", nil })
		_, err := WithKey(ctx, k, "eng", func(string) (int, error) { calls++; return 0, unauthorized })
		if translate.KindOf(err) != translate.KindUnauthorized || calls != 1 || reads != 2 {
			t.Fatalf("err %v calls %d reads %d", err, calls, reads)
		}
	})
	t.Run("still unauthorized after one retry", func(t *testing.T) {
		var calls, reads int
		k := NewKey("", func(context.Context) (string, error) { reads++; return string(rune('a' + reads)), nil })
		_, err := WithKey(ctx, k, "eng", func(string) (int, error) { calls++; return 0, unauthorized })
		if translate.KindOf(err) != translate.KindUnauthorized || calls != 2 || reads != 2 {
			t.Fatalf("err %v calls %d reads %d", err, calls, reads)
		}
	})
	t.Run("static never re-read", func(t *testing.T) {
		var calls int
		_, err := WithKey(ctx, NewKey("k", nil), "eng", func(string) (int, error) { calls++; return 0, unauthorized })
		if translate.KindOf(err) != translate.KindUnauthorized || calls != 1 {
			t.Fatalf("err %v calls %d", err, calls)
		}
	})
	t.Run("other kinds not retried", func(t *testing.T) {
		var calls int
		k := NewKey("", func(context.Context) (string, error) { calls++; return strings.Repeat("k", calls), nil })
		_, err := WithKey(ctx, k, "eng", func(string) (int, error) { return 0, &translate.Error{Kind: translate.KindRateLimited} })
		if translate.KindOf(err) != translate.KindRateLimited || calls != 1 {
			t.Fatalf("err %v reads %d", err, calls)
		}
	})
	t.Run("key func errors", func(t *testing.T) {
		k := NewKey("", func(context.Context) (string, error) { return "", errors.New("vault sealed") })
		if _, err := k.Get(ctx, "eng"); translate.KindOf(err) != translate.KindUnauthorized || !strings.Contains(err.Error(), "vault sealed") {
			t.Fatalf("err %v", err)
		}
		k = NewKey("", func(context.Context) (string, error) { return "", nil })
		if _, err := k.Get(ctx, "eng"); translate.KindOf(err) != translate.KindUnauthorized {
			t.Fatalf("empty key: %v", err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		k = NewKey("", func(c context.Context) (string, error) { return "", c.Err() })
		if _, err := k.Get(cctx, "eng"); !errors.Is(err, context.Canceled) {
			t.Fatalf("canceled: %v", err)
		}
	})
}

func TestLimits(t *testing.T) {
	h := http.Header{}
	if Limits(h) != nil {
		t.Fatal("no headers: want nil")
	}
	h.Set("x-ratelimit-remaining-requests", "59")
	h.Set("x-ratelimit-remaining-tokens", "149984")
	h.Set("x-ratelimit-reset-requests", "1s")
	h.Set("x-ratelimit-reset-tokens", "6m0s")
	want := &translate.VendorLimits{RemainingRequests: 59, RemainingTokens: 149984, ResetRequests: time.Second, ResetTokens: 6 * time.Minute}
	if diff := cmp.Diff(want, Limits(h)); diff != "" {
		t.Fatal(diff)
	}
	h.Set("x-ratelimit-remaining-requests", "-5")
	h.Set("x-ratelimit-remaining-tokens", "99999999999999999999999")
	h.Set("x-ratelimit-reset-requests", "NaN")
	h.Set("x-ratelimit-reset-tokens", "9999999h")
	if got := Limits(h); got != nil {
		t.Fatalf("garbage: %+v", got)
	}
	h.Set("x-ratelimit-reset-tokens", "48h")
	if got := Limits(h); got == nil || got.ResetTokens != MaxReset || got.RemainingRequests != -1 {
		t.Fatalf("clamp: %+v", got)
	}
}

// FuzzLimits checks that no header values give a reset outside [0, MaxReset], a negative
// count other than -1, or a panic.
func FuzzLimits(f *testing.F) {
	f.Add("59", "149984", "1s", "6m0s")
	f.Add("-1", "1e9", "NaN", "9223372036854775807ns")
	f.Add("", "", "20ms", "1h")
	f.Fuzz(func(t *testing.T, rr, rt, xr, xt string) {
		h := http.Header{}
		h.Set("x-ratelimit-remaining-requests", rr)
		h.Set("x-ratelimit-remaining-tokens", rt)
		h.Set("x-ratelimit-reset-requests", xr)
		h.Set("x-ratelimit-reset-tokens", xt)
		l := Limits(h)
		if l == nil {
			return
		}
		if l.RemainingRequests < -1 || l.RemainingTokens < -1 ||
			l.ResetRequests < 0 || l.ResetRequests > MaxReset || l.ResetTokens < 0 || l.ResetTokens > MaxReset {
			t.Fatalf("%+v", l)
		}
	})
}

func TestRedactShortSecretsOnlyAlone(t *testing.T) {
	for _, c := range []struct{ msg, secret, want string }{
		{"Invalid Access Limit", "a", "Invalid Access Limit"},
		{"invalid text 'a'", "a", "invalid text '[REDACTED]'"},
		{"Hi", "Hi", "[REDACTED]"},
		{"Hi there, High", "Hi", "[REDACTED] there, High"},
		{"q=<b>x", "<b>", "q=[REDACTED]x"},
	} {
		if got := Redact(c.msg, c.secret); got != c.want {
			t.Errorf("Redact(%q, %q) = %q, want %q", c.msg, c.secret, got, c.want)
		}
	}
}

func TestRedactLinearOnRepetitiveInput(t *testing.T) {
	msg := strings.Repeat("a", 1<<20)
	secret := strings.Repeat("a", 128<<10) // a large request's worth
	start := time.Now()
	got := Redact(msg, secret, secret+"b")
	if got != Redaction {
		t.Fatalf("got %.40q", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Redact took %v on repetitive input", d)
	}
}

// TestRedactASCIIOnlyEscapes: a vendor whose JSON is written by Python's json.dumps or PHP's
// json_encode (every non-ASCII character as \uXXXX), or an HTML page with numeric entities,
// echoes a CJK text in a form none of encoding/json's is; each form, whole or quoted in
// part, is removed, and with it every character of the text.
func TestRedactASCIIOnlyEscapes(t *testing.T) {
	const text = "机密：董事会决定于下月以三亿元收购竞争对手公司 𠀋"
	for name, echo := range map[string]string{
		"json lower": `\u673a\u5bc6\uff1a\u8463\u4e8b\u4f1a\u51b3\u5b9a\u4e8e\u4e0b\u6708\u4ee5\u4e09\u4ebf\u5143\u6536\u8d2d\u7ade\u4e89\u5bf9\u624b\u516c\u53f8 \ud840\udc0b`,
		"json upper": `\u673A\u5BC6\uFF1A\u8463\u4E8B\u4F1A\u51B3\u5B9A\u4E8E\u4E0B\u6708\u4EE5\u4E09\u4EBF\u5143\u6536\u8D2D\u7ADE\u4E89\u5BF9\u624B\u516C\u53F8 \uD840\uDC0B`,
		"json part":  `\u8463\u4e8b\u4f1a\u51b3\u5b9a`,
		"entities":   "&#26426;&#23494;&#65306;&#33891;&#20107;&#20250;",
		"hex ents":   "&#x673a;&#x5bc6;&#xff1a;&#x8463;&#x4e8b;&#x4f1a;",
	} {
		msg := `{"detail": "could not segment \"` + echo + `\""}`
		got := Redact(msg, text)
		if !strings.Contains(got, Redaction) || strings.Contains(got, `\u`) || strings.Contains(got, "&#") {
			t.Errorf("%s: Redact = %q", name, got)
		}
	}
}
