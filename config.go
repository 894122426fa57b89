package translate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"github.com/fanyi-go/translate/internal/lang"
)

// Config is a Client's configuration as a JSON file describes it: its engines by type and
// every policy. Read one with LoadConfig or ParseConfig and use it with WithConfig (or
// Client.Reconfigure, or WatchConfig). A Config is complete: a section the file leaves out
// means that section's defaults, exactly as a zero policy does in code.
//
// The file is one JSON object with snake_case keys, the snake_case names of the Go fields
// ("failure_ratio" for BreakerPolicy.FailureRatio), durations as Go duration strings
// ("8s", "250ms"), cost classes as "free", "standard" or "premium", and scenes by name in
// "scene_quality" ({"legal": 95}):
//
//	{
//	  "deadline": "8s",
//	  "engines": [
//	    {"name": "deepl", "type": "deepl", "settings": {"auth_key": "env:DEEPL_AUTH_KEY"},
//	     "profile": {"quality": 92, "class": "standard", "timeout": "6s", "region": "eu"}},
//	    {"name": "libre", "type": "libretranslate", "settings": {"base_url": "http://127.0.0.1:5000"},
//	     "profile": {"class": "free", "fallback_only": true}}
//	  ],
//	  "retry":   {"per_engine": 2, "backoff": "200ms", "max_attempts": 3, "max_switches": 2},
//	  "breaker": {"window": 40, "min_calls": 20, "failure_ratio": 0.5, "cooldown": "10s"},
//	  "routing": {"weights": {"quality": 0.4, "availability": 0.25, "speed": 0.2, "cost": 0.15}},
//	  "budget":  {"daily": 50, "economy_at": 0.8},
//	  "cache":   {"entries": 10000, "ttl": "24h"},
//	  "probes":  {"interval": "30s", "expect": {"deepl": ["hola"]}}
//	}
//
// Parsing is strict; see ParseConfig. The zero Config has no engines and is not valid.
// A Config is a plain value: safe to read from several goroutines, not to change while
// another goroutine uses it.
type Config struct {
	// Deadline bounds a whole request ("deadline"; see WithDeadline): 1ns..1h; 0 means 8s.
	Deadline time.Duration `json:"deadline"`
	// Engines are the engines, in order ("engines"). At least one is required.
	Engines []EngineConfig `json:"engines"`
	// Retry is the retry policy ("retry"; see WithRetry).
	Retry RetryPolicy `json:"retry"`
	// Breaker is the circuit breaker policy ("breaker"; see WithBreaker).
	Breaker BreakerPolicy `json:"breaker"`
	// Routing is the routing policy ("routing"; see WithRouting).
	Routing RoutingPolicy `json:"routing"`
	// Budget is the daily budget ("budget"; see WithBudget). The zero value is unlimited.
	Budget Budget `json:"budget"`
	// Cache sizes the cache ("cache"; see WithCache and WithoutCache).
	Cache CacheConfig `json:"cache"`
	// Probes turns active health probes on ("probes"; see WithProbes). nil means no
	// probes; an empty object in the file ("probes": {}) means probes with the defaults.
	Probes *ProbePolicy `json:"probes"`
	// Glossaries are named glossaries ("glossaries"; see GlossaryConfig and
	// WithGlossaries): at most 1000.
	Glossaries []GlossaryConfig `json:"glossaries"`
	// Memory turns the translation memory on ("memory"; see WithMemory). nil means none;
	// an empty object in the file ("memory": {}) means a memory with the defaults.
	Memory *MemoryPolicy `json:"memory"`
}

// CacheConfig is the "cache" section of a Config. Zero fields mean the default written
// beside them.
type CacheConfig struct {
	Entries  int           `json:"entries"`  // entries kept, 1..1e8 (memory grows with use; see WithCache); 0 means 10 000
	TTL      time.Duration `json:"ttl"`      // how long an entry is fresh, 1ns..8760h; 0 means 24h
	Disabled bool          `json:"disabled"` // no cache at all (WithoutCache)
}

