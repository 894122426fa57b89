package redisstore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fanyi-go/translate"
)

// Key layout. The tenant's figures live under the prefix p (WithPrefix), in one slot of a
// cluster when p carries a hash tag:
//
//	p b:YYYY-MM-DD      the day's budget: a figure hash (see scripts.go); expires a day after its day
//	p m:YYYY-MM         the UTC calendar month's budget (with a monthly limit); expires a day after its month
//	p q:ENGINE:START    the quota period that starts at START (Unix ms): a figure hash; expires a
//	                    period after the period ends
//	p bx                zset of live blocks ("ID|KEY" -> expiry in Unix ms); expires a day after the last
//	p E                 the epoch "CREATED:LOSTAT"; expires with the longest-lived figure key
//	p h:ENGINE          the hold "KIND:UNTILMS"; expires at UNTIL
//	p hp:ENGINE         the engine's probe lock while it is held (ProbeLock); expires after its ttl
//
// Request ids and cache entries are single keys spread over the slots by their own hash tag,
// under p with its braces escaped (q below), so they never share the tenant's slot:
//
//	q r:{H}             hash ENGINE -> "" (sent, no answer yet) | 'T'+answer | 'K'+failure, H a hash
//	                    of the request id; expires RequestWindow after the first engine call
//	                    (about 100 bytes plus the answer per engine)
//	q c:{H}             a second-level cache entry (JSON), H a hash of the cache key; expires
//	                    after the cache TTL (about 100 bytes plus the text)
//	q m:{H}             a shared translation-memory entry (memory.go); expires WithMemoryTTL
//	                    after its last write
//
// A tenant with a budget of its own (translate.Admission.Tenant) has its figures under a
// hash tag of its own, so a cluster spreads tenants over its slots (tenant.go):
//
//	q t:{T}:b:YYYY-MM-DD   the tenant's day; q t:{T}:m:YYYY-MM its month (with a monthly limit)
//	q t:{T}:bx, q t:{T}:E  its live blocks and its epoch, as bx and E above
//
// A day is a UTC day; a quota period of length P starts at a multiple of P since the Unix epoch.
type keys struct{ prefix, spread string }

func newKeys(prefix string) keys {
	esc := strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D").Replace(prefix)
	return keys{prefix: prefix, spread: esc}
}

func (k keys) blocks() string        { return k.prefix + "bx" }
func (k keys) epoch() string         { return k.prefix + "E" }
func (k keys) hold(e string) string  { return k.prefix + "h:" + e }
func (k keys) probe(e string) string { return k.prefix + "hp:" + e }
func (k keys) budget(day time.Time) string {
	return k.prefix + "b:" + day.Format(time.DateOnly)
}

func (k keys) request(id string) string { return k.spread + "r:{" + hashOf(id) + "}" }
func (k keys) cache(key string) string  { return k.spread + "c:{" + hashOf(key) + "}" }

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

func (k keys) quota(engine string, start time.Time) string {
	return k.prefix + "q:" + engine + ":" + strconv.FormatInt(start.UnixMilli(), 10)
}

// day is the UTC day of now and when it ends.
func day(now time.Time) (start, end time.Time) {
	u := now.UTC()
	start = time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 0, 1)
}

// dayCache remembers the last UTC day an admission fell in: working the day out of a time
// costs more than the rest of an admission served from a block.
type dayCache struct{ last atomic.Pointer[[2]time.Time] }

// of is day(now), from the cache when now falls in the day it holds.
func (d *dayCache) of(now time.Time) (start, end time.Time) {
	if p := d.last.Load(); p != nil && !now.Before(p[0]) && now.Before(p[1]) {
		return p[0], p[1]
	}
	start, end = day(now)
	d.last.Store(&[2]time.Time{start, end})
	return start, end
}

// quotaPeriod is the quota period holding now, aligned on the Unix epoch.
func quotaPeriod(now time.Time, p time.Duration) (start, end time.Time) {
	if p <= 0 {
		p = 24 * time.Hour
	}
	n := now.UnixNano()
	s := n - n%int64(p)
	if n < 0 && n%int64(p) != 0 {
		s -= int64(p)
	}
	start = time.Unix(0, s)
	return start, start.Add(p)
}

func newLeaseID() string {
	return strconv.FormatUint(rand.Uint64(), 36) + strconv.FormatUint(rand.Uint64(), 36)
}

// Answers are stored as one byte of kind and JSON: 'T' a text, 'K' a failure. The empty string
// means the engine was called and has not answered yet.
type storedJSON struct {
	Text   string `json:"t,omitempty"`
	Source string `json:"s,omitempty"`
	Engine string `json:"e,omitempty"`
	Kind   uint8  `json:"k,omitempty"`
}

func encodeAnswer(a *translate.StoredAnswer) string {
	if a == nil {
		return ""
	}
	b, _ := json.Marshal(storedJSON{a.Text, a.Source, a.Engine, uint8(a.Kind)})
	if a.Text != "" {
		return "T" + string(b)
	}
	return "K" + string(b)
}

// decodeCached is the answer of a second-level cache entry; false when v is not a text
// answer as Settle writes it ("T" and JSON with a text): another application's value, or
// a damaged one, is a miss.
func decodeCached(v string) (*translate.StoredAnswer, bool) {
	if len(v) < 2 || v[0] != 'T' {
		return nil, false
	}
	var s storedJSON
	if json.Unmarshal([]byte(v[1:]), &s) != nil || s.Text == "" {
		return nil, false
	}
	return &translate.StoredAnswer{Text: s.Text, Source: s.Source, Engine: s.Engine}, true
}

func decodeAnswer(v string) *translate.StoredAnswer {
	if len(v) < 2 {
		return &translate.StoredAnswer{} // sent, not answered yet
	}
	var s storedJSON
	if json.Unmarshal([]byte(v[1:]), &s) != nil {
		return &translate.StoredAnswer{}
	}
	a := &translate.StoredAnswer{Text: s.Text, Source: s.Source, Engine: s.Engine}
	if s.Text == "" {
		a.Kind = translate.Kind(s.Kind)
	}
	return a
}
