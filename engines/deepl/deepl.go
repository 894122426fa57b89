// Package deepl is a translate.Engine for the DeepL API v2 (POST /v2/translate).
//
// A key ending in ":fx" is a DeepL API Free key and goes to https://api-free.deepl.com;
// any other key goes to https://api.deepl.com. The key travels in the Authorization header
// ("DeepL-Auth-Key <key>") and never appears in an error.
//
//	e, err := deepl.New(os.Getenv("DEEPL_AUTH_KEY"))
//	if err != nil {
//		return err
//	}
//	c, err := translate.New(translate.WithEngine(e, e.Profile()))
//
// The engine implements translate.LanguageSupporter from GET /v2/languages.
//
// # Languages
//
// Target tags map to DeepL's target codes: en and en-US to EN-US, en-GB and the other
// non-US English tags (the en-001 family: en-AU, en-IE, en-IN, ...) to EN-GB; pt and pt-BR
// to PT-BR, pt-PT (and pt-AO, pt-MZ, ...) to PT-PT; zh, zh-CN, zh-Hans, zh-SG to ZH-HANS,
// zh-TW, zh-HK, zh-MO, zh-Hant to ZH-HANT; es-419 and the Latin American Spanish tags
// (es-MX, es-AR, ...) to ES-419, other es to ES; every other language to its upper-case base
// code. Source tags map to their base code (EN, PT, ZH, ...); language.Und omits
// source_lang, and DeepL detects the source. The codes accepted are those DeepL lists on
// /v2/languages (as in DeepL's mock server configuration, v1.21.0); any other tag is refused
// with translate.KindUnsupported before a request is sent.
//
// # Style
//
// translate.StyleFormal sends formality "prefer_more" and translate.StyleCasual
// "prefer_less", for the targets that support formality (DE, ES, ES-419, FR, IT, JA, NL,
// PL, PT-BR, PT-PT, RU); for the others formality is omitted.
//
// # Markup and glossaries
//
// The bundled Profile declares Native{Formats: HTML, XML; Glossary: true}. A request in
// translate.FormatHTML or FormatXML sends tag_handling "html" or "xml"; plain text sends
// no tag_handling, as before.
//
// A request with a glossary (EngineRequest.Glossary) sends glossary_id, the id of a DeepL
// multilingual glossary (POST /v3/glossaries, the current glossary API) that the engine
// creates from the glossary's terms the first time it meets the glossary's Revision, and
// then reuses: the Revision is a hash of the language pair and the terms, so changed terms
// make a new DeepL glossary, and concurrent first uses create it once. The engine
// remembers the ids of the last 256 revisions it used. A glossary that DeepL no longer
// has (deleted or expired: 404, or 400 naming the glossary) is created again, once per
// call; a glossary DeepL refuses with a request all the same (any 400 or 404) is left out
// of it, and of later requests once the request succeeds without it: a glossary problem
// never fails a translation. DeepL needs the source language with a glossary: a request that detects its
// source sends the glossary's. The DeepL glossary is named "fanyi-go NAME REVISION";
// before creating one, the engine looks in the account (GET /v3/glossaries) for a
// glossary of that revision, pair and entry count that it or another process made
// earlier, and reuses it, so restarts and replicas do not pile up copies. The engine never
// deletes glossaries: old revisions stay in the account until you delete them.
//
// A glossary of languages DeepL has no glossaries for is not DeepL's to apply
// (AppliesGlossary, translate.GlossaryFilter): the Client masks its terms and inserts their targets itself. No
// glossary is sent, and the Client's check of the terms on the way back decides, when
// the glossary's pair is not the request's, when no term fits DeepL's entry format (a term with a tab, a line break or another
// control character, or white space at either end, is left out), or when DeepL refuses
// the glossary (400, 403, 404, 413, 415 on creation: remembered for the revision). 456
// from the glossary endpoints means too many glossary requests: KindRateLimited.
//
// # Errors
//
// DeepL's statuses map to Kinds: 400 and 404 invalid input (400 naming an unsupported
// language: unsupported), 401 and 403 unauthorized, 413 and 414 text too long, 429 and 529
// rate limited, 456 quota exhausted, other 5xx unavailable. Retry-After is honoured when
// DeepL sends it, within [0, 5m].
//
// # Security
//
// No error carries the key or the request's texts, in any encoding, even when DeepL's
// message quotes them. A redirect to another host is refused (KindUnavailable) instead of
// carrying the key and the texts there. Response bodies are read up to 8 MiB. WithKeyFunc
// rotates the key without a restart.
//
// # Region
//
// DeepL documents that it processes data in the EU: Profile().Region is "eu".
package deepl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/fidelity/glossary"
	"github.com/fanyi-go/translate/internal/httpx"
	"golang.org/x/text/language"
)