// EngineConfig is one engine of a Config: an engine type registered with RegisterEngineType
// (engines/all registers the bundled adapters), the adapter's settings and the routing
// profile.
type EngineConfig struct {
	// Name is the engine's name ("name"), unique in the Config. "" means the name the
	// engine type gives (the adapter's default name, such as "deepl").
	Name string `json:"name"`
	// Type is the engine type ("type"): "deepl", "google", "google-v3", "microsoft",
	// "baidu", "openai", "libretranslate", "apertium", "fake" (after all.Register()), or a
	// type registered with RegisterEngineType.
	Type string `json:"type"`
	// Settings are the adapter's settings ("settings"), such as "base_url". A value
	// "env:NAME" is read from the environment variable NAME when the engine is built;
	// credentials belong there, never in the file. The Config keeps the "env:NAME" form, so
	// marshalling a Config never writes a credential.
	Settings map[string]string `json:"settings"`
	// Profile is the routing profile ("profile"). The engine's own profile (its
	// Profile() method, which every bundled adapter has) is the base; each field given in
	// the file, or non-zero, replaces the base's.
	Profile Profile `json:"profile"`

	given uint64 // bit i: Profile field i was present in the file
}

// maxConfigBytes bounds a configuration file.
const maxConfigBytes = 1 << 20

// engineTypes is the registry of RegisterEngineType.
var engineTypes = struct {
	sync.RWMutex
	m map[string]func(EngineConfig) (Engine, error)
}{m: map[string]func(EngineConfig) (Engine, error){}}

// RegisterEngineType makes an engine type available to configuration files, the way
// database/sql.Register makes a driver available: "type": typ in a file builds its engine
// with build. It panics if typ is empty, build is nil or typ is already registered
// (engines/all.Register registers the bundled adapters' types). It is safe for concurrent
// use; register before parsing the files that use the type.
//
// build receives the EngineConfig with every "env:NAME" setting replaced by the variable's
// value; it must name the engine ec.Name when that is not "", reject settings it does not
// know, and never put a setting's value in an error (it may be a credential). An error that
// names a setting should be a *Error of KindInvalidInput whose Message starts with
// "settings.<key>: ", so that the Config's error names its JSON path
// ("engines[1].settings.base_url: ..."). build may run more than once for one
// EngineConfig: ParseConfig builds every engine once to validate it and drops it (closing
// it if it is an io.Closer), so it must be cheap and must not start background work. The
// engine's Profile() method, if it has one, gives the base profile (see
// EngineConfig.Profile).
func RegisterEngineType(typ string, build func(EngineConfig) (Engine, error)) {
	if typ == "" {
		panic("translate: RegisterEngineType with an empty type")
	}
	if build == nil {
		panic("translate: RegisterEngineType(" + strconv.Quote(typ) + ") with a nil build func")
	}
	engineTypes.Lock()
	defer engineTypes.Unlock()
	if _, dup := engineTypes.m[typ]; dup {
		panic("translate: RegisterEngineType called twice for type " + strconv.Quote(typ))
	}
	engineTypes.m[typ] = build
}

func engineType(typ string) (func(EngineConfig) (Engine, error), bool) {
	engineTypes.RLock()
	defer engineTypes.RUnlock()
	b, ok := engineTypes.m[typ]
	return b, ok
}

