// Package reload keeps the bookkeeping of the translate Client's Reconfigure that needs no
// Client: which options New got around its last configuration file (so that each new
// Config is applied between them, as the first one was), and what a cache section asks
// that the running cache cannot give.
package reload

import (
	"reflect"
	"slices"
	"time"
)

// Split applies opts to o in order, skipping nil ones, and returns copies of the options
// before and after the last one that changed configs(o) (the last WithConfig). Both are nil
// when none did.
func Split[O any, F ~func(*O)](o *O, opts []F, configs func(*O) int) (before, after []F) {
	last := -1
	for i, opt := range opts {
		if opt == nil {
			continue
		}
		n := configs(o)
		opt(o)
		if configs(o) != n {
			last = i
		}
	}
	if last < 0 {
		return nil, nil
	}
	return slices.Clone(opts[:last]), slices.Clone(opts[last+1:])
}

// Apply applies opts to o in order, skipping nil ones.
func Apply[O any, F ~func(*O)](o *O, opts []F) {
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
}

// DefaultEntries and DefaultTTL are a cache section's size and ttl when 0.
const (
	DefaultEntries = 10000
	DefaultTTL     = 24 * time.Hour
)

// CacheTTL returns ttl, DefaultTTL when 0.
func CacheTTL(ttl time.Duration) time.Duration {
	if ttl == 0 {
		return DefaultTTL
	}
	return ttl
}

// CacheNotApplied returns the fields of a cache section (disabled, entries) that ask for a
// cache other than the running one, of size entries (0 when there is none):
// "cache.disabled" when it turns the cache on or off, "cache.entries" when it sizes the
// running cache otherwise (DefaultEntries when 0); nil when it asks for nothing new.
func CacheNotApplied(size int, disabled bool, entries int) []string {
	running := size > 0
	switch {
	case disabled == running:
		return []string{"cache.disabled"}
	case !running:
		return nil
	}
	if entries == 0 {
		entries = DefaultEntries
	}
	if entries != size {
		return []string{"cache.entries"}
	}
	return nil
}

// Same reports whether a and b are the same value: an engine a Config builds anew for a
// name is not the one it replaces. Values of types that cannot be compared are taken as
// different. a and b must not be nil.
func Same(a, b any) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// Numbers hands out the numbers of a new configuration's engines (their bit in the sets
// a request keeps): an engine that stays keeps its number (Keep), a new one takes the
// smallest number no other engine holds (Next). Make it with NewNumbers.
type Numbers struct {
	used map[int]bool
	next int
}

// NewNumbers returns Numbers with none in use.
func NewNumbers() Numbers { return Numbers{used: map[int]bool{}} }

// Keep notes n as held by an engine that stays.
func (ns *Numbers) Keep(n int) { ns.used[n] = true }

// Next returns the smallest number not held, and holds it.
func (ns *Numbers) Next() int {
	for ns.used[ns.next] {
		ns.next++
	}
	ns.used[ns.next] = true
	return ns.next
}

// Retire returns the value of each item of prev whose name next does not have, by name
// (nil when there is none): what a configuration keeps of the engines the one before it
// had and it has not, to reuse when they come back.
func Retire[E, V any](prev []E, item func(E) (string, V), has func(string) bool) map[string]V {
	var gone map[string]V
	for _, e := range prev {
		name, v := item(e)
		if has(name) {
			continue
		}
		if gone == nil {
			gone = make(map[string]V)
		}
		gone[name] = v
	}
	return gone
}
