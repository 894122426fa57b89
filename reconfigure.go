package translate

import (
	"cmp"
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/fanyi-go/translate/fidelity/memory"
	"github.com/fanyi-go/translate/internal/recovery"
	"github.com/fanyi-go/translate/internal/reload"
)

// Reconfigure replaces the Client's configuration with cfg's, atomically, while requests
// run: weights, thresholds, policies, profiles (quality, price, limits, canary share,
// region), the budget and the engine list. The Client then runs what New would have built
// with cfg in place of its last WithConfig's Config: options given to New after that
// WithConfig (an engine, a budget, a deadline...) still override cfg, at every
// Reconfigure and every reload of WatchConfig; options before it are overridden by cfg as
// they were by the first Config (engines given before it stay, before cfg's). For a Client
// built without WithConfig, cfg is the whole configuration: engines it does not name are
// removed, including engines given to New with WithEngine. Options that a Config does not
// hold (clock, logger, telemetry, store, seed) stay as New set them.
//
// The cache is built by New and kept with its entries: a new ttl in cfg's "cache" section
// applies (to the entries already cached too), but the cache cannot be turned on or off or
// resized. When cfg asks for that, Reconfigure applies the rest of cfg and logs a warning
// naming those fields (through the Client's logger, else slog.Default); restart the Client
// to change them. The translation memory is New's too (WithMemory, the "memory" section):
// Reconfigure keeps it as it is, and a section that asks for another (turned on or off,
// other bounds, threshold or FuzzyFirst) gets the same warning.
//
// Engines are matched by name. An engine that stays keeps its state: breakers (started
// afresh when the breaker policy changes), health and standing, the quota used this period
// (kept while its QuotaPeriod stays), its rate limiter and concurrency slots (while those
// limits stay). An engine set aside after KindUnauthorized gets a new chance when cfg
// builds a new Engine value for it (a Config always does: a rotated key comes back this
// way). New engines start fresh. Removed engines get no new requests; calls in flight on
// them finish and are settled as usual. A request is served under exactly one
// configuration: the one running when it started.
//
// A new RoutingPolicy.HealthEvery or ProbePolicy.Interval counts from the last fold or
// probe round: lowered, it applies at once, not after the old period.
//
// While Reconfigure builds the new configuration, requests that arrive wait for it and run
// under it, for reconfigureHold (20ms) at most: callers that keep every core busy would
// otherwise starve it (see internal/gate). Fetching new engines' language lists
// (LanguageSupporter) holds no request.
//
// An invalid cfg changes nothing: Reconfigure returns the error (naming the field, as New
// does), logs a warning and counts translate.config.rejected. On a closed Client it returns
// ErrClosed.
func (c *Client) Reconfigure(cfg *Config) error {
	if c.closed.Load() {
		return ErrClosed
	}
	c.reconf.Lock()
	defer c.reconf.Unlock()
	c.gate.Close() // requests that arrive wait for the new configuration, reconfigureHold at most
	defer c.gate.Open()
	s, o, err := c.nextSetup(cfg)
	if err != nil {
		c.obs.configRejectedOne(err)
		return err
	}
	if c.closed.Load() {
		return ErrClosed
	}
	c.mu.Lock() // no fold while the views are carried over
	prev := c.cfg.Load()
	for _, e := range s.engines {
		if old := prev.byName[e.name]; old != nil && old.engineState == e.engineState {
			v := *old.view.Load()
			c.rebuildView(e, &v)
			e.view.Store(&v)
		}
	}
	c.budget.Set(budgetLimits(o.budget))
	c.cfg.Store(s)
	c.foldWithin(s.routing.HealthEvery)
	c.mu.Unlock()
	c.gate.Open()
	c.startProbes()
	recovery.Wake(c.repace) // the probe loop reads its Interval again
	c.reconfigureCache(o)
	c.warnNotApplied("memory", memoryNotApplied(s.memory, memoryPolicy(o.memory)))
	return nil
}

// reconfigureHold bounds how long requests that arrive during a Reconfigure wait for it.
// Reconfigure takes some 35µs of CPU; the hold is what lets it have a core when callers
// keep every core busy (see internal/gate), and bounds what a slow engine factory or a
// language list fetched from a vendor costs the requests that wait.
const reconfigureHold = 20 * time.Millisecond

