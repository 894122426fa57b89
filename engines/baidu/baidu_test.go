package baidu

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"golang.org/x/text/language"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var modeOK = enginetest.Scenario{Mode: enginetest.ModeOK}

func request(src, tgt string, texts ...string) *translate.EngineRequest {
	r := &translate.EngineRequest{Texts: texts, Target: language.MustParse(tgt)}
	if src != "" {
		r.Source = language.MustParse(src)
	}
	return r
}

func TestNew(t *testing.T) {
	tests := []struct {
		name          string
		appID, secret string
		opts          []Option
		want          string
	}{
		{"no appID", "", "s", nil, "appID"},
		{"no secret", "a", "", nil, "secret"},
		{"bad URL", "a", "s", []Option{WithBaseURL("://x")}, "WithBaseURL"},
		{"not http", "a", "s", []Option{WithBaseURL("ftp://example.com")}, "WithBaseURL"},
		{"no host", "a", "s", []Option{WithBaseURL("https://")}, "WithBaseURL"},
		{"empty name", "a", "s", []Option{WithName("")}, "WithName"},
		{"max chars", "a", "s", []Option{WithMaxChars(0)}, "WithMaxChars"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.appID, tt.secret, tt.opts...)
			if translate.KindOf(err) != translate.KindInvalidInput || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New() error = %v, want KindInvalidInput naming %s", err, tt.want)
			}
		})
	}
	e, err := New("a", "s", WithName("baidu-2"))
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "baidu-2" {
		t.Errorf("Name() = %q, want baidu-2", e.Name())
	}
	if e.endpoint != "https://fanyi-api.baidu.com/api/trans/vip/translate" {
		t.Errorf("endpoint = %q", e.endpoint)
	}
}

// TestWire checks every parameter of one request, the sign over the raw q included.
func TestWire(t *testing.T) {
	fake, e := newTest(t, modeOK, withSalt(func() string { return "1435660288" }))
	text := "apple & pie = 1+1 %20 ?x=y" // every character form encoding changes
	res, err := e.Translate(context.Background(), request("en", "zh", text))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"T:" + text}, res.Texts); diff != "" {
		t.Errorf("Texts (-want +got):\n%s", diff)
	}
	reqs := fake.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	want := url.Values{
		"q": {text}, "from": {"en"}, "to": {"zh"}, "appid": {testAppID}, "salt": {"1435660288"},
		// md5("20240601001234567" + text + "1435660288" + "s3cr3tBaiduKey9f"), computed
		// independently of the adapter.
		"sign": {"e46b1bcd82993f3b76860535165c723c"},
	}
	if diff := cmp.Diff(want, reqs[0]); diff != "" {
		t.Errorf("form (-want +got):\n%s", diff)
	}
	if res.Source != language.Und {
		t.Errorf("Source = %v for a given source, want und", res.Source)
	}
}

// TestSaltPerRequest checks that the default salt changes between requests.
func TestSaltPerRequest(t *testing.T) {
	fake, e := newTest(t, modeOK)
	for range 3 {
		if _, err := e.Translate(context.Background(), request("en", "zh", "hello")); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for _, f := range fake.requests() {
		seen[f.Get("salt")] = true
	}
	if len(seen) < 2 {
		t.Errorf("salts %v: want a fresh random salt per request", seen)
	}
}

func TestLanguageCodes(t *testing.T) {
	tests := []struct{ tag, code string }{
		{"zh", "zh"}, {"zh-CN", "zh"}, {"zh-Hans", "zh"}, {"zh-SG", "zh"},
		{"zh-TW", "cht"}, {"zh-Hant", "cht"}, {"zh-HK", "cht"}, {"zh-Hant-HK", "cht"},
		{"yue", "yue"}, {"lzh", "wyw"},
		{"en", "en"}, {"en-GB", "en"}, {"ja", "jp"}, {"ko", "kor"}, {"fr", "fra"}, {"fr-CA", "fra"},
		{"es", "spa"}, {"es-419", "spa"}, {"th", "th"}, {"ar", "ara"}, {"ru", "ru"}, {"pt", "pt"},
		{"pt-BR", "pt"}, {"de", "de"}, {"it", "it"}, {"el", "el"}, {"nl", "nl"}, {"pl", "pl"},
		{"bg", "bul"}, {"et", "est"}, {"da", "dan"}, {"fi", "fin"}, {"cs", "cs"}, {"ro", "rom"},
		{"sl", "slo"}, {"sv", "swe"}, {"hu", "hu"}, {"vi", "vie"},
	}
	fake, e := newTest(t, modeOK)
	for _, tt := range tests {
		if _, err := e.Translate(context.Background(), request(tt.tag, tt.tag, "x")); err != nil {
			t.Errorf("%s: %v", tt.tag, err)
		}
	}
	reqs := fake.requests()
	if len(reqs) != len(tests) {
		t.Fatalf("%d requests, want %d", len(reqs), len(tests))
	}
	for i, tt := range tests {
		if f := reqs[i]; f.Get("from") != tt.code || f.Get("to") != tt.code {
			t.Errorf("%s: from=%s to=%s, want %s", tt.tag, f.Get("from"), f.Get("to"), tt.code)
		}
	}
	// The Profile lists exactly the mappable languages.
	for _, l := range e.Profile().Languages {
		if code(language.MustParse(l)) == "" {
			t.Errorf("Profile().Languages has %s, which has no code", l)
		}
	}
}

func TestUnsupportedBeforeSending(t *testing.T) {
	fake, e := newTest(t, modeOK)
	for _, r := range []*translate.EngineRequest{
		request("en", "sw", "x"),
		request("tlh", "en", "x"),
		request("en", "sr-Latn", "x"),
	} {
		_, err := e.Translate(context.Background(), r)
		if translate.KindOf(err) != translate.KindUnsupported {
			t.Errorf("%v -> %v: err = %v, want KindUnsupported", r.Source, r.Target, err)
		}
	}
	_, err := e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"x"}})
	if translate.KindOf(err) != translate.KindInvalidInput {
		t.Errorf("no target: err = %v, want KindInvalidInput", err)
	}
	if n := len(fake.requests()); n != 0 {
		t.Errorf("%d requests sent for unsupported languages, want 0", n)
	}
}

