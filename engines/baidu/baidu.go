// Package baidu is a translate.Engine for the Baidu Fanyi general text translation API
// (通用文本翻译, https://fanyi-api.baidu.com/doc/21).
//
// Create the engine with the APP ID and secret key of your Baidu Fanyi developer account and
// hand it to a translate.Client with its Profile:
//
//	e, err := baidu.New(os.Getenv("BAIDU_APPID"), os.Getenv("BAIDU_SECRET"))
//	if err != nil {
//		return err
//	}
//	c, err := translate.New(translate.WithEngine(e, e.Profile()))
//
// # Wire format
//
// Every call is a form-encoded POST to /api/trans/vip/translate carrying q, from, to, appid, a
// random salt per request and sign = md5(appid + q + salt + secret), computed over the raw,
// un-encoded q. Several texts travel in one q joined by "\n"; Baidu answers one trans_result
// entry per line. A text that itself contains a newline goes in a request of its own, one line
// per entry, and its translated lines are joined again with "\n" (blank lines are kept, not
// sent). A request carries at most 6000 bytes of q and the configured number of characters
// (WithMaxChars); longer input is split into several requests, and one line that does not fit
// alone is a KindTextTooLong error.
//
// # Errors
//
// Baidu answers errors with HTTP 200 and an error_code in the body. They map to Kinds as
// follows: 52001 (request timeout, "retry") and 52002 (system error) KindUnavailable, so the
// Client retries once; 52003 (unauthorized user), 54001 (sign error: with a correct signature
// this means a wrong secret), 58000 (client IP not allowed), 58002 (service closed) and 90107
// (verification not passed) KindUnauthorized; 54000 (missing parameter) KindInvalidInput;
// 54003 (QPS limit) and 54005 (long queries too frequent, RetryAfter 3s as documented)
// KindRateLimited; 54004 (balance insufficient) and 54010 (pre-charge insufficient)
// KindQuotaExhausted; 58001 (language direction not supported) and 54009 (source detection
// failed) KindUnsupported. Other codes are KindUnknown, a non-200 status takes the generic
// HTTP mapping, and a 200 answer that does not parse or has the wrong number of lines is
// KindBadOutput. Neither the secret, the APP ID, a request's sign nor its text appears in
// any error, in any encoding, even when Baidu's error_msg quotes them.
//
// # Security
//
// A redirect to another host is refused (KindUnavailable) instead of carrying the form,
// APP ID, sign and text there. Response bodies are read up to 8 MiB; Retry-After is
// clamped to [0, 5m]. WithKeyFunc rotates the secret key without a restart.
//
// # Region
//
// Baidu processes text in mainland China: Profile().Region is "cn".
//
// # Languages
//
// Baidu uses its own codes: zh (zh, zh-CN, zh-Hans and every Simplified Chinese tag), cht
// (zh-TW, zh-HK, zh-Hant), yue (Cantonese), wyw (lzh, Classical Chinese), en, jp (ja), kor (ko),
// fra (fr), spa (es), th, ara (ar), ru, pt, de, it, el, nl, pl, bul (bg), est (et), dan (da),
// fin (fi), cs, rom (ro), slo (sl), swe (sv), hu and vie (vi). Source language.Und is sent as
// auto, and the detected source Baidu reports comes back in EngineResult.Source. Any other tag
// is KindUnsupported before a request is sent.
package baidu

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/internal/httpx"
	"golang.org/x/text/language"
)

// Name is the default engine name.
const Name = "baidu"

// DefaultBaseURL is the server the general translation API is served from.
const DefaultBaseURL = "https://fanyi-api.baidu.com"

// path is the documented path of the general translation API.
const path = "/api/trans/vip/translate"

// maxQBytes is the documented (recommended) maximum length of q in one request.
const maxQBytes = 6000

// defaultMaxChars keeps any q within maxQBytes: 2000 characters of Chinese are 6000 bytes.
const defaultMaxChars = 2000

// Option configures an Engine in New.
type Option func(*config)

type config struct {
	baseURL  string
	hc       *http.Client
	name     string
	maxChars int
	salt     func() string // tests inject a fixed salt
	keyFunc  httpx.KeyFunc
}

func defaultConfig() config {
	return config{
		baseURL:  DefaultBaseURL,
		name:     Name,
		maxChars: defaultMaxChars,
		salt:     func() string { return strconv.FormatUint(uint64(rand.Uint32()), 10) },
	}
}

// WithBaseURL sets the server URL; the adapter appends /api/trans/vip/translate. A trailing
// slash is tolerated. The default is DefaultBaseURL.
func WithBaseURL(u string) Option { return func(c *config) { c.baseURL = u } }

