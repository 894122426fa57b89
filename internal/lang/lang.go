// Package lang normalises BCP 47 tags and matches them against engine language lists by base
// language and script, so that zh, zh-CN and zh-Hans land on Simplified Chinese engines and
// zh-TW, zh-HK and zh-Hant-HK on Traditional ones.
//
// Two normal forms are kept for each tag:
//
//   - the key (KeyOf): base language and script, "zh-Hans", "en-Latn". Engines are matched by
//     it: an engine that takes en takes en-GB.
//   - the full key (FullKeyOf): everything about the tag that may change a translation, used
//     to keep apart cached translations: pt-BR ≠ pt-PT, en-US ≠ en-GB, es ≠ es-419,
//     zh-TW ≠ zh-HK. It is the key, then the region unless it is the likely region of the
//     base and script (CLDR likely subtags, as golang.org/x/text/language has them), then the
//     variants and extensions as given. So a region adds nothing where it is what the language
//     and script imply anyway: zh, zh-CN, zh-Hans and zh-Hans-CN are all "zh-Hans"; zh-TW,
//     zh-Hant and zh-Hant-TW are "zh-Hant"; en and en-US are "en-Latn" (the likely region of
//     en-Latn is US), pt and pt-BR are "pt-Latn", es and es-ES are "es-Latn"; while zh-HK is
//     "zh-Hant-HK", en-GB "en-Latn-GB", pt-PT "pt-Latn-PT" and es-419 "es-Latn-419".
//
// Parsing is cached: the Cache type turns a tag string into its normalised form without
// allocating once the string has been seen, so it is cheap on a request's hot path.
package lang

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"golang.org/x/text/language"
)

// Info is a parsed, normalised tag.
type Info struct {
	Tag language.Tag // the tag as given, canonicalised
	// Key is base language and script, such as "en-Latn", "zh-Hans", "zh-Hant", "sr-Cyrl":
	// the unit engines are matched by.
	Key string
	// ID is Key's interned number in the Cache that produced the Info (1-based).
	ID int
	// Full is the full key (see FullKeyOf), such as "zh-Hans", "zh-Hant-HK", "en-Latn-GB":
	// the target part of a cache key. It is the same in every process.
	Full string
	// FullID is Full's interned number in the Cache that produced the Info (1-based), or 0
	// when the Cache has already interned MaxFullIDs other full keys: a tag with FullID 0
	// must not share cached results by FullID (use Full, or do not cache).
	FullID int

	// Canon is Tag.String(), kept: the Client reports it as Result.Source.
	Canon     string
	tagString string     // the string it was looked up by
	recent    *recentTag // its entry in Cache.recent, made once
}

// ErrMalformed is returned for a tag that is not well-formed BCP 47.
var ErrMalformed = errors.New("malformed language tag")

// Parse parses and normalises tag. It returns ErrMalformed (wrapped) for a bad tag.
func Parse(tag string) (language.Tag, string, error) {
	t, err := language.Parse(tag)
	if err != nil {
		return language.Und, "", errors.Join(ErrMalformed, err)
	}
	if t == language.Und || repeatsSingleton(t) {
		return language.Und, "", ErrMalformed
	}
	return t, KeyOf(t), nil
}

// repeatsSingleton reports whether t has an extension singleton twice, as in
// "en-u-ca-gregory-u-nu-arab": BCP 47 allows each once, golang.org/x/text parses such a tag
// anyway, and composing it again merges or drops extensions ("en-a-bc-a-de" would be keyed
// as "en-Latn-a-de"), so its full key would not be stable. Private use ("x-...") holds no
// singleton.
func repeatsSingleton(t language.Tag) bool {
	var seen uint64 // by singleton: '0'-'9' on bits 0-9, 'a'-'z' (lower case, as parsed) on 10-35
	for _, e := range t.Extensions() {
		c := e.Type()
		if c == 'x' {
			continue
		}
		n := c - '0'
		if c >= 'a' {
			n = c - 'a' + 10
		}
		bit := uint64(1) << (n & 63)
		if seen&bit != 0 {
			return true
		}
		seen |= bit
	}
	return false
}

