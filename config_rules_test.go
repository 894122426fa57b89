package translate

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fanyi-go/translate/internal/jsonfile"
)

// newRule is one validation rule of New: the options that break it and New's message,
// and the same fault in a configuration file with ParseConfig's message.
type newRule struct {
	opts   []Option // without an engine: engine "a" is added before them unless bare
	bare   bool     // opts has its own engines (or none)
	newMsg string   // New's *Error Message
	json   string   // the file's fault: a top-level section, or with prof set, engine b's profile fields; "" when a file cannot express it
	prof   bool     // json holds engine b's profile fields
	path   string   // ParseConfig's *Error Message
}

// newRules has every rule of New. TestEveryNewRuleInConfig checks that New and
// ParseConfig both apply each, and that no rule in the source is missing here.
func newRules() []newRule {
	return slices.Concat(engineListRules(), topLevelRules(), retryRules(), breakerRules(),
		routingRules(), probeRules(), profileRules(), codeOnlyRules(), limitRules(), tenantRules(), contentRules())
}

func retryOpts(p RetryPolicy) []Option     { return []Option{WithRetry(p)} }
func breakerOpts(p BreakerPolicy) []Option { return []Option{WithBreaker(p)} }
func routingOpts(p RoutingPolicy) []Option { return []Option{WithRouting(p)} }
func probeOpts(p ProbePolicy) []Option     { return []Option{WithProbes(p)} }

// profileOpts adds engine b with profile p.
func profileOpts(p Profile) []Option { return []Option{WithEngine(&cfgEngine{name: "b"}, p)} }

// engineListRules: the engine list: at least one, named, distinct, not nil.
func engineListRules() []newRule {
	return []newRule{
		{bare: true, newMsg: "config: WithEngine at least one engine is required", json: `"engines":[]`, path: "engines: at least one engine is required"},
		{opts: []Option{WithEngine(&cfgEngine{name: "a"}, Profile{}), WithEngine(&cfgEngine{name: "a"}, Profile{})}, bare: true,
			newMsg: `config: WithEngine[1] duplicate engine name "a"`,
			json:   `"engines":[{"name":"a","type":"cfgtest"},{"name":"a","type":"cfgtest"}]`, path: `engines[1].name: duplicate engine name "a" (also engines[0])`},
		{opts: []Option{WithEngine(nil, Profile{})}, bare: true, newMsg: "config: WithEngine[0] engine is nil",
			json: `"engines":[{"name":"a","type":"cfgtest","settings":{"nil":"1"}}]`, path: `engines[0].type: engine type "cfgtest" built a nil engine`},
		{opts: []Option{WithEngine(&cfgEngine{}, Profile{})}, bare: true, newMsg: "config: WithEngine[0] *translate.cfgEngine has an empty name",
			json: `"engines":[{"type":"cfgtest","settings":{"rename":""}}]`, path: `engines[0].name: engine type "cfgtest" built *translate.cfgEngine with an empty name`},
	}
}

// topLevelRules: the deadline, the cache and the budget.
func topLevelRules() []newRule {
	return []newRule{
		{opts: []Option{WithDeadline(-time.Second)}, newMsg: "config: WithDeadline must be positive", json: `"deadline":"-1s"`, path: "deadline: must be positive"},
		{opts: []Option{WithCache(-1, time.Hour)}, newMsg: "config: WithCache entries and ttl must be positive", json: `"cache":{"entries":-1}`, path: "cache.entries: must not be negative"},
		{opts: []Option{WithCache(10, -time.Hour)}, newMsg: "config: WithCache entries and ttl must be positive", json: `"cache":{"ttl":"-1h"}`, path: "cache.ttl: must not be negative"},
		{opts: []Option{WithBudget(Budget{Daily: -1})}, newMsg: "config: Budget.Daily must not be negative", json: `"budget":{"daily":-1}`, path: "budget.daily: must not be negative"},
		{opts: []Option{WithBudget(Budget{Daily: math.Inf(1)})}, newMsg: "config: Budget.Daily must be within 0..1e12"},
		{opts: []Option{WithDeadline(time.Hour + 1)}, newMsg: "config: WithDeadline must be at most 1h", json: `"deadline":"1h0m0.000000001s"`, path: "deadline: must be within 1ns..1h"},
		{opts: []Option{WithCache(maxCacheEntries+1, time.Hour)}, newMsg: "config: WithCache entries must be at most 1e8", json: `"cache":{"entries":100000001}`, path: "cache.entries: must be within 1..1e8"},
		{opts: []Option{WithCache(10, year+1)}, newMsg: "config: WithCache ttl must be at most 8760h", json: `"cache":{"ttl":"8761h"}`, path: "cache.ttl: must be within 1ns..8760h"},
		{opts: []Option{WithBudget(Budget{EconomyAt: 1.5})}, newMsg: "config: Budget.EconomyAt must be within 0..1", json: `"budget":{"economy_at":1.5}`, path: "budget.economy_at: must be within 0..1"},
		{opts: []Option{WithBudget(Budget{EconomyAt: math.NaN()})}, newMsg: "config: Budget.EconomyAt must be within 0..1"},
	}
}

