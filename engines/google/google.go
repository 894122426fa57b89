package google

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/internal/langcode"
	"github.com/fanyi-go/translate/internal/httpx"
	"golang.org/x/text/language"
)

// Name is the default engine name of an Engine made by New (Basic, v2).
const Name = "google"

// NameV3 is the default engine name of an Engine made by NewV3 (Advanced, v3), so that both
// editions can serve one Client without WithName.
const NameV3 = "google-v3"

// DefaultBaseURL is the server both editions talk to: the discovery document's rootUrl
// (v2) and the service's REST host (v3), without the trailing slash.
const DefaultBaseURL = "https://translation.googleapis.com"

// The multi-regional endpoints of Cloud Translation Advanced (v3). Google documents that
// with one of them the text's machine-learning processing and the data at rest stay within
// the EU or the US; the global endpoint (DefaultBaseURL) promises no place. NewV3 uses one
// when its location is in that continent (see WithLocation).
const (
	EUBaseURL = "https://translate-eu.googleapis.com"
	USBaseURL = "https://translate-us.googleapis.com"
)

// Vendor limits.
const (
	// v2MaxTexts is the most q values one v2 request takes.
	v2MaxTexts = 128
	// v3MaxTexts is the most contents one v3 request takes (the proto: "The max length of
	// this field is 1024").
	v3MaxTexts = 1024
	// maxCodepoints is Google's recommended maximum of code points per request (both
	// editions); a request is split so that it stays under it.
	maxCodepoints = 30000
)

// Option configures an Engine made by New or NewV3.
type Option func(*config)

type config struct {
	baseURL    string // "" until WithBaseURL: the edition's and location's default
	hc         *http.Client
	name       string
	location   string
	keyFunc    httpx.KeyFunc
	baseSet    bool              // WithBaseURL was given
	glossaries map[string]string // WithGlossaries
}

func defaultConfig(name string) config {
	return config{name: name, location: "global"}
}

// WithBaseURL replaces the server URL (default DefaultBaseURL,
// "https://translation.googleapis.com", or for v3 the multi-regional endpoint of the
// location's continent, see WithLocation); the adapter appends the documented paths
// ("/language/translate/v2" for v2, "/v3/projects/..." for v3). A trailing slash is
// tolerated. It does not change Profile().Region, which stays the location's: a server
// given here must process the text there (a proxy in front of the regional endpoint).
func WithBaseURL(u string) Option {
	return func(c *config) {
		c.baseURL = u
		c.baseSet = true
	}
}

// WithHTTPClient sets the HTTP client (default: a new httpx.DefaultClient, never
// http.DefaultClient). A nil client means the default.
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.hc = hc } }

// WithName sets the engine name (default Name for New, NameV3 for NewV3), so that two
// instances can serve one Client.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithLocation sets the v3 location, the {location} of
// projects/{project}/locations/{location} (default "global"). A location in the EU ("eu",
// "europe-west1", ...) or the US ("us", "us-central1", ...) sends the requests to that
// continent's multi-regional endpoint (EUBaseURL, USBaseURL), where Google keeps the
// processing, and sets Profile().Region to "eu" or "us" (see Region). Other locations
// ("asia-northeast1") go to the global endpoint, which promises no place: their Region is
// "" (global). Google's multi-regional endpoints take only the pre-trained NMT model (no
// AutoML models); to reach a regional location through the global endpoint all the same,
// give DefaultBaseURL with WithBaseURL and state the Region in the Client's profile
// yourself. New (v2) ignores the location.
func WithLocation(location string) Option { return func(c *config) { c.location = location } }

// WithKeyFunc reads the credential from f before every request instead of a fixed one, so
// that a rotated key applies without a restart: for New (v2) the API key, for NewV3 the
// access token (it replaces NewV3's token func). f must be safe for concurrent use and fast;
// cache in it if fetching is slow. When Google answers 401 or 403 (or another
// unauthorized error), the engine calls f once more and, if the credential changed, repeats
// the request once before returning KindUnauthorized. An error from f, or an empty
// credential, is KindUnauthorized. With WithKeyFunc, New's apiKey may be empty. The default
// is New's apiKey, or NewV3's token func.
func WithKeyFunc(f func(context.Context) (string, error)) Option {
	return func(c *config) { c.keyFunc = f }
}