// reconfigureCache applies the ttl of o's cache section to the running cache, and warns of
// what the section asks that the running cache cannot give (internal/reload).
func (c *Client) reconfigureCache(o *options) {
	size := 0
	if c.cache != nil {
		size = c.cache.entries
		if !o.noCache {
			c.cache.ttl.Store(int64(reload.CacheTTL(o.cacheTTL)))
		}
	}
	c.warnNotApplied("cache", reload.CacheNotApplied(size, o.noCache, o.cacheEntries))
}

// warnNotApplied warns that the fields of the config's section (the cache, the memory),
// when there are any, ask for what Reconfigure cannot give: New builds that part.
func (c *Client) warnNotApplied(section string, fields []string) {
	if len(fields) == 0 {
		return
	}
	c.configLogger().LogAttrs(context.Background(), slog.LevelWarn,
		"translate: the config's "+section+" section is not applied by Reconfigure (the "+section+" is built at New); restart to change it",
		slog.String("fields", strings.Join(fields, ", ")))
}

// memoryPolicy returns p with its defaults applied; nil for nil (no memory).
func memoryPolicy(p *MemoryPolicy) *MemoryPolicy {
	if p == nil {
		return nil
	}
	d := *p
	d.MaxEntries = cmp.Or(d.MaxEntries, memory.DefaultMaxEntries)
	d.MaxBytes = cmp.Or(d.MaxBytes, memory.DefaultMaxBytes)
	d.Threshold = cmp.Or(d.Threshold, memory.DefaultThreshold)
	return &d
}

// memoryNotApplied returns the fields of a memory section asked (defaults applied; nil:
// none) that differ from the running memory's: "memory" when it turns the memory on or
// off; nil when it asks for nothing new.
func memoryNotApplied(running, asked *MemoryPolicy) []string {
	switch {
	case running == nil && asked == nil:
		return nil
	case running == nil || asked == nil:
		return []string{"memory"}
	}
	var fields []string
	for _, f := range [...]struct {
		name string
		diff bool
	}{
		{"memory.max_entries", running.MaxEntries != asked.MaxEntries},
		{"memory.max_bytes", running.MaxBytes != asked.MaxBytes},
		{"memory.threshold", running.Threshold != asked.Threshold},
		{"memory.fuzzy_first", running.FuzzyFirst != asked.FuzzyFirst},
	} {
		if f.diff {
			fields = append(fields, f.name)
		}
	}
	return fields
}

// nextSetup validates cfg and builds the configuration that follows the running one, with
// the options it was built from. c.reconf is held.
func (c *Client) nextSetup(cfg *Config) (*setup, *options, error) {
	if cfg == nil {
		return nil, nil, &Error{Kind: KindInvalidInput, Message: "config: Reconfigure(nil)"}
	}
	o := defaultOptions()
	reload.Apply(&o, c.reload.before)
	if err := cfg.apply(&o); err != nil {
		return nil, nil, err
	}
	reload.Apply(&o, c.reload.after)
	if err := o.validate(); err != nil {
		return nil, nil, err
	}
	s, err := c.buildSetup(o, c.cfg.Load())
	if err != nil {
		return nil, nil, err
	}
	if s.discovers() { // engines new to the Client may list their pairs: not under a lock,
		c.gate.Open() // and requests do not wait for the vendors
		c.discoverLanguages(s)
		c.gate.Close()
	}
	return s, &o, nil
}

// reloadOptions are the options given to New before and after its last WithConfig:
// Reconfigure applies them around each new Config, as New did around the first. Both are
// empty for a Client built without WithConfig.
type reloadOptions struct {
	before, after []Option
}

// applyOptions applies opts to the default options, as New does, and notes the options
// around the last WithConfig among them.
func applyOptions(opts []Option) (options, reloadOptions) {
	o := defaultOptions()
	before, after := reload.Split(&o, opts, func(o *options) int { return o.configs })
	return o, reloadOptions{before: before, after: after}
}
