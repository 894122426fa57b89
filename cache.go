package translate

import (
	"context"
	"hash/maphash"
	"sync/atomic"
	"time"

	"github.com/fanyi-go/translate/internal/memo"
	"github.com/fanyi-go/translate/internal/quota"
)

// keyFields is what, besides the text, makes two requests the same for the cache: the
// source, the full normalised target (pt-BR is not pt-PT; zh, zh-CN and zh-Hans are one),
// scene and style. The pinned engine is not part of it: each entry records its engine, and
// a pin without fallback takes only its own engine's entries.
type keyFields struct {
	src, tgt int32 // interned language ids: the source's key, the target's full key
	scene    Scene
	style    Style
	format   Format // content.go: the request's format
	// gloss is the revision of the glossary applied (content.go), hashed; 0 for none. A
	// seeded 64-bit hash keeps the key (and every Result) small; two revisions collide with
	// a chance of 2^-64.
	gloss uint64
}

func (r *request) keyFields() keyFields {
	return keyFields{src: int32(r.srcID), tgt: int32(r.tgt.FullID), scene: r.Scene, style: r.Style}
}

// hash mixes the text's hash with the key fields.
func (k keyFields) hash(text uint64) uint64 {
	return mix(text ^ k.gloss ^ uint64(k.src)<<40 ^ uint64(k.tgt)<<20 ^ uint64(k.scene)<<8 ^ uint64(k.style)<<4 ^ uint64(k.format)<<2)
}

// cacheKey is a cache entry's key.
type cacheKey struct {
	text string
	keyFields
}

// cacheable reports whether r may read and write the cache.
func (c *Client) cacheable(r *request) bool {
	return c.cache != nil && !r.NoCache && r.tgt.FullID != 0
}

// degradedTTL is how long an answer from a degradation path (a fallback engine) stays
// fresh, whatever the cache's TTL: long enough to spare the last resort the retries of an
// outage, short enough that the preferred engine's answer replaces it soon after it is back.
// Past it the entry is stale like any other: served, Degraded, only when every engine fails.
const degradedTTL = time.Minute

// cacheEntry is one cached translation. res is the Result every fresh hit without a
// RequestID of its own gets: shared, read-only, with a request id of its own, naming the
// engine that made it and whether it was a degraded answer.
type cacheEntry struct {
	engine   string   // the engine that made it ("a+b" when segments came from several)
	degraded bool     // made by a degradation path: fresh for degradedTTL at most
	regions  []string // the processing regions (Profile.Region) of the engines that made it
	region   [1]string
	res      *Result
	shared   resultID
}

// allows reports whether a request limited to regions may take the entry: every engine that
// made it processes text in one of them.
func (e *cacheEntry) allows(regions []string) bool {
	for _, g := range e.regions {
		if !regionAllowed(g, regions) {
			return false
		}
	}
	return true
}

// resultID is a Result with room for a generated request id.
type resultID struct {
	Result
	id [32]byte
}

// hit returns the Result of a fresh hit: the shared one, or a copy carrying the caller's
// RequestID.
func (e *cacheEntry) hit(reqID string) *Result {
	if reqID == "" {
		return e.res
	}
	res := new(Result)
	*res = *e.res
	res.RequestID = reqID
	return res
}

// cache is the in-process translation cache (internal/memo: LRU shards with a lock-free
// index for hits). Entries are fresh for ttl and then kept, stale, until evicted, to answer
// when every engine fails.
type cache struct {
	m       *memo.Cache[cacheKey, *cacheEntry]
	ttl     atomic.Int64 // nanoseconds; Reconfigure may change it
	entries int          // New's size: fixed for the Client's life
}

// cacheBytes is what the cache's entries may hold at most, in bytes of texts and their
// translations and about entryOverhead each: 64 MiB, or 4 KiB an entry when more. Entries
// of a few hundred bytes, as most are, are bounded by their count; without it, 10,000 texts
// of 1 MiB would hold 20 GiB.
func cacheBytes(entries int) int64 { return max(64<<20, int64(entries)*4096) }

// entryOverhead is about what a cache entry holds besides its texts: the entry, its key and
// its shared Result.
const entryOverhead = 512

func newCache(entries int, ttl int64) *cache {
	c := &cache{m: memo.NewCache[cacheKey, *cacheEntry](entries, cacheBytes(entries)), entries: entries}
	c.ttl.Store(ttl)
	return c
}

// get returns the entry for r, and whether it is still fresh.
func (c *cache) get(r *request, now int64) (*cacheEntry, bool) {
	e, at, ok := c.m.Get(r.hash, cacheKey{r.Text, r.key}, now)
	if !ok {
		return nil, false
	}
	ttl := c.ttl.Load()
	if e.degraded {
		ttl = min(ttl, int64(degradedTTL))
	}
	return e, now-at < ttl
}

// put stores res, the translation of r made by the engines named in by (in r's
// configuration).
func (c *cache) put(r *request, res *Result, by []string, now int64) {
	e := &cacheEntry{engine: res.Engine, degraded: res.Degraded}
	e.regions = e.region[:0]
	for _, name := range by {
		if en := r.s.byName[name]; en != nil {
			e.regions = append(e.regions, en.prof.Region)
		}
	}
	e.res = &e.shared.Result
	*e.res = Result{Text: res.Text, Source: res.Source, Engine: res.Engine, FromCache: true,
		Degraded: res.Degraded, RequestID: requestID("", &e.shared.id), Glossary: res.Glossary}
	c.m.Put(r.hash, cacheKey{r.Text, r.key}, e, now, int64(len(r.Text)+len(res.Text)+entryOverhead))
}

