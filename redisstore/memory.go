package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/text/unicode/norm"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity/memory"
)

// The shared translation memory (translate.MemoryStore): one string key per entry,
//
//	q m:{H}   JSON {"t": translation, "e": engine}, H a hash of the lower-cased source and
//	          target and the text in NFC (as package fidelity/memory compares them); expires
//	          WithMemoryTTL after it was last written (about 60 bytes plus the translation)
//
// spread over a cluster's slots by its hash tag, like request ids and cache entries (keys.go).
// The text itself is not kept: only its hash and its translation.

var _ translate.MemoryStore = (*Store)(nil)

// Defaults and range of WithMemoryTTL.
const (
	DefaultMemoryTTL = 30 * 24 * time.Hour
	minMemoryTTL     = time.Minute
	maxMemoryTTL     = 365 * 24 * time.Hour
)

// maxMemoryTranslation bounds the translation of a shared entry, in bytes: MemoryPut refuses
// a longer one with memory.ErrTooLarge.
const maxMemoryTranslation = 64 << 10

// WithMemoryTTL sets how long a shared translation-memory entry lives after it was last
// written (translate.MemoryStore; used by Clients with translate.WithMemory). Default 30
// days; 1 minute..365 days. Every entry expires: Redis never holds more than the texts
// translated within the TTL, and under memory pressure a maxmemory-policy that evicts keys
// with an expiry (volatile-lru, volatile-ttl, allkeys-lru) drops entries before Redis
// refuses writes (see the package documentation).
func WithMemoryTTL(ttl time.Duration) Option { return func(o *options) { o.memoryTTL = ttl } }

type memoryJSON struct {
	Translation string `json:"t"`
	Engine      string `json:"e,omitempty"`
}

// memory is the key of the entry for text from source to target.
func (k keys) memory(source, target, text string) string {
	id := strings.ToLower(source) + "\x00" + strings.ToLower(target) + "\x00" + norm.NFC.String(text)
	return k.spread + "m:{" + hashOf(id) + "}"
}

// MemoryGet returns the shared entry for text from source to target (exact matches only).
// While Redis is unreachable it finds nothing, without asking it, until the next probe.
func (s *Store) MemoryGet(ctx context.Context, source, target, text string) (memory.Entry, bool, error) {
	if err := s.stickyErr(); err != nil {
		return memory.Entry{}, false, err
	}
	if !s.reachable() {
		return memory.Entry{}, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	v, err := s.rdb.Get(ctx, s.k.memory(source, target, text)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		s.recovered()
		return memory.Entry{}, false, nil
	case err != nil:
		return memory.Entry{}, false, s.memoryFailed(ctx, err)
	}
	s.recovered()
	var m memoryJSON
	if json.Unmarshal([]byte(v), &m) != nil || m.Translation == "" {
		return memory.Entry{}, false, nil // unreadable: a miss
	}
	e := memory.Entry{Source: source, Target: target, Text: text, Translation: m.Translation, Engine: m.Engine}
	return e, true, nil
}

// MemoryPut keeps e for every Client of the store for the memory TTL. It refuses an entry
// with a translation longer than 64 KiB with memory.ErrTooLarge; while Redis is unreachable
// it drops the entry.
func (s *Store) MemoryPut(ctx context.Context, e memory.Entry) error {
	if len(e.Translation) > maxMemoryTranslation {
		return memory.ErrTooLarge
	}
	if e.Translation == "" {
		return nil
	}
	if err := s.stickyErr(); err != nil {
		return err
	}
	if !s.reachable() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	b, _ := json.Marshal(memoryJSON{Translation: e.Translation, Engine: e.Engine})
	if err := s.rdb.Set(ctx, s.k.memory(e.Source, e.Target, e.Text), b, s.o.memoryTTL).Err(); err != nil {
		return s.memoryFailed(ctx, err)
	}
	s.recovered()
	return nil
}

// memoryFailed records a failed memory call and returns its error; nil for a key of
// another type at the entry's key.
func (s *Store) memoryFailed(ctx context.Context, err error) error {
	if isWrongType(err) { // that entry only: a miss, overwritten by the next MemoryPut
		s.foreignKey(keyMemory)
		s.recovered()
		return nil
	}
	if cerr := s.configError(err); cerr != nil {
		return cerr
	}
	if cause := context.Cause(ctx); cause == nil || errors.Is(cause, context.DeadlineExceeded) {
		s.failed(err)
	}
	return err
}
