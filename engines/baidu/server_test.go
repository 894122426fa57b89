package baidu

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
)

const (
	testAppID  = "20240601001234567"
	testSecret = "s3cr3tBaiduKey9f"
)

// vendorCodes are the language codes the general translation API documents.
var vendorCodes = []string{
	"auto", "zh", "en", "yue", "wyw", "jp", "kor", "fra", "spa", "th", "ara", "ru", "pt", "de",
	"it", "el", "nl", "pl", "bul", "est", "dan", "fin", "cs", "rom", "slo", "swe", "hu", "cht", "vie",
}

// errorCodeFor is the documented error code a server answers for a Kind in ModeError.
var errorCodeFor = map[translate.Kind]string{
	translate.KindUnavailable:    "52002",
	translate.KindUnauthorized:   "52003",
	translate.KindInvalidInput:   "54000",
	translate.KindRateLimited:    "54003",
	translate.KindQuotaExhausted: "54004",
	translate.KindUnsupported:    "58001",
}

// fakeBaidu follows the general translation API notes: POST (or GET) to
// /api/trans/vip/translate, form-encoded, every parameter required, sign =
// md5(appid+q+salt+secret) over the raw q, documented language codes, errors as HTTP 200 with
// error_code. A spec violation fails the test and gets the documented error.
type fakeBaidu struct {
	t  *testing.T
	sc enginetest.Scenario
	// reply, when set, answers a valid request in ModeOK instead of the default echo.
	reply func(w http.ResponseWriter, f url.Values)

	mu   sync.Mutex
	reqs []url.Values
}

func (s *fakeBaidu) requests() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func vendorError(w http.ResponseWriter, code, msg string) {
	writeJSON(w, map[string]string{"error_code": code, "error_msg": msg})
}

func (s *fakeBaidu) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.sc.Mode == enginetest.ModeHang {
		// The server notices a closed connection (and cancels r.Context()) only once the
		// body has been read.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
		return
	}
	if r.URL.Path != "/api/trans/vip/translate" {
		s.t.Errorf("request path = %q, want /api/trans/vip/translate", r.URL.Path)
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		s.t.Errorf("request method = %s, want POST", r.Method)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if r.Method == http.MethodPost {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/x-www-form-urlencoded" {
			s.t.Errorf("Content-Type = %q, want application/x-www-form-urlencoded", r.Header.Get("Content-Type"))
		}
	}
	if err := r.ParseForm(); err != nil {
		s.t.Errorf("body does not parse as a form: %v", err)
		vendorError(w, "54000", "PARAM_FROM_TO_OR_Q_EMPTY")
		return
	}
	f := r.PostForm
	if r.Method == http.MethodGet {
		f = r.URL.Query()
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, f)
	s.mu.Unlock()
	if r.URL.RawQuery != "" && r.Method == http.MethodPost {
		s.t.Errorf("POST carries a query string %q; the parameters belong in the body", r.URL.RawQuery)
	}
	for _, k := range []string{"q", "from", "to", "appid", "salt", "sign"} {
		if len(f[k]) != 1 || f.Get(k) == "" {
			s.t.Errorf("parameter %s = %q, want exactly one non-empty value", k, f[k])
			vendorError(w, "54000", "PARAM_FROM_TO_OR_Q_EMPTY")
			return
		}
	}
	if f.Get("appid") != testAppID {
		s.t.Errorf("appid = %q, want %q", f.Get("appid"), testAppID)
		vendorError(w, "52003", "UNAUTHORIZED USER")
		return
	}
	sum := md5.Sum([]byte(f.Get("appid") + f.Get("q") + f.Get("salt") + testSecret))
	if want := hex.EncodeToString(sum[:]); f.Get("sign") != want {
		s.t.Errorf("sign = %q, want md5(appid+q+salt+secret) = %q", f.Get("sign"), want)
		vendorError(w, "54001", "Invalid Sign")
		return
	}
	from, to := f.Get("from"), f.Get("to")
	if !slices.Contains(vendorCodes, from) || !slices.Contains(vendorCodes, to) || to == "auto" {
		s.t.Errorf("from=%q to=%q: not a documented language pair", from, to)
		vendorError(w, "58001", "Invalid to language")
		return
	}
	if len(f.Get("q")) > maxQBytes {
		s.t.Errorf("q is %d bytes, more than the documented %d", len(f.Get("q")), maxQBytes)
	}
	if s.sc.Mode == enginetest.ModeError {
		code, ok := errorCodeFor[s.sc.Kind]
		if !ok {
			s.t.Errorf("no documented Baidu error for kind %v", s.sc.Kind)
			code = "52002"
		}
		vendorError(w, code, "error for "+s.sc.Kind.String())
		return
	}
	if s.reply != nil {
		s.reply(w, f)
		return
	}
	if from == "auto" {
		from = "en"
	}
	var tr []map[string]string
	for _, l := range strings.Split(f.Get("q"), "\n") {
		tr = append(tr, map[string]string{"src": l, "dst": enginetest.Expected(l)})
	}
	writeJSON(w, map[string]any{"from": from, "to": to, "trans_result": tr})
}

// newTest starts a fakeBaidu playing sc and returns it with an engine pointed at it.
func newTest(t *testing.T, sc enginetest.Scenario, opts ...Option) (*fakeBaidu, *Engine) {
	t.Helper()
	fake := &fakeBaidu{t: t, sc: sc}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	opts = append([]Option{WithBaseURL(srv.URL + "/"), WithHTTPClient(srv.Client())}, opts...)
	e, err := New(testAppID, testSecret, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return fake, e
}
