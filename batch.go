package translate

import (
	"context"
	"sync"
	"time"

	"github.com/fanyi-go/translate/internal/pack"
	"github.com/fanyi-go/translate/internal/segment"
)

// BatchResult is one answer of TranslateBatch: a Result or an error.
type BatchResult struct {
	Result *Result
	Err    error
}

// packMaxChars bounds the texts TranslateBatch packs: longer ones are translated alone
// (segmented like any long text).
const packMaxChars = 2000

// TranslateBatch translates every request and returns the answers in the order of reqs,
// each with its own Result or error.
//
// Requests that share source, target, scene, style and routing choice (Engine,
// AllowFallback, Priority, UserID, NoCache, Regions) are packed: their texts go to the
// engines in calls of up to the engine's Profile.MaxTexts texts and Profile.MaxChars
// characters, as every vendor API allows (DeepL 50 texts, Google 128, Microsoft 1,000).
// Each request keeps its own cache lookup and cache entry, request id (generated), cost
// (its share of the calls, by characters), detected source (when the engine reports one per
// text, EngineResult.Sources) and error. A packed call that fails fails over as a whole; a
// text that comes back bad (empty, echoed, placeholders lost) fails over alone, to another
// engine, beside the pack's other bad texts and within the pack's deadline. A pack that fails for good with an error one of its texts may cause (refused as
// invalid or too long, unavailable, a panic, bad output) is split in halves, each tried
// anew, down to the one text at fault, which alone fails: at most 4 × log2(n) more walks
// for a pack of n texts, within the deadline. Identical texts in a pack are translated once.
//
// Requests with a RequestID of their own (each reaches an engine at most once, on its
// own), and texts over 2,000 characters, are translated one by one as Translate does.
// Packs and single requests run at most WithBatchConcurrency at a time.
func (c *Client) TranslateBatch(ctx context.Context, reqs []Request) []BatchResult {
	out := make([]BatchResult, len(reqs))
	if c.closed.Load() {
		for i := range out {
			out[i].Err = ErrClosed
		}
		return out
	}
	c.gate.Wait(ctx)
	sem := make(chan struct{}, c.batchConc)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, task := range c.batchTasks(reqs) {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			for _, i := range task {
				out[i].Err = ctx.Err()
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if len(task) == 1 {
				out[task[0]].Result, out[task[0]].Err = c.Translate(ctx, reqs[task[0]])
				return
			}
			c.translatePack(ctx, reqs, task, out)
		}()
	}
	return out
}

// packKey is what requests packed into the same engine calls share. The pack is walked as
// its first request (runPack), so every field that decides where a request may go or whose
// budget it spends is here: the tenant too, and the regions as a list (hashed; joined, "a,b"
// and ["a", "b"] were one key).
type packKey struct {
	source, target, engine, user, tenant string
	regions                              uint64
	scene                                Scene
	style                                Style
	priority                             Priority
	fallback, noCache                    bool
}

// batchTasks groups reqs into tasks: packs of requests that may share engine calls, of up
// to packSize(), and single requests.
func (c *Client) batchTasks(reqs []Request) [][]int {
	return pack.Group(len(reqs), c.packSize(), func(i int) (packKey, bool) {
		r := &reqs[i]
		if r.RequestID != "" || len(r.Text) > 4*packMaxChars || c.ownWalk(r) {
			return packKey{}, false
		}
		return packKey{source: r.Source, target: r.Target, engine: r.Engine, user: r.UserID, tenant: r.Tenant,
			regions: regionsHash(c.hashSeed, r.Regions), scene: r.Scene, style: r.Style, priority: r.Priority,
			fallback: r.AllowFallback, noCache: r.NoCache}, true
	})
}

// packSize is how many requests one pack holds: the largest MaxTexts among the engines, so
// that a pack is one call to the engine with the most room, and a few to the others.
func (c *Client) packSize() int {
	size := 1
	for _, e := range c.cfg.Load().engines {
		size = max(size, e.prof.MaxTexts)
	}
	return min(size, 1000)
}