// retryRules: RetryPolicy.validate.
func retryRules() []newRule {
	return []newRule{
		{opts: retryOpts(RetryPolicy{PerEngine: -1}), newMsg: "config: RetryPolicy.PerEngine must not be negative", json: `"retry":{"per_engine":-1}`, path: "retry.per_engine: must not be negative"},
		{opts: retryOpts(RetryPolicy{Backoff: -1}), newMsg: "config: RetryPolicy.Backoff must not be negative", json: `"retry":{"backoff":"-1ms"}`, path: "retry.backoff: must not be negative"},
		{opts: retryOpts(RetryPolicy{MaxAttempts: -1}), newMsg: "config: RetryPolicy.MaxAttempts must not be negative", json: `"retry":{"max_attempts":-1}`, path: "retry.max_attempts: must not be negative"},
		{opts: retryOpts(RetryPolicy{MaxSwitches: -1}), newMsg: "config: RetryPolicy.MaxSwitches must not be negative", json: `"retry":{"max_switches":-1}`, path: "retry.max_switches: must not be negative"},
		{opts: retryOpts(RetryPolicy{HedgeAfter: -time.Millisecond}), newMsg: "config: RetryPolicy.HedgeAfter must not be negative", json: `"retry":{"hedge_after":"-1ms"}`, path: "retry.hedge_after: must not be negative"},
		{opts: retryOpts(RetryPolicy{HedgeBudget: 1.5}), newMsg: "config: RetryPolicy.HedgeBudget must be within 0..1", json: `"retry":{"hedge_budget":1.5}`, path: "retry.hedge_budget: must be within 0..1"},
		{opts: retryOpts(RetryPolicy{HedgeBudget: -0.1}), newMsg: "config: RetryPolicy.HedgeBudget must not be negative", json: `"retry":{"hedge_budget":-0.1}`, path: "retry.hedge_budget: must not be negative"},
		{opts: retryOpts(RetryPolicy{HedgeBudget: math.NaN()}), newMsg: "config: RetryPolicy.HedgeBudget must be within 0..1"},
	}
}

// breakerRules: BreakerPolicy.validate, the seed's incident among them.
func breakerRules() []newRule {
	return []newRule{
		{opts: breakerOpts(BreakerPolicy{Window: -1}), newMsg: "config: BreakerPolicy.Window must not be negative", json: `"breaker":{"window":-1}`, path: "breaker.window: must not be negative"},
		{opts: breakerOpts(BreakerPolicy{MinCalls: -1}), newMsg: "config: BreakerPolicy.MinCalls must not be negative", json: `"breaker":{"min_calls":-1}`, path: "breaker.min_calls: must not be negative"},
		{opts: breakerOpts(BreakerPolicy{FailureRatio: 0.1}), newMsg: "config: BreakerPolicy.FailureRatio must be within 0.2..0.9", json: `"breaker":{"failure_ratio":0.1}`, path: "breaker.failure_ratio: must be within 0.2..0.9"},
		{opts: breakerOpts(BreakerPolicy{FailureRatio: 0.95}), newMsg: "config: BreakerPolicy.FailureRatio must be within 0.2..0.9", json: `"breaker":{"failure_ratio":0.95}`, path: "breaker.failure_ratio: must be within 0.2..0.9"},
		{opts: breakerOpts(BreakerPolicy{Cooldown: -1}), newMsg: "config: BreakerPolicy.Cooldown must not be negative", json: `"breaker":{"cooldown":"-1s"}`, path: "breaker.cooldown: must not be negative"},
		{opts: breakerOpts(BreakerPolicy{HalfOpenCalls: -1}), newMsg: "config: BreakerPolicy.HalfOpenCalls must not be negative", json: `"breaker":{"half_open_calls":-1}`, path: "breaker.half_open_calls: must not be negative"},
		{opts: breakerOpts(BreakerPolicy{Window: 10, MinCalls: 20}), newMsg: "config: BreakerPolicy.MinCalls must not exceed Window", json: `"breaker":{"window":10,"min_calls":20}`, path: "breaker.min_calls: must not exceed Window"},
	}
}