// Region is the processing region a v3 location stands for, as Profile().Region reports
// it: "eu" for the "eu" multi-region and the europe-* regions, "us" for the "us"
// multi-region and the us-* regions (both served by a multi-regional endpoint that keeps
// the processing there), and "" (global) for "global" and every other location, which the
// global endpoint serves without a promise of place ("asia-northeast1",
// "northamerica-northeast1").
func Region(location string) string {
	loc := strings.ToLower(strings.TrimSpace(location))
	switch {
	case loc == "eu" || strings.HasPrefix(loc, "europe-"):
		return "eu"
	case loc == "us" || strings.HasPrefix(loc, "us-"):
		return "us"
	}
	return ""
}

// regionBaseURL is the v3 endpoint for a Region: the multi-regional one of "eu" and "us",
// else the global one.
func regionBaseURL(region string) string {
	switch region {
	case "eu":
		return EUBaseURL
	case "us":
		return USBaseURL
	}
	return DefaultBaseURL
}

// Engine is a Google Cloud Translation engine, v2 or v3 depending on its constructor. It is
// safe for concurrent use. The zero value is not usable: make one with New or NewV3.
type Engine struct {
	name string
	hc   *http.Client
	base string // without trailing slash
	v3   bool

	key    httpx.Key // v2: the API key; v3: the access token
	parent string    // v3: "projects/{project}/locations/{location}", path-escaped
	region string    // v3: Region(location)
	// glossaries maps glossary names to v3 glossary resources (WithGlossaries).
	glossaries map[string]string
	refused    *resourceSet // resources Google refused, never sent again
}

// New returns a Cloud Translation Basic (v2) engine authenticated with apiKey, which it
// sends in the X-Goog-Api-Key header, never in a URL. It returns a *translate.Error of
// KindInvalidInput when apiKey is empty (and no WithKeyFunc is given) or an option is
// invalid.
func New(apiKey string, opts ...Option) (*Engine, error) {
	e, c, err := newEngine(Name, opts)
	if err != nil {
		return nil, err
	}
	if apiKey == "" && c.keyFunc == nil {
		return nil, invalidArg("google: apiKey is empty")
	}
	if err := checkGlossaries(c, false); err != nil {
		return nil, err
	}
	e.key = httpx.NewKey(apiKey, c.keyFunc)
	return e, nil
}

// NewV3 returns a Cloud Translation Advanced (v3) engine for projectID. token is called
// before every request and returns an OAuth 2.0 access token sent as "Authorization: Bearer";
// it must be safe for concurrent use and should cache tokens (an oauth2.TokenSource does).
// It returns a *translate.Error of KindInvalidInput when projectID is empty, token is nil or
// an option is invalid.
func NewV3(projectID string, token func(context.Context) (string, error), opts ...Option) (*Engine, error) {
	if projectID == "" {
		return nil, invalidArg("google: projectID is empty")
	}
	e, c, err := newEngine(NameV3, opts)
	if err != nil {
		return nil, err
	}
	if c.keyFunc != nil {
		token = c.keyFunc
	}
	if token == nil {
		return nil, invalidArg("google: token func is nil")
	}
	if c.location == "" {
		return nil, invalidArg("google: location is empty")
	}
	if err := checkGlossaries(c, true); err != nil {
		return nil, err
	}
	e.glossaries, e.refused = c.glossaries, &resourceSet{}
	e.v3 = true
	e.parent = "projects/" + url.PathEscape(projectID) + "/locations/" + url.PathEscape(c.location)
	e.key = httpx.NewKey("", token)
	e.region = Region(c.location)
	if !c.baseSet {
		e.base = regionBaseURL(e.region)
	}
	return e, nil
}

func newEngine(name string, opts []Option) (*Engine, config, error) {
	c := defaultConfig(name)
	for _, o := range opts {
		o(&c)
	}
	if c.name == "" {
		return nil, c, invalidArg("google: name is empty")
	}
	u := c.baseURL
	if !c.baseSet {
		u = DefaultBaseURL
	}
	base, err := parseBaseURL(u)
	if err != nil {
		return nil, c, err
	}
	return &Engine{name: c.name, hc: httpx.Client(c.hc), base: base}, c, nil
}

func parseBaseURL(s string) (string, error) {
	base, err := httpx.BaseURL(s)
	if err != nil {
		return "", invalidArg("google: " + err.Error())
	}
	return base, nil
}

func invalidArg(msg string) error {
	return &translate.Error{Kind: translate.KindInvalidInput, Message: msg}
}

// Name returns the engine's name: Name, NameV3 or the one set by WithName.
func (e *Engine) Name() string { return e.name }

