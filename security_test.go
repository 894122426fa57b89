package translate_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/apertium"
	"github.com/fanyi-go/translate/engines/baidu"
	"github.com/fanyi-go/translate/engines/deepl"
	"github.com/fanyi-go/translate/engines/enginetest"
	"github.com/fanyi-go/translate/engines/google"
	"github.com/fanyi-go/translate/engines/libretranslate"
	"github.com/fanyi-go/translate/engines/microsoft"
	"github.com/fanyi-go/translate/engines/openai"
	"golang.org/x/text/language"
)

// Canaries of the sweep: every adapter gets canaryKey as its credential (and the other
// canaries where it has more than one) and canaryText as the customer's text.
const (
	canaryKey   = enginetest.CanaryKey // SECRET/CANARY+123&x=y<z>"q
	canaryText  = enginetest.CanaryText
	canaryAppID = "APPID-CANARY-20260101"
)

// sweepEngine builds one adapter pointed at a test server.
type sweepEngine struct {
	name string
	new  func(t *testing.T, base string) translate.Engine
}

func sweepEngines() []sweepEngine {
	must := func(t *testing.T, e translate.Engine, err error) translate.Engine {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	return []sweepEngine{
		{"deepl", func(t *testing.T, base string) translate.Engine {
			e, err := deepl.New(canaryKey, deepl.WithBaseURL(base))
			return must(t, e, err)
		}},
		{"google", func(t *testing.T, base string) translate.Engine {
			e, err := google.New(canaryKey, google.WithBaseURL(base))
			return must(t, e, err)
		}},
		{"google-v3", func(t *testing.T, base string) translate.Engine {
			e, err := google.NewV3("p", func(context.Context) (string, error) { return canaryKey, nil }, google.WithBaseURL(base))
			return must(t, e, err)
		}},
		{"microsoft", func(t *testing.T, base string) translate.Engine {
			e, err := microsoft.New(canaryKey, "westeurope", microsoft.WithBaseURL(base))
			return must(t, e, err)
		}},
		{"baidu", func(t *testing.T, base string) translate.Engine {
			e, err := baidu.New(canaryAppID, canaryKey, baidu.WithBaseURL(base))
			return must(t, e, err)
		}},
		{"openai", func(t *testing.T, base string) translate.Engine {
			e, err := openai.New(canaryKey, "gpt-test", openai.WithBaseURL(base+"/v1"))
			return must(t, e, err)
		}},
		{"libretranslate", func(t *testing.T, base string) translate.Engine {
			e, err := libretranslate.New(base, canaryKey)
			return must(t, e, err)
		}},
		{"apertium", func(t *testing.T, base string) translate.Engine {
			// APy takes no key: the password in its URL is the credential.
			e, err := apertium.New(strings.Replace(base, "http://", "http://apy:"+url.QueryEscape(canaryKey)+"@", 1))
			return must(t, e, err)
		}},
	}
}

// echoBody is a vendor error that quotes the whole request (key, texts, URL, headers)
// in every field any adapter reads a message from.
func sweepEchoBody(r *http.Request, body []byte, code int) []byte {
	echo := enginetest.Echo(r, body) + " key " + canaryKey
	out, _ := json.Marshal(map[string]any{
		"message": echo, "detail": echo, "explanation": echo, "status": "error", "code": code,
		"error_code": "54000", "error_msg": echo, "responseDetails": echo,
		"error": map[string]any{"code": code, "message": echo, "type": "invalid_request_error", "status": "INVALID_ARGUMENT"},
	})
	return out
}

// failure is one way a vendor fails; serve writes it (other is the other host's URL).
type sweepFailure struct {
	name  string
	serve func(w http.ResponseWriter, r *http.Request, body []byte, other string)
}

func sweepStatus(code int, header ...string) func(http.ResponseWriter, *http.Request, []byte, string) {
	return func(w http.ResponseWriter, r *http.Request, body []byte, _ string) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		w.Write(sweepEchoBody(r, body, code))
	}
}