// routingRules: RoutingPolicy.validate and Weights.validate.
func routingRules() []newRule {
	return []newRule{
		{opts: routingOpts(RoutingPolicy{Weights: Weights{Quality: 0.6, Availability: 0.2, Speed: 0.1, Cost: 0.1}}), newMsg: "config: RoutingPolicy.Weights.Quality must be within 0..0.5",
			json: `"routing":{"weights":{"quality":0.6,"availability":0.2,"speed":0.1,"cost":0.1}}`, path: "routing.weights.quality: must be within 0..0.5"},
		{opts: routingOpts(RoutingPolicy{Weights: Weights{Quality: 0.5, Availability: 0.6, Speed: -0.1}}), newMsg: "config: RoutingPolicy.Weights.Availability must be within 0..0.5",
			json: `"routing":{"weights":{"quality":0.5,"availability":0.6,"speed":-0.1}}`, path: "routing.weights.availability: must be within 0..0.5"},
		{opts: routingOpts(RoutingPolicy{Weights: Weights{Quality: 0.5, Availability: 0.5, Speed: -0.1, Cost: 0.1}}), newMsg: "config: RoutingPolicy.Weights.Speed must be within 0..0.5",
			json: `"routing":{"weights":{"quality":0.5,"availability":0.5,"speed":-0.1,"cost":0.1}}`, path: "routing.weights.speed: must be within 0..0.5"},
		{opts: routingOpts(RoutingPolicy{Weights: Weights{Quality: 0.3, Availability: 0.2, Speed: 0.1, Cost: 0.4}}), newMsg: "config: RoutingPolicy.Weights.Cost must be at most 0.3",
			json: `"routing":{"weights":{"quality":0.3,"availability":0.2,"speed":0.1,"cost":0.4}}`, path: "routing.weights.cost: must be at most 0.3"},
		{opts: routingOpts(RoutingPolicy{Weights: Weights{Quality: 0.4, Availability: 0.4}}), newMsg: "config: RoutingPolicy.Weights must sum to 1",
			json: `"routing":{"weights":{"quality":0.4,"availability":0.4}}`, path: "routing.weights: must sum to 1"},
		{opts: routingOpts(RoutingPolicy{Temperature: -1}), newMsg: "config: RoutingPolicy.Temperature must not be negative", json: `"routing":{"temperature":-1}`, path: "routing.temperature: must not be negative"},
		{opts: routingOpts(RoutingPolicy{MinHealth: 1.5}), newMsg: "config: RoutingPolicy.MinHealth must be within 0..1", json: `"routing":{"min_health":1.5}`, path: "routing.min_health: must be within 0..1"},
		{opts: routingOpts(RoutingPolicy{HealthEvery: -1}), newMsg: "config: RoutingPolicy.HealthEvery must not be negative", json: `"routing":{"health_every":"-1s"}`, path: "routing.health_every: must not be negative"},
		{opts: routingOpts(RoutingPolicy{LegalMinQuality: 101}), newMsg: "config: RoutingPolicy.LegalMinQuality must be within 0..100", json: `"routing":{"legal_min_quality":101}`, path: "routing.legal_min_quality: must be within 0..100"},
		{opts: routingOpts(RoutingPolicy{ChatMaxLatency: -1}), newMsg: "config: RoutingPolicy.ChatMaxLatency must not be negative", json: `"routing":{"chat_max_latency":"-1s"}`, path: "routing.chat_max_latency: must not be negative"},
		{opts: routingOpts(RoutingPolicy{PeakHours: make([]Window, 25)}), newMsg: "config: RoutingPolicy.PeakHours must have at most 24 windows",
			json: `"routing":{"peak_hours":[` + strings.Repeat(`{"from":"1h"},`, 24) + `{"from":"1h"}]}`, path: "routing.peak_hours: must have at most 24 windows"},
	}
}