func engineTypeNames() []string {
	engineTypes.RLock()
	defer engineTypes.RUnlock()
	names := make([]string, 0, len(engineTypes.m))
	for n := range engineTypes.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// bundledTypes are the types engines/all registers.
var bundledTypes = []string{"deepl", "google", "google-v3", "microsoft", "baidu", "openai", "libretranslate", "apertium", "fake"}

// LoadConfig reads the configuration file at path and parses it with ParseConfig. It is
// LoadConfigContext with context.Background().
func LoadConfig(path string) (*Config, error) {
	return LoadConfigContext(context.Background(), path)
}

// LoadConfigContext reads the configuration file at path and parses it with ParseConfig.
// The file must be a regular file (symbolic links are followed) of at most 1 MiB: a FIFO,
// a socket or a device is refused without being opened for a blocking read, so nothing a
// path names can make it wait. It stops reading, and returns ctx's error, when ctx is done.
func LoadConfigContext(ctx context.Context, path string) (*Config, error) {
	data, err := readConfigFile(ctx, path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(data)
}

// readConfigFile reads a regular file of at most maxConfigBytes (+1, so that a larger one
// is reported as such). The file is opened non-blocking, so a FIFO put in place between the
// checks cannot block the open, and checked again once open.
func readConfigFile(ctx context.Context, path string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fileErr := func(err error) error { return &Error{Kind: KindInvalidInput, Message: "config file", Err: err} }
	notRegular := &Error{Kind: KindInvalidInput, Message: "config file: not a regular file"}
	if fi, err := os.Stat(path); err != nil {
		return nil, fileErr(err)
	} else if !fi.Mode().IsRegular() {
		return nil, notRegular
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fileErr(err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, notRegular
	}
	data, err := io.ReadAll(io.LimitReader(ctxReader{ctx, f}, maxConfigBytes+1))
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, fileErr(err)
	}
	return data, nil
}

// ctxReader stops reading when ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p[:min(len(p), 64<<10)])
}

// ParseConfig parses and validates a configuration file (see Config for its format).
//
// It is strict. An unknown field, a field given twice, a null, a value of the wrong type,
// a value out of range, an unknown engine type, an unknown or bad setting and a missing
// environment variable are errors, and so is everything New would reject. The error is a
// *Error of KindInvalidInput whose Message starts with the JSON path of the offending
// value: "engines[1].profile.quality: must be within 0..100",
// "breaker.failure_ratio: must be within 0.2..0.9",
// "engines[0].settings.auth_key: environment variable DEEPL_AUTH_KEY is not set". A
// JSON syntax error names the line and column instead. No error quotes a setting's value.
//
// The only field ParseConfig accepts beyond Config's is "_comment", in any object with
// fixed fields (not in "settings", "scene_quality" or "expect", whose keys are data): its
// value, a string or an array of strings, is ignored, so a file can carry its own notes.
//
// ParseConfig builds every engine once through its registered type to validate its
// settings, and drops it. The engine types the file names must be registered first
// (engines/all.Register for the bundled adapters).
func ParseConfig(data []byte) (*Config, error) {
	cfg, err := decodeConfig(data)
	if err != nil {
		return nil, err
	}
	specs, err := cfg.check()
	for _, s := range specs { // built to validate them; the caller builds its own
		if c, ok := s.e.(io.Closer); ok {
			c.Close()
		}
	}
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// UnmarshalJSON parses data as ParseConfig does, validation included.
func (c *Config) UnmarshalJSON(data []byte) error {
	p, err := ParseConfig(data)
	if err != nil {
		return err
	}
	*c = *p
	return nil
}

// MarshalJSON writes the Config in the file format ParseConfig reads, leaving out zero
// (default) values; settings keep their "env:NAME" references. ParseConfig of its output
// gives back an equal Config.
func (c Config) MarshalJSON() ([]byte, error) {
	return appendValue(nil, "", reflect.ValueOf(c))
}

// WithConfig configures the Client as cfg says: its engines, built through their
// registered types (added after any engines given before), and every policy of the file.
// A Config is complete, so WithConfig replaces what options before it set for the sections
// it covers (deadline, retry, breaker, routing, budget, cache, probes), a section the file
// leaves out meaning the defaults; options after it override it, at New and at every
// Reconfigure or WatchConfig reload (see Client.Reconfigure). New reports a Config that
// does not validate or whose engines cannot be built (say, an environment variable is gone)
// with the error ParseConfig would give.
func WithConfig(cfg *Config) Option {
	return func(o *options) {
		o.configs++
		if cfg == nil {
			o.fail(&Error{Kind: KindInvalidInput, Message: "config: WithConfig(nil)"})
			return
		}
		if err := cfg.apply(o); err != nil {
			o.fail(err)
		}
	}
}

// apply validates cfg, builds its engines and sets what it says on o: engines are
// appended, every other section replaces o's. o is unchanged when apply fails. Reconfigure
// starts from defaultOptions() and applies the new Config to it.
func (cfg *Config) apply(o *options) error {
	specs, err := cfg.check()
	if err != nil {
		return err
	}
	o.engines = append(o.engines, specs...)
	o.deadline = cfg.Deadline
	if o.deadline == 0 {
		o.deadline = 8 * time.Second
	}
	o.retry, o.breaker, o.routing, o.budget = cfg.Retry, cfg.Breaker, cfg.Routing, cfg.Budget
	o.cacheEntries, o.cacheTTL, o.noCache = cfg.Cache.Entries, cfg.Cache.TTL, cfg.Cache.Disabled
	if o.cacheEntries == 0 {
		o.cacheEntries = 10000
	}
	if o.cacheTTL == 0 {
		o.cacheTTL = 24 * time.Hour
	}
	o.probes = nil
	if cfg.Probes != nil {
		p := *cfg.Probes
		o.probes = &p
	}
	o.memory = nil
	if cfg.Memory != nil {
		m := *cfg.Memory
		o.memory = &m
	}
	o.content.glossaries, o.content.defaults, err = cfg.glossaries()
	return err
}

// check validates cfg as ParseConfig and New do and builds its engines.
func (cfg *Config) check() ([]engineSpec, error) {
	if err := cfg.checkPolicies(); err != nil {
		return nil, err
	}
	if len(cfg.Engines) == 0 {
		return nil, invalidAt("engines", "at least one engine is required")
	}
	specs := make([]engineSpec, 0, len(cfg.Engines))
	seen := map[string]int{}
	for i, ec := range cfg.Engines {
		at := "engines[" + strconv.Itoa(i) + "]"
		e, p, err := ec.Build()
		if err != nil {
			return specs, under(at, err)
		}
		specs = append(specs, engineSpec{e, p})
		if j, dup := seen[e.Name()]; dup {
			return specs, invalidAt(at+".name", fmt.Sprintf("duplicate engine name %q (also engines[%d])", e.Name(), j))
		}
		seen[e.Name()] = i
	}
	if cfg.Probes != nil {
		for _, name := range sortedKeys(cfg.Probes.Expect) {
			if _, ok := seen[name]; !ok {
				return specs, invalidAt("probes.expect."+name, "no engine has this name")
			}
		}
	}
	return specs, nil
}

func (cfg *Config) checkPolicies() error {
	if cfg.Deadline < 0 {
		return invalidAt("deadline", "must be positive")
	}
	for _, sec := range []struct {
		path string
		v    any
	}{{"", *cfg}, {"cache.", cfg.Cache}, {"budget.", cfg.Budget}} {
		if field, msg := outOfRange(sec.v); field != "" {
			return invalidAt(sec.path+snake(field), msg)
		}
	}
	if _, path, msg := budgetProblem(cfg.Budget); path != "" {
		return invalidAt(path, msg)
	}
	if err := cfg.Retry.validate(); err != nil {
		return relabel("retry", err)
	}
	if err := cfg.Breaker.validate(); err != nil {
		return relabel("breaker", err)
	}
	if err := cfg.Routing.validate(); err != nil {
		return relabel("routing", err)
	}
	if cfg.Probes != nil {
		if err := cfg.Probes.validate(); err != nil {
			return relabel("probes", err)
		}
	}
	if cfg.Memory != nil {
		if field, msg := outOfRange(*cfg.Memory); field != "" {
			return invalidAt("memory."+snake(field), msg)
		}
	}
	_, _, err := cfg.glossaries()
	return err
}

// Build builds the engine ec describes through its registered type, with its profile: the
// engine's own Profile() (when it has that method) with the fields of ec.Profile that the
// file gave, or that are non-zero, put over it. It validates the profile as New does. Its
// errors are *Error of KindInvalidInput whose Message starts with the path inside the
// engine's JSON object ("settings.auth_key: ...", "profile.quality: ..."); a Config's
// errors put "engines[i]." before it.
func (ec EngineConfig) Build() (Engine, Profile, error) {
	if ec.Type == "" {
		return nil, Profile{}, invalidAt("type", "is required")
	}
	build, ok := engineType(ec.Type)
	if !ok {
		msg := fmt.Sprintf("unknown engine type %q (registered: %s)", ec.Type, strings.Join(engineTypeNames(), ", "))
		if slices.Contains(bundledTypes, ec.Type) {
			msg += "; call engines/all.Register() to register the bundled adapters"
		}
		return nil, Profile{}, invalidAt("type", msg)
	}
	resolved, err := ec.resolveSettings()
	if err != nil {
		return nil, Profile{}, err
	}
	e, err := safeBuild(build, resolved)
	if err != nil {
		return nil, Profile{}, err
	}
	if e == nil {
		return nil, Profile{}, invalidAt("type", fmt.Sprintf("engine type %q built a nil engine", ec.Type))
	}
	switch name := e.Name(); {
	case name == "":
		return nil, Profile{}, invalidAt("name", fmt.Sprintf("engine type %q built %T with an empty name", ec.Type, e))
	case ec.Name != "" && name != ec.Name:
		return nil, Profile{}, invalidAt("name", fmt.Sprintf("engine type %q named its engine %q", ec.Type, name))
	}
	var base Profile
	if p, ok := e.(interface{ Profile() Profile }); ok {
		base = p.Profile()
	}
	p := ec.overlay(base)
	if err := validateProfile(p); err != nil {
		return nil, Profile{}, relabel("profile", err)
	}
	return e, p, nil
}

// safeBuild runs a registered build func; a panic becomes an error that does not quote it
// (the panic value may hold a credential).
func safeBuild(build func(EngineConfig) (Engine, error), ec EngineConfig) (e Engine, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, invalidAt("type", fmt.Sprintf("engine type %q panicked while building the engine", ec.Type))
		}
	}()
	e, err = build(ec)
	if err != nil {
		// The message is the build error's own, once: a *Error's Message (its cause kept
		// behind it), or the text of any other error.
		var te *Error
		msg, cause := err.Error(), error(nil)
		if errors.As(err, &te) && te.Message != "" {
			msg, cause = te.Message, te.Err
		}
		if !strings.HasPrefix(msg, "settings.") {
			msg = "type " + ec.Type + ": " + msg
		}
		return nil, &Error{Kind: KindInvalidInput, Message: msg, Err: cause}
	}
	return e, nil
}