// KeyOf returns the base-and-script key of t: "zh-TW" -> "zh-Hant", "zh" -> "zh-Hans",
// "en-US" -> "en-Latn".
func KeyOf(t language.Tag) string {
	b, _ := t.Base()
	s, _ := t.Script() // the likely script when not explicit
	return b.String() + "-" + s.String()
}

// FullKeyOf returns the full key of t: its key, then its region unless that is the likely
// region of the base language and script, then its variants and extensions.
// "zh-CN" -> "zh-Hans", "zh-HK" -> "zh-Hant-HK", "en-US" -> "en-Latn", "en-GB" ->
// "en-Latn-GB", "es-419" -> "es-Latn-419", "de-CH-1996" -> "de-Latn-CH-1996".
func FullKeyOf(t language.Tag) string {
	b, _ := t.Base()
	s, _ := t.Script()
	parts := make([]any, 0, 5)
	parts = append(parts, b, s)
	if r, conf := t.Region(); conf == language.Exact {
		bs, _ := language.Compose(b, s)
		if likely, _ := bs.Region(); r != likely {
			parts = append(parts, r)
		}
	}
	if v := t.Variants(); len(v) > 0 {
		parts = append(parts, v)
	}
	if e := t.Extensions(); len(e) > 0 {
		parts = append(parts, e)
	}
	full, err := language.Compose(parts...)
	if err != nil { // cannot happen for parts of a valid tag; keep the tag apart all the same
		return KeyOf(t) + "-" + t.String()
	}
	return full.String()
}

// MaxFullIDs bounds how many full keys a Cache interns; later ones get FullID 0.
const MaxFullIDs = 1 << 16

// MaxIDs bounds how many keys (base language and script) a Cache interns: far more than
// languages are translated between, far fewer than the tags a caller could make up (about
// 2 million). Past it, Lookup of a tag with a new key fails with ErrTooManyLanguages.
const MaxIDs = 1 << 16

// maxIDs is MaxIDs, lowered by tests.
var maxIDs = MaxIDs

// ErrTooManyLanguages is Lookup's error for a tag whose key is new when the Cache holds
// MaxIDs keys already.
var ErrTooManyLanguages = errors.New("more distinct languages than " + strconv.Itoa(MaxIDs))

// maxCached bounds how many distinct tag strings a Cache remembers.
const maxCached = 4096

// Cache parses tags and interns their keys. It is safe for concurrent use; lookups of a
// string already seen take no lock and allocate nothing. The zero value is not usable: call
// NewCache.
type Cache struct {
	// recent is a direct-mapped array of recent lookups, in front of the map: a request
	// looks up two tags, and a map lookup costs more than the rest of a cache hit.
	recent [64]atomic.Pointer[recentTag]
	pairs  [64]atomic.Pointer[recentPair]   // the same for source and target together
	m      atomic.Pointer[map[string]*Info] // copy on write
	mu     sync.Mutex                       // serialises writers
	ids    map[string]int                   // key -> id, under mu
	nids   atomic.Int64
	full   map[string]int // full key -> id, under mu; at most MaxFullIDs
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	c := &Cache{ids: map[string]int{}, full: map[string]int{}}
	m := map[string]*Info{}
	c.m.Store(&m)
	return c
}

type recentPair struct {
	src, tgt string
	s, t     *Info
}

// LookupPair looks up a source tag ("" for none, giving a nil *Info) and a target tag at
// once: a request's pair is usually one it has seen, and then this costs one atomic load.
// It returns the first error of the two lookups.
func (c *Cache) LookupPair(src, tgt string) (s, t *Info, err error) {
	p := &c.pairs[(slot(src)*5+slot(tgt))&63]
	if rp := p.Load(); rp != nil && rp.tgt == tgt && rp.src == src {
		return rp.s, rp.t, nil
	}
	if t, err = c.Lookup(tgt); err != nil {
		return nil, nil, err
	}
	if src != "" {
		if s, err = c.Lookup(src); err != nil {
			return nil, t, err
		}
	}
	rp := &recentPair{tgt: t.tagString, s: s, t: t}
	if s != nil {
		rp.src = s.tagString
	}
	p.Store(rp)
	return s, t, nil
}