// Name is the default engine name.
const Name = "deepl"

// Server URLs, as DeepL's API description writes them.
const (
	ProURL  = "https://api.deepl.com"      // DeepL API Pro
	FreeURL = "https://api-free.deepl.com" // DeepL API Free, for keys ending in ":fx"
)

// Limits of one /v2/translate request, from DeepL's API description.
const (
	// MaxTexts is the most texts one request carries.
	MaxTexts = 50
	// MaxRequestBytes is the most bytes one request body may have (128 KiB).
	MaxRequestBytes = 128 << 10
	// MaxChars is the per-call limit (all texts together) reported in Profile: DeepL limits
	// the request body (128 KiB), not characters; 30 000 characters stay under it even for
	// CJK text.
	MaxChars = 30000
)

// Option configures an Engine.
type Option func(*config)

type config struct {
	baseURL string
	hc      *http.Client
	name    string
	keyFunc httpx.KeyFunc
}

// WithBaseURL sets the server URL, as DeepL's spec writes it (for example
// "https://api.deepl.com" or a mock server's URL); "/v2/..." paths are appended. The
// default is https://api-free.deepl.com for keys ending in ":fx", https://api.deepl.com
// otherwise.
func WithBaseURL(u string) Option { return func(c *config) { c.baseURL = u } }

// WithHTTPClient sets the HTTP client. The default is httpx.DefaultClient(), a client with
// connection, header and overall timeouts (never http.DefaultClient).
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.hc = hc } }

// WithKeyFunc reads the auth key from f before every call (Translate and each
// SupportedPairs request) instead of the fixed authKey, so that a rotated key applies
// without a restart; f must be safe for concurrent use and fast (cache in it if fetching is
// slow). When DeepL answers 401 or 403, the engine calls f once more and, if the key
// changed, repeats the request once with the new key before returning KindUnauthorized. An
// error from f, or an empty key, is KindUnauthorized. With WithKeyFunc, New's authKey may be
// empty; it still picks the server (":fx": api-free.deepl.com) unless WithBaseURL is given.
// The default is the fixed authKey.
func WithKeyFunc(f func(context.Context) (string, error)) Option {
	return func(c *config) { c.keyFunc = f }
}

// WithName sets the engine name, so that two DeepL engines (say, two accounts) can live in
// one Client. The default is Name.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// Engine is a DeepL translation engine. It is safe for concurrent use. Create it with New;
// the zero value is not usable.
type Engine struct {
	key  httpx.Key
	base string // without trailing slash
	hc   *http.Client
	name string
	gl   *glossaries
}

var (
	_ translate.Engine            = (*Engine)(nil)
	_ translate.LanguageSupporter = (*Engine)(nil)
)

// New returns a DeepL engine for authKey. It returns a *translate.Error of KindInvalidInput
// when authKey is empty (and no WithKeyFunc is given), the base URL does not parse as an
// http(s) URL, or the name is empty.
func New(authKey string, opts ...Option) (*Engine, error) {
	c := config{name: Name}
	for _, o := range opts {
		o(&c)
	}
	if strings.TrimSpace(authKey) == "" && c.keyFunc == nil {
		return nil, invalid("auth key is empty")
	}
	if c.name == "" {
		return nil, invalid("engine name is empty")
	}
	if c.baseURL == "" {
		c.baseURL = ProURL
		if strings.HasSuffix(authKey, ":fx") {
			c.baseURL = FreeURL
		}
	}
	base, err := httpx.BaseURL(c.baseURL)
	if err != nil {
		return nil, invalid(err.Error())
	}
	return &Engine{key: httpx.NewKey(authKey, c.keyFunc), base: base, hc: httpx.Client(c.hc), name: c.name,
		gl: newGlossaries()}, nil
}

func invalid(msg string) *translate.Error {
	return &translate.Error{Kind: translate.KindInvalidInput, Engine: Name, Message: "deepl: " + msg}
}

// Name returns the engine's name (Name unless WithName was given).
func (e *Engine) Name() string { return e.name }