// WithHTTPClient sets the HTTP client. The default is a client with connection, TLS and
// header timeouts, never http.DefaultClient.
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.hc = hc } }

// WithName sets the engine name, so that two instances can serve one Client. The default is
// Name.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithMaxChars sets how many characters one request may carry, the per-request limit of the
// account's tier: 1000 on the Standard tier. The default is 2000, which keeps a request within
// the documented 6000 bytes even for Chinese text (Advanced and Premium tiers). It is also
// Profile().MaxChars.
func WithMaxChars(n int) Option { return func(c *config) { c.maxChars = n } }

// WithKeyFunc reads the secret key from f before every request instead of New's fixed
// secret, so that a rotated secret applies without a restart; f must be safe for concurrent
// use and fast (cache in it if fetching is slow). When Baidu answers an unauthorized code
// (52003, 54001, ...), the engine calls f once more and, if the secret changed, repeats the
// request once (with a new salt and sign) before returning KindUnauthorized. An error from
// f, or an empty secret, is KindUnauthorized. With WithKeyFunc, New's secret may be empty.
// The default is New's secret.
func WithKeyFunc(f func(context.Context) (string, error)) Option {
	return func(c *config) { c.keyFunc = f }
}

// withSalt replaces the random salt, for tests.
func withSalt(f func() string) Option { return func(c *config) { c.salt = f } }

// Engine translates with the Baidu Fanyi general translation API. It is safe for concurrent
// use. Create it with New; the zero value is not usable.
type Engine struct {
	appID    string
	secret   httpx.Key
	endpoint string
	hc       *http.Client
	name     string
	maxChars int
	salt     func() string
}

// New returns an Engine for the account with the given APP ID and secret key. It returns a
// *translate.Error of KindInvalidInput naming the bad argument when appID is empty, secret is
// empty (and no WithKeyFunc is given), or an option is invalid.
func New(appID, secret string, opts ...Option) (*Engine, error) {
	c := defaultConfig()
	for _, o := range opts {
		o(&c)
	}
	switch {
	case appID == "":
		return nil, invalid("appID is empty")
	case secret == "" && c.keyFunc == nil:
		return nil, invalid("secret is empty")
	case c.name == "":
		return nil, invalid("WithName: name is empty")
	case c.maxChars <= 0:
		return nil, invalid("WithMaxChars: must be positive, got " + strconv.Itoa(c.maxChars))
	}
	base, err := httpx.BaseURL(c.baseURL)
	if err != nil {
		return nil, invalid("WithBaseURL: " + err.Error())
	}
	if c.salt == nil {
		c.salt = defaultConfig().salt
	}
	return &Engine{
		appID:    appID,
		secret:   httpx.NewKey(secret, c.keyFunc),
		endpoint: base + path,
		hc:       httpx.Client(c.hc),
		name:     c.name,
		maxChars: c.maxChars,
		salt:     c.salt,
	}, nil
}

// invalid is New's error for a bad argument.
func invalid(msg string) error {
	return &translate.Error{Kind: translate.KindInvalidInput, Engine: Name, Message: "baidu.New: " + msg}
}

// Name returns the engine's name: Name unless set with WithName.
func (e *Engine) Name() string { return e.name }

// Profile describes the engine to the router:
//
//   - Quality 78: a guess from public offline evaluations, strongest on Chinese.
//   - ClassStandard at 7 credits (USD) per million characters: Baidu lists 49 CNY per million
//     characters beyond the monthly free allowance (50 000 characters on the Standard tier,
//     1 million on Advanced), which this profile does not model; set Quota or ClassFree
//     yourself to serve from the allowance only.
//   - MaxChars as set by WithMaxChars (default 2000), MaxTexts 50, Timeout 6s.
//   - Languages: the tags listed in the package documentation.
//   - Region "cn": Baidu processes the text in mainland China.
//
// Baidu limits queries per second by tier (Standard 1, Advanced 10, Premium 100); set
// RateLimit to your tier's limit.
func (e *Engine) Profile() translate.Profile {
	return translate.Profile{
		Quality:        78,
		Class:          translate.ClassStandard,
		CostPerMillion: 7,
		Languages:      languages(),
		Timeout:        6 * time.Second,
		MaxChars:       e.maxChars,
		MaxTexts:       50,
		Region:         "cn",
	}
}

// line is one line of q and where its translation goes.
type line struct {
	text    int // index into req.Texts
	part    int // line of a multi-line text; 0 for single-line texts
	content string
}

// batch is the lines of one vendor request.
type batch []line