// resolveSettings returns ec with every "env:NAME" setting replaced by the variable's value.
func (ec EngineConfig) resolveSettings() (EngineConfig, error) {
	if len(ec.Settings) == 0 {
		return ec, nil
	}
	m := make(map[string]string, len(ec.Settings))
	for _, k := range sortedKeys(ec.Settings) {
		v := ec.Settings[k]
		if name, ok := strings.CutPrefix(v, "env:"); ok {
			if name == "" || strings.ContainsAny(name, "=\x00") {
				return ec, invalidAt("settings."+k, "\"env:\" needs a variable name")
			}
			val, set := os.LookupEnv(name)
			switch {
			case !set:
				return ec, invalidAt("settings."+k, "environment variable "+name+" is not set")
			case val == "":
				return ec, invalidAt("settings."+k, "environment variable "+name+" is empty")
			}
			v = val
		}
		m[k] = v
	}
	ec.Settings = m
	return ec, nil
}

// overlay returns base with ec.Profile's given or non-zero fields put over it.
func (ec EngineConfig) overlay(base Profile) Profile {
	dst := reflect.ValueOf(&base).Elem()
	src := reflect.ValueOf(ec.Profile)
	for i := range src.NumField() {
		if ec.given&(1<<i) != 0 || !src.Field(i).IsZero() {
			dst.Field(i).Set(src.Field(i))
		}
	}
	return base
}