// Profile returns DeepL API Pro's published limits and list price: standard class, 25
// credits (USD) per million characters, 50 texts per call, 30 000 characters per text (see
// MaxChars), a 6s attempt timeout, Region "eu" (DeepL processes data in the EU). Quality 88 is our own estimate from public offline
// evaluations, where DeepL ranks at or near the top of non-LLM engines for European pairs.
// Native is {Formats: HTML, XML; Glossary: true} (see Markup and glossaries in the package
// doc).
func (e *Engine) Profile() translate.Profile {
	return translate.Profile{
		Native:         fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML, fidelity.FormatXML}, Glossary: true},
		Quality:        88,
		Class:          translate.ClassStandard,
		CostPerMillion: 25,
		Timeout:        6 * time.Second,
		MaxChars:       MaxChars,
		MaxTexts:       MaxTexts,
		Region:         "eu",
	}
}

// translateBody is the JSON body of POST /v2/translate.
type translateBody struct {
	Text                 []string `json:"text"`
	TargetLang           string   `json:"target_lang"`
	SourceLang           string   `json:"source_lang,omitempty"`
	Formality            string   `json:"formality,omitempty"`
	ShowBilledCharacters bool     `json:"show_billed_characters,omitempty"`
	TagHandling          string   `json:"tag_handling,omitempty"`
	GlossaryID           string   `json:"glossary_id,omitempty"`
}

type translateResponse struct {
	Translations []struct {
		DetectedSourceLanguage string `json:"detected_source_language"`
		Text                   string `json:"text"`
		BilledCharacters       int64  `json:"billed_characters"`
	} `json:"translations"`
}

// Translate translates req.Texts with one POST /v2/translate per batch of at most 50 texts
// and 128 KiB of body. Empty texts are not sent and come back empty. Safe for concurrent use.
func (e *Engine) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	if req == nil {
		return nil, e.errorf(translate.KindInvalidInput, "nil request")
	}
	proto, gr, err := e.proto(ctx, req)
	if err != nil {
		return nil, err
	}
	batches, err := e.batches(proto, req.Texts)
	if err != nil {
		return nil, err
	}
	res := &translate.EngineResult{Texts: make([]string, len(req.Texts))}
	for _, idx := range batches {
		body := proto
		body.Text = make([]string, len(idx))
		for i, j := range idx {
			body.Text[i] = req.Texts[j]
		}
		tr, err := e.sendGlossary(ctx, &body, gr.g)
		if err != nil {
			return nil, err
		}
		proto.GlossaryID = body.GlossaryID // a re-created glossary serves the next batches
		for i, t := range tr.Translations {
			res.Texts[idx[i]] = t.Text
			res.BilledChars += t.BilledCharacters
			if t.DetectedSourceLanguage == "" {
				continue
			}
			src := parseCode(t.DetectedSourceLanguage)
			if res.Source == language.Und {
				res.Source = src
			}
			if res.Sources == nil {
				res.Sources = make([]language.Tag, len(req.Texts))
			}
			res.Sources[idx[i]] = src // each text's own
		}
	}
	return res, nil
}

// proto is the body every batch of req shares (all but the texts), with the glossary it
// sends, if any.
func (e *Engine) proto(ctx context.Context, req *translate.EngineRequest) (translateBody, glossaryRequest, error) {
	tgt, err := e.targetCode(req.Target)
	if err != nil {
		return translateBody{}, glossaryRequest{}, err
	}
	src, err := e.sourceCode(req.Source)
	if err != nil {
		return translateBody{}, glossaryRequest{}, err
	}
	proto := translateBody{TargetLang: tgt, SourceLang: src, ShowBilledCharacters: true, Formality: formality(req.Style, tgt)}
	if proto.TagHandling, err = e.tagHandling(req.Format); err != nil {
		return translateBody{}, glossaryRequest{}, err
	}
	gr, err := e.useGlossary(ctx, req, src, tgt)
	if err != nil {
		return translateBody{}, glossaryRequest{}, err
	}
	proto.GlossaryID = gr.id
	if gr.id != "" && proto.SourceLang == "" {
		proto.SourceLang = gr.source // DeepL needs the source with a glossary
	}
	return proto, gr, nil
}

// formality is the formality parameter for a style and target: "prefer_more" for
// StyleFormal, "prefer_less" for StyleCasual, for the targets that support it; else "".
func formality(s translate.Style, tgt string) string {
	if !supportsFormality(tgt) {
		return ""
	}
	switch s {
	case translate.StyleFormal:
		return "prefer_more"
	case translate.StyleCasual:
		return "prefer_less"
	}
	return ""
}

