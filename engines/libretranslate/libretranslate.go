// Package libretranslate is a translate.Engine for LibreTranslate (POST /translate), the
// open-source machine-translation server, self-hosted or at libretranslate.com.
//
//	e, err := libretranslate.New("http://localhost:5000", "") // self-hosted, no key
//	if err != nil {
//		return err
//	}
//	c, err := translate.New(translate.WithEngine(e, e.Profile()))
//
// The API key, when the server runs with --api-keys, travels in the JSON body ("api_key")
// as LibreTranslate requires, and never appears in an error. The engine implements
// translate.LanguageSupporter from GET /languages. A request in translate.FormatHTML goes
// with format "html" (the bundled Profile declares Native{Formats: HTML}); plain text goes
// with format "text".
//
// # Languages
//
// Tags map to LibreTranslate's ISO 639-1 codes. Chinese is sent as "zh" (simplified: zh,
// zh-CN, zh-Hans, zh-SG) or "zt" (traditional: zh-TW, zh-HK, zh-Hant), Brazilian Portuguese
// (pt-BR) as "pb" and other Portuguese as "pt": the legacy codes LibreTranslate 1.9 still
// maps to zh-Hans, zh-Hant and pt-BR, and that older servers know natively. Tagalog (fil)
// is "tl", Norwegian (no) is "nb". A tag without an ISO 639-1 code is refused with
// translate.KindUnsupported before a request is sent; whether the server has a model for a
// pair is only known from its /languages list or its answer ("xx is not supported",
// KindUnsupported). Source language.Und sends source "auto".
//
// # Errors
//
// LibreTranslate answers {"error": "..."}: 400 is invalid input, or unsupported when a
// language is not supported, text too long when a text or batch exceeds the server's
// limits, unauthorized when the server needs an API key; 403 (invalid key, banned IP) is
// unauthorized, 429 rate limited, 500 and other 5xx unavailable.
//
// # Security
//
// No error carries the API key or the request's texts, in any encoding, even when the
// server's message quotes them. A redirect to another host is refused (KindUnavailable)
// instead of carrying the body (key and texts) there; same-host redirects are followed up
// to 3 times. Response bodies are read up to 8 MiB; Retry-After is clamped to [0, 5m].
// WithKeyFunc rotates the key without a restart. A self-hosted server processes data
// wherever it runs: Profile().Region is "" unless you set it.
package libretranslate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/internal/httpx"
	"golang.org/x/text/language"
)

// Name is the default engine name.
const Name = "libretranslate"

// DefaultBatchLimit is the default number of texts per request. LibreTranslate's own
// default (--batch-limit) is unlimited; 50 keeps requests short.
const DefaultBatchLimit = 50

// Option configures an Engine.
type Option func(*config)

type config struct {
	baseURL    string
	hc         *http.Client
	name       string
	batchLimit int
	charLimit  int
	keyFunc    httpx.KeyFunc
}

// WithKeyFunc reads the API key from f before every request instead of New's fixed key,
// so that a rotated key applies without a restart; f must be safe for concurrent use and
// fast (cache in it if fetching is slow). When the server answers 403 (or 400 asking for a
// key), the engine calls f once more and, if the key changed, repeats the request once
// before returning KindUnauthorized. An error from f, or an empty key, is
// KindUnauthorized. The default is New's apiKey.
func WithKeyFunc(f func(context.Context) (string, error)) Option {
	return func(c *config) { c.keyFunc = f }
}

// WithBaseURL replaces the server URL given to New (for example "http://localhost:5000");
// "/translate" and "/languages" are appended.
func WithBaseURL(u string) Option { return func(c *config) { c.baseURL = u } }

// WithHTTPClient sets the HTTP client. The default is httpx.DefaultClient(), a client with
// connection, header and overall timeouts (never http.DefaultClient).
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.hc = hc } }

// WithName sets the engine name, so that two LibreTranslate servers can live in one Client.
// The default is Name.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithBatchLimit sets the most texts per request: the server's --batch-limit. Translate
// splits larger calls, and Profile reports it as MaxTexts. The default is
// DefaultBatchLimit; it must be at least 1.
func WithBatchLimit(n int) Option { return func(c *config) { c.batchLimit = n } }

// WithCharLimit sets the most characters per text: the server's --char-limit (or the
// key's). Longer texts are refused with KindTextTooLong before sending, and Profile reports
// it as MaxChars. The default, 0, means unlimited, as on a default server.
func WithCharLimit(n int) Option { return func(c *config) { c.charLimit = n } }