// validateProfile applies New's profile rules (Profile.validate) and its language rule to
// a profile from a Config. Its errors name "Profile.<Field>"; a scene's quality is named
// "Profile.SceneQuality.<scene>", its JSON path.
func validateProfile(p Profile) error {
	for s := range p.SceneQuality {
		if int(s) >= len(sceneNames) {
			return configError("Profile.SceneQuality", "unknown scene "+s.String())
		}
	}
	for s := range sceneNames {
		if q, ok := p.SceneQuality[Scene(s)]; ok && !(q >= 0 && q <= 100) {
			return configError("Profile.SceneQuality."+Scene(s).String(), "must be within 0..100")
		}
	}
	if err := p.validate(""); err != nil { // prefixed names are built for an error only
		return p.validate("Profile.")
	}
	if len(p.Languages) == 0 {
		return nil // no cache to build (3 allocations) for nothing: Reconfigure runs this per engine
	}
	if _, err := lang.NewSet(lang.NewCache(), p.Languages); err != nil {
		return configError("Profile.Languages", err.Error())
	}
	return nil
}

// invalidAt is a configuration error at a JSON path.
func invalidAt(path, msg string) *Error {
	if path == "" {
		return &Error{Kind: KindInvalidInput, Message: "config: " + msg}
	}
	return &Error{Kind: KindInvalidInput, Message: path + ": " + msg}
}

// under puts prefix before the path of a configuration error.
func under(prefix string, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return invalidAt(prefix, err.Error())
	}
	out := *e
	out.Message = prefix + "." + e.Message
	return &out
}