// probeRules: ProbePolicy.validate.
func probeRules() []newRule {
	return []newRule{
		{opts: probeOpts(ProbePolicy{Interval: -1}), newMsg: "config: ProbePolicy.Interval must not be negative", json: `"probes":{"interval":"-1s"}`, path: "probes.interval: must not be negative"},
		{opts: probeOpts(ProbePolicy{Failures: -1}), newMsg: "config: ProbePolicy.Failures must not be negative", json: `"probes":{"failures":-1}`, path: "probes.failures: must not be negative"},
		{opts: probeOpts(ProbePolicy{Text: " \t"}), newMsg: "config: ProbePolicy.Text must not be blank", json: `"probes":{"text":" \t"}`, path: "probes.text: must not be blank"},
		// A JSON string is UTF-8 (the decoder replaces bad bytes) and the file is at most
		// 1 MiB: these two only New can meet.
		{opts: probeOpts(ProbePolicy{Text: "hi \xff"}), newMsg: "config: ProbePolicy.Text is not valid UTF-8"},
		{opts: probeOpts(ProbePolicy{Text: strings.Repeat("x", maxTextBytes+1)}), newMsg: "config: ProbePolicy.Text exceeds 1 MiB"},
		{opts: probeOpts(ProbePolicy{Source: "!!"}), newMsg: "config: ProbePolicy.Source is not a valid BCP 47 tag", json: `"probes":{"source":"!!"}`, path: "probes.source: is not a valid BCP 47 tag"},
		{opts: probeOpts(ProbePolicy{Target: "!!"}), newMsg: "config: ProbePolicy.Target is not a valid BCP 47 tag", json: `"probes":{"target":"!!"}`, path: "probes.target: is not a valid BCP 47 tag"},
		{opts: probeOpts(ProbePolicy{Source: "es", Target: "es"}), newMsg: "config: ProbePolicy.Target is the same language as Source", json: `"probes":{"source":"es","target":"es"}`, path: "probes.target: is the same language as Source"},
	}
}

