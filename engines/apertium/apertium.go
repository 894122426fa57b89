// Package apertium is the translate.Engine adapter for Apertium APy, the HTTP server of the
// free, rule-based Apertium machine-translation system (https://wiki.apertium.org/wiki/Apertium-apy).
// APy runs wherever you run it — often on the same machine (Debian/Ubuntu: apt-get install
// apertium-apy apertium-eng-spa) — needs no credentials and costs nothing per character.
//
//	e, err := apertium.New("http://127.0.0.1:2737")
//	if err != nil {
//		return err
//	}
//	c, err := translate.New(translate.WithEngine(e, e.Profile()))
//
// The adapter POSTs one form-encoded request per text to {base}/translate with langpair,
// q, markUnknown=no (no '*' before unknown words) and format=txt (the text is plain text, not
// HTML), or format=html for a request in translate.FormatHTML, which APy translates keeping
// the tags and entities (the bundled Profile declares Native{Formats: HTML}; FormatXML is
// KindUnsupported). APy has no batching; more texts in one call are sent concurrently, a
// few at a time.
//
// # Languages
//
// Tags are mapped to Apertium's ISO 639-3 codes (en -> eng, es -> spa, nb and no -> nob,
// hr, sr and bs -> hbs). A target tag that names one of Apertium's variants is sent as that
// variant (en-US -> eng_US, pt-BR -> por_BR, ca-valencia -> cat_valencia, oc-aranes ->
// oci_aran); when the server does not have the variant pair, the base pair is used instead.
// A language Apertium has no pair for is KindUnsupported before any request. Engine
// implements translate.LanguageSupporter from GET {base}/listPairs.
//
// APy's /translate cannot detect the source language (and /identifyLang without CLD2 is a
// guess), so a source of language.Und is KindUnsupported: the Client fails over to an engine
// that detects.
//
// # Errors
//
//   - 400 "That pair is not installed" or "That pair is invalid ..." -> KindUnsupported.
//   - any other 400 ("Missing argument q", ...) -> KindInvalidInput.
//   - 503 "internal error" (pipeline failure or APy's own timeout) and other 5xx -> KindUnavailable.
//   - 404 (APy's HTML page for an unknown path: the base URL is wrong, or a proxy in front
//     of APy has lost it) -> KindUnavailable, so the breaker takes the engine out and lets it
//     back when the URL answers again.
//   - a 200 answer that is not APy's JSON -> KindBadOutput.
//   - transport failures as classified by the shared HTTP plumbing (timeouts, refused
//     connections, cancellation).
package apertium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/internal/httpx"
	"golang.org/x/text/language"
)

// Name is the default engine name.
const Name = "apertium"

// Engine translates with an Apertium APy server. Create it with New; it is safe for
// concurrent use. The zero value is not usable.
type Engine struct {
	name     string
	base     string // scheme://host[:port][/path], without a trailing slash
	hc       *http.Client
	parallel int
	secrets  []string // basic-auth credentials from the base URL, if any
}

type config struct {
	baseURL  string
	hc       *http.Client
	name     string
	parallel int
}

// Option configures an Engine in New.
type Option func(*config)

// WithBaseURL replaces the APy server URL given to New, such as "http://127.0.0.1:2737"
// or "https://example.org/apy". The adapter appends /translate and /listPairs; a trailing
// slash is tolerated.
func WithBaseURL(u string) Option { return func(c *config) { c.baseURL = u } }

// WithHTTPClient sets the HTTP client. The default is a client with connection, header and
// overall timeouts (never http.DefaultClient).
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.hc = hc } }

// WithName sets the engine name, so that two APy servers can serve one Client. The default
// is Name.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithConcurrency sets how many requests one Translate call with several texts keeps in
// flight (APy takes one text per request). The default is 4; values below 1 mean 1.
func WithConcurrency(n int) Option { return func(c *config) { c.parallel = n } }

func defaultConfig(baseURL string) config {
	return config{baseURL: baseURL, name: Name, parallel: 4}
}