func TestDetectSource(t *testing.T) {
	fake, e := newTest(t, modeOK)
	body, err := os.ReadFile("testdata/translate_auto_en.json")
	if err != nil {
		t.Fatal(err)
	}
	fake.reply = func(w http.ResponseWriter, f url.Values) { w.Write(body) }
	res, err := e.Translate(context.Background(), request("", "en", "こんにちは"))
	if err != nil {
		t.Fatal(err)
	}
	if got := fake.requests()[0].Get("from"); got != "auto" {
		t.Errorf("from = %q for an undetermined source, want auto", got)
	}
	if diff := cmp.Diff([]string{"Hello"}, res.Texts); diff != "" {
		t.Errorf("Texts (-want +got):\n%s", diff)
	}
	if res.Source != language.Japanese {
		t.Errorf("Source = %v, want ja (Baidu's jp)", res.Source)
	}
}

func TestRecordedResponse(t *testing.T) {
	fake, e := newTest(t, modeOK)
	body, err := os.ReadFile("testdata/translate_en_zh.json")
	if err != nil {
		t.Fatal(err)
	}
	fake.reply = func(w http.ResponseWriter, f url.Values) { w.Write(body) }
	res, err := e.Translate(context.Background(), request("en", "zh-CN", "apple", "Good morning, everyone."))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"苹果", "大家早上好。"}, res.Texts); diff != "" {
		t.Errorf("Texts (-want +got):\n%s", diff)
	}
	if got := fake.requests()[0].Get("q"); got != "apple\nGood morning, everyone." {
		t.Errorf("q = %q, want the texts joined with \\n", got)
	}
}

func TestBatching(t *testing.T) {
	fake, e := newTest(t, modeOK)
	texts := []string{"one", "", "two\n\nthree\r\nfour", "   ", "five"}
	res, err := e.Translate(context.Background(), request("en", "de", texts...))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"T:one", "", "T:two\n\nT:three\r\nT:four", "   ", "T:five"}
	if diff := cmp.Diff(want, res.Texts); diff != "" {
		t.Errorf("Texts (-want +got):\n%s", diff)
	}
	var qs []string
	for _, f := range fake.requests() {
		qs = append(qs, f.Get("q"))
	}
	// The multi-line text goes alone, without its blank line and "\r"; single lines share one.
	if diff := cmp.Diff([]string{"two\nthree\nfour", "one\nfive"}, qs); diff != "" {
		t.Errorf("q per request (-want +got):\n%s", diff)
	}

	// Nothing to translate: no request.
	n := len(fake.requests())
	res, err = e.Translate(context.Background(), request("en", "de", "", " \n "))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"", " \n "}, res.Texts); diff != "" {
		t.Errorf("Texts (-want +got):\n%s", diff)
	}
	if got := len(fake.requests()); got != n {
		t.Errorf("%d requests for blank texts, want none", got-n)
	}
}