type recentTag struct {
	tag  string
	info *Info
}

func slot(tag string) int {
	if tag == "" {
		return 0
	}
	return (len(tag)*7 + int(tag[0])*3 + int(tag[len(tag)-1])) & 63
}

// Lookup returns the Info for tag, parsing it on first sight.
func (c *Cache) Lookup(tag string) (*Info, error) {
	s := &c.recent[slot(tag)]
	if rt := s.Load(); rt != nil && rt.tag == tag {
		return rt.info, nil
	}
	if in, ok := (*c.m.Load())[tag]; ok {
		s.Store(in.recent)
		return in, nil
	}
	t, key, err := Parse(tag)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.m.Load()
	if in, ok := old[tag]; ok {
		return in, nil
	}
	id := c.internLocked(key)
	if id == 0 {
		return nil, ErrTooManyLanguages
	}
	full := FullKeyOf(t)
	in := &Info{Tag: t, Key: key, ID: id, Full: full, FullID: c.internFullLocked(full),
		tagString: strings.Clone(tag), Canon: t.String()}
	in.recent = &recentTag{tag: in.tagString, info: in}
	if len(old) >= maxCached {
		return in, nil // too many distinct strings: parse each time rather than grow forever
	}
	m := make(map[string]*Info, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[in.tagString] = in
	c.m.Store(&m)
	return in, nil
}

// ID returns the interned id of key, interning it when new.
func (c *Cache) ID(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.internLocked(key)
}

// Key returns the key interned as id, false when none is: the reverse of ID, for the
// rare caller that holds an id (a probe of a pair), not for the request path.
func (c *Cache) Key(id int) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.ids {
		if v == id {
			return k, true
		}
	}
	return "", false
}

// internLocked returns key's id, interning it when new; 0 when it is new and the Cache
// holds maxIDs keys (an id 0 is in every Set: see Has).
func (c *Cache) internLocked(key string) int {
	if id, ok := c.ids[key]; ok {
		return id
	}
	if len(c.ids) >= maxIDs {
		return 0
	}
	id := len(c.ids) + 1
	c.ids[key] = id
	c.nids.Store(int64(id))
	return id
}

func (c *Cache) internFullLocked(full string) int {
	if id, ok := c.full[full]; ok {
		return id
	}
	if len(c.full) >= MaxFullIDs {
		return 0
	}
	id := len(c.full) + 1
	c.full[full] = id
	return id
}

// Set is a set of language keys by interned id. The nil *Set means "any language".
type Set struct {
	bits []uint64
}

// NewSet builds the set of the given tags' keys, interning them in c. It returns nil (any)
// when tags is empty and an error naming the first malformed tag.
func NewSet(c *Cache, tags []string) (*Set, error) {
	if len(tags) == 0 {
		return nil, nil
	}
	s := &Set{}
	for _, tag := range tags {
		in, err := c.Lookup(tag)
		if err != nil {
			return nil, errors.New("bad language tag " + quote(tag))
		}
		s.add(in.ID)
	}
	return s, nil
}

// NewSetOfTags builds a set from parsed tags.
func NewSetOfTags(c *Cache, tags []language.Tag) *Set {
	s := &Set{}
	for _, t := range tags {
		if t == language.Und {
			continue
		}
		s.add(c.ID(KeyOf(t)))
	}
	return s
}

func (s *Set) add(id int) {
	w := id / 64
	for len(s.bits) <= w {
		s.bits = append(s.bits, 0)
	}
	s.bits[w] |= 1 << (id % 64)
}

// Has reports whether the set holds id. A nil set holds every id; id 0 (unknown, or "detect")
// is held by every set.
func (s *Set) Has(id int) bool {
	if s == nil || id == 0 {
		return true
	}
	u := uint(id) // ids are never negative
	return u>>6 < uint(len(s.bits)) && s.bits[u>>6]&(1<<(u&63)) != 0
}

func quote(s string) string {
	if len(s) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(s[cut]) { // never half a character
			cut--
		}
		s = s[:cut] + "…"
	}
	return `"` + s + `"`
}
