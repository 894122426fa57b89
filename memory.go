package translate

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/fanyi-go/translate/fidelity/memory"
	"github.com/fanyi-go/translate/internal/document"
	"github.com/fanyi-go/translate/internal/lang"
	"github.com/fanyi-go/translate/internal/memtier"
	"github.com/fanyi-go/translate/internal/segment"
	"github.com/fanyi-go/translate/internal/storekey"
)

// MemoryPolicy configures the translation memory (see WithMemory). Zero fields mean the
// default written beside them.
type MemoryPolicy struct {
	MaxEntries int   // translations kept, 1..1e7; 0 means 10 000
	MaxBytes   int64 // bytes of text kept (see memory.Options.MaxBytes), 1024..1e10; 0 means 32 MiB
	// Threshold is the least similarity (see package fidelity/memory) of a fuzzy match,
	// 0.5..1; 0 means 0.95 (one edit in twenty code points). 1 turns fuzzy matches off.
	Threshold float64
	// FuzzyFirst serves a fuzzy match before the engines are asked, as an exact match is;
	// without it a fuzzy match only answers when every engine failed (Degraded). A fuzzy
	// search compares the text with every entry of its language pair within reach of its
	// length: about 2.5ms for 10,000 entries of some 30 characters
	// (BenchmarkMemoryMissFuzzyFirst), paid by every miss with FuzzyFirst and by every
	// request that fails over to the memory without it.
	FuzzyFirst bool
}

// WithMemory turns on the translation memory: every translation an engine makes (not a
// degraded one) is kept, bounded by p, and reused. Default: off.
//
//   - An exact match (the same text, source, target, scene and style) answers at once like
//     a cache hit, with Result.FromMemory set and the engine that made it (or "memory" for
//     an imported entry that names none). Unlike the cache it never expires; it forgets the
//     least recently used entries past its bounds.
//   - A fuzzy match (similarity at least p.Threshold, as package fidelity/memory defines
//     it) is the last degradation step: when every engine failed and no stale cache entry
//     serves, it answers Degraded, with FromMemory, its MemoryScore and its engine. With
//     p.FuzzyFirst it answers before the engines instead (not Degraded).
//   - A document (a text of several lines) given to Translate is cut into segments (each
//     line, cut further at TranslateStream's segment size); the segments already in memory
//     are not sent again, and the others go to the engines as TranslateBatch sends them
//     (a segment's RequestID is the request's followed by "#" and the segment's index). A
//     text of more than 1,000 segments is translated as one, as without the memory.
//     Result.Segments says where each segment came from. TranslateStream cuts its segments
//     the same way when the memory is on, and TranslateBatch looks each request up.
//
// Only requests with a Source take part (a detected source is not known before the call),
// and never with NoCache; a pinned engine without fallback takes only its own entries, and
// a request limited to Regions only entries made by an engine in them. The memory is built
// by New and kept across Reconfigure. See Client.ExportMemory and Client.ImportMemory for
// TMX. With a Store that is a MemoryStore (redisstore), exact entries are shared by every
// Client of the store (see MemoryStore); fuzzy matching stays in each Client.
func WithMemory(p MemoryPolicy) Option { return func(o *options) { o.memory = &p } }

// Segment is where one segment of a document's translation came from (Result.Segments).
type Segment struct {
	Text        string  // the segment's translation
	Engine      string  // the engine that made it, for memory and cache hits too
	FromMemory  bool    // an entry of the translation memory
	MemoryScore float64 // with FromMemory: the match's similarity, 1 for exact
	FromCache   bool
	Degraded    bool
}

// memoryEngine names the maker of an imported entry that names none.
const memoryEngine = "memory"

// howMemory is the degradation path of a fuzzy memory match.
const howMemory = "memory_fuzzy"

// tmem is a Client's translation memory and its policy.
type tmem struct {
	store      memory.Store
	local      *memory.Memory // store, when it is the in-process memory
	threshold  float64
	fuzzyFirst bool
}

