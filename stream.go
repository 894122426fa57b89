package translate

import (
	"context"
	"iter"
	"strconv"

	"github.com/fanyi-go/translate/internal/ordered"
	"github.com/fanyi-go/translate/internal/segment"
)

// streamSegmentChars is the most code points of one TranslateStream segment: paragraphs are
// merged up to it (or up to what one call of an engine takes, when less), and a paragraph
// longer than it is cut at the best break in reach, as a long text is for Profile.MaxChars.
const streamSegmentChars = 1000

// streamAhead bounds how far the translation runs ahead of the caller: no segment starts
// more than streamAhead × WithBatchConcurrency segments after the first one not yet
// yielded, so a caller that stops early has paid for little it did not read.
const streamAhead = 4

// TranslateStream translates a long text in segments and yields each segment's
// translation as soon as it, and every segment before it, is done. It is for documents and
// long LLM answers where the first paragraphs should show before the last are translated.
//
// The text is cut into segments of at most 1,000 characters (code points), or of what one
// call of an engine takes (Profile.MaxChars, or MaxTexts × MaxTextChars) when that is less:
// short paragraphs are merged into one segment, and a paragraph longer than that is cut
// into several, at line breaks, sentence ends, clause marks or spaces. Cuts go at blank
// lines first. Up to WithBatchConcurrency segments (8 by default)
// are translated at once, and none more than 4 × WithBatchConcurrency segments ahead of
// the first not yet yielded. Each segment is a Request of its own through the same path as
// Translate, so every rule of Translate holds per segment: the cache (a repeated
// paragraph is translated once), the budget and quotas, the attempt budget, retries and
// failover, and never the source text as a translation. A segment's RequestID is the
// request's RequestID followed by "#" and the segment's index ("doc-7#0", "doc-7#1", ...),
// or a generated one when the request has none.
//
// Chunks come in source order. Chunk.Text is the segment's translation so far, with the
// white space around the segment in the source: the first segment's chunks begin with the
// text's leading white space, and a segment's final chunk ends with the white space that
// followed it. So the final chunks (Partial false) of segments 0, 1, 2, ... joined with
// nothing between them are the translated document, with the source's layout:
//
//	var b strings.Builder
//	for ch, err := range c.TranslateStream(ctx, req) {
//		if err != nil {
//			return err
//		}
//		if !ch.Partial {
//			b.WriteString(ch.Text)
//		}
//	}
//
// While the first segment not yet done (the head) streams from an engine that implements
// StreamEngine, its translation so far comes as Partial chunks; a later chunk for the same
// Segment supersedes a Partial one, so when the stream fails over mid-way to another
// engine, the next chunk replaces the partial text. Partial text is held back while it is
// still the start of the source (an engine echoing the source shows nothing), and a slow
// consumer sees only the latest partial text, not every piece. Only the head has Partial
// chunks: a later segment's first chunk is its final one unless it is still streaming when
// it becomes the head.
//
// Errors end the sequence: a request that fails validation yields (Chunk{}, err) with a
// KindInvalidInput (or KindTextTooLong) error before any translation; a closed Client yields
// ErrClosed; a segment that cannot be translated yields (Chunk{Segment: i}, err) with the
// error Translate would return for it; a canceled ctx yields ctx's error. Breaking out of
// the loop, or canceling ctx, stops all work at once: no goroutine of the stream outlives
// the loop (a call to an engine that ignores ctx is abandoned after a short grace, as
// Translate does). The sequence can be ranged over once; each range translates anew.
func (c *Client) TranslateStream(ctx context.Context, req Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		if c.closed.Load() {
			yield(Chunk{}, ErrClosed)
			return
		}
		if err := streamable(&req); err != nil {
			yield(Chunk{}, err)
			return
		}
		var r request
		if err := c.prepare(&req, &r, c.now()); err != nil {
			yield(Chunk{}, err)
			return
		}
		s := newStream(ctx, c, req, r.fid)
		defer s.run.Stop()
		s.yield(yield)
	}
}

// splitDocument cuts text into TranslateStream segments of at most limit code points: as
// many paragraphs as fit, cut at the best break in reach (segment.Split): a blank line, a
// line break, a sentence end, a clause mark, a space. Prefix + Parts[0] + Seps[0] + ... is
// text.
func splitDocument(text string, limit int) segment.Segments {
	return segment.Split(text, limit)
}

// streamLimit is the most code points of one TranslateStream segment over the engines of s:
// streamSegmentChars, or less when an engine takes less in one call (callChars).
func streamLimit(s *setup) int {
	limit := streamSegmentChars
	for _, e := range s.engines {
		if n := callChars(&e.prof); n > 0 {
			limit = min(limit, n)
		}
	}
	return limit
}

// stream is one range over TranslateStream: its segments and the ordered run of their
// translations (internal/ordered: the workers, the window ahead of the head, the order).
type stream struct {
	c   *Client
	req Request
	doc segment.Segments
	run *ordered.Stream[*Result]
}

func newStream(ctx context.Context, c *Client, req Request, fid *content) *stream {
	s := &stream{c: c, req: req, doc: fid.whole(req.Text, c.docSplit(req.Text, streamLimit(c.cfg.Load())))}
	s.run = ordered.New(ctx, len(s.doc.Parts), c.batchConc, streamAhead, s.translate)
	return s
}

// yield runs the stream, yielding the chunks in order until the last segment, an error, or
// the caller stops.
func (s *stream) yield(yield func(Chunk, error) bool) {
	s.run.Run(func(i int, res *Result) bool { return yield(s.final(i, res), nil) },
		func(i int, text, engine string) bool {
			return yield(Chunk{Segment: i, Text: s.doc.Lead(i) + text, Partial: true, Engine: engine}, nil)
		},
		func(i int, err error) { yield(Chunk{Segment: i}, err) })
}

// translate translates segment i.
func (s *stream) translate(ctx context.Context, i int, sink *streamSink) (*Result, error) {
	req := s.req
	req.Text = s.doc.Parts[i]
	if req.RequestID != "" {
		req.RequestID += "#" + strconv.Itoa(i)
	}
	return s.c.do(ctx, &req, sink)
}

// final is the chunk of a translated segment: its text with the source's white space
// around it.
func (s *stream) final(i int, res *Result) Chunk {
	return Chunk{Segment: i, Text: s.doc.Around(i, res.Text), Engine: res.Engine, FromMemory: res.FromMemory}
}
