package translate_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
)

// FuzzConfig: whatever numbers a configuration file carries, a file that ParseConfig and
// New accept gives a Client that serves 100 requests with fake engines without a panic,
// each request within its caller's ctx (plus fuzzSlack), and with at most fuzzMaxAlloc
// bytes allocated from New to Close.
//
// The input is a list of 10-byte records, each setting one numeric setting of the file
// (every one of them: NumericSettingsForTest, from the package's table of ranges): a byte
// picks the setting, a byte the kind of value (the raw 8 bytes that follow, or an edge:
// the range's ends and just past them, 0, -1, 2^53, 2^63-1, 1e-300, 1e300). Engine a
// fails half its calls and takes the profile settings; engine b keeps its defaults. The
// Client's clock moves a second a request, so breakers open, cool down and half-open.
func FuzzConfig(f *testing.F) {
	settings := translate.NumericSettingsForTest()
	index := map[string]byte{}
	for i, s := range settings {
		index[s.Path] = byte(i)
	}
	raw := func(path string, bits uint64) []byte {
		rec := []byte{index[path], 0, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.LittleEndian.PutUint64(rec[2:], bits)
		return rec
	}
	// The values of issue 16, items 1-5, and the top of the cache's range.
	f.Add(raw("breaker.half_open_calls", 1<<53))
	f.Add(raw("cache.entries", 1<<40))
	f.Add(raw("cache.entries", 1<<61+1))
	f.Add(raw("cache.entries", 1e8))
	f.Add(raw("breaker.window", 1<<53))
	f.Add(raw("breaker.window", 1<<36))
	f.Add(raw("probes.interval", 1))
	f.Add(raw("routing.temperature", math.Float64bits(1e-300)))
	f.Add(append(raw("breaker.window", 10000), raw("breaker.half_open_calls", 100)...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		doc := fuzzDoc(settings, data)
		cfg, err := translate.ParseConfig(doc)
		if err != nil {
			if translate.KindOf(err) != translate.KindInvalidInput {
				t.Fatalf("ParseConfig(%s) = %v, want KindInvalidInput", doc, err)
			}
			return
		}
		serve100(t, doc, cfg)
	})
}

const (
	fuzzMaxAlloc = 64 << 20         // bytes allocated from New to Close
	fuzzCtx      = 2 * time.Second  // each request's caller ctx
	fuzzSlack    = 10 * time.Second // how late past it a request may return on a busy machine
)

// serve100 builds a Client from cfg and sends it 100 requests.
func serve100(t *testing.T, doc []byte, cfg *translate.Config) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	clk := newShortClock()
	c, err := translate.New(translate.WithConfig(cfg), translate.WithClock(clk), translate.WithSeed(1))
	if err != nil {
		t.Fatalf("ParseConfig accepted %s, New refused it: %v", doc, err)
	}
	long := strings.Repeat("A sentence. ", 40)
	for i := range 100 {
		r := translate.Request{Text: fmt.Sprint("text ", i%13), Source: "en", Target: "es", Scene: translate.Scene(i % 5)}
		if i%10 == 9 {
			r.Text = long
		}
		ctx, cancel := context.WithTimeout(context.Background(), fuzzCtx)
		start := time.Now()
		_, err := c.Translate(ctx, r)
		took := time.Since(start)
		cancel()
		clk.advance(time.Second)
		if took > fuzzCtx+fuzzSlack {
			t.Fatalf("config %s: request %d took %v (err %v), its ctx %v", doc, i, took, err, fuzzCtx)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > fuzzMaxAlloc {
		t.Fatalf("config %s: New, 100 requests and Close allocated %d MB, want at most %d MB", doc, n>>20, fuzzMaxAlloc>>20)
	}
}

// fuzzDoc builds the file data describes: two fake engines, a and b, and the settings.
func fuzzDoc(settings []translate.NumericSetting, data []byte) []byte {
	all.Register()
	top := map[string]any{}
	sections := map[string]map[string]json.RawMessage{}
	for ; len(data) >= 10; data = data[10:] {
		s := settings[int(data[0])%len(settings)]
		val, ok := fuzzValue(s, data[1], binary.LittleEndian.Uint64(data[2:10]))
		if !ok {
			continue
		}
		if sec, key, nested := strings.Cut(s.Path, "."); nested {
			if sections[sec] == nil {
				sections[sec] = map[string]json.RawMessage{}
			}
			sections[sec][key] = val
		} else {
			top[s.Path] = val
		}
	}
	a := map[string]any{"name": "a", "type": "fake", "settings": map[string]string{"fail_rate": "0.5", "seed": "1"}}
	if p := sections["profile"]; p != nil {
		a["profile"] = p
		delete(sections, "profile")
	}
	top["engines"] = []any{a, map[string]any{"name": "b", "type": "fake"}}
	for sec, m := range sections {
		top[sec] = m
	}
	doc, err := json.Marshal(top)
	if err != nil {
		panic(err)
	}
	return doc
}

// fuzzValue is the JSON of one drawn value; false when JSON cannot hold it (NaN, ±Inf).
func fuzzValue(s translate.NumericSetting, mode byte, bits uint64) (json.RawMessage, bool) {
	x, exact := float64(0), int64(0)
	switch mode % 12 {
	case 0: // the raw bits
		if s.Kind == 'f' {
			x = math.Float64frombits(bits)
		} else {
			exact = int64(bits)
			x = float64(exact)
		}
	case 1:
		x = s.Lo
	case 2:
		x = s.Hi
	case 3:
		x = s.Hi + max(1, s.Hi/2)
	case 4:
		x = s.Lo / 2
	case 5:
		x = 0
	case 6:
		x = -1
	case 7:
		x = 1 << 53
	case 8:
		x, exact = math.MaxInt64, math.MaxInt64
	case 9:
		x = 1e-300
	case 10:
		x = 1e300
	case 11:
		x = s.Lo - 1
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil, false
	}
	if exact == 0 && s.Kind != 'f' {
		if x >= math.MaxInt64 || x <= math.MinInt64 {
			exact = math.MaxInt64
		} else {
			exact = int64(x)
		}
	}
	switch s.Kind {
	case 'd':
		return json.RawMessage(strconv.Quote(time.Duration(exact).String())), true
	case 'i':
		return json.RawMessage(strconv.FormatInt(exact, 10)), true
	}
	return json.RawMessage(strconv.FormatFloat(x, 'g', -1, 64)), true
}

// shortClock is a Clock whose time runs virtually: Sleep advances it by d at once after a
// real pause of at most a millisecond, so backoffs and rate-limit waits cost nothing and a
// probe loop cannot spin.
type shortClock struct {
	mu sync.Mutex
	t  time.Time
}

func newShortClock() *shortClock {
	return &shortClock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *shortClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *shortClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (c *shortClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(min(d, time.Millisecond))
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.advance(d)
	return nil
}
