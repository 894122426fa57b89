package translate

import (
	"context"
	"time"
)

// streamSink receives the partial text of a segment translated by a StreamEngine.
// (stub: owned by the streaming work)
type streamSink struct{}

// invokeStream calls e for a TranslateStream segment: over e's TranslateStream when e is a
// StreamEngine and the call has one text, sending partial text to sink; as invoke otherwise.
func (c *Client) invokeStream(ctx context.Context, e *engine, req *EngineRequest, deadline time.Time, sink *streamSink) (*EngineResult, error) {
	return c.invoke(ctx, e, req, deadline)
}
