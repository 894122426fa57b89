package translate

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/time/rate"

	"github.com/fanyi-go/translate/internal/lang"
	"github.com/fanyi-go/translate/internal/quota"
	"github.com/fanyi-go/translate/internal/reload"
)

// setup is one configuration of a Client: its engines and policies. New builds the first,
// Reconfigure swaps in the next one atomically. A request reads it once, when it is
// prepared, and is served under that one configuration throughout.
type setup struct {
	engines   []*engine
	hot       []hotEngine // per engine, in the same order: what filter reads (router.go)
	byName    map[string]*engine
	routing   RoutingPolicy // defaults applied
	retry     RetryPolicy   // defaults applied
	breaker   BreakerPolicy // defaults applied
	deadline  time.Duration
	economyAt float64
	daily     float64
	probes    *ProbePolicy // defaults applied; nil: no probes
	ramped    bool         // an engine ramps (Profile.Ramp): calls feed the canary analysis
	// retired holds the telemetry of the engines the configuration before this one had and
	// this one has not: one that comes back at the next Reconfigure (a configuration that
	// alternates) reuses its attribute sets instead of building them again. It holds at most
	// as many as that configuration had engines.
	retired map[string]*engineTel
	reuse   map[string]*engineTel // prev's retired, while buildSetup runs
	fresh   []engineLive          // the live state of engines new by name, while buildSetup runs
	content contentSetup          // content.go: glossaries and placeholders
	// memory is the policy of the translation memory the Client runs, defaults applied:
	// New's, kept by every Reconfigure (the memory is built once); nil: none.
	memory *MemoryPolicy
}

// buildSetup builds the configuration o describes. Engines named as in prev (the running
// configuration; nil in New) keep their state: breakers (while the breaker policy stays),
// health, quota used (while the quota period stays), rate limiter and concurrency slots
// (while their limits stay), and standing. Engines new by name start fresh.
func (c *Client) buildSetup(o options, prev *setup) (*setup, error) {
	s := &setup{byName: map[string]*engine{}, routing: o.routing.withDefaults(), retry: o.retry.withDefaults(),
		breaker: o.breaker.withDefaults(), deadline: o.deadline, economyAt: o.budget.EconomyAt, daily: o.budget.Daily}
	s.economyAt = cmp.Or(s.economyAt, 0.8)
	if o.probes != nil {
		p := o.probes.withDefaults()
		s.probes = &p
	}
	s.memory = memoryPolicy(o.memory)
	if prev != nil {
		s.memory = prev.memory
	}
	var err error
	if s.content, err = o.content.build(); err != nil {
		return nil, err
	}
	nums := reload.NewNumbers()
	s.reuse = prev.retiredTels()
	s.hot, s.fresh = make([]hotEngine, len(o.engines)), make([]engineLive, len(o.engines))
	s.engines = make([]*engine, 0, len(o.engines))
	for _, spec := range o.engines {
		if old := prev.engine(spec); old != nil {
			nums.Keep(old.idx)
		}
	}
	start := c.clock.Now()
	for i, spec := range o.engines {
		old, next := prev.engine(spec), 0
		if old == nil {
			next = nums.Next()
		}
		e, err := c.newEngine(s, i, spec, start, old, next)
		if err != nil {
			return nil, err
		}
		if _, dup := s.byName[e.name]; dup {
			return nil, configError(fmt.Sprintf("WithEngine[%d]", i), fmt.Sprintf("duplicate engine name %q", e.name))
		}
		s.byName[e.name] = e
		s.engines = append(s.engines, e)
		e.fillHot(&s.hot[i])
	}
	s.reuse, s.fresh = nil, nil
	if prev != nil { // the telemetry of prev's engines that s does not have (see setup.retired)
		s.retired = reload.Retire(prev.engines, engineTelOf, func(name string) bool { return s.byName[name] != nil })
	}
	return s, nil
}

// engineTelOf returns e's name and telemetry.
func engineTelOf(e *engine) (string, *engineTel) { return e.name, e.tel }

// engine returns s's engine of spec's name; nil for a nil s or a nil spec.e (specName
// refuses it).
func (s *setup) engine(spec engineSpec) *engine {
	if s == nil || spec.e == nil || holdsNil(spec.e) {
		return nil
	}
	return s.byName[spec.e.Name()]
}

// retiredTels returns s.retired; nil for a nil s.
func (s *setup) retiredTels() map[string]*engineTel {
	if s == nil {
		return nil
	}
	return s.retired
}

// engineTel returns the telemetry of the engine named name: the one it had when it left
// the configuration before the running one, else new.
func (c *Client) engineTel(s *setup, name string) *engineTel {
	if t := s.reuse[name]; t != nil {
		return t
	}
	return c.obs.engineTel(name)
}