// profileRules: Profile.validate, on engine b.
func profileRules() []newRule {
	return []newRule{
		{opts: profileOpts(Profile{Quality: 101}), newMsg: "config: WithEngine[1].Profile.Quality must be within 0..100", prof: true, json: `"quality":101`, path: "engines[1].profile.quality: must be within 0..100"},
		{opts: profileOpts(Profile{CostPerMillion: -1}), newMsg: "config: WithEngine[1].Profile.CostPerMillion must not be negative", prof: true, json: `"cost_per_million":-1`, path: "engines[1].profile.cost_per_million: must not be negative"},
		{opts: profileOpts(Profile{CostPerMillionTokens: -1}), newMsg: "config: WithEngine[1].Profile.CostPerMillionTokens must not be negative", prof: true, json: `"cost_per_million_tokens":-1`, path: "engines[1].profile.cost_per_million_tokens: must not be negative"},
		{opts: profileOpts(Profile{Class: ClassPremium + 1}), newMsg: "config: WithEngine[1].Profile.Class unknown cost class", prof: true, json: `"class":"gold"`, path: `engines[1].profile.class: must be "free", "standard" or "premium"`},
		{opts: profileOpts(Profile{Timeout: -1}), newMsg: "config: WithEngine[1].Profile.Timeout must not be negative", prof: true, json: `"timeout":"-1s"`, path: "engines[1].profile.timeout: must not be negative"},
		{opts: profileOpts(Profile{RateLimit: -1}), newMsg: "config: WithEngine[1].Profile.RateLimit must not be negative", prof: true, json: `"rate_limit":-1`, path: "engines[1].profile.rate_limit: must not be negative"},
		{opts: profileOpts(Profile{Burst: -1}), newMsg: "config: WithEngine[1].Profile.Burst must not be negative", prof: true, json: `"burst":-1`, path: "engines[1].profile.burst: must not be negative"},
		{opts: profileOpts(Profile{MaxConcurrency: -1}), newMsg: "config: WithEngine[1].Profile.MaxConcurrency must not be negative", prof: true, json: `"max_concurrency":-1`, path: "engines[1].profile.max_concurrency: must not be negative"},
		{opts: profileOpts(Profile{Quota: -1}), newMsg: "config: WithEngine[1].Profile.Quota must not be negative", prof: true, json: `"quota":-1`, path: "engines[1].profile.quota: must not be negative"},
		{opts: profileOpts(Profile{QuotaPeriod: -1}), newMsg: "config: WithEngine[1].Profile.QuotaPeriod must not be negative", prof: true, json: `"quota_period":"-1h"`, path: "engines[1].profile.quota_period: must not be negative"},
		{opts: profileOpts(Profile{MaxChars: -1}), newMsg: "config: WithEngine[1].Profile.MaxChars must not be negative", prof: true, json: `"max_chars":-1`, path: "engines[1].profile.max_chars: must not be negative"},
		{opts: profileOpts(Profile{MaxTexts: -1}), newMsg: "config: WithEngine[1].Profile.MaxTexts must not be negative", prof: true, json: `"max_texts":-1`, path: "engines[1].profile.max_texts: must not be negative"},
		{opts: profileOpts(Profile{MaxTextChars: -1}), newMsg: "config: WithEngine[1].Profile.MaxTextChars must not be negative", prof: true, json: `"max_text_chars":-1`, path: "engines[1].profile.max_text_chars: must not be negative"},
		{opts: profileOpts(Profile{Canary: 101}), newMsg: "config: WithEngine[1].Profile.Canary must be within 0..100", prof: true, json: `"canary":101`, path: "engines[1].profile.canary: must be within 0..100"},
		{opts: profileOpts(Profile{SafeRate: -1}), newMsg: "config: WithEngine[1].Profile.SafeRate must not be negative", prof: true, json: `"safe_rate":-1`, path: "engines[1].profile.safe_rate: must not be negative"},
		{opts: profileOpts(Profile{SceneQuality: map[Scene]float64{SceneLegal: 120}}), newMsg: "config: WithEngine[1].Profile.SceneQuality[legal] must be within 0..100",
			prof: true, json: `"scene_quality":{"legal":120}`, path: "engines[1].profile.scene_quality.legal: must be within 0..100"},
		{opts: profileOpts(Profile{Languages: []string{"en", "not a tag!"}}), newMsg: `config: WithEngine[1].Profile.Languages bad language tag "not a tag!"`,
			prof: true, json: `"languages":["en","not a tag!"]`, path: `engines[1].profile.languages: bad language tag "not a tag!"`},
	}
}

// codeOnlyRules: options a file has no section for.
func codeOnlyRules() []newRule {
	return []newRule{
		{opts: []Option{WithBatchConcurrency(0)}, newMsg: "config: WithBatchConcurrency must be within 1..1000"},
		{opts: []Option{WithBatchConcurrency(1001)}, newMsg: "config: WithBatchConcurrency must be within 1..1000"},
		{opts: []Option{WithClock(nil)}, newMsg: "config: WithClock must not be nil"},
	}
}

// limitRules: every range of limits, broken just above its top and, when its bottom is
// above 0, just under it (a count has nothing between 0, its default, and 1).
func limitRules() []newRule {
	var rules []newRule
	for _, key := range sortedKeys(limits) {
		typ, field, _ := strings.Cut(key, ".")
		if typ == "Config" || typ == "CacheConfig" { // options of their own: topLevelRules
			continue
		}
		l := limits[key]
		bad := []float64{l.Hi*1.5 + 1}
		if l.Lo > 0 && l.Lo != 1 {
			bad = append(bad, l.Lo/2)
		}
		for _, x := range bad {
			rules = append(rules, limitRule(typ, field, l, x))
		}
	}
	return rules
}

