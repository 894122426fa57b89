package translate

import (
	"context"
	"sync"
)

// BatchResult is one answer of TranslateBatch: a Result or an error.
type BatchResult struct {
	Result *Result
	Err    error
}

// TranslateBatch translates every request, at most WithBatchConcurrency at a time, and
// returns the answers in the order of reqs, each with its own error.
func (c *Client) TranslateBatch(ctx context.Context, reqs []Request) []BatchResult {
	out := make([]BatchResult, len(reqs))
	if c.closed.Load() {
		for i := range out {
			out[i].Err = ErrClosed
		}
		return out
	}
	sem := make(chan struct{}, c.batchConc)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range reqs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			for k := i; k < len(reqs); k++ {
				out[k].Err = ctx.Err()
			}
			return out
		}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			out[i].Result, out[i].Err = c.Translate(ctx, reqs[i])
		}(i)
	}
	return out
}