// New returns an Engine for the APy server at baseURL, such as "http://127.0.0.1:2737". It
// returns a *translate.Error of KindInvalidInput when baseURL is empty or not an absolute
// http(s) URL, or when the name is empty.
func New(baseURL string, opts ...Option) (*Engine, error) {
	cfg := defaultConfig(baseURL)
	for _, o := range opts {
		o(&cfg)
	}
	invalid := func(msg string) error {
		return &translate.Error{Kind: translate.KindInvalidInput, Engine: cfg.name, Message: msg}
	}
	if cfg.name == "" {
		return nil, invalid("name is empty")
	}
	if strings.TrimSpace(cfg.baseURL) == "" {
		return nil, invalid("baseURL is empty")
	}
	u, err := url.Parse(strings.TrimSpace(cfg.baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Never echo the URL: it may carry basic-auth credentials.
		return nil, invalid("baseURL is not an absolute http(s) URL")
	}
	var secrets []string
	if u.User != nil {
		secrets = append(secrets, u.User.String())
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p)
		}
	}
	u.RawQuery, u.Fragment = "", ""
	cfg.hc = httpx.Client(cfg.hc)
	if cfg.parallel < 1 {
		cfg.parallel = 1
	}
	return &Engine{
		name:     cfg.name,
		base:     strings.TrimRight(u.String(), "/"),
		hc:       cfg.hc,
		parallel: cfg.parallel,
		secrets:  secrets,
	}, nil
}

// Name returns the engine's name (Name unless WithName was used).
func (e *Engine) Name() string { return e.name }

// Profile returns the router profile of an APy server: free, no price, one text per call,
// 5000 characters per call (APy has no limit of its own, but its pipelines time out after
// 10 s by default), a 5 s timeout and a Quality of 60. The quality is a guess from published
// evaluations: Apertium is rule-based and does well between closely related languages
// (spa-cat, nob-nno) but clearly trails neural engines on pairs such as eng-spa. Languages is
// empty: the Client asks SupportedPairs. Native is {Formats: HTML}: APy's html format keeps
// tags and entities.
func (e *Engine) Profile() translate.Profile {
	return translate.Profile{
		Native:         fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML}},
		Quality:        60,
		Class:          translate.ClassFree,
		CostPerMillion: 0,
		Timeout:        5 * time.Second,
		MaxChars:       5000,
		MaxTexts:       1,
	}
}

// apyResponse is both of APy's answer shapes: success (responseData, responseStatus) and
// error (status, code, message, explanation).
type apyResponse struct {
	ResponseData    json.RawMessage `json:"responseData"`
	ResponseDetails any             `json:"responseDetails"`
	ResponseStatus  int             `json:"responseStatus"`
	Status          string          `json:"status"`
	Code            int             `json:"code"`
	Message         string          `json:"message"`
	Explanation     string          `json:"explanation"`
}

// Translate translates req.Texts, one APy request per text, at most WithConcurrency at a
// time; the first failure cancels the rest. Empty texts are not sent. A source of
// language.Und or a language Apertium has no pair for is KindUnsupported without a request.
func (e *Engine) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	if req == nil {
		return nil, e.errorf(translate.KindInvalidInput, "nil request")
	}
	src, tgts, format, err := e.params(req)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, httpx.TransportError(ctx, e.name, err)
	}

	out := make([]string, len(req.Texts))
	todo := make([]int, 0, len(req.Texts)) // indexes of the non-empty texts
	for i, t := range req.Texts {
		if t != "" {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return &translate.EngineResult{Texts: out}, nil
	}

	// Settle the pair on the first text: a target variant the server lacks falls back to
	// the base language.
	c := apyCall{format: format}
	first := todo[0]
	for i, tgt := range tgts {
		c.pair = src + "|" + tgt
		s, err := e.translateOne(ctx, c, req.Texts[first])
		if err != nil {
			if i < len(tgts)-1 && isNotInstalled(err) {
				continue
			}
			return nil, err
		}
		out[first] = s
		break
	}
	if err := e.translateAll(ctx, c, req.Texts, todo[1:], out); err != nil {
		return nil, err
	}
	if err := httpx.CountTexts(e.name, len(out), len(req.Texts)); err != nil {
		return nil, err
	}
	return &translate.EngineResult{Texts: out}, nil
}

