package translate

import (
	"context"
	"fmt"

	"github.com/fanyi-go/translate/internal/deadline"
	"github.com/fanyi-go/translate/internal/ordered"
)

// streamSink receives the partial text of one TranslateStream segment while an engine
// streams it (internal/ordered).
type streamSink = ordered.Sink

// invokeStream calls e for a TranslateStream segment: over e's TranslateStream when e is a
// StreamEngine and the call has one text, sending the translation so far to sink; with
// Translate otherwise. The call runs apart, so that when ctx ends invokeStream returns
// within overrunGrace even if the engine ignores ctx: breaking out of a stream never waits
// for an engine. An engine that overruns is marked to be called apart from then on (see
// invoke) and counted among its abandoned calls until it returns.
func (c *Client) invokeStream(ctx context.Context, e *engine, req *EngineRequest, _ int64, sink *streamSink) (*EngineResult, error) {
	own := *req // the call's own request: an abandoned engine may still read it
	own.Texts = append([]string(nil), req.Texts...)
	call := func() (*EngineResult, error) { return protect(ctx, e, &own) }
	if se, ok := e.eng.(StreamEngine); ok && len(own.Texts) == 1 {
		gen := sink.Begin()
		defer sink.End(gen)
		call = func() (*EngineResult, error) { return consumeStream(ctx, e, se, &own, sink, gen) }
	}
	return c.runApart(ctx, e, call)
}

// runApart runs call in a goroutine of its own and returns its answer, or ctx's error when
// ctx ends first (deadline.Apart). After ctx ends it still waits up to overrunGrace for the
// call, so that an engine that honours ctx leaves no goroutine behind; past that the call is
// abandoned, counted among e's abandoned calls, and e's calls run apart from then on.
func (c *Client) runApart(ctx context.Context, e *engine, call func() (*EngineResult, error)) (*EngineResult, error) {
	out, left, err := deadline.Apart(ctx, overrunGrace, &e.abandoned, call)
	if left && e.set(flagIsolate) {
		c.obs.warn("engine ignores its context: its calls now run apart", e.name)
	}
	return out, err
}

// consumeStream reads e's stream of deltas for req.Texts[0] into the whole translation
// (ordered.Text), sending the text so far to sink. Text so far that is blank or still the
// start of the source is not sent: an engine that echoes never shows the source, even in
// part, before its answer is checked. It turns a panic into a KindUnknown error (naming the
// engine's type, not the panic's value), stops at ctx's end even if the engine keeps
// sending, and stops a stream that grows past ordered.MaxBytes with KindBadOutput. An error
// the stream yields is returned as is, for check and classify to sort.
func consumeStream(ctx context.Context, e *engine, se StreamEngine, req *EngineRequest, sink *streamSink, gen uint64) (out *EngineResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, &Error{Kind: KindUnknown, Engine: e.name, Message: fmt.Sprintf("%T panicked (%T)", e.eng, p)}
		}
	}()
	seq := se.TranslateStream(ctx, req)
	if seq == nil {
		return nil, &Error{Kind: KindBadOutput, Engine: e.name, Message: fmt.Sprintf("%T returned a nil stream", e.eng)}
	}
	var text ordered.Text
	text.Reset(req.Texts[0])
	for delta, derr := range seq {
		if derr != nil {
			return nil, derr
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !text.Add(delta) {
			return nil, &Error{Kind: KindBadOutput, Engine: e.name, Message: "stream longer than the limit"}
		}
		if delta != "" && text.Shown() {
			sink.Update(gen, e.name, text.String())
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &EngineResult{Texts: []string{text.String()}}, nil
}
