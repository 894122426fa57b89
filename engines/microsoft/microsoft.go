package microsoft

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/internal/langcode"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/internal/httpx"
	"golang.org/x/text/language"
)

// Name is the default engine name.
const Name = "microsoft"

// DefaultBaseURL is the global Translator endpoint, as the spec's Endpoint parameter names
// it (protocol and host name).
const DefaultBaseURL = "https://api.cognitive.microsofttranslator.com"

// apiVersion is the mandatory api-version query parameter.
const apiVersion = "3.0"

// Vendor limits per request.
const (
	maxTexts = 1000  // elements of the body array
	maxChars = 50000 // characters of all elements together (times the targets; we send one)
)

// Option configures an Engine made by New.
type Option func(*config)

type config struct {
	baseURL   string
	hc        *http.Client
	name      string
	keyFunc   httpx.KeyFunc
	geography string
}

func defaultConfig() config { return config{name: Name} }

// Geography endpoints: Translator's data-residency hosts. A request to one of them is
// processed within that geography; DefaultBaseURL sends it to the nearest datacenter.
const (
	EuropeURL       = "https://api-eur.cognitive.microsofttranslator.com" // Geography "eu"
	AmericasURL     = "https://api-nam.cognitive.microsofttranslator.com" // Geography "us"
	AsiaPacificURL  = "https://api-apc.cognitive.microsofttranslator.com" // Geography "apac"
	geographyGlobal = ""
)

// geographies maps WithGeography's argument to its endpoint.
var geographies = map[string]string{
	geographyGlobal: DefaultBaseURL,
	"eu":            EuropeURL,
	"us":            AmericasURL,
	"apac":          AsiaPacificURL,
}

// WithGeography sends every request to the Translator endpoint of one geography, so that
// the text is processed there, and sets Profile().Region to it: "eu" (EuropeURL,
// api-eur), "us" (AmericasURL, api-nam), "apac" (AsiaPacificURL, api-apc), or "" for the
// global endpoint (DefaultBaseURL, the default, Region ""). Any other value makes New fail.
// WithBaseURL, given too, replaces the endpoint but keeps the Region.
func WithGeography(geo string) Option { return func(c *config) { c.geography = geo } }

// WithKeyFunc reads the subscription key from f before every request instead of New's
// fixed key, so that a rotated key applies without a restart; f must be safe for concurrent
// use and fast (cache in it if fetching is slow). When Translator answers 401 or 403 (an
// unauthorized code), the engine calls f once more and, if the key changed, repeats the
// request once before returning KindUnauthorized. An error from f, or an empty key, is
// KindUnauthorized. With WithKeyFunc, New's key may be empty. The default is New's key.
func WithKeyFunc(f func(context.Context) (string, error)) Option {
	return func(c *config) { c.keyFunc = f }
}

// WithBaseURL replaces the endpoint (default DefaultBaseURL,
// "https://api.cognitive.microsofttranslator.com"), for example a regional endpoint such as
// "https://api-eur.cognitive.microsofttranslator.com"; the adapter appends "/translate" and
// "/languages". A trailing slash is tolerated.
func WithBaseURL(u string) Option { return func(c *config) { c.baseURL = u } }

// WithHTTPClient sets the HTTP client (default: a new httpx.DefaultClient, never
// http.DefaultClient). A nil client means the default.
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.hc = hc } }

// WithName sets the engine name (default Name), so that two instances can serve one Client.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// Engine is a Microsoft Translator engine. It is safe for concurrent use. The zero value is
// not usable: make one with New.
type Engine struct {
	name      string
	hc        *http.Client
	base      string // without trailing slash
	key       httpx.Key
	region    string // Azure resource region (Ocp-Apim-Subscription-Region)
	geography string // data region, Profile().Region
}

// New returns a Translator engine authenticated with key, sent in Ocp-Apim-Subscription-Key.
// region is the Azure region of the resource (Ocp-Apim-Subscription-Region), required for
// regional and multi-service resources and empty for a global Translator resource (it
// names the resource, not where data is processed: see WithGeography). It returns a
// *translate.Error of KindInvalidInput when key is empty (and no WithKeyFunc is given) or an
// option is invalid.
func New(key, region string, opts ...Option) (*Engine, error) {
	c := defaultConfig()
	for _, o := range opts {
		o(&c)
	}
	if key == "" && c.keyFunc == nil {
		return nil, invalidArg("microsoft: key is empty")
	}
	if c.name == "" {
		return nil, invalidArg("microsoft: name is empty")
	}
	geoURL, ok := geographies[c.geography]
	if !ok {
		return nil, invalidArg("microsoft: WithGeography: unknown geography (want eu, us, apac or empty)")
	}
	if c.baseURL == "" {
		c.baseURL = geoURL
	}
	base, err := httpx.BaseURL(c.baseURL)
	if err != nil {
		return nil, invalidArg("microsoft: " + err.Error())
	}
	return &Engine{name: c.name, hc: httpx.Client(c.hc), base: base, key: httpx.NewKey(key, c.keyFunc),
		region: region, geography: c.geography}, nil
}