// Engine is a LibreTranslate translation engine. It is safe for concurrent use. Create it
// with New; the zero value is not usable.
type Engine struct {
	base       string // without trailing slash
	key        httpx.Key
	hc         *http.Client
	name       string
	batchLimit int
	charLimit  int
}

var (
	_ translate.Engine            = (*Engine)(nil)
	_ translate.LanguageSupporter = (*Engine)(nil)
)

// New returns an engine for the LibreTranslate server at baseURL. apiKey may be empty for
// servers that run without --api-keys (the self-hosted default). It returns a
// *translate.Error of KindInvalidInput when baseURL is empty or does not parse as an http(s)
// URL, the name is empty or a limit is out of range.
func New(baseURL, apiKey string, opts ...Option) (*Engine, error) {
	c := config{baseURL: baseURL, name: Name, batchLimit: DefaultBatchLimit}
	for _, o := range opts {
		o(&c)
	}
	switch {
	case c.baseURL == "":
		return nil, invalid("base URL is empty")
	case c.name == "":
		return nil, invalid("engine name is empty")
	case c.batchLimit < 1:
		return nil, invalid(fmt.Sprintf("batch limit %d is below 1", c.batchLimit))
	case c.charLimit < 0:
		return nil, invalid(fmt.Sprintf("char limit %d is negative", c.charLimit))
	}
	base, err := httpx.BaseURL(c.baseURL)
	if err != nil {
		return nil, invalid(err.Error())
	}
	return &Engine{
		base: base, key: httpx.NewKey(apiKey, c.keyFunc), hc: httpx.Client(c.hc), name: c.name,
		batchLimit: c.batchLimit, charLimit: c.charLimit,
	}, nil
}

func invalid(msg string) *translate.Error {
	return &translate.Error{Kind: translate.KindInvalidInput, Engine: Name, Message: "libretranslate: " + msg}
}

// Name returns the engine's name (Name unless WithName was given).
func (e *Engine) Name() string { return e.name }

// Profile describes a LibreTranslate server: free class (self-hosted or a flat-rate key,
// no per-character price), the batch limit as MaxTexts, the char limit as MaxChars, a 6s
// attempt timeout (models run on CPU). Quality 70 is our own estimate from public offline
// evaluations of the Argos Translate models it runs: usable, well below commercial engines.
// Native is {Formats: HTML}: a request in translate.FormatHTML goes with format "html",
// which LibreTranslate translates keeping the tags (FormatXML is KindUnsupported).
func (e *Engine) Profile() translate.Profile {
	return translate.Profile{
		Native:         fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML}},
		Quality:        70,
		Class:          translate.ClassFree,
		CostPerMillion: 0,
		Timeout:        6 * time.Second,
		MaxTexts:       e.batchLimit,
		MaxChars:       e.charLimit,
	}
}

// translateBody is the JSON body of POST /translate.
type translateBody struct {
	Q      any    `json:"q"` // string, or []string for a batch
	Source string `json:"source"`
	Target string `json:"target"`
	Format string `json:"format"`
	APIKey string `json:"api_key,omitempty"`
}

type detected struct {
	Confidence float64 `json:"confidence"`
	Language   string  `json:"language"`
}

// Translate translates req.Texts with one POST /translate per batch of at most the batch
// limit; one text is sent as a string, several as an array. Empty texts are not sent (the
// server refuses an empty q) and come back empty. Safe for concurrent use.
func (e *Engine) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	if req == nil {
		return nil, e.errorf(translate.KindInvalidInput, "nil request")
	}
	src, tgt, format, err := e.params(req)
	if err != nil {
		return nil, err
	}
	var idx []int // non-empty texts
	for i, t := range req.Texts {
		if t == "" {
			continue
		}
		if n := utf8.RuneCountInString(t); e.charLimit > 0 && n > e.charLimit {
			return nil, e.errorf(translate.KindTextTooLong, "text %d has %d characters; the limit is %d", i, n, e.charLimit)
		}
		idx = append(idx, i)
	}
	res := &translate.EngineResult{Texts: make([]string, len(req.Texts))}
	for len(idx) > 0 {
		batch := idx[:min(len(idx), e.batchLimit)]
		idx = idx[len(batch):]
		texts := make([]string, len(batch))
		for i, j := range batch {
			texts[i] = req.Texts[j]
		}
		out, det, err := e.send(ctx, texts, src, tgt, format)
		if err != nil {
			return nil, err
		}
		for i, j := range batch {
			res.Texts[j] = out[i]
		}
		if res.Source == language.Und && det != "" {
			res.Source = parseCode(det)
		}
	}
	return res, nil
}