// Translate translates req.Texts with one or more requests to Baidu. Empty and blank texts
// are returned unchanged without being sent. It is safe for concurrent use.
func (e *Engine) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	if req == nil {
		return nil, e.errorf(translate.KindInvalidInput, "nil request")
	}
	from, to, err := e.codes(req.Source, req.Target)
	if err != nil {
		return nil, err
	}
	p, err := e.plan(req.Texts)
	if err != nil {
		return nil, err
	}
	res := &translate.EngineResult{}
	for _, r := range p.reqs {
		got, detected, err := e.send(ctx, r, from, to)
		if err != nil {
			return nil, err
		}
		p.place(r, got)
		if req.Source == language.Und && res.Source == language.Und {
			res.Source = tagOf(detected)
		}
	}
	out := p.join()
	if err := httpx.CountTexts(e.name, len(out), len(req.Texts)); err != nil {
		return nil, err
	}
	res.Texts = out
	return res, nil
}

// plan is one Translate call on its way: the answer so far, the lines of each multi-line
// text, and the vendor requests whose translations fill in the rest.
type plan struct {
	out   []string   // one per text; blank texts as they came
	parts [][]string // translated lines of multi-line texts, nil for the others
	reqs  []batch
}

// plan packs texts into requests. Blank texts are answered as they are; single-line texts
// share requests; each multi-line text gets requests of its own (see planLines).
func (e *Engine) plan(texts []string) (*plan, error) {
	p := &plan{out: make([]string, len(texts)), parts: make([][]string, len(texts))}
	single := e.packer(&p.reqs)
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			p.out[i] = t
			continue
		}
		if !strings.Contains(t, "\n") {
			if err := single.add(line{text: i, content: t}); err != nil {
				return nil, err
			}
			continue
		}
		if err := e.planLines(p, i, t); err != nil {
			return nil, err
		}
	}
	single.flush()
	return p, nil
}

// planLines gives text i, t, which has several lines, requests of its own. Blank lines are
// kept as they are; a line's trailing "\r" is kept out of q and put back by place.
func (e *Engine) planLines(p *plan, i int, t string) error {
	lines := strings.Split(t, "\n")
	p.parts[i] = lines
	own := e.packer(&p.reqs)
	for j, l := range lines {
		c := strings.TrimSuffix(l, "\r")
		if strings.TrimSpace(c) == "" {
			continue
		}
		if err := own.add(line{text: i, part: j, content: c}); err != nil {
			return err
		}
	}
	own.flush()
	return nil
}

// place puts got, the translations of r's lines, where they belong.
func (p *plan) place(r batch, got []string) {
	for k, l := range r {
		if p.parts[l.text] == nil {
			p.out[l.text] = got[k]
			continue
		}
		orig := p.parts[l.text][l.part]
		p.parts[l.text][l.part] = got[k] + orig[len(l.content):] // keep a trailing "\r"
	}
}

// join returns the answer: each multi-line text's lines joined back with "\n".
func (p *plan) join() []string {
	for i, lines := range p.parts {
		if lines != nil {
			p.out[i] = strings.Join(lines, "\n")
		}
	}
	return p.out
}

// packer fills requests with lines up to the per-request limits.
type packer struct {
	e            *Engine
	reqs         *[]batch
	cur          batch
	bytes, chars int
}

func (e *Engine) packer(reqs *[]batch) *packer { return &packer{e: e, reqs: reqs} }

// add appends l to the current request, starting a new one when l does not fit.
func (p *packer) add(l line) error {
	b, c := len(l.content), utf8.RuneCountInString(l.content)
	if b > maxQBytes || c > p.e.maxChars {
		return &translate.Error{Kind: translate.KindTextTooLong, Engine: p.e.name,
			Message: fmt.Sprintf("a line of %d characters (%d bytes) exceeds the per-request limit of %d characters and %d bytes",
				c, b, p.e.maxChars, maxQBytes)}
	}
	if len(p.cur) > 0 && (p.bytes+1+b > maxQBytes || p.chars+1+c > p.e.maxChars) {
		p.flush()
	}
	if len(p.cur) > 0 {
		p.bytes, p.chars = p.bytes+1, p.chars+1 // the "\n" separator
	}
	p.cur = append(p.cur, l)
	p.bytes += b
	p.chars += c
	return nil
}

func (p *packer) flush() {
	if len(p.cur) > 0 {
		*p.reqs = append(*p.reqs, p.cur)
	}
	p.cur, p.bytes, p.chars = nil, 0, 0
}

// response is the body of an answer, successful or not.
type response struct {
	From        string          `json:"from"`
	To          string          `json:"to"`
	TransResult []transResult   `json:"trans_result"`
	ErrorCode   json.RawMessage `json:"error_code"` // a string, sometimes a number
	ErrorMsg    string          `json:"error_msg"`
}

type transResult struct {
	Src string `json:"src"`
	Dst string `json:"dst"`
}

// result is what one request gave: one translation per line and the reported source code.
type result struct {
	lines []string
	from  string
}