// packItem is one request of a pack.
type packItem struct {
	i     int // index in the batch
	r     request
	stale *cacheEntry
	pack.Slot
}

// translatePack answers the requests idx of reqs through shared engine calls.
func (c *Client) translatePack(ctx context.Context, reqs []Request, idx []int, out []BatchResult) {
	now := c.now()
	c.maybeFold(now)
	items := make([]packItem, 0, len(idx))
	byText := pack.Index{}
	var texts []string
	for _, i := range idx {
		it := packItem{i: i}
		if err := c.prepare(&reqs[i], &it.r, now); err != nil {
			out[i].Err = err
			c.obs.requestEnd(ctx, nil, &it.r, nil, err, 0)
			continue
		}
		if it.r.chars > packMaxChars || !c.packable(&it.r) {
			out[i].Result, out[i].Err = c.Translate(ctx, reqs[i])
			continue
		}
		stale, hit := c.lookup(&it.r, now)
		if hit == nil && c.mem != nil {
			hit = c.memoryHit(ctx, &it.r, time.Time{})
		}
		if hit != nil {
			out[i].Result = hit
			c.obs.requestEnd(ctx, nil, &it.r, hit, nil, 0)
			continue
		}
		it.stale = stale
		it.Slot, texts = byText.Add(texts, len(items), it.r.Text)
		items = append(items, it)
	}
	if len(items) == 0 {
		return
	}
	p := &packRun{reqs: reqs, out: out, now: now, t0: time.Now(), splits: pack.Splits(len(texts))}
	c.runPack(ctx, p, items, texts, nil)
}

// packable reports whether r's text fits every engine's per-text limit, so that no engine
// has to split it: packed texts are never segmented.
func (c *Client) packable(r *request) bool {
	for _, e := range r.s.engines {
		if n := textChars(&e.prof); n > 0 && r.chars > n {
			return false
		}
	}
	return true
}

// packRun is what the walks of one pack share: the batch, the pack's start (its deadline
// counts from there) and how many more walks splitting it may add.
type packRun struct {
	reqs   []Request
	out    []BatchResult
	now    int64
	t0     time.Time
	splits int
}

// runPack walks the pack's texts through the engines as one job and answers every item.
// When the pack fails as a whole with an error one of its texts may cause, it is split in
// halves, each walked anew after the attempts made so far (prior), so that only the bad
// text fails; at most 4 × log2(texts) more walks, within the pack's deadline.
func (c *Client) runPack(ctx context.Context, p *packRun, items []packItem, texts []string, prior []Attempt) {
	sc := c.getScratch(len(items[0].r.s.engines))
	defer c.putScratch(sc)
	r := &sc.r
	*r = items[0].r
	r.NoCache, r.RequestID, r.Text, r.chars = true, "", texts[0], 0
	for _, t := range texts {
		r.chars += runeCount(t)
	}
	r.t0 = p.t0
	b := c.newResult("")
	w := c.newWalk(ctx, r, b, nil, p.now, sc)
	w.attempts = append(w.attempts, prior...)
	sc.j = job{split: segment.Segments{Parts: texts, Seps: make([]string, len(texts))}, pack: true}
	w.j = &sc.j
	err := w.run()
	if err != nil && p.split(ctx, err, len(texts)) {
		for _, h := range pack.Halve(items, texts, func(it *packItem) *pack.Slot { return &it.Slot }) {
			c.runPack(ctx, p, h.Items, h.Texts, w.attempts)
		}
		return
	}
	var bad []badItem
	for k := range items {
		it := &items[k]
		res, ierr := w.packAnswer(k, items, err)
		if ierr != nil && c.mem != nil {
			res, ierr = c.packDegrade(ctx, &it.r, w.attempts, ierr)
		}
		if res == nil && ierr == nil { // its text came back bad: it fails over alone
			bad = append(bad, badItem{it.i, w.j.partBy[items[it.Lead].Part].name})
			continue
		}
		p.out[it.i].Result, p.out[it.i].Err = res, ierr
		if ierr == nil && !res.FromCache {
			c.remember(&it.r, res, nil, []string{res.Engine}, p.now)
		}
		c.obs.requestEnd(ctx, nil, &it.r, res, ierr, time.Duration(w.ended-w.start))
	}
	c.failOverAlone(ctx, p, bad, r.s.deadline)
}