// newMemory builds the memory p describes (validated by New).
func newMemory(p *MemoryPolicy) (*tmem, error) {
	m, err := memory.New(memory.Options{MaxEntries: p.MaxEntries, MaxBytes: p.MaxBytes})
	if err != nil {
		return nil, configError("MemoryPolicy", err.Error())
	}
	th := p.Threshold
	if th == 0 {
		th = memory.DefaultThreshold
	}
	return &tmem{store: m, local: m, threshold: th, fuzzyFirst: p.FuzzyFirst}, nil
}

// memKey is where a request's entries live in the memory: the source's key ("en-Latn"),
// and the target's full key with the scene and style, when not the defaults, as private-use
// subtags ("de-Latn-x-legal-formal"), so that TMX files stay valid BCP 47.
type memKey struct{ src, tgt string }

// memoryKey returns r's memory key, and false when r takes no part in the memory.
func (c *Client) memoryKey(r *request) (memKey, bool) {
	if c.mem == nil || r.src == nil || r.NoCache || r.tgt == nil {
		return memKey{}, false
	}
	return memKey{src: r.src.Key, tgt: lang.PrivateUse(r.tgt.Full, memorySubtags(r)...)}, true
}

// memorySubtags returns the private-use subtags (1 to 8 letters or digits each) of what
// changes a request's answer besides its languages: its scene and style when not the
// defaults, its format when not text ("html", "xml"), its glossary's whole revision ("g"
// and 7 of its hex digits each: "g0123456-g789abcd-g..."), so that a translation made
// under one glossary revision never answers a request under another, and the placeholder
// settings when not the default (placeholderKey: "p..." subtags). An entry made before
// the revision took more than one subtag ("g" and its first 7 digits alone) matches no
// request any more.
func memorySubtags(r *request) []string {
	var sub []string
	if r.Scene != SceneGeneral {
		sub = append(sub, sceneTags[r.Scene])
	}
	if r.Style != StyleDefault {
		sub = append(sub, styleTags[r.Style])
	}
	if r.Format != FormatText {
		sub = append(sub, r.Format.String())
	}
	if rev := r.revision(); rev != "" {
		sub = append(sub, storekey.PrivateSubtags('g', rev))
	}
	if r.s != nil && r.s.content.keyed.subtags != "" {
		sub = append(sub, r.s.content.keyed.subtags)
	}
	return sub
}

var sceneTags = [...]string{SceneTech: "tech", SceneLegal: "legal", SceneEcommerce: "ecom", SceneChat: "chat"}

var styleTags = [...]string{StyleFormal: "formal", StyleCasual: "casual"}

// memoryFind returns r's best entry for text at threshold th that r may take: the Client's
// own exact match, else the shared one (MemoryStore), else its own fuzzy match.
func (c *Client) memoryFind(ctx context.Context, r *request, k memKey, text string, th float64) (memory.Match, bool) {
	t := c.memoryTiers()
	m, ok := t.Find(ctx, k.src, k.tgt, text, th)
	return m, ok && memoryAllows(r, m.Engine)
}

// memoryTiers is the Client's own memory in front of the Store's shared one, if any.
func (c *Client) memoryTiers() memtier.Tiers {
	t := memtier.Tiers{Own: c.mem.store, Wait: storeWait}
	if ms, ok := c.store.(MemoryStore); ok {
		t.Shared = ms
	}
	return t
}

// memoryAllows reports whether r may take an entry made by engine: a pin without fallback
// only its own engine's, a request limited to regions only an engine's in them (an entry
// of an unknown engine has no known region).
func memoryAllows(r *request, engine string) bool {
	if r.pinned != nil && !r.AllowFallback && engine != r.pinned.name {
		return false
	}
	if len(r.Regions) == 0 {
		return true
	}
	e := r.s.byName[engine]
	return e != nil && regionAllowed(e.prof.Region, r.Regions)
}