func invalidArg(msg string) error {
	return &translate.Error{Kind: translate.KindInvalidInput, Message: msg}
}

// Name returns the engine's name: Name or the one set by WithName.
func (e *Engine) Name() string { return e.name }

// Profile returns the engine's limits and list price: standard class, 10 USD per million
// characters (S1 pay-as-you-go), 100 texts and 50 000 characters per call, a 5s timeout,
// and Quality 84, an estimate from public comparisons of general-domain NMT output (close
// to Google, below DeepL). Region is WithGeography's ("" for the global endpoint). Native
// is {Formats: HTML; Glossary: true}: HTML goes as textType=Html, and a glossary as the
// dynamic-dictionary markup (see the package doc).
func (e *Engine) Profile() translate.Profile {
	return translate.Profile{
		Native:         fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML}, Glossary: true},
		Quality:        84,
		Class:          translate.ClassStandard,
		CostPerMillion: 10,
		Timeout:        5 * time.Second,
		MaxChars:       maxChars,
		MaxTexts:       maxTexts,
		Region:         e.geography,
	}
}

// batch is one vendor request's worth of texts and their slots in req.Texts.
type batch struct {
	texts []string
	slots []int
}

// split groups the non-empty texts into batches of at most maxTexts texts and maxChars
// characters. It reports the slot of a text longer than maxChars on its own, or -1.
func split(texts []string, maxTexts, maxChars int) (out []batch, tooLong int) {
	var (
		cur   batch
		chars int
	)
	for i, t := range texts {
		if t == "" {
			continue
		}
		n := utf8.RuneCountInString(t)
		if n > maxChars {
			return nil, i
		}
		if len(cur.texts) > 0 && (len(cur.texts) == maxTexts || chars+n > maxChars) {
			out = append(out, cur)
			cur, chars = batch{}, 0
		}
		cur.texts = append(cur.texts, t)
		cur.slots = append(cur.slots, i)
		chars += n
	}
	if len(cur.texts) > 0 {
		out = append(out, cur)
	}
	return out, -1
}

// inputText is the spec's InputTextItem.
type inputText struct {
	Text string `json:"text"`
}

// translatedItem is the spec's TranslatedTextItem.
type translatedItem struct {
	DetectedLanguage *struct {
		Language string  `json:"language"`
		Score    float64 `json:"score"`
	} `json:"detectedLanguage"`
	Translations []struct {
		Text string `json:"text"`
		To   string `json:"to"`
	} `json:"translations"`
}

// Translate translates req.Texts with POST /translate, splitting them into as many requests
// as the limits need (1000 texts and 50 000 characters each). Empty texts are not sent and
// come back empty; a single text over 50 000 characters is KindTextTooLong before anything
// is sent. It is safe for concurrent use.
func (e *Engine) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	if req == nil {
		return nil, e.errorf(translate.KindInvalidInput, "nil request")
	}
	u, err := e.translateURL(req)
	if err != nil {
		return nil, err
	}
	texts := req.Texts
	if req.Glossary != nil {
		texts = withDictionary(req.Glossary, req.Texts, req.Format == translate.FormatHTML)
	}
	batches, tooLong := split(texts, maxTexts, maxChars)
	if tooLong >= 0 {
		return nil, e.errorf(translate.KindTextTooLong,
			"text "+strconv.Itoa(tooLong)+" is over the "+strconv.Itoa(maxChars)+" characters of one request")
	}
	res := &translate.EngineResult{Texts: make([]string, len(req.Texts))}
	for i, b := range batches {
		trace := ""
		if i == 0 && isUUID(req.RequestID) {
			trace = req.RequestID
		}
		secrets := b.texts
		if req.Glossary != nil { // the texts as sent and as given
			secrets = append(slices.Clone(b.texts), req.Texts...)
		}
		resp, err := e.do(ctx, http.MethodPost, u, inputs(b.texts), trace, secrets)
		if err != nil {
			return nil, err
		}
		var out []translatedItem
		if err := httpx.Decode(e.name, resp, &out); err != nil {
			return nil, err
		}
		if err := e.fill(res, len(req.Texts), b, out); err != nil {
			return nil, err
		}
		res.BilledChars += metered(resp.Header)
	}
	if res.Source == language.Und {
		res.Source = req.Source
	}
	return res, nil
}

