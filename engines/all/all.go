// Package all registers every bundled engine adapter as an engine type of configuration
// files (see translate.RegisterEngineType), so that a file can name them by type:
//
//	all.Register()
//	cfg, err := translate.LoadConfig("translate.json")
//	...
//	c, err := translate.New(translate.WithConfig(cfg))
//
// Register is explicit (no init function): importing the package registers nothing. It
// registers these types, with these settings (every other setting is an error; "env:NAME"
// values are read from the environment, which is where credentials belong):
//
//	deepl           auth_key (required), base_url
//	google          api_key (required), base_url                      (Cloud Translation v2)
//	google-v3       project (required), access_token (required), location, base_url
//	microsoft       key (required), region, geography, base_url
//	baidu           appid (required), secret (required), max_chars, base_url
//	openai          model (required), api_key, base_url, price, quality, instructions,
//	                max_texts, json_mode ("true" or "false")
//	libretranslate  base_url (required), api_key, batch_limit, char_limit
//	apertium        base_url (required), concurrency
//	fake            latency, fail_rate, fail_kind, seed, down, quota, prefix, detected
//
// Each engine is named by the file's "name" (the adapter's default name when it is
// empty) and its profile is the adapter's own Profile() with the file's profile fields put
// over it.
//
// google-v3 takes a fixed OAuth access token, which expires (usually after an hour): for a
// long-running service register a type of your own around google.NewV3 with a token source.
//
// The fake type is the simulated engine of engines/fake, for demos, drills and tests of a
// configuration: it answers "[<target>] <text>" (or prefix + text), after latency (a
// duration), fails with fail_kind (a Kind name such as "unavailable", the default) with
// probability fail_rate (0..1, drawn from seed), fails every call with the Kind down when
// set, and translates quota characters in all (0: unlimited). Its request log is cleared
// every 1024 calls, so a long-running fake stays small.
package all

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/apertium"
	"github.com/fanyi-go/translate/engines/baidu"
	"github.com/fanyi-go/translate/engines/deepl"
	"github.com/fanyi-go/translate/engines/fake"
	"github.com/fanyi-go/translate/engines/google"
	"github.com/fanyi-go/translate/engines/libretranslate"
	"github.com/fanyi-go/translate/engines/microsoft"
	"github.com/fanyi-go/translate/engines/openai"
	"github.com/fanyi-go/translate/internal/httpx"
	"golang.org/x/text/language"
)

// Types returns the engine types Register registers, in the order of the package doc.
func Types() []string {
	return []string{"deepl", "google", "google-v3", "microsoft", "baidu", "openai", "libretranslate", "apertium", "fake"}
}

var once sync.Once

// Register registers every type of Types with translate.RegisterEngineType. It is
// idempotent and safe for concurrent use; it panics if one of the types was registered
// by other code first.
func Register() {
	once.Do(func() {
		builders := map[string]func(translate.EngineConfig) (translate.Engine, error){
			"deepl": buildDeepL, "google": buildGoogle, "google-v3": buildGoogleV3,
			"microsoft": buildMicrosoft, "baidu": buildBaidu, "openai": buildOpenAI,
			"libretranslate": buildLibre, "apertium": buildApertium, "fake": buildFake,
		}
		for _, typ := range Types() {
			translate.RegisterEngineType(typ, builders[typ])
		}
	})
}

func buildDeepL(ec translate.EngineConfig) (translate.Engine, error) {
	s := newSettings(ec, "auth_key", "base_url")
	key := s.required("auth_key")
	var opts []deepl.Option
	if u, ok := s.url("base_url"); ok {
		opts = append(opts, deepl.WithBaseURL(u))
	}
	if ec.Name != "" {
		opts = append(opts, deepl.WithName(ec.Name))
	}
	if err := s.err(); err != nil {
		return nil, err
	}
	return deepl.New(key, opts...)
}

func buildGoogle(ec translate.EngineConfig) (translate.Engine, error) {
	s := newSettings(ec, "api_key", "base_url")
	key := s.required("api_key")
	opts := googleOptions(ec, s)
	if err := s.err(); err != nil {
		return nil, err
	}
	return google.New(key, opts...)
}

func buildGoogleV3(ec translate.EngineConfig) (translate.Engine, error) {
	s := newSettings(ec, "project", "access_token", "location", "base_url")
	project, token := s.required("project"), s.required("access_token")
	opts := googleOptions(ec, s)
	if loc, ok := s.value("location"); ok {
		opts = append(opts, google.WithLocation(loc))
	}
	if err := s.err(); err != nil {
		return nil, err
	}
	return google.NewV3(project, func(context.Context) (string, error) { return token, nil }, opts...)
}