// memoryHit answers r from the memory before the engines: an exact match, or a fuzzy one
// with MemoryPolicy.FuzzyFirst. t0 is when the request started (zero: latency 0).
func (c *Client) memoryHit(ctx context.Context, r *request, t0 time.Time) *Result {
	k, ok := c.memoryKey(r)
	if !ok {
		return nil
	}
	th := 1.0
	if c.mem.fuzzyFirst {
		th = c.mem.threshold
	}
	m, ok := c.memoryFind(ctx, r, k, r.Text, th)
	if !ok {
		return nil
	}
	res := &c.newResult(r.RequestID).Result
	c.fillFromMemory(res, r, m, t0)
	return res
}

// memoryDegrade answers a request whose engines all failed with err from a fuzzy match, as
// the last degradation step; it returns (nil, err) when none serves. res is the request's
// Result, holding its attempts.
func (c *Client) memoryDegrade(ctx context.Context, r *request, res *Result, err error, t0 time.Time) (*Result, error) {
	if c.mem == nil || ctx.Err() != nil || callerEnded(err) || KindOf(err) == KindInvalidInput {
		return nil, err
	}
	k, ok := c.memoryKey(r)
	if !ok {
		return nil, err
	}
	m, ok := c.memoryFind(ctx, r, k, r.Text, c.mem.threshold)
	if !ok {
		return nil, err
	}
	c.fillFromMemory(res, r, m, t0)
	res.Degraded = !m.Exact()
	if res.Degraded {
		c.obs.degraded(howMemory)
	}
	return res, nil
}

// packDegrade is memoryDegrade for a request of a TranslateBatch pack that failed after
// attempts.
func (c *Client) packDegrade(ctx context.Context, r *request, attempts []Attempt, err error) (*Result, error) {
	res := &c.newResult("").Result
	res.Attempts = append(res.Attempts, attempts...)
	return c.memoryDegrade(ctx, r, res, err, time.Time{})
}

// fillFromMemory sets res to the memory's answer m for r.
func (c *Client) fillFromMemory(res *Result, r *request, m memory.Match, t0 time.Time) {
	res.Text, res.Engine, res.Source = m.Translation, m.Engine, r.src.Canon
	if res.Engine == "" {
		res.Engine = memoryEngine
	}
	res.FromMemory, res.MemoryScore, res.Cost = true, m.Score, 0
	if !t0.IsZero() {
		res.Latency = time.Since(t0)
	}
}

// memorize keeps an engine's translation of r: not an answer from the cache or the memory,
// nor a degraded one.
func (c *Client) memorize(r *request, res *Result, err error) {
	if err != nil || res.FromCache || res.FromMemory || res.Degraded || res.Engine == "" {
		return
	}
	k, ok := c.memoryKey(r)
	if !ok {
		return
	}
	t := c.memoryTiers()
	if err := t.Put(memory.Entry{Source: k.src, Target: k.tgt, Text: r.Text, Translation: res.Text, Engine: res.Engine}); err != nil {
		c.obs.warn("translation memory: put failed", "")
	}
}

// docSplit cuts a TranslateStream document: by lines when the memory is on, so that its
// segments are the memory's (segment.Lines), else as splitDocument does.
func (c *Client) docSplit(text string, limit int) segment.Segments {
	if c.mem != nil {
		return segment.Lines(text, limit)
	}
	return splitDocument(text, limit)
}

// maxDocumentSegments bounds the segments of a document Translate answers segment by
// segment: a text of more lines goes to the engines as one text (see longtext.go), so that
// a text of many tiny lines cannot turn into as many calls.
const maxDocumentSegments = 1000