// params are req's source ("auto" to detect), target and format parameters.
func (e *Engine) params(req *translate.EngineRequest) (src, tgt, format string, err error) {
	if req.Target == language.Und {
		return "", "", "", e.errorf(translate.KindInvalidInput, "target language is required")
	}
	if tgt, err = e.code(req.Target); err != nil {
		return "", "", "", err
	}
	if format, err = e.format(req.Format); err != nil {
		return "", "", "", err
	}
	src = "auto"
	if req.Source != language.Und {
		if src, err = e.code(req.Source); err != nil {
			return "", "", "", err
		}
	}
	return src, tgt, format, nil
}

// format is the format parameter for a request's format: "text", or "html" for
// FormatHTML. LibreTranslate takes no XML.
func (e *Engine) format(f translate.Format) (string, error) {
	switch f {
	case translate.FormatText:
		return "text", nil
	case translate.FormatHTML:
		return "html", nil
	}
	return "", e.errorf(translate.KindUnsupported, "format %s is not one LibreTranslate takes (text or html)", f)
}

// send makes one /translate request and returns the texts and the first detected language.
// The key rides in the body, so the body is built for each key WithKey tries.
func (e *Engine) send(ctx context.Context, texts []string, src, tgt, format string) ([]string, string, error) {
	resp, err := httpx.WithKey(ctx, e.key, e.name, func(key string) (*httpx.Response, error) {
		body := translateBody{Source: src, Target: tgt, Format: format, APIKey: key}
		if len(texts) == 1 {
			body.Q = texts[0]
		} else {
			body.Q = texts
		}
		b, err := json.Marshal(body)
		if err != nil {
			return nil, e.errorf(translate.KindInvalidInput, "encoding request: %v", err)
		}
		hreq, err := httpx.NewRequest(ctx, http.MethodPost, e.base+"/translate", b, "application/json")
		if err != nil {
			return nil, e.errorf(translate.KindInvalidInput, "building request: %v", err)
		}
		return httpx.Send(e.hc, e.name, hreq, classify, append([]string{key}, texts...)...)
	})
	if err != nil {
		return nil, "", err
	}
	var tr struct {
		TranslatedText   json.RawMessage `json:"translatedText"`
		DetectedLanguage json.RawMessage `json:"detectedLanguage"`
	}
	if err := json.Unmarshal(resp.Body, &tr); err != nil {
		return nil, "", httpx.Error(e.name, translate.KindBadOutput, resp, "decoding response: "+err.Error(), texts...)
	}
	out, ok := stringOrArray(tr.TranslatedText)
	if !ok {
		return nil, "", httpx.Error(e.name, translate.KindBadOutput, resp, "response has no translatedText")
	}
	if err := httpx.CountTexts(e.name, len(out), len(texts)); err != nil {
		return nil, "", err
	}
	return out, firstDetected(tr.DetectedLanguage), nil
}

// stringOrArray decodes a JSON string or array of strings.
func stringOrArray(raw json.RawMessage) ([]string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil && len(raw) > 0 && raw[0] == '"' {
		return []string{s}, true
	}
	var a []string
	if json.Unmarshal(raw, &a) == nil && a != nil {
		return a, true
	}
	return nil, false
}

// firstDetected returns the language of a detectedLanguage object, or of the first element
// of an array of them (batch); "" if absent.
func firstDetected(raw json.RawMessage) string {
	var d detected
	if json.Unmarshal(raw, &d) == nil && d.Language != "" {
		return d.Language
	}
	var ds []detected
	if json.Unmarshal(raw, &ds) == nil {
		for _, d := range ds {
			if d.Language != "" {
				return d.Language
			}
		}
	}
	return ""
}

// classify turns a non-2xx answer into a *translate.Error by LibreTranslate's status and
// message.
func classify(engine string, resp *httpx.Response, secrets ...string) *translate.Error {
	msg := errorMessage(resp)
	return httpx.Error(engine, statusKind(resp.Status, msg), resp, msg, secrets...)
}

// errorMessage extracts LibreTranslate's {"error": "..."}, or the raw body.
func errorMessage(resp *httpx.Response) string {
	var eb struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(resp.Body, &eb) == nil && eb.Error != "" {
		return eb.Error
	}
	return httpx.BodyText(resp)
}