func googleOptions(ec translate.EngineConfig, s *settings) []google.Option {
	var opts []google.Option
	if u, ok := s.url("base_url"); ok {
		opts = append(opts, google.WithBaseURL(u))
	}
	if ec.Name != "" {
		opts = append(opts, google.WithName(ec.Name))
	}
	return opts
}

func buildMicrosoft(ec translate.EngineConfig) (translate.Engine, error) {
	s := newSettings(ec, "key", "region", "geography", "base_url")
	key := s.required("key")
	region, _ := s.value("region")
	var opts []microsoft.Option
	if geo, ok := s.value("geography"); ok {
		switch geo {
		case "", "eu", "us", "apac":
			opts = append(opts, microsoft.WithGeography(geo))
		default:
			s.fail("geography", `must be "eu", "us", "apac" or empty`)
		}
	}
	if u, ok := s.url("base_url"); ok {
		opts = append(opts, microsoft.WithBaseURL(u))
	}
	if ec.Name != "" {
		opts = append(opts, microsoft.WithName(ec.Name))
	}
	if err := s.err(); err != nil {
		return nil, err
	}
	return microsoft.New(key, region, opts...)
}

func buildBaidu(ec translate.EngineConfig) (translate.Engine, error) {
	s := newSettings(ec, "appid", "secret", "max_chars", "base_url")
	appID, secret := s.required("appid"), s.required("secret")
	var opts []baidu.Option
	if n, ok := s.positive("max_chars"); ok {
		opts = append(opts, baidu.WithMaxChars(n))
	}
	if u, ok := s.url("base_url"); ok {
		opts = append(opts, baidu.WithBaseURL(u))
	}
	if ec.Name != "" {
		opts = append(opts, baidu.WithName(ec.Name))
	}
	if err := s.err(); err != nil {
		return nil, err
	}
	return baidu.New(appID, secret, opts...)
}

func buildOpenAI(ec translate.EngineConfig) (translate.Engine, error) {
	s := newSettings(ec, "model", "api_key", "base_url", "price", "quality", "instructions", "max_texts", "json_mode")
	model := s.required("model")
	key, _ := s.value("api_key")
	var opts []openai.Option
	if u, ok := s.url("base_url"); ok {
		opts = append(opts, openai.WithBaseURL(u))
	}
	if f, ok := s.float("price", 0, 1e9); ok {
		opts = append(opts, openai.WithPrice(f))
	}
	if f, ok := s.float("quality", 0, 100); ok {
		opts = append(opts, openai.WithQuality(f))
	}
	if v, ok := s.value("instructions"); ok {
		opts = append(opts, openai.WithInstructions(v))
	}
	if n, ok := s.positive("max_texts"); ok {
		opts = append(opts, openai.WithMaxTexts(n))
	}
	if b, ok := s.bool("json_mode"); ok && !b {
		opts = append(opts, openai.WithoutJSONMode())
	}
	if ec.Name != "" {
		opts = append(opts, openai.WithName(ec.Name))
	}
	if err := s.err(); err != nil {
		return nil, err
	}
	return openai.New(key, model, opts...)
}

func buildLibre(ec translate.EngineConfig) (translate.Engine, error) {
	s := newSettings(ec, "base_url", "api_key", "batch_limit", "char_limit")
	base := s.required("base_url")
	s.url("base_url")
	key, _ := s.value("api_key")
	var opts []libretranslate.Option
	if n, ok := s.positive("batch_limit"); ok {
		opts = append(opts, libretranslate.WithBatchLimit(n))
	}
	if n, ok := s.positive("char_limit"); ok {
		opts = append(opts, libretranslate.WithCharLimit(n))
	}
	if ec.Name != "" {
		opts = append(opts, libretranslate.WithName(ec.Name))
	}
	if err := s.err(); err != nil {
		return nil, err
	}
	return libretranslate.New(base, key, opts...)
}

func buildApertium(ec translate.EngineConfig) (translate.Engine, error) {
	s := newSettings(ec, "base_url", "concurrency")
	base := s.required("base_url")
	s.url("base_url")
	var opts []apertium.Option
	if n, ok := s.positive("concurrency"); ok {
		opts = append(opts, apertium.WithConcurrency(n))
	}
	if ec.Name != "" {
		opts = append(opts, apertium.WithName(ec.Name))
	}
	if err := s.err(); err != nil {
		return nil, err
	}
	return apertium.New(base, opts...)
}

// fakeLogLimit is how many calls a configured fake logs before it clears its log.
const fakeLogLimit = 1024

// simulated is a configured fake whose request log stays bounded.
type simulated struct{ *fake.Engine }