// translateDocument translates a text of several memory segments (see WithMemory): the
// known ones from the memory, the others through TranslateBatch. It reports false when req
// is no such document, or takes no part in the memory.
func (c *Client) translateDocument(ctx context.Context, req *Request) (*Result, error, bool) {
	if c.closed.Load() || strings.IndexByte(req.Text, '\n') < 0 {
		return nil, nil, false
	}
	var head request
	if err := c.prepare(req, &head, c.now()); err != nil {
		return nil, nil, false // Translate reports it
	}
	k, ok := c.memoryKey(&head)
	if !ok || head.fid != nil {
		// Markup, placeholders or a glossary: lines are no units of the content (a tag
		// or an ICU message can span them), so the text goes whole.
		return nil, nil, false
	}
	doc := segment.Lines(req.Text, streamLimit(head.s))
	if len(doc.Parts) < 2 || len(doc.Parts) > maxDocumentSegments {
		return nil, nil, false
	}
	t0 := time.Now()
	segs := make([]Segment, len(doc.Parts))
	var reqs []Request
	var at []int
	for i, p := range doc.Parts {
		if m, ok := c.memoryFind(ctx, &head, k, p, 1); ok {
			segs[i] = Segment{Text: m.Translation, Engine: m.Engine, FromMemory: true, MemoryScore: 1}
			continue
		}
		sub := *req
		sub.Text = p
		if sub.RequestID != "" {
			sub.RequestID = document.ID(req.RequestID, i)
		}
		reqs, at = append(reqs, sub), append(at, i)
	}
	b := c.newResult(req.RequestID)
	res := &b.Result
	for n, out := range c.TranslateBatch(ctx, reqs) {
		if out.Err != nil {
			return nil, out.Err, true
		}
		res.Attempts = append(res.Attempts, out.Result.Attempts...)
		res.Cost += out.Result.Cost
		segs[at[n]] = segmentOf(out.Result)
	}
	err := c.joinDocument(res, doc, segs)
	if err != nil {
		return nil, err, true
	}
	res.Source, res.Latency = head.src.Canon, time.Since(t0)
	return res, nil, true
}

// segmentOf is the provenance of one segment's Result.
func segmentOf(r *Result) Segment {
	return Segment{Text: r.Text, Engine: r.Engine, FromMemory: r.FromMemory, MemoryScore: r.MemoryScore,
		FromCache: r.FromCache, Degraded: r.Degraded}
}

// joinDocument fills res from the document's segments (document.Join): the stitched text,
// their engines in order, Degraded when one is, FromMemory (with the lowest score) and
// FromCache when all are.
func (c *Client) joinDocument(res *Result, doc segment.Segments, segs []Segment) error {
	ds := make([]document.Segment, len(segs))
	for i, s := range segs {
		ds[i] = document.Segment(s)
	}
	a, err := document.Join(doc, ds)
	if err != nil {
		return &Error{Kind: KindBadOutput, Message: "stitching segments: " + err.Error(), Attempts: res.Attempts}
	}
	res.Text, res.Engine, res.Segments, res.Degraded = a.Text, a.Engine, segs, res.Degraded || a.Degraded
	res.FromMemory, res.MemoryScore, res.FromCache = a.FromMemory, a.MemoryScore, a.FromCache
	return nil
}

// ExportMemory writes the translation memory as a TMX 1.4 document (plain segments; see
// package fidelity/memory), least recently used entries first. Languages are written as the
// memory keeps them: the source's language and script ("en-Latn"), the target's full tag
// with the scene and style as private-use subtags ("de-Latn-x-legal"). It fails when the
// Client has no memory (WithMemory).
func (c *Client) ExportMemory(w io.Writer) error {
	if c.mem == nil || c.mem.local == nil {
		return &Error{Kind: KindInvalidInput, Message: "no translation memory (WithMemory)"}
	}
	return c.mem.local.ExportTMX(w)
}

// ImportMemory reads a TMX document into the translation memory and returns how many
// entries it stored and how many segments it skipped: inline markup, an empty segment, a
// language that is not a valid BCP 47 tag, or an entry larger than the memory. Languages
// are normalised as a request's are ("en-US" matches requests from "en"; a target keeps
// its region), so entries made elsewhere answer requests with the default scene and
// style. It fails when the Client has no memory (WithMemory).
func (c *Client) ImportMemory(ctx context.Context, r io.Reader) (stored, skipped int, err error) {
	if c.mem == nil {
		return 0, 0, &Error{Kind: KindInvalidInput, Message: "no translation memory (WithMemory)"}
	}
	return memtier.Import(ctx, c.mem.store, r, func(source, target string) (string, string, bool) {
		src, serr := c.langs.Lookup(source)
		tgt, terr := c.langs.Lookup(target)
		if serr != nil || terr != nil {
			return "", "", false
		}
		return src.Key, tgt.Full, true
	})
}