// limitRule is the rule that typ.field = x breaks.
func limitRule(typ, field string, l limit, x float64) newRule {
	var opt Option
	set := func(p any) any {
		v := reflect.ValueOf(p).Elem().FieldByName(field)
		if v.Kind() == reflect.Float64 {
			v.SetFloat(x)
		} else {
			v.SetInt(int64(x))
		}
		return reflect.ValueOf(p).Elem().Interface()
	}
	section := map[string]string{"RetryPolicy": "retry", "BreakerPolicy": "breaker", "RoutingPolicy": "routing",
		"ProbePolicy": "probes", "Budget": "budget", "Profile": "profile", "MemoryPolicy": "memory"}[typ]
	prefix := "config: " + typ + "."
	switch typ {
	case "RetryPolicy":
		opt = WithRetry(set(&RetryPolicy{}).(RetryPolicy))
	case "BreakerPolicy":
		opt = WithBreaker(set(&BreakerPolicy{MinCalls: 1}).(BreakerPolicy))
	case "RoutingPolicy":
		opt = WithRouting(set(&RoutingPolicy{}).(RoutingPolicy))
	case "ProbePolicy":
		opt = WithProbes(set(&ProbePolicy{}).(ProbePolicy))
	case "Budget":
		opt = WithBudget(set(&Budget{}).(Budget))
	case "MemoryPolicy":
		opt = WithMemory(set(&MemoryPolicy{}).(MemoryPolicy))
	case "Profile":
		opt, prefix = WithEngine(&cfgEngine{name: "b"}, set(&Profile{}).(Profile)), "config: WithEngine[1].Profile."
	case "Window":
		opt, prefix = WithRouting(RoutingPolicy{PeakHours: []Window{set(&Window{}).(Window)}}), "config: RoutingPolicy.PeakHours[0]."
	case "Ramp":
		r := set(&Ramp{}).(Ramp)
		opt, prefix = WithEngine(&cfgEngine{name: "b"}, Profile{Ramp: &r}), "config: WithEngine[1].Profile.Ramp."
	default:
		panic("limitRules: no option for " + typ)
	}
	f := limitField(typ + "." + field)
	val := strconv.FormatFloat(x, 'f', -1, 64)
	if f.Type == durationType {
		val = strconv.Quote(time.Duration(x).String())
	} else if f.Type.Kind() != reflect.Float64 {
		val = strconv.FormatInt(int64(x), 10)
	}
	msg := "must be within " + l.String(f.Type == durationType)
	r := newRule{opts: []Option{opt}, newMsg: prefix + field + " " + msg}
	switch typ {
	case "Window":
		r.json, r.path = `"routing":{"peak_hours":[{"`+jsonfile.Snake(field)+`":`+val+`}]}`, "routing.peak_hours[0]."+jsonfile.Snake(field)+": "+msg
	case "Profile":
		r.prof, r.json, r.path = true, `"`+jsonfile.Snake(field)+`":`+val, "engines[1].profile."+jsonfile.Snake(field)+": "+msg
	case "Ramp":
		r.prof, r.json, r.path = true, `"ramp":{"`+jsonfile.Snake(field)+`":`+val+`}`, "engines[1].profile.ramp."+jsonfile.Snake(field)+": "+msg
	default:
		r.json, r.path = `"`+section+`":{"`+jsonfile.Snake(field)+`":`+val+`}`, section+"."+jsonfile.Snake(field)+": "+msg
		if typ == "BreakerPolicy" && field != "MinCalls" {
			r.json = `"breaker":{"min_calls":1,"` + jsonfile.Snake(field) + `":` + val + `}`
		}
	}
	return r
}

// settingTypes are the types whose fields limits names.
var settingTypes = map[string]reflect.Type{"Config": reflect.TypeFor[Config](), "CacheConfig": reflect.TypeFor[CacheConfig](),
	"RetryPolicy": reflect.TypeFor[RetryPolicy](), "BreakerPolicy": reflect.TypeFor[BreakerPolicy](),
	"RoutingPolicy": reflect.TypeFor[RoutingPolicy](), "ProbePolicy": reflect.TypeFor[ProbePolicy](),
	"Budget": reflect.TypeFor[Budget](), "Profile": reflect.TypeFor[Profile](), "Window": reflect.TypeFor[Window](),
	"Ramp":         reflect.TypeFor[Ramp](),
	"MemoryPolicy": reflect.TypeFor[MemoryPolicy]()}

// limitField is the field a key of limits names ("Profile.Quality").
func limitField(key string) reflect.StructField {
	typ, field, _ := strings.Cut(key, ".")
	f, ok := settingTypes[typ].FieldByName(field)
	if !ok {
		panic("limits names no field: " + key)
	}
	return f
}