func (s simulated) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	res, err := s.Engine.Translate(ctx, req)
	if s.Calls() >= fakeLogLimit {
		s.Reset()
	}
	return res, err
}

func buildFake(ec translate.EngineConfig) (translate.Engine, error) {
	s := newSettings(ec, "latency", "fail_rate", "fail_kind", "seed", "down", "quota", "prefix", "detected")
	var opts []fake.Option
	if d, ok := s.duration("latency"); ok {
		opts = append(opts, fake.WithLatency(d))
	}
	if n, ok := s.positive("quota"); ok {
		opts = append(opts, fake.WithQuota(int64(n)))
	}
	if p, ok := s.value("prefix"); ok {
		opts = append(opts, fake.WithTranslator(func(text string, _, _ language.Tag) string { return p + text }))
	}
	if v, ok := s.value("detected"); ok {
		tag, err := language.Parse(v)
		if err != nil {
			s.fail("detected", "is not a valid BCP 47 tag")
		}
		opts = append(opts, fake.WithDetected(tag))
	}
	rate, hasRate := s.float("fail_rate", 0, 1)
	failKind := s.kind("fail_kind", translate.KindUnavailable)
	down, isDown := s.value("down")
	var downKind translate.Kind
	if isDown {
		downKind = s.kind("down", translate.KindUnavailable)
	}
	var seed uint64
	if v, ok := s.value("seed"); ok {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			s.fail("seed", "must be a non-negative integer")
		}
		seed = n
	}
	if err := s.err(); err != nil {
		return nil, err
	}
	e := fake.New(ec.Name, opts...)
	if hasRate {
		e.FailRate(failKind, rate, seed)
	}
	if isDown && down != "" {
		e.Down(downKind)
	}
	return simulated{e}, nil
}

// settings reads an EngineConfig's settings, collecting the first error, which names the
// setting and never quotes its value.
type settings struct {
	typ   string
	m     map[string]string
	known []string
	first error
}

func newSettings(ec translate.EngineConfig, known ...string) *settings {
	s := &settings{typ: ec.Type, m: ec.Settings, known: known}
	for _, k := range slices.Sorted(maps.Keys(ec.Settings)) {
		if !slices.Contains(known, k) {
			s.fail(k, "unknown setting for type "+ec.Type+" (known: "+strings.Join(known, ", ")+")")
		}
	}
	return s
}

func (s *settings) fail(key, msg string) {
	if s.first == nil {
		s.first = &translate.Error{Kind: translate.KindInvalidInput, Message: "settings." + key + ": " + msg}
	}
}

func (s *settings) err() error { return s.first }

func (s *settings) value(key string) (string, bool) {
	v, ok := s.m[key]
	return v, ok
}

func (s *settings) required(key string) string {
	v := s.m[key]
	if v == "" {
		s.fail(key, "is required for type "+s.typ)
	}
	return v
}

func (s *settings) url(key string) (string, bool) {
	v, ok := s.m[key]
	if !ok || v == "" {
		return "", false
	}
	if _, err := httpx.BaseURL(v); err != nil {
		s.fail(key, err.Error())
	}
	return v, true
}

func (s *settings) positive(key string) (int, bool) {
	v, ok := s.m[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		s.fail(key, "must be a positive integer")
		return 0, false
	}
	return n, true
}

func (s *settings) float(key string, lo, hi float64) (float64, bool) {
	v, ok := s.m[key]
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= lo && f <= hi) {
		s.fail(key, "must be a number within "+strconv.FormatFloat(lo, 'g', -1, 64)+".."+strconv.FormatFloat(hi, 'g', -1, 64))
		return 0, false
	}
	return f, true
}

func (s *settings) bool(key string) (bool, bool) {
	v, ok := s.m[key]
	if !ok {
		return false, false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		s.fail(key, `must be "true" or "false"`)
		return false, false
	}
	return b, true
}

func (s *settings) duration(key string) (time.Duration, bool) {
	v, ok := s.m[key]
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		s.fail(key, `must be a duration such as "20ms"`)
		return 0, false
	}
	return d, true
}

// kind reads a translate.Kind by its name ("unavailable", "rate_limited", ...).
func (s *settings) kind(key string, def translate.Kind) translate.Kind {
	v, ok := s.m[key]
	if !ok || v == "" {
		return def
	}
	for k := translate.KindUnknown; k <= translate.KindClosed; k++ {
		if k.String() == v && k != translate.KindClosed {
			return k
		}
	}
	s.fail(key, "must be a failure kind such as \"unavailable\", \"timeout\" or \"rate_limited\"")
	return def
}
