package translate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fanyi-go/translate/internal/jsonfile"
	"github.com/fanyi-go/translate/internal/lang"
	"github.com/fanyi-go/translate/internal/registry"
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
var engineTypes registry.Registry[func(EngineConfig) (Engine, error)]

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
	if !engineTypes.Add(typ, build) {
		panic("translate: RegisterEngineType called twice for type " + strconv.Quote(typ))
	}
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
// is reported as such) with jsonfile.Read; its errors are KindInvalidInput, or ctx's.
func readConfigFile(ctx context.Context, path string) ([]byte, error) {
	data, err := jsonfile.Read(ctx, path, maxConfigBytes+1)
	switch {
	case err == nil:
		return data, nil
	case err == ctx.Err():
		return nil, err
	case errors.Is(err, jsonfile.ErrNotRegular):
		return nil, &Error{Kind: KindInvalidInput, Message: "config file: not a regular file"}
	}
	return nil, &Error{Kind: KindInvalidInput, Message: "config file", Err: err}
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
	var cfg Config
	if err := fileFormat.Document(data, maxConfigBytes, &cfg); err != nil {
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
	return &cfg, nil
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
	return fileFormat.Append(nil, "", reflect.ValueOf(c))
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
	o.deadline = cmp.Or(o.deadline, 8*time.Second)
	o.retry, o.breaker, o.routing, o.budget = cfg.Retry, cfg.Breaker, cfg.Routing, cfg.Budget
	o.cacheEntries, o.cacheTTL, o.noCache = cfg.Cache.Entries, cfg.Cache.TTL, cfg.Cache.Disabled
	o.cacheEntries = cmp.Or(o.cacheEntries, 10000)
	o.cacheTTL = cmp.Or(o.cacheTTL, 24*time.Hour)
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
			return invalidAt(sec.path+jsonfile.Snake(field), msg)
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
			return invalidAt("memory."+jsonfile.Snake(field), msg)
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
	build, ok := engineTypes.Get(ec.Type)
	if !ok {
		msg := fmt.Sprintf("unknown engine type %q (registered: %s)", ec.Type, strings.Join(engineTypes.Names(), ", "))
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
	switch {
	case e == nil:
		return nil, Profile{}, invalidAt("type", fmt.Sprintf("engine type %q built a nil engine", ec.Type))
	case holdsNil(e):
		return nil, Profile{}, invalidAt("type", fmt.Sprintf("engine type %q built a nil %T", ec.Type, e))
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
func safeBuild(build func(EngineConfig) (Engine, error), ec EngineConfig) (Engine, error) {
	e, err, panicked := registry.Call(build, ec)
	if panicked {
		return nil, invalidAt("type", fmt.Sprintf("engine type %q panicked while building the engine", ec.Type))
	}
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
	m, key, problem := jsonfile.Env(ec.Settings)
	if key != "" {
		return ec, invalidAt("settings."+key, problem)
	}
	ec.Settings = m
	return ec, nil
}

// overlay returns base with ec.Profile's given or non-zero fields put over it.
func (ec EngineConfig) overlay(base Profile) Profile {
	jsonfile.Overlay(reflect.ValueOf(&base).Elem(), reflect.ValueOf(ec.Profile), ec.given)
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
	return invalidAt(jsonfile.Relabel(section, "config: ", e.Message))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ---- the file format (mechanism in internal/jsonfile) ----

var (
	durationType     = reflect.TypeFor[time.Duration]()
	engineConfigType = reflect.TypeFor[EngineConfig]()
	profileType      = reflect.TypeFor[Profile]()

	// the places of Profile's Canary and Staged fields, for the given bits
	canaryField = jsonfile.FieldIndex(profileType, "Canary")
	stagedField = jsonfile.FieldIndex(profileType, "Staged")
)

// fileFormat is the Config file format: cost classes and scenes by name, and an engine's
// profile with the fields the file gave (EngineConfig.given).
var fileFormat = func() *jsonfile.Format {
	f := &jsonfile.Format{Invalid: func(path, msg string) error { return invalidAt(path, msg) }}
	classes := []string{ClassStandard: "standard", ClassFree: "free", ClassPremium: "premium"}
	f.Types = map[reflect.Type]jsonfile.Codec{
		reflect.TypeFor[CostClass](): f.Enum(classes, `must be "free", "standard" or "premium"`, "unknown cost class"),
		engineConfigType: f.Given(jsonfile.FieldIndex(engineConfigType, "Profile"),
			func(v reflect.Value) uint64 { return v.Interface().(EngineConfig).given }, setGiven),
	}
	f.Keys = map[reflect.Type]jsonfile.KeyCodec{reflect.TypeFor[Scene](): f.EnumKeys("scene", sceneNames[:])}
	return f
}()

// setGiven records which profile fields the file gave an engine; a canary lowered to 0 is
// a stopped canary (Profile.Staged).
func setGiven(v reflect.Value, given uint64) {
	ec := v.Addr().Interface().(*EngineConfig)
	if given&(1<<canaryField) != 0 && ec.Profile.Canary == 0 {
		ec.Profile.Staged = true
		given |= 1 << stagedField
	}
	ec.given = given
}