// relabel turns an error of New's validation, "config: RetryPolicy.PerEngine must not be
// negative", into one at a JSON path under section: "retry.per_engine: must not be negative".
func relabel(section string, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return invalidAt(section, err.Error())
	}
	field, msg, ok := strings.Cut(strings.TrimPrefix(e.Message, "config: "), " ")
	if !ok {
		return invalidAt(section, e.Message)
	}
	path := section
	if _, rest, ok := strings.Cut(field, "."); ok { // drop the Go type name
		for _, part := range strings.Split(rest, ".") {
			path += "." + snake(part)
		}
	}
	return invalidAt(path, msg)
}

// snake converts a Go field name to its JSON key: "FailureRatio" -> "failure_ratio",
// "TTL" -> "ttl".
func snake(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 && (unicode.IsLower(r[i-1]) || (i+1 < len(r) && unicode.IsLower(r[i+1]))) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ---- decoding ----

var (
	durationType     = reflect.TypeFor[time.Duration]()
	classType        = reflect.TypeFor[CostClass]()
	sceneType        = reflect.TypeFor[Scene]()
	engineConfigType = reflect.TypeFor[EngineConfig]()
	profileType      = reflect.TypeFor[Profile]()

	// the places of Profile's Canary and Staged fields, for the given bits
	canaryField = fieldIndex(profileType, "Canary")
	stagedField = fieldIndex(profileType, "Staged")
)

func fieldIndex(t reflect.Type, name string) int {
	f, ok := t.FieldByName(name)
	if !ok || len(f.Index) != 1 {
		panic("translate: no field " + t.Name() + "." + name)
	}
	return f.Index[0]
}

// decodeConfig decodes data strictly into a Config, without the checks of Config.check.
func decodeConfig(data []byte) (*Config, error) {
	if len(data) > maxConfigBytes {
		return nil, invalidAt("", "larger than 1 MiB")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, invalidAt("", "empty")
	}
	if !json.Valid(data) {
		return nil, syntaxError(data)
	}
	var cfg Config
	if err := decodeValue("", data, reflect.ValueOf(&cfg).Elem()); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// syntaxError names the line and column of data's first JSON syntax error.
func syntaxError(data []byte) error {
	err := json.Unmarshal(data, new(any))
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return invalidAt("", "invalid JSON")
	}
	before := data[:max(0, min(int(se.Offset), len(data))-1)] // up to the offending byte
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return &Error{Kind: KindInvalidInput, Message: fmt.Sprintf("config: line %d, column %d: invalid JSON: %s", line, col, se.Error())}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// decodeValue decodes raw, a valid JSON value, into v. Its errors name path.
func decodeValue(path string, raw []byte, v reflect.Value) error {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return invalidAt(path, "must not be null")
	}
	switch v.Type() {
	case durationType:
		return decodeDuration(path, raw, v)
	case classType:
		return decodeClass(path, raw, v)
	case engineConfigType:
		return decodeEngine(path, raw, v)
	}
	switch v.Kind() {
	case reflect.Struct:
		_, err := decodeStruct(path, raw, v)
		return err
	case reflect.Pointer:
		nv := reflect.New(v.Type().Elem())
		if err := decodeValue(path, raw, nv.Elem()); err != nil {
			return err
		}
		v.Set(nv)
		return nil
	case reflect.Slice:
		return decodeSlice(path, raw, v)
	case reflect.Map:
		return decodeMap(path, raw, v)
	}
	return decodeScalar(path, raw, v)
}

// decodeDuration decodes a Go duration string such as "8s".
func decodeDuration(path string, raw []byte, v reflect.Value) error {
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return invalidAt(path, `must be a duration string such as "8s"`)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return invalidAt(path, `must be a duration such as "8s" or "250ms"`)
	}
	v.SetInt(int64(d))
	return nil
}

// decodeClass decodes a cost class by name.
func decodeClass(path string, raw []byte, v reflect.Value) error {
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		for c := ClassStandard; c <= ClassPremium; c++ {
			if c.String() == s {
				v.SetUint(uint64(c))
				return nil
			}
		}
	}
	return invalidAt(path, `must be "free", "standard" or "premium"`)
}