// tagHandling is the tag_handling parameter for a format: "" for text, "html" or "xml".
func (e *Engine) tagHandling(f translate.Format) (string, error) {
	switch f {
	case translate.FormatText:
		return "", nil
	case translate.FormatHTML:
		return "html", nil
	case translate.FormatXML:
		return "xml", nil
	}
	return "", e.errorf(translate.KindUnsupported, "format %s is not one DeepL takes", f)
}

// sendGlossary sends body. When DeepL refuses its glossary, it does not fail the call:
// a glossary DeepL no longer has (deleted or expired) is created again and the body sent
// once more; a glossary DeepL refuses otherwise (any 400 or 404 with it, once again after
// a re-creation) is left out, the body sent without it and, when that succeeds, the
// revision remembered as one DeepL cannot have. The Client checks the terms either way.
func (e *Engine) sendGlossary(ctx context.Context, body *translateBody, g *glossary.Glossary) (*translateResponse, error) {
	tr, err := e.send(ctx, body)
	if err == nil || body.GlossaryID == "" || !refused(err) {
		return tr, err
	}
	if glossaryGone(err) {
		e.forgetGlossary(g, body.GlossaryID)
		if body.GlossaryID, err = e.glossaryID(ctx, g); err != nil {
			return nil, err
		}
		if body.GlossaryID == "" {
			return e.send(ctx, body)
		}
		if tr, err = e.send(ctx, body); err == nil || !refused(err) {
			return tr, err
		}
	}
	id := body.GlossaryID
	body.GlossaryID = ""
	if tr, err = e.send(ctx, body); err == nil {
		e.refuseGlossary(g, id)
	}
	return tr, err
}