// TestEveryNewRuleInConfig: each rule of New is applied by ParseConfig too, with the error
// at the JSON path; a rule only New can meet says so (json ""). The table is complete:
// every configError of the package's source, and every check of Profile.validate, is in it.
func TestEveryNewRuleInConfig(t *testing.T) {
	registerTestTypes()
	rules := newRules()
	for _, r := range rules {
		checkNewRule(t, r)
	}

	// Completeness: the rules written in the source.
	inSource := rulesInSource(t)
	if len(inSource) < 40 {
		t.Fatalf("found only %d rules in the source: the patterns no longer match it", len(inSource))
	}
	for _, rule := range inSource {
		found := slices.ContainsFunc(rules, func(r newRule) bool {
			return strings.HasSuffix(r.newMsg, " "+rule) || strings.HasSuffix(r.newMsg, "."+rule)
		})
		if !found {
			t.Errorf("New's rule %q is not in newRules: add it with the same fault in a file", rule)
		}
	}
}

// checkNewRule checks that New rejects r's options with r.newMsg and, when a file can
// hold the fault, that ParseConfig rejects the file with r.path.
func checkNewRule(t *testing.T, r newRule) {
	t.Helper()
	c, err := New(r.options()...)
	if c != nil {
		c.Close()
	}
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindInvalidInput || e.Message != r.newMsg {
		t.Errorf("New = %v, want KindInvalidInput %q", err, r.newMsg)
	}
	if r.json == "" {
		return
	}
	doc := r.file()
	_, err = ParseConfig([]byte(doc))
	if !errors.As(err, &e) || e.Kind != KindInvalidInput || e.Message != r.path {
		t.Errorf("New rejects with %q; ParseConfig(%s) = %v, want KindInvalidInput %q", r.newMsg, doc, err, r.path)
	}
}

// options are the options given to New: r.opts, after engine "a" unless r is bare.
func (r newRule) options() []Option {
	if r.bare {
		return r.opts
	}
	return append([]Option{WithEngine(&cfgEngine{name: "a"}, Profile{})}, r.opts...)
}

// file is the configuration file with r's fault.
func (r newRule) file() string {
	switch {
	case r.prof:
		return `{"engines":[{"name":"a","type":"cfgtest"},{"name":"b","type":"cfgtest","profile":{` + r.json + `}}]}`
	case strings.HasPrefix(r.json, `"engines"`):
		return `{` + r.json + `}`
	}
	return `{"engines":[{"name":"a","type":"cfgtest"}],` + r.json + `}`
}

// rulesInSource lists the rules written in the package's source: each configError
// literal as "<what> <message>", and each check of Profile.validate in options.go as
// "Profile.<Field> <message>".
func rulesInSource(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var inSource []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inSource = append(inSource, configErrorsIn(string(src))...)
		if f == "options.go" { // checkLimits: a rule for each range
			for key, l := range limits {
				if strings.HasPrefix(key, "Config.") || strings.HasPrefix(key, "CacheConfig.") {
					continue // WithDeadline's and WithCache's own messages: topLevelRules
				}
				rule := key + " must be within " + l.String(limitField(key).Type == durationType)
				inSource = append(inSource, strings.Replace(rule, "Window.", "RoutingPolicy.PeakHours[0].", 1))
			}
		}
		if f == "options.go" {
			inSource = append(inSource, profileChecksIn(string(src))...)
		}
	}
	return inSource
}

var (
	configErrorLiteral = regexp.MustCompile(`configError\("([^"]+)", "([^"]+)"\)`)
	profileCheck       = regexp.MustCompile(`\{[^{}\n]+, "(\w+)", (neg|in100|"[^"]+")\},`)
)

// configErrorsIn lists the configError calls in src as "<what> <message>".
func configErrorsIn(src string) []string {
	var rules []string
	for _, m := range configErrorLiteral.FindAllStringSubmatch(src, -1) {
		rules = append(rules, m[1]+" "+m[2])
	}
	return rules
}

// profileChecksIn lists the rows of Profile.validate's table in src as
// "Profile.<Field> <message>".
func profileChecksIn(src string) []string {
	msgs := map[string]string{"neg": "must not be negative", "in100": "must be within 0..100"}
	var rules []string
	for _, m := range profileCheck.FindAllStringSubmatch(src, -1) {
		msg, ok := msgs[m[2]]
		if !ok {
			msg = strings.Trim(m[2], `"`)
		}
		rules = append(rules, "Profile."+m[1]+" "+msg)
	}
	return rules
}