// decodeScalar decodes a string, a bool or a number.
func decodeScalar(path string, raw []byte, v reflect.Value) error {
	switch v.Kind() {
	case reflect.String:
		var s string
		if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return invalidAt(path, "must be a string")
		}
		v.SetString(s)
		return nil
	case reflect.Bool:
		switch string(raw) {
		case "true", "false":
			v.SetBool(string(raw) == "true")
			return nil
		}
		return invalidAt(path, "must be true or false")
	case reflect.Int, reflect.Int64, reflect.Int32:
		return decodeInt(path, raw, v)
	case reflect.Float64:
		f, err := strconv.ParseFloat(string(raw), 64)
		if !isNumber(raw) || err != nil {
			return invalidAt(path, "must be a number")
		}
		v.SetFloat(f)
		return nil
	}
	return invalidAt(path, "cannot be set in a file")
}

func isNumber(raw []byte) bool { return raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9') }

func decodeInt(path string, raw []byte, v reflect.Value) error {
	if !isNumber(raw) {
		return invalidAt(path, "must be an integer")
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil { // 1e3, 40.0 or out of range
		f, ferr := strconv.ParseFloat(string(raw), 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return invalidAt(path, "must be an integer")
		}
		n = int64(f)
	}
	if v.OverflowInt(n) {
		return invalidAt(path, "is out of range")
	}
	v.SetInt(n)
	return nil
}

func decodeSlice(path string, raw []byte, v reflect.Value) error {
	if raw[0] != '[' {
		return invalidAt(path, "must be an array")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return invalidAt(path, "must be an array")
	}
	s := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, item := range items {
		if err := decodeValue(path+"["+strconv.Itoa(i)+"]", item, s.Index(i)); err != nil {
			return err
		}
	}
	v.Set(s)
	return nil
}

func decodeMap(path string, raw []byte, v reflect.Value) error {
	m := reflect.MakeMap(v.Type())
	kt, vt := v.Type().Key(), v.Type().Elem()
	err := eachField(path, raw, func(key string, val []byte) error {
		at := join(path, key)
		k := reflect.New(kt).Elem()
		switch {
		case kt == sceneType:
			i := slices.Index(sceneNames[:], key)
			if i < 0 {
				return invalidAt(at, "unknown scene (known: "+strings.Join(sceneNames[:], ", ")+")")
			}
			k.SetUint(uint64(i))
		case kt.Kind() == reflect.String:
			k.SetString(key)
		default:
			return invalidAt(at, "cannot be set in a file")
		}
		e := reflect.New(vt).Elem()
		if err := decodeValue(at, val, e); err != nil {
			return err
		}
		m.SetMapIndex(k, e)
		return nil
	})
	if err != nil {
		return err
	}
	v.Set(m)
	return nil
}

// fieldsOf maps the JSON keys of t's exported fields to their indexes.
func fieldsOf(t reflect.Type) (map[string]int, []string) {
	idx := map[string]int{}
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		key := snake(f.Name)
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" {
			key = tag
		}
		idx[key] = i
		keys = append(keys, key)
	}
	return idx, keys
}

// decodeStruct decodes a JSON object into the struct v and reports which fields it had.
func decodeStruct(path string, raw []byte, v reflect.Value) (given uint64, err error) {
	idx, keys := fieldsOf(v.Type())
	err = eachField(path, raw, func(key string, val []byte) error {
		at := join(path, key)
		if key == "_comment" {
			var s string
			var ss []string
			if json.Unmarshal(val, &s) != nil && json.Unmarshal(val, &ss) != nil {
				return invalidAt(at, "must be a string or an array of strings")
			}
			return nil
		}
		i, ok := idx[key]
		if !ok {
			return invalidAt(at, "unknown field (known: "+strings.Join(keys, ", ")+")")
		}
		given |= 1 << i
		return decodeValue(at, val, v.Field(i))
	})
	return given, err
}

func decodeEngine(path string, raw []byte, v reflect.Value) error {
	if _, err := decodeStruct(path, raw, v); err != nil {
		return err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return invalidAt(path, "must be an object")
	}
	if p, ok := obj["profile"]; ok {
		given, err := decodeStruct(join(path, "profile"), p, reflect.New(profileType).Elem())
		if err != nil {
			return err
		}
		ec := v.Addr().Interface().(*EngineConfig)
		if given&(1<<canaryField) != 0 && ec.Profile.Canary == 0 { // a canary lowered to 0 (Profile.Staged)
			ec.Profile.Staged = true
			given |= 1 << stagedField
		}
		ec.given = given
	}
	return nil
}