// translateAll translates texts[i] for every i in idx into out[i], at most e.parallel at a
// time. It returns the first error, after canceling and waiting for the other requests.
func (e *Engine) translateAll(ctx context.Context, c apyCall, texts []string, idx []int, out []string) error {
	if len(idx) == 0 {
		return nil
	}
	if len(idx) == 1 || e.parallel == 1 {
		for _, i := range idx {
			s, err := e.translateOne(ctx, c, texts[i])
			if err != nil {
				return err
			}
			out[i] = s
		}
		return nil
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
		sem      = make(chan struct{}, e.parallel)
	)
dispatch:
	for _, i := range idx {
		select {
		case sem <- struct{}{}:
		case <-cctx.Done():
			break dispatch
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			s, err := e.translateOne(cctx, c, texts[i])
			if err != nil {
				once.Do(func() { firstErr = err; cancel() })
				return
			}
			out[i] = s
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return httpx.TransportError(ctx, e.name, err)
	}
	return nil
}

// params are req's source code, the target codes to try (a variant, then its base) and
// APy's format; KindUnsupported when APy cannot take them.
func (e *Engine) params(req *translate.EngineRequest) (src string, tgts []string, format string, err error) {
	if req.Source == language.Und {
		return "", nil, "", e.errorf(translate.KindUnsupported, "source language detection is not supported; give a source language")
	}
	src, ok := sourceCode(req.Source)
	if !ok {
		return "", nil, "", e.errorf(translate.KindUnsupported, "no Apertium code for source language %q", req.Source)
	}
	if tgts, ok = targetCodes(req.Target); !ok {
		return "", nil, "", e.errorf(translate.KindUnsupported, "no Apertium code for target language %q", req.Target)
	}
	if format, ok = apyFormat(req.Format); !ok {
		return "", nil, "", e.errorf(translate.KindUnsupported, "format %s is not one APy takes (text or html)", req.Format)
	}
	return src, tgts, format, nil
}

// apyCall is what every /translate request of one Translate carries besides the text.
type apyCall struct {
	pair   string // "eng|spa"
	format string // "txt" or "html"
}

// apyFormat is APy's format (deformatter) for a request's format: "txt" for plain text,
// "html" for FormatHTML. APy's XML-like formats are not generic XML, so XML is not taken.
func apyFormat(f translate.Format) (string, bool) {
	switch f {
	case translate.FormatText:
		return "txt", true
	case translate.FormatHTML:
		return "html", true
	}
	return "", false
}

// translateOne sends one text to /translate.
func (e *Engine) translateOne(ctx context.Context, c apyCall, text string) (string, error) {
	form := url.Values{
		"langpair":    {c.pair},
		"q":           {text},
		"markUnknown": {"no"},
		"format":      {c.format},
	}
	hreq, err := httpx.NewRequest(ctx, http.MethodPost, e.base+"/translate", []byte(form.Encode()), "application/x-www-form-urlencoded")
	if err != nil {
		return "", e.errorf(translate.KindInvalidInput, "building request: %v", err)
	}
	secrets := append(e.secrets[:len(e.secrets):len(e.secrets)], text)
	resp, err := httpx.Do(e.hc, e.name, hreq, secrets...)
	if err != nil {
		return "", err
	}
	r, err := e.decode(resp, "/translate", secrets)
	if err != nil {
		return "", err
	}
	var data struct {
		TranslatedText *string `json:"translatedText"`
	}
	if err := json.Unmarshal(r.ResponseData, &data); err != nil || data.TranslatedText == nil {
		return "", e.badOutput(resp, "/translate answer has no responseData.translatedText")
	}
	return *data.TranslatedText, nil
}

// SupportedPairs lists the server's pairs from GET {base}/listPairs. Pairs with a code this
// package cannot address (a variant it does not know) are left out. Variant targets are
// reported with their own tags (spa-eng_US as es -> en-US).
func (e *Engine) SupportedPairs(ctx context.Context) ([]translate.LanguagePair, error) {
	hreq, err := httpx.NewRequest(ctx, http.MethodGet, e.base+"/listPairs", nil, "")
	if err != nil {
		return nil, e.errorf(translate.KindInvalidInput, "building request: %v", err)
	}
	resp, err := httpx.Do(e.hc, e.name, hreq, e.secrets...)
	if err != nil {
		return nil, err
	}
	r, err := e.decode(resp, "/listPairs", e.secrets)
	if err != nil {
		return nil, err
	}
	var list []struct {
		Source string `json:"sourceLanguage"`
		Target string `json:"targetLanguage"`
	}
	if err := json.Unmarshal(r.ResponseData, &list); err != nil {
		return nil, e.badOutput(resp, "/listPairs answer has no responseData list")
	}
	pairs := make([]translate.LanguagePair, 0, len(list))
	seen := make(map[translate.LanguagePair]bool, len(list))
	for _, p := range list {
		src, ok1 := tagOf(p.Source)
		tgt, ok2 := tagOf(p.Target)
		if !ok1 || !ok2 {
			continue
		}
		// Only report what Translate would send back as exactly this pair.
		if c, ok := sourceCode(src); !ok || c != p.Source {
			continue
		}
		if cs, ok := targetCodes(tgt); !ok || cs[0] != p.Target {
			continue
		}
		lp := translate.LanguagePair{Source: src, Target: tgt}
		if !seen[lp] {
			seen[lp] = true
			pairs = append(pairs, lp)
		}
	}
	return pairs, nil
}

// decode checks the status and decodes APy's JSON, turning every error answer into a
// *translate.Error that quotes none of secrets (credentials and the text sent).
func (e *Engine) decode(resp *httpx.Response, path string, secrets []string) (*apyResponse, error) {
	var r apyResponse
	jerr := json.Unmarshal(resp.Body, &r)
	if resp.Status != http.StatusOK {
		if jerr != nil {
			if resp.Status == http.StatusNotFound {
				return nil, httpx.Error(e.name, translate.KindUnavailable, resp,
					path+" not found: is the base URL an APy server?", secrets...)
			}
			return nil, httpx.Error(e.name, httpx.StatusKind(resp.Status), resp,
				http.StatusText(resp.Status), secrets...)
		}
		return nil, e.statusError(resp, resp.Status, r, secrets)
	}
	if jerr != nil {
		return nil, e.badOutput(resp, path+" answer is not JSON")
	}
	if r.Status == "error" && r.Code != 0 && r.Code != http.StatusOK {
		return nil, e.statusError(resp, r.Code, r, secrets) // an error reported inside a 200
	}
	if r.ResponseStatus != 0 && r.ResponseStatus != http.StatusOK {
		r.Explanation = fmt.Sprint(r.ResponseDetails)
		return nil, e.statusError(resp, r.ResponseStatus, r, secrets)
	}
	return &r, nil
}

// statusError classifies one of APy's JSON error answers.
func (e *Engine) statusError(resp *httpx.Response, code int, r apyResponse, secrets []string) error {
	msg := r.Explanation
	if msg == "" {
		msg = r.Message
	}
	if msg == "" {
		msg = http.StatusText(code)
	}
	var kind translate.Kind
	switch {
	case code == http.StatusBadRequest && strings.HasPrefix(msg, "That pair is"):
		kind = translate.KindUnsupported // "not installed", "invalid, use e.g. eng|spa"
	case code == http.StatusNotFound:
		kind = translate.KindUnavailable // wrong base URL or a lost route
	default:
		kind = httpx.StatusKind(code)
	}
	err := httpx.Error(e.name, kind, resp, msg, secrets...)
	err.StatusCode = code
	return err
}

func (e *Engine) badOutput(resp *httpx.Response, msg string) error {
	return httpx.Error(e.name, translate.KindBadOutput, resp, msg, e.secrets...)
}

func (e *Engine) errorf(kind translate.Kind, format string, args ...any) *translate.Error {
	return &translate.Error{Kind: kind, Engine: e.name, Message: fmt.Sprintf(format, args...)}
}

// isNotInstalled reports whether err is APy's "That pair is not installed".
func isNotInstalled(err error) bool {
	var te *translate.Error
	return errors.As(err, &te) && te.Kind == translate.KindUnsupported && te.StatusCode == http.StatusBadRequest &&
		strings.Contains(te.Message, "not installed")
}
