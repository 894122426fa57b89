package lang

import (
	"context"
	"time"

	"golang.org/x/text/language"
)

// MaxDiscovered bounds the distinct languages Discover takes from one engine. An engine's
// list is input the Client does not control: each new language is interned in the Cache for
// good, so a longer list (a few hundred is what vendors name) counts as a failed call.
const MaxDiscovered = 4096

// Discover asks list, bounded by timeout, for the pairs an engine translates and returns
// the set of their languages, sources and targets alike (language.Und left out); nil when
// the call fails, lists no pair, or names more than MaxDiscovered languages. sides returns
// a pair's source and target.
func Discover[P any](c *Cache, timeout time.Duration, list func(context.Context) ([]P, error),
	sides func(P) (src, tgt language.Tag)) *Set {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	pairs, err := list(ctx)
	cancel()
	if err != nil || len(pairs) == 0 {
		return nil
	}
	seen := make(map[language.Tag]bool)
	var tags []language.Tag // in the list's order, so that ids are interned as listed
	for _, p := range pairs {
		src, tgt := sides(p)
		for _, t := range [2]language.Tag{src, tgt} {
			if t == language.Und || seen[t] {
				continue
			}
			if len(tags) == MaxDiscovered {
				return nil
			}
			seen[t] = true
			tags = append(tags, t)
		}
	}
	return NewSetOfTags(c, tags)
}