// flightKey is what makes two requests in flight share one engine call: the cache key, the
// pin (a pinned request never takes another engine's answer through a flight), the allowed
// regions (a request never takes the answer of an engine outside them), and what else
// decides where the request may go and so whether it fails: its priority (a high-priority
// request may go to premium engines) and its tenant's budget (one tenant's spent budget is
// not another's). A request whose target has no id of its own (see idHash) joins no flight.
type flightKey struct {
	text string
	keyFields
	fallback bool
	priority Priority
	pinned   *engineState  // the pinned engine; nil when routed
	tenant   *quota.Tenant // the tenant's own budget; nil for the Client's
	regions  uint64        // hash of Request.Regions; 0 when any region will do
}

type flight = memo.Flight[flightKey, *Result]

func (r *request) flightKey() flightKey {
	k := flightKey{text: r.Text, keyFields: r.key, fallback: r.AllowFallback, priority: r.Priority,
		tenant: r.tenant, regions: r.regions}
	if r.pinned != nil {
		k.pinned = r.pinned.engineState
	}
	return k
}

// regionsHash hashes a request's allowed regions for its flight key: 0 for none, never 0
// otherwise.
func regionsHash(seed maphash.Seed, regions []string) uint64 {
	if len(regions) == 0 {
		return 0
	}
	h := uint64(len(regions))
	for _, g := range regions {
		h = mix(h ^ maphash.String(seed, g))
	}
	return h | 1
}

// flights coalesces identical concurrent misses into one walk, at any load.
type flights struct {
	m memo.Flights[flightKey, *Result]
}

func (fs *flights) join(r *request, f *flight) (*flight, bool) {
	return fs.m.Join(r.hash, r.flightKey(), f)
}

func (fs *flights) land(r *request, f *flight, res *Result, err error) {
	fs.m.Land(r.hash, r.flightKey(), f, res, err)
}

// follow waits for the identical request in flight and returns its answer (done), or
// done=false when its caller gave up and this request must run on its own.
func (c *Client) follow(ctx context.Context, r *request, f *flight) (*Result, error, bool) {
	res, err := f.Wait(ctx)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err(), true
	case err == nil:
		return c.reuse(res, r.RequestID, r.t0), nil, true
	case !callerEnded(err):
		return nil, err, true
	}
	return nil, nil, false
}

// Request ids are remembered for RequestWindow, at most seenEntries of them in at most
// seenBytes: a request id reaches each engine at most once within the window.
const (
	seenEntries = 100_000
	seenBytes   = 64 << 20
)

// seen remembers, for each caller-given request id, the engines it was sent to and its
// first answer or error (internal/memo.Seen).
type seen struct{ m *memo.Seen[*Result] }

func newSeen() seen {
	return seen{memo.NewSeen(RequestWindow, seenEntries, seenBytes, resultSize)}
}

// resultSize estimates the bytes a remembered Result holds.
func resultSize(r *Result) int64 {
	return int64(len(r.Text)+len(r.Source)+len(r.Engine)+len(r.RequestID)) + int64(len(r.Attempts))*64 + 160
}

// replayable reports whether r may take prev, its RequestID's first answer, as peek
// decides for a cache entry: a pin without fallback takes only its engine's answers, and a
// request limited to regions only answers made in them. The engines that made prev are its
// successful attempts (one per segment), or its Engine when it has none (a stale entry).
func (r *request) replayable(prev *Result) bool {
	pin := r.pinned != nil && !r.AllowFallback
	if !pin && len(r.Regions) == 0 {
		return true
	}
	allowed := func(name string) bool {
		if pin && name != r.pinned.name {
			return false
		}
		e := r.s.byName[name]
		return len(r.Regions) == 0 || e != nil && regionAllowed(e.prof.Region, r.Regions)
	}
	made := false
	for _, a := range prev.Attempts {
		if a.Err == nil {
			made = true
			if !allowed(a.Engine) {
				return false
			}
		}
	}
	return made || allowed(prev.Engine)
}

// prior is what is known of a caller's request id.
type prior struct {
	res     *Result // its first answer
	err     error   // its first error, when it has no answer
	engines uint64  // the engines it was sent to, by index bit
}

func (s seen) lookup(id string, h uint64, now int64) (prior, bool) {
	res, has, err, engines, ok := s.m.Lookup(id, h, now)
	if !has {
		res = nil
	}
	return prior{res: res, err: err, engines: engines}, ok
}

func (s seen) claim(id string, h uint64, engine int, now int64) bool {
	return s.m.Claim(id, h, engine, now)
}

// unclaim takes back r's request id claim on e after a call that was never made or
// certainly cost nothing (a refusal such as 429 or 503): a retry, the Client's own or the
// caller's with the same id, may make it again. Only answers and failures that may have
// been billed are remembered for the id.
func (c *Client) unclaim(r *request, e *engine, now int64) {
	if r.RequestID != "" {
		c.seen.m.Release(r.RequestID, r.hash, e.idx, now)
	}
}

// remember stores a served request's answer in the cache (by names the engines that made
// it) and, for a caller's RequestID, its first answer or error.
func (c *Client) remember(r *request, res *Result, err error, by []string, now int64) {
	if err == nil && c.cacheable(r) && !res.FromCache && !res.FromMemory && res.Engine != "" {
		c.cache.put(r, res, by, now)
	}
	if c.mem != nil {
		c.memorize(r, res, err)
	}
	switch {
	case r.RequestID == "":
	case err == nil:
		c.seen.m.Answer(r.RequestID, r.hash, res, now)
	case !callerEnded(err):
		c.seen.m.Fail(r.RequestID, r.hash, err, now)
	}
}

// sentTo returns the engines of a prior as a set.
func (p prior) sentTo() set {
	var s set
	for i := 0; i < 64; i++ {
		if p.engines&(1<<i) != 0 {
			s.add(i)
		}
	}
	return s
}