// statusKind maps LibreTranslate's statuses (and, for 400, its messages) to Kinds.
func statusKind(status int, msg string) translate.Kind {
	m := strings.ToLower(msg)
	switch {
	case status == http.StatusBadRequest:
		switch {
		case strings.Contains(m, "api key"): // "Visit <url> to get an API key"
			return translate.KindUnauthorized
		case strings.Contains(m, "exceeds"): // "request (N) exceeds text limit (M)"
			return translate.KindTextTooLong
		case strings.Contains(m, "format") && strings.Contains(m, "not supported"):
			return translate.KindInvalidInput
		case strings.Contains(m, "not supported") || strings.Contains(m, "not available"):
			// "zz is not supported"; "X (x) is not available as a target language from Y (y)"
			return translate.KindUnsupported
		}
		return translate.KindInvalidInput
	case status == http.StatusForbidden || status == http.StatusUnauthorized:
		return translate.KindUnauthorized
	case status == http.StatusTooManyRequests:
		return translate.KindRateLimited
	case status >= 500:
		return translate.KindUnavailable
	}
	return httpx.StatusKind(status)
}

func (e *Engine) errorf(kind translate.Kind, format string, args ...any) *translate.Error {
	return &translate.Error{Kind: kind, Engine: e.name, Message: fmt.Sprintf(format, args...)}
}

// code maps a tag to the LibreTranslate code sent in source and target.
func (e *Engine) code(t language.Tag) (string, error) {
	b, _ := t.Base()
	code := b.String()
	switch code {
	case "zh":
		if s, _ := t.Script(); s.String() == "Hant" {
			return "zt", nil
		}
		return "zh", nil
	case "cmn":
		return "zh", nil
	case "pt":
		if _, _, r := t.Raw(); r.String() == "BR" {
			return "pb", nil
		}
		return "pt", nil
	case "fil":
		return "tl", nil
	case "no":
		return "nb", nil
	}
	if len(code) != 2 {
		return "", e.errorf(translate.KindUnsupported, "language %s has no ISO 639-1 code for LibreTranslate", t)
	}
	return code, nil
}

// parseCode turns a LibreTranslate code into a tag: the legacy "zt" and "pb" too;
// language.Und if it does not parse.
func parseCode(code string) language.Tag {
	switch strings.ToLower(code) {
	case "zt":
		return language.MustParse("zh-Hant")
	case "pb":
		return language.MustParse("pt-BR")
	}
	t, err := language.Parse(code)
	if err != nil {
		return language.Und
	}
	return t
}

// SupportedPairs lists the server's pairs from GET /languages: every language to each of
// its targets, and language.Und (source "auto") to every target. A code that Translate
// would not send the same way is left out; a base tag (zh for zh-Hans) is added where it
// maps to a listed code. Safe for concurrent use.
func (e *Engine) SupportedPairs(ctx context.Context) ([]translate.LanguagePair, error) {
	hreq, err := httpx.NewRequest(ctx, http.MethodGet, e.base+"/languages", nil, "")
	if err != nil {
		return nil, e.errorf(translate.KindInvalidInput, "building request: %v", err)
	}
	resp, err := httpx.Send(e.hc, e.name, hreq, classify)
	if err != nil {
		return nil, err
	}
	var langs []struct {
		Code    string   `json:"code"`
		Name    string   `json:"name"`
		Targets []string `json:"targets"`
	}
	if err := json.Unmarshal(resp.Body, &langs); err != nil {
		return nil, httpx.Error(e.name, translate.KindBadOutput, resp, "decoding languages: "+err.Error())
	}
	// tags returns the tags Translate sends as code: the code's own tag and its base
	// language when that maps to the same code (zh for zh-Hans, but not pt for pt-BR).
	tags := func(code string) []language.Tag {
		t := parseCode(code)
		want, err := e.code(t)
		if t == language.Und || err != nil {
			return nil
		}
		out := []language.Tag{t}
		b, _ := t.Base()
		if bt := language.Make(b.String()); bt != t {
			if c, err := e.code(bt); err == nil && c == want {
				out = append(out, bt)
			}
		}
		return out
	}
	type pair struct{ s, t language.Tag }
	seen := map[pair]bool{}
	var pairs []translate.LanguagePair
	add := func(s, t language.Tag) {
		if seen[pair{s, t}] {
			return
		}
		seen[pair{s, t}] = true
		pairs = append(pairs, translate.LanguagePair{Source: s, Target: t})
	}
	for _, l := range langs {
		for _, tc := range l.Targets {
			if strings.EqualFold(tc, l.Code) {
				continue
			}
			for _, tt := range tags(tc) {
				add(language.Und, tt)
				for _, st := range tags(l.Code) {
					add(st, tt)
				}
			}
		}
	}
	return pairs, nil
}