// eachField calls fn for each member of the JSON object raw, in order, and rejects a key
// given twice.
func eachField(path string, raw []byte, fn func(key string, val []byte) error) error {
	if raw[0] != '{' {
		return invalidAt(path, "must be an object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return invalidAt(path, "must be an object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return invalidAt(path, "must be an object")
		}
		key, _ := tok.(string)
		if seen[key] {
			return invalidAt(join(path, key), "given twice")
		}
		seen[key] = true
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return invalidAt(join(path, key), "invalid JSON")
		}
		if err := fn(key, val); err != nil {
			return err
		}
	}
	return nil
}

// ---- encoding ----

// appendValue appends v as JSON in the file format.
func appendValue(b []byte, path string, v reflect.Value) ([]byte, error) {
	switch v.Type() {
	case durationType:
		return strconv.AppendQuote(b, time.Duration(v.Int()).String()), nil
	case classType:
		c := CostClass(v.Uint())
		if c > ClassPremium {
			return nil, invalidAt(path, "unknown cost class")
		}
		return strconv.AppendQuote(b, c.String()), nil
	}
	switch v.Kind() {
	case reflect.Struct:
		return appendStruct(b, path, v)
	case reflect.Pointer:
		return appendValue(b, path, v.Elem())
	case reflect.Slice:
		return appendSlice(b, path, v)
	case reflect.Map:
		return appendMap(b, path, v)
	}
	return appendScalar(b, path, v)
}

// appendSlice appends v's elements as a JSON array, each at its own index path.
func appendSlice(b []byte, path string, v reflect.Value) ([]byte, error) {
	b = append(b, '[')
	for i := range v.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendValue(b, path+"["+strconv.Itoa(i)+"]", v.Index(i)); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendScalar appends a string, bool or number; NaN, infinities and any
// other kind cannot be written to a file.
func appendScalar(b []byte, path string, v reflect.Value) ([]byte, error) {
	switch v.Kind() {
	case reflect.String:
		s, _ := json.Marshal(v.String())
		return append(b, s...), nil
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool()), nil
	case reflect.Int, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, invalidAt(path, "must be a finite number")
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64), nil
	}
	return nil, invalidAt(path, "cannot be written to a file")
}

func appendStruct(b []byte, path string, v reflect.Value) ([]byte, error) {
	var given uint64
	if v.Type() == engineConfigType {
		given = v.Interface().(EngineConfig).given
	}
	idx, keys := fieldsOf(v.Type())
	b = append(b, '{')
	first := true
	for _, key := range keys {
		f := v.Field(idx[key])
		at := join(path, key)
		var err error
		var out []byte
		switch {
		case v.Type() == engineConfigType && key == "profile":
			if out, err = appendProfile(nil, at, f, given); err != nil {
				return nil, err
			}
			if string(out) == "{}" {
				continue
			}
		case f.IsZero():
			continue
		default:
			if out, err = appendValue(nil, at, f); err != nil {
				return nil, err
			}
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = strconv.AppendQuote(b, key)
		b = append(b, ':')
		b = append(b, out...)
	}
	return append(b, '}'), nil
}

// appendProfile writes the profile fields that were given or are non-zero.
func appendProfile(b []byte, path string, v reflect.Value, given uint64) ([]byte, error) {
	idx, keys := fieldsOf(profileType)
	b = append(b, '{')
	first := true
	for _, key := range keys {
		i := idx[key]
		f := v.Field(i)
		if given&(1<<i) == 0 && f.IsZero() {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = strconv.AppendQuote(b, key)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, join(path, key), f); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

func appendMap(b []byte, path string, v reflect.Value) ([]byte, error) {
	type entry struct {
		key string
		val reflect.Value
		ord int
	}
	var entries []entry
	for it := v.MapRange(); it.Next(); {
		k := it.Key()
		e := entry{val: it.Value()}
		switch {
		case k.Type() == sceneType:
			if k.Uint() >= uint64(len(sceneNames)) {
				return nil, invalidAt(path, "unknown scene "+Scene(k.Uint()).String())
			}
			e.key, e.ord = sceneNames[k.Uint()], int(k.Uint())
		case k.Kind() == reflect.String:
			e.key = k.String()
		default:
			return nil, invalidAt(path, "cannot be written to a file")
		}
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].ord != entries[j].ord {
			return entries[i].ord < entries[j].ord
		}
		return entries[i].key < entries[j].key
	})
	b = append(b, '{')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(e.key)
		b = append(b, k...)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, join(path, e.key), e.val); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}