// newEngine validates a profile, applies its defaults and builds the engine for s: with
// old's state when the engine stays (old != nil), fresh with number idx otherwise.
func (c *Client) newEngine(s *setup, i int, spec engineSpec, start time.Time, old *engine, idx int) (*engine, error) {
	name, err := specName(i, spec)
	if err != nil {
		return nil, err
	}
	if err := spec.p.validate(""); err != nil { // the prefix is built for an error only
		return nil, spec.p.validate(fmt.Sprintf("WithEngine[%d].Profile.", i))
	}
	p := spec.p.withDefaults()
	langs, err := lang.NewSet(c.langs, p.Languages)
	if err != nil {
		return nil, configError(fmt.Sprintf("WithEngine[%d].Profile.Languages", i), err.Error())
	}
	e := &engine{s: s, eng: spec.e, prof: p, langs: langs, quotaLimited: p.Quota > 0, canary: p.Canary > 0 || p.Staged || p.Ramp != nil,
		fallback: p.FallbackOnly, free: p.Class == ClassFree || p.CostPerMillion == 0 && p.CostPerMillionTokens == 0, cost: CostScore(p.CostPerMillion),
		view: &s.hot[i].view}
	for sc := range sceneNames {
		e.quality[sc] = p.Quality
		if q, ok := p.SceneQuality[Scene(sc)]; ok {
			e.quality[sc] = q
		}
	}
	c.compilePairQuality(e)
	v := &view{avail: 1, ewma: initialLatency, pool: PoolNormal, gate: 1}
	if old != nil {
		c.inherit(e, old, v)
	} else {
		e.engineState = &engineState{engineLive: &s.fresh[i], idx: idx, name: name,
			nameHash: maphash.String(c.hashSeed, name), tel: c.engineTel(s, name)}
		e.unsupported.mark = &e.unsup
	}
	c.gates(e, old, start)
	c.rampFor(e, old, start)
	c.rebuildView(e, v)
	e.view.Store(v)
	return e, nil
}

// inherit gives e, the new configuration's engine, the state of old, the running one's
// engine of the same name, and starts v from old's view.
func (c *Client) inherit(e, old *engine, v *view) {
	e.engineState = old.engineState
	*v = *old.view.Load()
	if e.langs == nil && len(old.prof.Languages) == 0 {
		e.langs = old.langs // the pairs the engine listed itself
	}
	if !reload.Same(e.eng, old.eng) && e.clear(flagSetAside) {
		c.obs.warn("engine back: reconfigured after it was set aside", e.name)
	}
}

// gates builds e's breakers, quota, rate limiter and concurrency slots, taking old's while
// their settings stay.
func (c *Client) gates(e, old *engine, start time.Time) {
	p := &e.prof
	switch {
	case old != nil && old.s.breaker == e.s.breaker:
		e.br = old.br
	default:
		e.br = newBreakers(e.s.breaker, c.clock.Now, &e.brOut)
	}
	switch {
	case old != nil && old.prof.QuotaPeriod == p.QuotaPeriod:
		e.q = old.q
		e.q.SetLimit(p.Quota)
	default:
		e.q = quota.New(p.Quota, p.QuotaPeriod, start)
	}
	switch {
	case old != nil && old.prof.RateLimit == p.RateLimit && old.prof.Burst == p.Burst:
		e.limiter = old.limiter
	case p.RateLimit > 0:
		e.limiter = rate.NewLimiter(rate.Limit(p.RateLimit), p.Burst)
		e.limiter.AllowN(start, 0) // anchor the limiter on the Client's clock
	}
	switch {
	case old != nil && old.prof.MaxConcurrency == p.MaxConcurrency:
		e.sem = old.sem
	case p.MaxConcurrency > 0:
		e.sem = make(chan struct{}, p.MaxConcurrency)
	}
}

// specName checks an engine given to WithEngine and returns its name.
func specName(i int, spec engineSpec) (string, error) {
	switch {
	case spec.e == nil:
		return "", configError(fmt.Sprintf("WithEngine[%d]", i), "engine is nil")
	case holdsNil(spec.e):
		return "", configError(fmt.Sprintf("WithEngine[%d]", i), fmt.Sprintf("engine is a nil %T", spec.e))
	}
	name := spec.e.Name()
	if name == "" {
		return "", configError(fmt.Sprintf("WithEngine[%d]", i), fmt.Sprintf("%T has an empty name", spec.e))
	}
	return name, nil
}

// discoverLanguages asks the engines of s that list their pairs (LanguageSupporter) and have
// neither Profile.Languages nor pairs listed before which languages they take. A failing
// call leaves the engine open to any pair.
func (c *Client) discoverLanguages(s *setup) {
	for i, e := range s.engines {
		if !discovers(e) {
			continue
		}
		ls := e.eng.(LanguageSupporter)
		if set := lang.Discover(c.langs, e.prof.Timeout, ls.SupportedPairs, pairSides); set != nil {
			e.langs, s.hot[i].langs = set, set
		}
	}
}

// pairSides returns p's source and target.
func pairSides(p LanguagePair) (src, tgt language.Tag) { return p.Source, p.Target }

// discovers reports whether discoverLanguages asks any engine of s.
func (s *setup) discovers() bool {
	return slices.ContainsFunc(s.engines, discovers)
}

// discovers reports whether discoverLanguages asks e.
func discovers(e *engine) bool {
	_, ok := e.eng.(LanguageSupporter)
	return ok && e.langs == nil
}