func TestSplitsLongQueries(t *testing.T) {
	t.Run("bytes", func(t *testing.T) {
		fake, e := newTest(t, modeOK, WithMaxChars(5000))
		cjk := strings.Repeat("汉", 1500) // 4500 bytes: two never fit in 6000
		texts := []string{cjk, "short", cjk, cjk}
		res, err := e.Translate(context.Background(), request("zh", "en", texts...))
		if err != nil {
			t.Fatal(err)
		}
		for i, txt := range texts {
			if res.Texts[i] != "T:"+txt {
				t.Errorf("text %d out of order", i)
			}
		}
		reqs := fake.requests()
		if len(reqs) != 3 {
			t.Errorf("%d requests, want 3", len(reqs))
		}
		for _, f := range reqs {
			if n := len(f.Get("q")); n > maxQBytes {
				t.Errorf("q of %d bytes", n)
			}
		}
	})
	t.Run("chars", func(t *testing.T) {
		fake, e := newTest(t, modeOK, WithMaxChars(1000))
		if got := e.Profile().MaxChars; got != 1000 {
			t.Errorf("Profile().MaxChars = %d, want 1000", got)
		}
		texts := []string{strings.Repeat("a", 600), strings.Repeat("b", 399), strings.Repeat("c", 600), "d\n" + strings.Repeat("e", 999)}
		if _, err := e.Translate(context.Background(), request("en", "de", texts...)); err != nil {
			t.Fatal(err)
		}
		var lens []int
		for _, f := range fake.requests() {
			lens = append(lens, utf8.RuneCountInString(f.Get("q")))
		}
		// 600+1+399 = 1000 fits, then 600 starts a new request; the multi-line text splits
		// into two requests of its own.
		if diff := cmp.Diff([]int{1000, 1, 999, 600}, lens); diff != "" {
			t.Errorf("q lengths (-want +got):\n%s", diff)
		}
	})
	t.Run("line too long", func(t *testing.T) {
		fake, e := newTest(t, modeOK)
		_, err := e.Translate(context.Background(), request("zh", "en", "ok", strings.Repeat("汉", 2001)))
		if translate.KindOf(err) != translate.KindTextTooLong {
			t.Errorf("err = %v, want KindTextTooLong", err)
		}
		if n := len(fake.requests()); n != 0 {
			t.Errorf("%d requests, want 0", n)
		}
	})
}

// TestErrors maps every documented error code (recorded bodies in testdata/errors.json) and
// the other failure shapes to their Kinds.
func TestErrors(t *testing.T) {
	raw, err := os.ReadFile("testdata/errors.json")
	if err != nil {
		t.Fatal(err)
	}
	var recorded []json.RawMessage
	if err := json.Unmarshal(raw, &recorded); err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{}
	for _, r := range recorded {
		var b struct {
			Code string `json:"error_code"`
		}
		if err := json.Unmarshal(r, &b); err != nil {
			t.Fatal(err)
		}
		bodies[b.Code] = r
	}
	body := func(code string) []byte {
		if b, ok := bodies[code]; ok {
			return b
		}
		t.Fatalf("no recorded body for %s", code)
		return nil
	}
	tests := []struct {
		name       string
		status     int
		body       []byte
		kind       translate.Kind
		retryAfter time.Duration
		message    string
	}{
		{"52001 timeout", 200, body("52001"), translate.KindUnavailable, 0, "TIMEOUT"},
		{"52002 system error", 200, body("52002"), translate.KindUnavailable, 0, "SYSTEM ERROR"},
		{"52003 unauthorized user", 200, body("52003"), translate.KindUnauthorized, 0, "UNAUTHORIZED USER"},
		{"54000 missing parameter", 200, body("54000"), translate.KindInvalidInput, 0, "PARAM_FROM_TO_OR_Q_EMPTY"},
		{"54001 sign error", 200, body("54001"), translate.KindUnauthorized, 0, "Invalid Sign"},
		{"54003 frequency limit", 200, body("54003"), translate.KindRateLimited, 0, "Invalid Access Limit"},
		{"54004 balance", 200, body("54004"), translate.KindQuotaExhausted, 0, "Please recharge"},
		{"54005 long query", 200, body("54005"), translate.KindRateLimited, 3 * time.Second, "Long Query Limit"},
		{"58000 client IP", 200, body("58000"), translate.KindUnauthorized, 0, "Invalid client IP"},
		{"58001 language", 200, body("58001"), translate.KindUnsupported, 0, "Invalid to language"},
		{"58002 service closed", 200, body("58002"), translate.KindUnauthorized, 0, "Service is closed"},
		{"90107 verification", 200, body("90107"), translate.KindUnauthorized, 0, "Authentication failed"},
		{"54009 detection", 200, body("54009"), translate.KindUnsupported, 0, "detection failed"},
		{"54010 pre-charge", 200, body("54010"), translate.KindQuotaExhausted, 0, "Pre-charge"},
		{"numeric code", 200, []byte(`{"error_code":54003,"error_msg":"Invalid Access Limit"}`), translate.KindRateLimited, 0, "54003"},
		{"undocumented code", 200, []byte(`{"error_code":"59999","error_msg":"something new"}`), translate.KindUnknown, 0, "something new"},
		{"52000 with results", 200, nil, 0, 0, ""},
		{"HTTP 502", 502, []byte("<html>bad gateway</html>"), translate.KindUnavailable, 0, "Bad Gateway"},
		{"HTTP 403", 403, []byte("forbidden"), translate.KindUnauthorized, 0, ""},
		{"not JSON", 200, []byte("<html>captive portal</html>"), translate.KindBadOutput, 0, "not the documented JSON"},
		{"wrong count", 200, []byte(`{"from":"en","to":"zh","trans_result":[{"src":"a","dst":"b"}]}`), translate.KindBadOutput, 0, "1 texts for 2"},
		{"no trans_result", 200, []byte(`{"from":"en","to":"zh"}`), translate.KindBadOutput, 0, "0 texts for 2"},
		{"empty dst", 200, []byte(`{"from":"en","to":"zh","trans_result":[{"src":"a","dst":""},{"src":"b","dst":"c"}]}`), translate.KindBadOutput, 0, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, e := newTest(t, modeOK, WithName("baidu-x"))
			var sign string
			fake.reply = func(w http.ResponseWriter, f url.Values) {
				sign = f.Get("sign")
				if tt.body == nil {
					w.Write([]byte(`{"error_code":"52000","from":"en","to":"zh","trans_result":[{"src":"a","dst":"甲"},{"src":"b","dst":"乙"}]}`))
					return
				}
				w.WriteHeader(tt.status)
				w.Write(tt.body)
			}
			res, err := e.Translate(context.Background(), request("en", "zh", "a", "b"))
			if tt.body == nil {
				if err != nil || len(res.Texts) != 2 {
					t.Fatalf("Translate() = %v, %v; want success", res, err)
				}
				return
			}
			var te *translate.Error
			if !errors.As(err, &te) {
				t.Fatalf("err = %v (%T), want *translate.Error", err, err)
			}
			if te.Kind != tt.kind || te.Engine != "baidu-x" || te.StatusCode != tt.status || te.RetryAfter != tt.retryAfter {
				t.Errorf("err = %+v, want kind %v, engine baidu-x, status %d, RetryAfter %v", te, tt.kind, tt.status, tt.retryAfter)
			}
			if !strings.Contains(te.Message, tt.message) {
				t.Errorf("Message = %q, want it to contain %q", te.Message, tt.message)
			}
			for _, sec := range []string{testSecret, testAppID, sign} {
				if strings.Contains(err.Error(), sec) {
					t.Errorf("error %q leaks %q", err, sec)
				}
			}
		})
	}
}