// batches splits the indexes of the non-empty texts into requests of at most MaxTexts texts
// and MaxRequestBytes of JSON body.
func (e *Engine) batches(proto translateBody, texts []string) ([][]int, error) {
	empty := proto
	empty.Text = []string{}
	overhead := len(encode(&empty))
	var (
		out  [][]int
		cur  []int
		size = overhead
	)
	for i, t := range texts {
		if t == "" {
			continue
		}
		n := len(encode(t))
		if overhead+n > MaxRequestBytes {
			return nil, e.errorf(translate.KindTextTooLong,
				"text %d is %d bytes as JSON; DeepL takes at most %d bytes per request", i, n, MaxRequestBytes)
		}
		add := n
		if len(cur) > 0 {
			add++ // the comma before it
		}
		if len(cur) == MaxTexts || size+add > MaxRequestBytes {
			out = append(out, cur)
			cur, size, add = nil, overhead, n
		}
		cur = append(cur, i)
		size += add
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out, nil
}

// encode is json.Marshal without HTML escaping, so that sizes match what is sent.
func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings and translateBody always encode
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// send makes one /v2/translate request.
func (e *Engine) send(ctx context.Context, body *translateBody) (*translateResponse, error) {
	resp, err := e.do(ctx, http.MethodPost, e.base+"/v2/translate", encode(body), body.Text)
	if err != nil {
		return nil, err
	}
	var tr translateResponse
	if err := json.Unmarshal(resp.Body, &tr); err != nil {
		return nil, httpx.Error(e.name, translate.KindBadOutput, resp, "decoding response: "+err.Error(), body.Text...)
	}
	if err := httpx.CountTexts(e.name, len(tr.Translations), len(body.Text)); err != nil {
		return nil, err
	}
	return &tr, nil
}

// do sends an authorized request (body nil for a GET) and turns a non-2xx answer into a
// *translate.Error that quotes neither the key nor texts. A 401 or 403 re-reads a key from
// WithKeyFunc once and, if it changed, repeats the request.
func (e *Engine) do(ctx context.Context, method, u string, body []byte, texts []string) (*httpx.Response, error) {
	return httpx.WithKey(ctx, e.key, e.name, func(key string) (*httpx.Response, error) {
		hreq, err := httpx.NewRequest(ctx, method, u, body, "application/json")
		if err != nil {
			return nil, e.errorf(translate.KindInvalidInput, "building request: %v", err)
		}
		hreq.Header.Set("Authorization", "DeepL-Auth-Key "+key)
		hreq.Header.Set("User-Agent", "fanyi-go-translate/deepl")
		return httpx.Send(e.hc, e.name, hreq, classify, append([]string{key}, texts...)...)
	})
}

// classify turns a non-2xx answer into a *translate.Error by DeepL's status and message.
func classify(engine string, resp *httpx.Response, secrets ...string) *translate.Error {
	msg := errorMessage(resp)
	return httpx.Error(engine, statusKind(resp.Status, msg), resp, msg, secrets...)
}

// errorMessage extracts DeepL's {"message", "detail"} error, or the raw body.
func errorMessage(resp *httpx.Response) string {
	var eb struct {
		Message string `json:"message"`
		Detail  string `json:"detail"`
	}
	if json.Unmarshal(resp.Body, &eb) == nil && eb.Message != "" {
		if eb.Detail != "" {
			return eb.Message + ": " + eb.Detail
		}
		return eb.Message
	}
	return httpx.BodyText(resp)
}

// statusKind maps DeepL's documented statuses to Kinds.
func statusKind(status int, msg string) translate.Kind {
	switch status {
	case http.StatusBadRequest:
		m := strings.ToLower(msg)
		if strings.Contains(m, "not supported") && strings.Contains(m, "lang") {
			return translate.KindUnsupported
		}
		return translate.KindInvalidInput
	case http.StatusNotFound:
		return translate.KindInvalidInput
	case http.StatusUnauthorized, http.StatusForbidden:
		return translate.KindUnauthorized
	case http.StatusRequestEntityTooLarge, http.StatusRequestURITooLong:
		return translate.KindTextTooLong
	case http.StatusTooManyRequests, 529: // 529: "too many requests", DeepL is overloaded
		return translate.KindRateLimited
	case 456: // quota exceeded: the character limit has been reached
		return translate.KindQuotaExhausted
	}
	if status >= 500 {
		return translate.KindUnavailable // 500 internal error, 503/504 "currently unavailable"
	}
	return httpx.StatusKind(status)
}

func (e *Engine) errorf(kind translate.Kind, format string, args ...any) *translate.Error {
	return &translate.Error{Kind: kind, Engine: e.name, Message: fmt.Sprintf(format, args...)}
}

type language2 struct {
	Language          string `json:"language"`
	Name              string `json:"name"`
	SupportsFormality bool   `json:"supports_formality"`
}

// SupportedPairs lists DeepL's pairs from GET /v2/languages?type=source and ?type=target:
// every source to every target of another language, and language.Und (detect) to every
// target. Codes this adapter cannot send are left out, so every listed pair is one Translate
// accepts. Safe for concurrent use.
func (e *Engine) SupportedPairs(ctx context.Context) ([]translate.LanguagePair, error) {
	srcs, err := e.languages(ctx, "source")
	if err != nil {
		return nil, err
	}
	tgts, err := e.languages(ctx, "target")
	if err != nil {
		return nil, err
	}
	var sources, targets []language.Tag
	seen := map[language.Tag]bool{}
	for _, l := range srcs {
		t := parseCode(l.Language)
		if code, err := e.sourceCode(t); err != nil || code == "" || seen[t] {
			continue
		}
		seen[t] = true
		sources = append(sources, t)
	}
	clear(seen)
	addTarget := func(t language.Tag) {
		if _, err := e.targetCode(t); err != nil || seen[t] {
			return
		}
		seen[t] = true
		targets = append(targets, t)
	}
	for _, l := range tgts {
		t := parseCode(l.Language)
		addTarget(t)
		// EN-US, PT-BR, ZH-HANS: the bare base (en, pt, zh) is a target too.
		if t != language.Und {
			b, _ := t.Base()
			addTarget(language.Make(b.String()))
		}
	}
	pairs := make([]translate.LanguagePair, 0, (len(sources)+1)*len(targets))
	for _, tg := range targets {
		pairs = append(pairs, translate.LanguagePair{Source: language.Und, Target: tg})
	}
	for _, s := range sources {
		sb, _ := s.Base()
		for _, tg := range targets {
			if tb, _ := tg.Base(); tb != sb {
				pairs = append(pairs, translate.LanguagePair{Source: s, Target: tg})
			}
		}
	}
	return pairs, nil
}

func (e *Engine) languages(ctx context.Context, typ string) ([]language2, error) {
	resp, err := e.do(ctx, http.MethodGet, e.base+"/v2/languages?type="+typ, nil, nil)
	if err != nil {
		return nil, err
	}
	var ls []language2
	if err := json.Unmarshal(resp.Body, &ls); err != nil {
		return nil, httpx.Error(e.name, translate.KindBadOutput, resp, "decoding languages: "+err.Error())
	}
	return ls, nil
}