// inputs is the request body for texts.
func inputs(texts []string) []inputText {
	items := make([]inputText, len(texts))
	for j, t := range texts {
		items[j] = inputText{Text: t}
	}
	return items
}

// metered is the billed characters the service reports in x-metered-usage, 0 if none.
func metered(h http.Header) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-Metered-Usage")), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// translateURL is the /translate URL for req: api-version, to, from unless the source is
// detected, and textType for req.Format.
func (e *Engine) translateURL(req *translate.EngineRequest) (string, error) {
	tgt, err := e.code(req.Target, "target")
	if err != nil {
		return "", err
	}
	tt, ok := textType(req.Format)
	if !ok {
		return "", e.errorf(translate.KindUnsupported, "format "+req.Format.String()+" is not one Microsoft takes (plain text or HTML)")
	}
	q := url.Values{"api-version": {apiVersion}, "to": {tgt}, "textType": {tt}}
	if req.Source != language.Und {
		src, err := e.code(req.Source, "source")
		if err != nil {
			return "", err
		}
		q.Set("from", src)
	}
	return e.base + "/translate?" + q.Encode(), nil
}

// fill puts one batch's answer into res (n texts in all): each text in its slot, and the
// detected source of each, when the service reports it.
func (e *Engine) fill(res *translate.EngineResult, n int, b batch, out []translatedItem) error {
	if err := httpx.CountTexts(e.name, len(out), len(b.texts)); err != nil {
		return err
	}
	for j, it := range out {
		if len(it.Translations) == 0 {
			return e.errorf(translate.KindBadOutput, "vendor returned no translation for a text")
		}
		res.Texts[b.slots[j]] = it.Translations[0].Text
		if it.DetectedLanguage == nil {
			continue
		}
		if t, perr := language.Parse(it.DetectedLanguage.Language); perr == nil {
			if res.Source == language.Und {
				res.Source = t
			}
			if res.Sources == nil {
				res.Sources = make([]language.Tag, n)
			}
			res.Sources[b.slots[j]] = t // each text's own
		}
	}
	return nil
}

// languages is the translation part of the spec's GetSupportedLanguagesResult.
type languages struct {
	Translation map[string]json.RawMessage `json:"translation"`
}

// SupportedPairs lists the pairs Microsoft translates, from GET
// /languages?api-version=3.0&scope=translation: every listed language to every other, and
// language.Und (detect) to each. It is safe for concurrent use.
func (e *Engine) SupportedPairs(ctx context.Context) ([]translate.LanguagePair, error) {
	q := url.Values{"api-version": {apiVersion}, "scope": {"translation"}}
	resp, err := e.do(ctx, http.MethodGet, e.base+"/languages?"+q.Encode(), nil, "", nil)
	if err != nil {
		return nil, err
	}
	var l languages
	if err := httpx.Decode(e.name, resp, &l); err != nil {
		return nil, err
	}
	codes := make([]string, 0, len(l.Translation))
	for code := range l.Translation {
		codes = append(codes, code)
	}
	return langcode.Pairs(e.name, codes, codes)
}

// do sends one request and returns its response when the status is 2xx, or the vendor's
// error classified, quoting neither the key nor texts. body may be nil (GET). An
// unauthorized answer re-reads a key from WithKeyFunc once and, if it changed, repeats the
// request.
func (e *Engine) do(ctx context.Context, method, u string, body any, trace string, texts []string) (*httpx.Response, error) {
	b, err := httpx.EncodeJSON(e.name, body)
	if err != nil {
		return nil, err
	}
	return httpx.WithKey(ctx, e.key, e.name, func(key string) (*httpx.Response, error) {
		hreq, err := httpx.NewRequest(ctx, method, u, b, "application/json; charset=UTF-8")
		if err != nil {
			return nil, e.errorf(translate.KindInvalidInput, "build request: "+err.Error())
		}
		hreq.Header.Set("Ocp-Apim-Subscription-Key", key)
		if e.region != "" {
			hreq.Header.Set("Ocp-Apim-Subscription-Region", e.region)
		}
		if trace != "" {
			hreq.Header.Set("X-ClientTraceId", trace)
		}
		return httpx.Send(e.hc, e.name, hreq, classify, append([]string{key}, texts...)...)
	})
}

func (e *Engine) errorf(k translate.Kind, msg string) error {
	return &translate.Error{Kind: k, Engine: e.name, Message: msg}
}

// isUUID reports whether s is a UUID in its canonical 8-4-4-4-12 hex form, the GUID the
// X-ClientTraceId header wants.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