func sweepFailures() []sweepFailure {
	redirect := func(code int) func(http.ResponseWriter, *http.Request, []byte, string) {
		return func(w http.ResponseWriter, r *http.Request, _ []byte, other string) {
			http.Redirect(w, r, other+r.URL.RequestURI(), code)
		}
	}
	return []sweepFailure{
		{"401", sweepStatus(401)},
		{"403", sweepStatus(403)},
		{"429", sweepStatus(429)},
		{"429 Retry-After", sweepStatus(429, "Retry-After", "9223372037")},
		{"429 Retry-After NaN", sweepStatus(429, "Retry-After", "NaN", "retry-after-ms", "1e300")},
		{"456 quota", sweepStatus(456)},
		{"500", sweepStatus(500)},
		{"503", sweepStatus(503, "Retry-After", "3")},
		{"400 echo", sweepStatus(400)},
		{"200 echo", sweepStatus(200)}, // Baidu's HTTP-200 errors
		{"bad JSON", func(w http.ResponseWriter, r *http.Request, body []byte, _ string) {
			w.Write([]byte(`{"translations": [` + string(body)))
		}},
		{"timeout", func(w http.ResponseWriter, r *http.Request, _ []byte, _ string) {
			<-r.Context().Done()
		}},
		{"redirect 302", redirect(http.StatusFound)},
		{"redirect 307", redirect(http.StatusTemporaryRedirect)},
		{"redirect 308", redirect(http.StatusPermanentRedirect)},
	}
}

// sweepLog is a log sink safe for concurrent writes.
type sweepLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *sweepLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *sweepLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// spanText is everything a span exports: name, attributes, events and status.
func sweepSpanText(spans []sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "%s %v %s\n", s.Name(), s.Status(), s.Status().Description)
		for _, a := range s.Attributes() {
			fmt.Fprintf(&b, "%s=%s\n", a.Key, a.Value.Emit())
		}
		for _, ev := range s.Events() {
			fmt.Fprintf(&b, "event %s\n", ev.Name)
			for _, a := range ev.Attributes {
				fmt.Fprintf(&b, "%s=%s\n", a.Key, a.Value.Emit())
			}
		}
		for _, l := range s.Links() {
			for _, a := range l.Attributes {
				fmt.Fprintf(&b, "%s=%s\n", a.Key, a.Value.Emit())
			}
		}
	}
	return b.String()
}

// TestCanarySweep runs every adapter through a translate.Client against servers that fail
// in every way, and checks that neither the key (in any encoding) nor the customer's text
// appears in any error, log line (JSON, debug level) or span, and that no redirect to
// another host receives a request.
func TestCanarySweep(t *testing.T) {
	secrets := []string{canaryKey, canaryText, canaryAppID}
	for _, se := range sweepEngines() {
		for _, f := range sweepFailures() {
			t.Run(se.name+"/"+f.name, func(t *testing.T) {
				var stolen atomic.Int32
				other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					stolen.Add(1)
				}))
				defer other.Close()
				// Another host: "localhost" instead of 127.0.0.1, same machine.
				otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
				vendor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					f.serve(w, r, body, otherURL)
				}))
				defer vendor.Close()

				logs := &sweepLog{}
				logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
				spans := tracetest.NewSpanRecorder()
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
				defer tp.Shutdown(context.Background())

				e := se.new(t, vendor.URL)
				c, err := translate.New(
					translate.WithEngine(e, translate.Profile{Timeout: 500 * time.Millisecond, Languages: []string{"en", "es"}, MaxTexts: 1}),
					translate.WithLogger(logger),
					translate.WithTracerProvider(tp),
					translate.WithRetry(translate.RetryPolicy{PerEngine: 1, MaxAttempts: 1}),
					translate.WithDeadline(2*time.Second),
					translate.WithoutCache(),
				)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				_, err = c.Translate(context.Background(), translate.Request{Text: canaryText, Source: "en", Target: "es"})
				if err == nil && f.name != "200 echo" {
					t.Fatalf("no error")
				}
				var errText string
				if err != nil {
					errText = err.Error() + fmt.Sprintf(" %+v", err)
				}
				for where, text := range map[string]string{"error": errText, "logs": logs.String(), "spans": sweepSpanText(spans.Ended())} {
					if leaks := enginetest.Leaks(text, secrets...); len(leaks) > 0 {
						t.Errorf("%s leak %q:\n%s", where, leaks, text)
					}
				}
				if n := stolen.Load(); n != 0 {
					t.Errorf("the other host received %d requests", n)
				}
				if strings.HasPrefix(f.name, "redirect") && translate.KindOf(err) == translate.KindUnknown {
					t.Errorf("redirect: err %v, want a typed error", err)
				}
			})
		}
	}
}

// rotatingEngine builds one keyed adapter with a key func, and says whether a request
// carried a given key.
type rotatingEngine struct {
	name string
	new  func(t *testing.T, base string, key func(context.Context) (string, error)) translate.Engine
	uses func(r *http.Request, body []byte, key string) bool
}