// TestEchoedSecretsRedacted checks that a server echoing the request into its message does
// not leak the secret, the APP ID or the sign.
func TestEchoedSecretsRedacted(t *testing.T) {
	fake, e := newTest(t, modeOK)
	fake.reply = func(w http.ResponseWriter, f url.Values) {
		vendorError(w, "54001", "Invalid Sign: "+f.Encode()+" secret="+testSecret)
	}
	_, err := e.Translate(context.Background(), request("en", "zh", "a"))
	sign := fake.requests()[0].Get("sign")
	for _, sec := range []string{testSecret, testAppID, sign} {
		if strings.Contains(err.Error(), sec) {
			t.Errorf("error %q leaks %q", err, sec)
		}
	}
}

func TestTransportErrorRedacted(t *testing.T) {
	e, err := New(testAppID, testSecret, WithBaseURL("http://127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Translate(context.Background(), request("en", "zh", "a"))
	if translate.KindOf(err) != translate.KindUnavailable {
		t.Errorf("err = %v, want KindUnavailable", err)
	}
	if strings.Contains(err.Error(), testSecret) {
		t.Errorf("error %q leaks the secret", err)
	}
}

func TestProfile(t *testing.T) {
	e, err := New("a", "s")
	if err != nil {
		t.Fatal(err)
	}
	p := e.Profile()
	if p.Class != translate.ClassStandard || p.CostPerMillion != 7 || p.MaxChars != 2000 ||
		p.MaxTexts != 50 || p.Timeout != 6*time.Second || p.Quality != 78 || p.Region != "cn" {
		t.Errorf("Profile() = %+v", p)
	}
}

func TestConformance(t *testing.T) {
	enginetest.Run(t, enginetest.Harness{
		NewEngine: func(t *testing.T, sc enginetest.Scenario) translate.Engine {
			_, e := newTest(t, sc)
			return e
		},
		ErrorKinds: []translate.Kind{
			translate.KindUnauthorized, translate.KindInvalidInput, translate.KindRateLimited,
			translate.KindQuotaExhausted, translate.KindUnsupported, translate.KindUnavailable,
		},
		Secrets:  []string{testSecret},
		Source:   language.English,
		Target:   language.Chinese,
		MaxTexts: 50,
	})
}