// send makes one request and returns one translation per line and the reported source
// code. An unauthorized answer re-reads a secret from WithKeyFunc once and, if it changed,
// repeats the request.
func (e *Engine) send(ctx context.Context, r batch, from, to string) ([]string, string, error) {
	lines := make([]string, len(r))
	for i, l := range r {
		lines[i] = l.content
	}
	res, err := httpx.WithKey(ctx, e.secret, e.name, func(secret string) (result, error) {
		got, detected, err := e.sendSigned(ctx, lines, from, to, secret)
		return result{got, detected}, err
	})
	return res.lines, res.from, err
}

// sendSigned makes one request signed with secret.
func (e *Engine) sendSigned(ctx context.Context, lines []string, from, to, secret string) ([]string, string, error) {
	q := strings.Join(lines, "\n")
	salt := e.salt()
	sum := md5.Sum([]byte(e.appID + q + salt + secret))
	sign := hex.EncodeToString(sum[:])
	form := url.Values{
		"q":     {q},
		"from":  {from},
		"to":    {to},
		"appid": {e.appID},
		"salt":  {salt},
		"sign":  {sign},
	}
	hreq, err := httpx.NewRequest(ctx, http.MethodPost, e.endpoint, []byte(form.Encode()), "application/x-www-form-urlencoded")
	if err != nil {
		return nil, "", e.errorf(translate.KindInvalidInput, "building request: %v", err)
	}
	secrets := append([]string{secret, e.appID, sign, q}, lines...)
	resp, err := httpx.Do(e.hc, e.name, hreq, secrets...)
	if err != nil {
		return nil, "", err
	}
	var body response
	perr := json.Unmarshal(resp.Body, &body)
	code := errorCode(body.ErrorCode)
	if resp.Status != http.StatusOK {
		kind := httpx.StatusKind(resp.Status)
		msg := http.StatusText(resp.Status)
		if perr == nil && code != "" {
			kind, msg = codeKind(code), "error_code "+code+": "+body.ErrorMsg
		}
		return nil, "", httpx.Error(e.name, kind, resp, msg, secrets...)
	}
	if perr != nil {
		return nil, "", httpx.Error(e.name, translate.KindBadOutput, resp,
			"response is not the documented JSON: "+perr.Error(), secrets...)
	}
	if code != "" && code != "52000" && code != "0" {
		te := httpx.Error(e.name, codeKind(code), resp, "error_code "+code+": "+body.ErrorMsg, secrets...)
		if code == "54005" {
			te.RetryAfter = 3 * time.Second // documented: wait 3 seconds
		}
		return nil, "", te
	}
	if len(body.TransResult) != len(lines) {
		return nil, "", httpx.Error(e.name, translate.KindBadOutput, resp,
			fmt.Sprintf("vendor returned %d texts for %d", len(body.TransResult), len(lines)))
	}
	got := make([]string, len(lines))
	for i, tr := range body.TransResult {
		if tr.Dst == "" {
			return nil, "", httpx.Error(e.name, translate.KindBadOutput, resp,
				fmt.Sprintf("empty translation for line %d of %d", i+1, len(lines)))
		}
		got[i] = tr.Dst
	}
	return got, body.From, nil
}

// errorCode returns the error_code as a string, whether Baidu sent a string or a number.
func errorCode(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	return strings.TrimSpace(string(raw))
}

// codeKind maps Baidu's documented error codes to Kinds.
func codeKind(code string) translate.Kind {
	switch code {
	case "52001", "52002":
		return translate.KindUnavailable
	case "52003", "54001", "58000", "58002", "90107":
		return translate.KindUnauthorized
	case "54000":
		return translate.KindInvalidInput
	case "54003", "54005":
		return translate.KindRateLimited
	case "54004", "54010":
		return translate.KindQuotaExhausted
	case "58001", "54009":
		return translate.KindUnsupported
	}
	return translate.KindUnknown
}

func (e *Engine) errorf(kind translate.Kind, format string, args ...any) *translate.Error {
	return &translate.Error{Kind: kind, Engine: e.name, Message: fmt.Sprintf(format, args...)}
}

// codes maps the request's languages to Baidu codes.
func (e *Engine) codes(src, tgt language.Tag) (from, to string, err error) {
	if tgt == language.Und {
		return "", "", e.errorf(translate.KindInvalidInput, "target language is required")
	}
	from = "auto"
	if src != language.Und {
		if from = code(src); from == "" {
			return "", "", e.errorf(translate.KindUnsupported, "source language %s is not supported", src)
		}
	}
	if to = code(tgt); to == "" {
		return "", "", e.errorf(translate.KindUnsupported, "target language %s is not supported", tgt)
	}
	return from, to, nil
}