func rotatingEngines() []rotatingEngine {
	carries := func(r *http.Request, body []byte, key string) bool {
		return strings.Contains(enginetest.Echo(r, body), key)
	}
	must := func(t *testing.T, e translate.Engine, err error) translate.Engine {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	return []rotatingEngine{
		{"deepl", func(t *testing.T, base string, k func(context.Context) (string, error)) translate.Engine {
			e, err := deepl.New("", deepl.WithBaseURL(base), deepl.WithKeyFunc(k))
			return must(t, e, err)
		}, carries},
		{"google", func(t *testing.T, base string, k func(context.Context) (string, error)) translate.Engine {
			e, err := google.New("", google.WithBaseURL(base), google.WithKeyFunc(k))
			return must(t, e, err)
		}, carries},
		{"google-v3", func(t *testing.T, base string, k func(context.Context) (string, error)) translate.Engine {
			e, err := google.NewV3("p", nil, google.WithBaseURL(base), google.WithKeyFunc(k))
			return must(t, e, err)
		}, carries},
		{"microsoft", func(t *testing.T, base string, k func(context.Context) (string, error)) translate.Engine {
			e, err := microsoft.New("", "", microsoft.WithBaseURL(base), microsoft.WithKeyFunc(k))
			return must(t, e, err)
		}, carries},
		{"baidu", func(t *testing.T, base string, k func(context.Context) (string, error)) translate.Engine {
			e, err := baidu.New(canaryAppID, "", baidu.WithBaseURL(base), baidu.WithKeyFunc(k))
			return must(t, e, err)
		}, func(r *http.Request, body []byte, key string) bool {
			f, _ := url.ParseQuery(string(body))
			sum := md5.Sum([]byte(f.Get("appid") + f.Get("q") + f.Get("salt") + key))
			return f.Get("sign") == hex.EncodeToString(sum[:])
		}},
		{"openai", func(t *testing.T, base string, k func(context.Context) (string, error)) translate.Engine {
			e, err := openai.New("", "gpt-test", openai.WithBaseURL(base+"/v1"), openai.WithKeyFunc(k))
			return must(t, e, err)
		}, carries},
		{"libretranslate", func(t *testing.T, base string, k func(context.Context) (string, error)) translate.Engine {
			e, err := libretranslate.New(base, "", libretranslate.WithKeyFunc(k))
			return must(t, e, err)
		}, carries},
	}
}

// TestKeyRotation checks every keyed adapter's WithKeyFunc: the key is read for each call,
// and a 401 made with a key that has since been rotated is repeated once with the new key;
// a 401 with the current key is not repeated.
func TestKeyRotation(t *testing.T) {
	const oldKey, newKey = "OLD-KEY-0123456789", "NEW-KEY-9876543210"
	for _, re := range rotatingEngines() {
		t.Run(re.name, func(t *testing.T) {
			var withOld, withNew atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if re.uses(r, body, newKey) {
					withNew.Add(1)
					w.WriteHeader(http.StatusInternalServerError) // tells the retry apart
					return
				}
				if re.uses(r, body, oldKey) {
					withOld.Add(1)
				}
				w.WriteHeader(http.StatusUnauthorized)
				w.Write([]byte(`{"message":"bad key"}`))
			}))
			defer srv.Close()
			var current atomic.Value
			current.Store(oldKey)
			var reads atomic.Int32
			e := re.new(t, srv.URL, func(context.Context) (string, error) {
				reads.Add(1)
				k := current.Load().(string)
				if reads.Load() == 1 {
					current.Store(newKey) // rotated while the first call is in flight
				}
				return k, nil
			})
			req := &translate.EngineRequest{Texts: []string{"Hello"}, Source: language.English, Target: language.Spanish}
			_, err := e.Translate(context.Background(), req)
			if translate.KindOf(err) != translate.KindUnavailable || withOld.Load() != 1 || withNew.Load() != 1 {
				t.Fatalf("rotated: err %v, requests old %d new %d", err, withOld.Load(), withNew.Load())
			}
			// Not rotated: the 401 stands, one request, the key read twice.
			current.Store(oldKey)
			reads.Store(10)
			withOld.Store(0)
			withNew.Store(0)
			_, err = e.Translate(context.Background(), req)
			if translate.KindOf(err) != translate.KindUnauthorized || withOld.Load() != 1 || withNew.Load() != 0 || reads.Load() != 12 {
				t.Fatalf("unchanged: err %v, requests old %d new %d, reads %d", err, withOld.Load(), withNew.Load(), reads.Load()-10)
			}
		})
	}
}