// Profile returns the engine's published limits and list price: standard class, 20 USD per
// million characters, at most 128 texts and 30 000 code points (Google's recommended
// maximum) per call, a 5s timeout, and Quality 85, an estimate from public WMT-style
// comparisons of general-domain NMT output (slightly above Microsoft, below DeepL). Region
// is "" (global) for v2, else Region(location): "eu" or "us" for a location in those
// continents, served by their multi-regional endpoint. Native is {Formats: HTML}, and
// Glossary too for a v3 engine given WithGlossaries (see the package doc).
func (e *Engine) Profile() translate.Profile {
	return translate.Profile{
		Native:         e.native(),
		Quality:        85,
		Class:          translate.ClassStandard,
		CostPerMillion: 20,
		Timeout:        5 * time.Second,
		MaxChars:       maxCodepoints,
		MaxTexts:       v2MaxTexts,
		Region:         e.region,
	}
}

// batch is one vendor request's worth of texts: their codes and their slots in req.Texts.
type batch struct {
	texts []string
	slots []int
}

// Translate translates req.Texts, splitting them into as many vendor requests as the
// edition's limits need (128 texts for v2, 1024 for v3, 30 000 code points for both). Empty
// texts are not sent and come back empty. It is safe for concurrent use.
func (e *Engine) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	if req == nil {
		return nil, e.errorf(translate.KindInvalidInput, "nil request")
	}
	c, err := e.prepare(req)
	if err != nil {
		return nil, err
	}
	maxTexts := v2MaxTexts
	if e.v3 {
		maxTexts = v3MaxTexts
	}
	res := &translate.EngineResult{Texts: make([]string, len(req.Texts))}
	for _, b := range split(req.Texts, maxTexts, maxCodepoints) {
		var (
			out      []string
			detected string
		)
		if e.v3 {
			out, detected, err = e.translateV3(ctx, b.texts, c)
		} else {
			out, detected, err = e.translateV2(ctx, b.texts, c)
		}
		if err != nil {
			return nil, err
		}
		if err := httpx.CountTexts(e.name, len(out), len(b.texts)); err != nil {
			return nil, err
		}
		for i, s := range b.slots {
			res.Texts[s] = out[i]
		}
		if res.Source == language.Und && detected != "" {
			if t, perr := language.Parse(detected); perr == nil {
				res.Source = t
			}
		}
	}
	if res.Source == language.Und {
		res.Source = req.Source
	}
	return res, nil
}

// split groups the non-empty texts into batches of at most maxTexts texts and maxChars code
// points (a longer text goes alone).
func split(texts []string, maxTexts, maxChars int) []batch {
	var (
		out   []batch
		cur   batch
		chars int
	)
	for i, t := range texts {
		if t == "" {
			continue
		}
		n := utf8.RuneCountInString(t)
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
	return out
}

// SupportedPairs lists the pairs Google translates: every listed source to every listed
// target, and language.Und (detect) to every target. v2 asks GET
// /language/translate/v2/languages, v3 GET /v3/{parent}/supportedLanguages. It is safe for
// concurrent use.
func (e *Engine) SupportedPairs(ctx context.Context) ([]translate.LanguagePair, error) {
	var (
		sources, targets []string
		err              error
	)
	if e.v3 {
		sources, targets, err = e.languagesV3(ctx)
	} else {
		sources, targets, err = e.languagesV2(ctx)
	}
	if err != nil {
		return nil, err
	}
	return langcode.Pairs(e.name, sources, targets)
}

// do sends one request and returns its response when the status is 2xx, or the vendor's
// error classified, quoting neither the credential nor texts. body may be nil (GET). An
// unauthorized answer re-reads a rotating credential once and, if it changed, repeats the
// request.
func (e *Engine) do(ctx context.Context, method, u string, body any, texts []string) (*httpx.Response, error) {
	b, err := httpx.EncodeJSON(e.name, body)
	if err != nil {
		return nil, err
	}
	return httpx.WithKey(ctx, e.key, e.name, func(key string) (*httpx.Response, error) {
		hreq, err := httpx.NewRequest(ctx, method, u, b, "application/json; charset=utf-8")
		if err != nil {
			return nil, e.errorf(translate.KindInvalidInput, "build request: "+err.Error())
		}
		if e.v3 {
			hreq.Header.Set("Authorization", "Bearer "+key)
		} else {
			hreq.Header.Set("X-Goog-Api-Key", key)
		}
		return httpx.Send(e.hc, e.name, hreq, classify, append([]string{key}, texts...)...)
	})
}

func (e *Engine) errorf(k translate.Kind, msg string) error {
	return &translate.Error{Kind: k, Engine: e.name, Message: msg}
}
