package redisstore

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/fanyi-go/translate"
)

// Key layout, all under the prefix p (WithPrefix):
//
//	p b:YYYY-MM-DD          hash {s: credits charged, r: credits reserved}; expires a day after its day
//	p q:ENGINE:START        hash {s: chars charged, r: chars reserved} for the quota period that
//	                        starts at START (Unix ms); expires a period after the period ends
//	p r:REQUESTID           hash ENGINE -> "" (sent, no answer yet) | 'T'+answer | 'K'+failure;
//	                        expires RequestWindow after the first engine call
//	p h:ENGINE              the hold "KIND:UNTILMS"; expires at UNTIL
//	p c:CACHEKEY            a second-level cache entry (JSON); expires after the cache TTL
//	p lx                    zset of live leases (token -> expiry in Unix ms)
//	p ls                    zset of leases swept as spent (token -> sweep time), kept an hour so a
//	                        late Settle corrects the charge to what the call cost
//	p f:OPID                marks a pushed local operation done (an hour), so a push is applied once
//	p -                     placeholder for an unused key argument; never written
//
// A day is a UTC day; a quota period of length P starts at a multiple of P since the Unix epoch.
type keys struct{ prefix string }

func (k keys) none() string         { return k.prefix + "-" }
func (k keys) leases() string       { return k.prefix + "lx" }
func (k keys) swept() string        { return k.prefix + "ls" }
func (k keys) hold(e string) string { return k.prefix + "h:" + e }
func (k keys) budget(day time.Time) string {
	return k.prefix + "b:" + day.Format(time.DateOnly)
}

func (k keys) request(id string) string {
	if id == "" {
		return k.none()
	}
	return k.prefix + "r:" + id
}

func (k keys) cache(key string) string {
	if key == "" {
		return k.none()
	}
	return k.prefix + "c:" + key
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

// lease is what a token carries: everything Settle and the sweep need to undo or charge a
// reservation, so a lease needs no other key. Credits travel as decimal strings: Redis adds
// them with HINCRBYFLOAT, which never rounds them through Lua's numbers.
type lease struct {
	ID      string `json:"i"`
	Engine  string `json:"e"`
	Budget  string `json:"b"`
	Credits string `json:"c"`
	Quota   string `json:"q"` // "" when the engine's quota is unlimited
	Chars   int64  `json:"n"`
	Request string `json:"r"` // "" without a request id
}

func newLeaseID() string {
	return strconv.FormatUint(rand.Uint64(), 36) + strconv.FormatUint(rand.Uint64(), 36)
}

func (l *lease) token() string {
	b, _ := json.Marshal(l) // strings and an int: cannot fail
	return string(b)
}

func parseLease(tok string) (*lease, error) {
	l := new(lease)
	if err := json.Unmarshal([]byte(tok), l); err != nil || l.ID == "" {
		return nil, errors.New("redisstore: malformed lease")
	}
	return l, nil
}

func formatCredits(c float64) string { return strconv.FormatFloat(c, 'g', -1, 64) }

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
