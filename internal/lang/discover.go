package lang

import (
	"context"
	"time"

	"golang.org/x/text/language"
)

// Discover asks list, bounded by timeout, for the pairs an engine translates and returns
// the set of their languages, sources and targets alike (language.Und left out); nil when
// the call fails or lists no pair. sides returns a pair's source and target.
func Discover[P any](c *Cache, timeout time.Duration, list func(context.Context) ([]P, error),
	sides func(P) (src, tgt language.Tag)) *Set {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	pairs, err := list(ctx)
	cancel()
	if err != nil || len(pairs) == 0 {
		return nil
	}
	tags := make([]language.Tag, 0, 2*len(pairs))
	for _, p := range pairs {
		src, tgt := sides(p)
		tags = append(tags, src, tgt)
	}
	return NewSetOfTags(c, tags)
}