// badItem is a request of a pack whose text came back bad from the engine avoid.
type badItem struct {
	i     int
	avoid string
}

// failOverAlone walks each request of bad on its own, avoiding the engine its text came
// back bad from, at most batchConc at a time and all within the pack's deadline, which
// each began with: one after another, each with a deadline of its own, n bad texts took n
// deadlines.
func (c *Client) failOverAlone(ctx context.Context, p *packRun, bad []badItem, total time.Duration) {
	if len(bad) == 0 {
		return
	}
	ctx, cancel := context.WithDeadline(ctx, p.t0.Add(total))
	defer cancel()
	sem := make(chan struct{}, c.batchConc)
	var wg sync.WaitGroup
	for _, b := range bad {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			req := p.reqs[b.i]
			p.out[b.i].Result, p.out[b.i].Err = c.doAvoiding(ctx, &req, nil, b.avoid)
		})
	}
	wg.Wait()
}

// split reports whether a pack of n texts that failed with err is split in halves: it has
// two texts or more, the error may come from one text (refused, too long, unavailable, a
// panic, bad output) rather than the engine or the request, and the budget allows.
func (p *packRun) split(ctx context.Context, err error, n int) bool {
	if n < 2 || p.splits < 2 || ctx.Err() != nil {
		return false
	}
	switch KindOf(err) {
	case KindInvalidInput, KindTextTooLong, KindUnavailable, KindUnknown, KindBadOutput:
		p.splits -= 2
		return true
	}
	return false
}

// packAnswer is an item's answer after its pack's walk: its text and its share of the cost,
// its stale entry or the pack's error when the pack failed, or (nil, nil) when its text
// came back bad and must fail over alone.
func (w *walk) packAnswer(k int, items []packItem, err error) (*Result, error) {
	it := &items[k]
	if err != nil {
		w.stale, w.lastErr = it.stale, err
		if !w.staleServes() {
			return nil, err
		}
		res := w.serveStale(&w.c.newResult("").Result, it.stale)
		res.Attempts = append(res.Attempts, w.attempts...)
		return res, nil
	}
	part := items[it.Lead].Part
	if w.j.failed[part] {
		return nil, nil
	}
	e := w.j.partBy[part]
	res := &w.c.newResult("").Result
	res.Text, res.Engine = w.j.out[part], e.name
	res.Source = it.r.Source
	if it.r.src != nil {
		res.Source = it.r.src.Canon
	} else if src := w.j.partSrc[part]; src != "" {
		res.Source = src
	}
	res.Latency = time.Duration(w.ended - w.start)
	res.Degraded = w.degraded()
	if it.Lead == k && w.r.chars > 0 { // a text shared by several requests is paid by the first
		res.Cost = w.j.cost * float64(it.r.chars) / float64(w.r.chars)
	}
	res.Attempts = append(res.Attempts, w.attempts...)
	return res, nil
}

// textResult is out as the check of its text i reads it: with that text's own detected
// source, when the engine gave one per text (an echo is judged by it).
func textResult(out *EngineResult, i int) *EngineResult {
	if len(out.Sources) != len(out.Texts) || out.Sources[i] == out.Source {
		return out
	}
	own := *out
	own.Source = out.Sources[i]
	return &own
}

// textSource is the source the engine detected for text i of its answer: the text's own
// when the engine detects per text, else the call's; "" when it reported none.
func textSource(out *EngineResult, i int) string {
	return pack.TextSource(out.Source, out.Sources, len(out.Texts), i)
}
