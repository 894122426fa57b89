package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	// Keep-alive connections of the tests' HTTP client are not leaks.
	http.DefaultClient.CloseIdleConnections()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

var testSettings = settings{timeout: 5 * time.Second, deadline: 2 * time.Second, maxBody: 4096, maxBatch: 3}

// serve starts the API over a Client of the given engines on an httptest server.
func serve(t *testing.T, opts ...translate.Option) (*httptest.Server, *api, *lockedBuffer) {
	t.Helper()
	c, err := translate.New(append([]translate.Option{translate.WithDeadline(testSettings.deadline)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	a := newAPI(c, testSettings, nil)
	logs := &lockedBuffer{}
	srv := httptest.NewServer(accessLog(slog.New(slog.NewJSONHandler(logs, nil)), nil, a.routes()))
	t.Cleanup(srv.Close)
	return srv, a, logs
}

// lockedBuffer holds the access log, written from the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// answer is a decoded response with its status and headers.
type answer struct {
	status int
	header http.Header
	body   map[string]any
}

func post(t *testing.T, url, contentType, body string) answer {
	t.Helper()
	resp, err := http.Post(url, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return decodeAnswer(t, resp)
}

func decodeAnswer(t *testing.T, resp *http.Response) answer {
	t.Helper()
	a := answer{status: resp.StatusCode, header: resp.Header}
	if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
		t.Fatalf("answer is not JSON: %v", err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	return a
}

func (a answer) code() int {
	f, _ := a.body["code"].(float64)
	return int(f)
}

func (a answer) message() string { s, _ := a.body["message"].(string); return s }

const seedText = "It rains cats and dogs."

func TestTranslate(t *testing.T) {
	srv, _, logs := serve(t, translate.WithEngine(fake.New("one", fake.WithTranslator(phrasebook)), translate.Profile{CostPerMillion: 1e6}))
	body := `{"text":"` + seedText + `","source_lang":"en","target_lang":"zh","scene":"general","style":"formal",
		"user_id":"u1","priority":"high","request_id":"r-1","engine":"one","allow_fallback":true}`
	a := post(t, srv.URL+"/v1/translate", "application/json", body)
	if a.status != 200 || a.code() != 0 || a.message() != "ok" {
		t.Fatalf("status %d, body %v", a.status, a.body)
	}
	data := a.body["data"].(map[string]any)
	delete(data, "latency_ms")
	want := map[string]any{"translated_text": "下着倾盆大雨。", "engine": "one", "source_lang": "en",
		"cost_credit": float64(23), "from_cache": false, "degraded": false, "attempts": float64(1)}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	if a.body["request_id"] != "r-1" {
		t.Errorf("request_id %v, want r-1", a.body["request_id"])
	}
	if strings.Contains(logs.String(), "rains") {
		t.Errorf("the access log holds customer text:\n%s", logs)
	}
	if !strings.Contains(logs.String(), `"route":"/v1/translate"`) {
		t.Errorf("no access log line for the request:\n%s", logs)
	}
}

func TestBadRequests(t *testing.T) {
	srv, _, _ := serve(t, translate.WithEngine(fake.New("one"), translate.Profile{}))
	big := `{"text":"` + strings.Repeat("a", int(testSettings.maxBody)) + `","target_lang":"zh"}`
	for _, tc := range []struct {
		name, contentType, body string
		code                    int
		msg                     string // substring of the message
	}{
		{"empty text", "application/json", `{"text":"","target_lang":"zh"}`, codeInvalidInput, "invalid_input"},
		{"no target", "application/json", `{"text":"hi"}`, codeInvalidInput, "invalid_input"},
		{"bad scene", "application/json", `{"text":"hi","target_lang":"zh","scene":"poetry"}`, codeInvalidInput, "scene"},
		{"bad style", "application/json", `{"text":"hi","target_lang":"zh","style":"rude"}`, codeInvalidInput, "style"},
		{"bad priority", "application/json", `{"text":"hi","target_lang":"zh","priority":"urgent"}`, codeInvalidInput, "priority"},
		{"unknown field", "application/json", `{"text":"hi","target_lang":"zh","lang":"zh"}`, codeBadRequest, `unknown field "lang"`},
		{"wrong type", "application/json", `{"text":42,"target_lang":"zh"}`, codeBadRequest, "text: want a string"},
		{"not an object", "application/json", `["hi"]`, codeBadRequest, "want a JSON object"},
		{"syntax", "application/json", `{"text":"hi",}`, codeBadRequest, "invalid JSON at byte"},
		{"truncated", "application/json", `{"text":"hi"`, codeBadRequest, "truncated"},
		{"empty body", "application/json", ``, codeBadRequest, "empty"},
		{"two objects", "application/json", `{"text":"hi","target_lang":"zh"}{}`, codeBadRequest, "found more"},
		{"too large", "application/json", big, codeTooLarge, "larger than 4096 bytes"},
		{"form", "application/x-www-form-urlencoded", `text=hi`, codeMediaType, "application/json"},
		// encoding/json alone would accept each of these, changed.
		{"invalid UTF-8", "application/json", "{\"text\":\"caf\xe9\",\"target_lang\":\"zh\"}", codeBadUTF8, "not valid UTF-8"},
		{"invalid UTF-8 in a name", "application/json", "{\"text\xff\":\"hi\",\"target_lang\":\"zh\"}", codeBadUTF8, "not valid UTF-8"},
		{"lone high surrogate", "application/json", `{"text":"a\ud83d b","target_lang":"zh"}`, codeBadUTF8, "surrogate"},
		{"lone low surrogate", "application/json", `{"text":"a\uDE00","target_lang":"zh"}`, codeBadUTF8, "surrogate"},
		{"duplicate", "application/json", `{"text":"hi","target_lang":"zh","text":"bye"}`, codeDuplicate, `member "text" appears twice`},
		{"duplicate target", "application/json", `{"target_lang":"es","text":"hi","target_lang":"zh"}`, codeDuplicate, `"target_lang"`},
		{"upper case", "application/json", `{"TEXT":"hi","target_lang":"zh"}`, codeNameCase, `member "TEXT": names are case-sensitive; did you mean "text"?`},
		{"mixed case", "application/json", `{"text":"hi","Target_Lang":"zh"}`, codeNameCase, `did you mean "target_lang"`},
		{"utf-16", "application/json; charset=utf-16", "{\"text\":\"hi\",\"target_lang\":\"zh\"}", codeCharset, "charset must be utf-8"},
		{"latin-1", "application/json; charset=ISO-8859-1", `{"text":"hi","target_lang":"zh"}`, codeCharset, "charset"},
		// The Client's checks, worded with the body's member names.
		{"no target words", "application/json", `{"text":"hi"}`, codeInvalidInput, "target_lang is required"},
		{"empty text words", "application/json", `{"text":"","target_lang":"zh"}`, codeInvalidInput, "text is empty"},
		{"bad tag words", "application/json", `{"text":"hi","target_lang":"!!"}`, codeInvalidInput, "target_lang is not a valid BCP 47 tag"},
		{"bad source words", "application/json", `{"text":"hi","source_lang":"!!","target_lang":"zh"}`, codeInvalidInput, "source_lang is not a valid BCP 47 tag"},
		{"same language words", "application/json", `{"text":"hi","source_lang":"zh","target_lang":"zh"}`, codeInvalidInput, "source_lang and target_lang are the same language"},
		{"engine name kept", "application/json", `{"text":"hi","target_lang":"zh","engine":"Target"}`, codeInvalidInput, `unknown engine "Target"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := post(t, srv.URL+"/v1/translate", tc.contentType, tc.body)
			if a.code() != tc.code || a.status != tc.code/100 || !strings.Contains(a.message(), tc.msg) {
				t.Errorf("status %d code %d message %q; want code %d with %q", a.status, a.code(), a.message(), tc.code, tc.msg)
			}
			// Never a Go field name outside quotes ("Target is required").
			unquoted := regexp.MustCompile(`"[^"]*"`).ReplaceAllString(a.message(), "")
			if m := goNames.FindString(unquoted); m != "" {
				t.Errorf("message %q names the Go field %s", a.message(), m)
			}
		})
	}
}

// TestStrictBodyAccepts: what the strict reading must not refuse: a surrogate pair escape,
// charset=UTF-8 in any case, a name that is a field's inside a batch item, equal names in
// different objects, and U+FFFD sent on purpose.
func TestStrictBodyAccepts(t *testing.T) {
	srv, _, _ := serve(t, translate.WithEngine(fake.New("one"), translate.Profile{}))
	for _, tc := range []struct{ name, path, contentType, body string }{
		{"pair", "/v1/translate", "application/json", `{"text":"smile \ud83d\ude00 \"\\ud800\" done","target_lang":"zh"}`},
		{"charset", "/v1/translate", "application/json; charset=UTF-8", `{"text":"hi","target_lang":"zh"}`},
		{"replacement char", "/v1/translate", "application/json", `{"text":"a \ufffd b �","target_lang":"zh"}`},
		{"batch", "/v1/translate/batch", "application/json", `{"requests":[{"text":"a","target_lang":"zh"},{"text":"b","target_lang":"zh"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if a := post(t, srv.URL+tc.path, tc.contentType, tc.body); a.status != 200 || a.code() != 0 {
				t.Errorf("%d %v", a.status, a.body)
			}
		})
	}
	// In a batch item too, a duplicate or a case variant is refused.
	for body, code := range map[string]int{
		`{"requests":[{"text":"a","target_lang":"zh","text":"b"}]}`: codeDuplicate,
		`{"requests":[{"Text":"a","target_lang":"zh"}]}`:            codeNameCase,
		`{"Requests":[{"text":"a","target_lang":"zh"}]}`:            codeNameCase,
	} {
		if a := post(t, srv.URL+"/v1/translate/batch", "application/json", body); a.code() != code || a.status != 400 {
			t.Errorf("batch %s: %d %v, want code %d", body, a.status, a.body, code)
		}
	}
}

// TestKindAnswers drives the Client into each failure a caller can meet and checks the code,
// the status and, for rate limits, Retry-After.
func TestKindAnswers(t *testing.T) {
	t.Run("rate limited", func(t *testing.T) {
		e := fake.New("one")
		e.Script(fake.RateLimited(7 * time.Second))
		srv, _, _ := serve(t, translate.WithEngine(e, translate.Profile{}))
		a := post(t, srv.URL+"/v1/translate", "application/json", `{"text":"hi","target_lang":"zh"}`)
		if a.code() != codeRateLimited || a.status != 429 || a.header.Get("Retry-After") != "7" {
			t.Errorf("status %d code %d Retry-After %q: %v", a.status, a.code(), a.header.Get("Retry-After"), a.body)
		}
	})
	t.Run("budget", func(t *testing.T) {
		srv, _, _ := serve(t, translate.WithEngine(fake.New("one"), translate.Profile{CostPerMillion: 1e6}),
			translate.WithBudget(translate.Budget{Daily: 10}))
		post(t, srv.URL+"/v1/translate", "application/json", `{"text":"ten chars!","target_lang":"zh"}`)
		a := post(t, srv.URL+"/v1/translate", "application/json", `{"text":"other text","target_lang":"zh"}`)
		if a.code() != codeBudgetExceeded || a.status != 402 {
			t.Errorf("status %d code %d: %v", a.status, a.code(), a.body)
		}
	})
	t.Run("no engine", func(t *testing.T) {
		srv, _, _ := serve(t, translate.WithEngine(fake.New("one"), translate.Profile{Languages: []string{"en", "es"}}))
		a := post(t, srv.URL+"/v1/translate", "application/json", `{"text":"hi","source_lang":"en","target_lang":"zh"}`)
		if a.code() != codeNoEngine || a.status != 503 {
			t.Fatalf("status %d code %d: %v", a.status, a.code(), a.body)
		}
		data, _ := a.body["data"].(map[string]any)
		if data["kind"] != "no_engine" {
			t.Errorf("data %v: want kind no_engine", data)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		srv, _, _ := serve(t, translate.WithEngine(fake.New("one", fake.WithLatency(time.Minute)), translate.Profile{Timeout: 50 * time.Millisecond}))
		a := post(t, srv.URL+"/v1/translate", "application/json", `{"text":"hi","target_lang":"zh"}`)
		if a.status != 504 || a.code() != codeTimeout {
			t.Errorf("status %d code %d: %v", a.status, a.code(), a.body)
		}
	})
	t.Run("closed", func(t *testing.T) {
		srv, api, _ := serve(t, translate.WithEngine(fake.New("one"), translate.Profile{}))
		api.client.Close()
		a := post(t, srv.URL+"/v1/translate", "application/json", `{"text":"hi","target_lang":"zh"}`)
		if a.status != 503 || a.code() != codeClosed {
			t.Errorf("status %d code %d: %v", a.status, a.code(), a.body)
		}
	})
}

// TestErrorTable holds the README's table of codes to kindCodes and codeOf: every Kind has
// a row, and every row says what the code does.
func TestErrorTable(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `(\\d+)` \\| (\\d{3}) \\| ([^|]*)\\|")
	documented := map[int]int{} // code -> status
	kindsInTable := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(readme)))
	for sc.Scan() {
		m := row.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		code, _ := strconv.Atoi(m[1])
		st, _ := strconv.Atoi(m[2])
		documented[code] = st
		for _, k := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(m[3], -1) {
			kindsInTable[k[1]] = true
		}
	}
	if len(documented) == 0 {
		t.Fatal("README.md has no table of codes")
	}
	for k := translate.KindUnknown; k <= translate.KindClosed; k++ {
		code := codeOf(&translate.Error{Kind: k}, false)
		st, ok := documented[code]
		if !ok {
			t.Errorf("kind %s answers code %d, which the README does not list", k, code)
			continue
		}
		if st != status(code) {
			t.Errorf("code %d: README says HTTP %d, the server answers %d", code, st, status(code))
		}
		if !kindsInTable[k.String()] {
			t.Errorf("the README's table does not name kind %s", k)
		}
	}
	if got := codeOf(&translate.Error{Kind: translate.KindCanceled}, true); got != codeCanceled {
		t.Errorf("canceled by the client: code %d, want %d", got, codeCanceled)
	}
	for _, c := range []int{codeBadRequest, codeBadUTF8, codeDuplicate, codeNameCase, codeNotFound, codeMethod,
		codeTooLarge, codeMediaType, codeCharset, codeCanceled} {
		if st, ok := documented[c]; !ok || st != status(c) {
			t.Errorf("code %d: README lists HTTP %d (listed: %v), server answers %d", c, st, ok, status(c))
		}
	}
}

func TestBatch(t *testing.T) {
	srv, _, _ := serve(t, translate.WithEngine(fake.New("one", fake.WithTranslator(phrasebook)), translate.Profile{}))
	a := post(t, srv.URL+"/v1/translate/batch", "application/json",
		`{"requests":[{"text":"`+seedText+`","source_lang":"en","target_lang":"zh"},{"text":"","target_lang":"zh","request_id":"bad"},{"text":"hi","target_lang":"zh","scene":"x"}]}`)
	if a.status != 200 || a.code() != 0 {
		t.Fatalf("status %d: %v", a.status, a.body)
	}
	results := a.body["data"].(map[string]any)["results"].([]any)
	var codes []int
	for _, r := range results {
		codes = append(codes, int(r.(map[string]any)["code"].(float64)))
	}
	if diff := cmp.Diff([]int{0, codeInvalidInput, codeInvalidInput}, codes); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
	if got := results[0].(map[string]any)["data"].(map[string]any)["translated_text"]; got != "下着倾盆大雨。" {
		t.Errorf("first item translated to %v", got)
	}
	if got := results[1].(map[string]any)["request_id"]; got != "bad" {
		t.Errorf("failed item's request_id %v, want bad", got)
	}

	tooMany := post(t, srv.URL+"/v1/translate/batch", "application/json",
		`{"requests":[{"text":"a","target_lang":"zh"},{"text":"b","target_lang":"zh"},{"text":"c","target_lang":"zh"},{"text":"d","target_lang":"zh"}]}`)
	if tooMany.code() != codeTooLarge {
		t.Errorf("4 items with -max-batch 3: code %d", tooMany.code())
	}
	empty := post(t, srv.URL+"/v1/translate/batch", "application/json", `{"requests":[]}`)
	if empty.code() != codeBadRequest {
		t.Errorf("empty batch: code %d", empty.code())
	}
}

func TestRoutesAndReadiness(t *testing.T) {
	e := fake.New("one")
	srv, api, _ := serve(t, translate.WithEngine(e, translate.Profile{}),
		translate.WithBreaker(translate.BreakerPolicy{Window: 20, MinCalls: 20}))
	get := func(path string) answer {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return decodeAnswer(t, resp)
	}
	for _, tc := range []struct {
		path         string
		status, code int // code -1: not checked
	}{
		{"/healthz", 200, -1}, {"/readyz", 200, -1}, {"/v1/translate", 405, codeMethod}, {"/nope", 404, codeNotFound},
	} {
		if a := get(tc.path); a.status != tc.status || (tc.code >= 0 && a.code() != tc.code) {
			t.Errorf("GET %s: %d %d, want %d %d", tc.path, a.status, a.code(), tc.status, tc.code)
		}
	}
	eng := get("/v1/engines")
	list, _ := eng.body["data"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["name"] != "one" || list[0].(map[string]any)["breaker"] != "closed" {
		t.Errorf("/v1/engines: %v", eng.body)
	}

	// Every breaker open: not ready.
	e.Down(translate.KindUnavailable)
	for i := range 20 {
		post(t, srv.URL+"/v1/translate", "application/json", `{"text":"text `+strconv.Itoa(i)+`","target_lang":"zh"}`)
	}
	if a := get("/readyz"); a.status != 503 || a.code() != codeNoEngine {
		t.Errorf("/readyz with the only breaker open: %d %v", a.status, a.body)
	}
	e.Up()
	api.draining.Store(true)
	if a := get("/readyz"); a.status != 503 || a.code() != codeClosed {
		t.Errorf("/readyz while draining: %d %v", a.status, a.body)
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-timeout", "0"}, {"-max-body", "10"}, {"-max-batch", "0"}, {"-budget", "-1"}, {"extra"}, {"-nope"},
		{"-drain", "-1s"}, {"-drain", "11m"},
	} {
		if code := run(t.Context(), args, func(string) string { return "" }, io.Discard, io.Discard); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
	}
}

func TestBuildEngines(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	specs, sim, warn := buildEngines(env(), 0)
	if !sim || len(specs) != 3 || len(warn) != 0 {
		t.Errorf("no environment: simulated %v, %d engines, warnings %v", sim, len(specs), warn)
	}
	specs, sim, _ = buildEngines(env("APERTIUM_URL", "http://127.0.0.1:1"), 0)
	if sim || len(specs) != 1 || specs[0].engine.Name() != "apertium" {
		t.Errorf("APERTIUM_URL: simulated %v, engines %v", sim, specs)
	}
	_, sim, warn = buildEngines(env("OPENAI_API_KEY", "sk-secret-value"), 0)
	if !sim || len(warn) != 1 || strings.Contains(warn[0], "sk-secret") {
		t.Errorf("half an OpenAI setting: simulated %v, warnings %q", sim, warn)
	}
}

// TestDeepNestingIsCheap: a body of 1 MiB of '[' is refused without walking it: the name
// check stops at maxDepth (it allocated a frame per level, 100 MB, before the decoder
// refused the body).
func TestDeepNestingIsCheap(t *testing.T) {
	body := []byte(strings.Repeat("[", 1<<20))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code, msg := checkNames(body)
	runtime.ReadMemStats(&after)
	if code != codeOK || msg != "" {
		t.Errorf("checkNames = %d, %q; want the body left to the decoder", code, msg)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("checkNames of 1 MiB of '[' allocated %d KB, want at most 1 MB", alloc>>10)
	}
}
