package redisstore

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity/memory"
)

// logRecorder keeps the records logged at warn and above as "LEVEL message kind=...".
type logRecorder struct {
	mu   sync.Mutex
	recs []string
}

func (r *logRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler           { return r }
func (r *logRecorder) WithGroup(string) slog.Handler                { return r }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	line := rec.Level.String() + " " + rec.Message
	rec.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, line)
	return nil
}

func (r *logRecorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.recs...)
}

// A key of another type (another application's hash, say) at one request's cache key,
// request-id key or memory key concerns that request alone: its lookup misses or its id is
// claimed afresh, the store keeps serving every other request, nothing is latched as a
// configuration error, and each kind is logged once at warn, naming the kind only.
func TestWrongTypeAtARequestKeyConcernsThatRequestOnly(t *testing.T) {
	logs := &logRecorder{}
	f := newFixture(t, WithCache(time.Hour), WithLogger(slog.New(logs)))
	const secret = "customer text"
	f.rdb.HSet(f.ctx, f.st.k.cache("bad"), "f", secret)
	f.rdb.Set(f.ctx, f.st.k.request("rid-bad"), secret, time.Hour)
	f.rdb.HSet(f.ctx, f.st.k.memory("en", "de", "bad"), "f", secret)
	t.Cleanup(func() { // keys that never expire: gone before TestTenantKeysExpireAndCarryTheTenantTag looks
		f.rdb.Del(context.Background(), f.st.k.cache("bad"), f.st.k.memory("en", "de", "bad"))
	})

	for i := range 2 { // the second time: logged no more
		a := adm("deepl", 1, 0)
		a.CacheKey = "bad"
		got := f.admit(a)
		if got.Cached != nil || got.Lease == "" {
			t.Fatalf("round %d: a hash at the cache key: %+v, want a miss with a lease", i, got)
		}
		f.settle(translate.Settlement{Lease: got.Lease, Sent: true, Credits: 1})
		f.rdb.HSet(f.ctx, f.st.k.cache("bad"), "f", secret) // a Settle with an answer overwrites it: put it back
		_, found, err := f.st.MemoryGet(f.ctx, "en", "de", "bad")
		if found || err != nil {
			t.Fatalf("round %d: a hash at the memory key: found %v, err %v; want a miss", i, found, err)
		}
	}
	a := adm("deepl", 1, 0)
	a.RequestID = "rid-bad"
	if got := f.admit(a); got.Lease == "" || got.Prior != nil || got.Refused != translate.KindUnknown {
		t.Fatalf("a string at the request id's key: %+v, want the id claimed afresh", got)
	}
	if typ := f.rdb.Type(f.ctx, f.st.k.request("rid-bad")).Val(); typ != "hash" {
		t.Errorf("the request id's key is a %s after the claim, want the store's hash", typ)
	}
	if err := f.st.stickyErr(); err != nil {
		t.Fatalf("latched: %v", err)
	}
	for i := range 3 {
		a := adm("deepl", 1, 0)
		a.CacheKey, a.RequestID = "good"+string(rune('0'+i)), "rid-good"+string(rune('0'+i))
		if got, err := f.st.Admit(f.ctx, a); err != nil || got.Lease == "" {
			t.Errorf("another request %d: %+v, %v", i, got, err)
		}
		if err := f.st.MemoryPut(f.ctx, memory.Entry{Source: "en", Target: "de", Text: "good", Translation: "gut"}); err != nil {
			t.Errorf("MemoryPut %d: %v", i, err)
		}
	}
	if f.st.Degraded() {
		t.Error("a key of another type was taken for an outage")
	}
	want := []string{
		"WARN " + warnForeign + " kind=cache",
		"WARN " + warnForeign + " kind=memory",
		"WARN " + warnForeign + " kind=request id",
	}
	got := logs.lines()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
	for _, l := range got {
		if strings.Contains(l, secret) || strings.Contains(l, f.st.k.spread) {
			t.Errorf("the log names the key or its value: %q", l)
		}
	}
}

const warnForeign = "redisstore: a request's key holds what the store did not write there: that request skips it; keys under the store's prefix belong to the store"

// An answer settled, or pushed after an outage, to a request-id key that holds a key of
// another type is dropped: the Settle is no outage, and the push neither fails nor keeps
// the answer to push again.
func TestAnswerAtAForeignKeyIsDropped(t *testing.T) {
	f := newFixture(t, WithCache(time.Hour))
	a := adm("deepl", 1, 0)
	a.RequestID, a.CacheKey = "rid", "ck"
	got := f.admit(a)
	f.rdb.Del(f.ctx, f.st.k.request("rid"))
	f.rdb.Set(f.ctx, f.st.k.request("rid"), "another app's", time.Hour)
	text := &translate.StoredAnswer{Text: "hola", Source: "en", Engine: "deepl"}
	f.settle(translate.Settlement{Lease: got.Lease, Sent: true, Credits: 1, Answer: text, CacheKey: "ck"})
	if f.st.Degraded() {
		t.Error("Settle took a key of another type for an outage")
	}
	if hit := f.admit(adm2(a, "", "ck")); hit.Cached == nil || hit.Cached.Text != "hola" {
		t.Errorf("the cache entry of the same Settle: %+v, want it kept", hit)
	}

	f.st.loc.answerLocal(pendingAnswer{key: f.st.k.request("rid"), engine: "deepl", answer: encodeAnswer(text), ttl: time.Minute}, t0)
	if err := f.st.pushIfPending(f.ctx); err != nil {
		t.Errorf("push: %v", err)
	}
	if waiting, _ := f.st.loc.pending(); waiting {
		t.Error("the dropped answer waits to be pushed again")
	}
}

// adm2 is a with another request id and cache key.
func adm2(a translate.Admission, rid, ck string) translate.Admission {
	a.RequestID, a.CacheKey = rid, ck
	return a
}

// A cache entry that is not a text answer as Settle writes it (another application's
// value, a damaged one, a failure) is a miss: the admission gets a lease, never an empty
// answer.
func TestUnreadableCacheEntryIsAMiss(t *testing.T) {
	f := newFixture(t, WithCache(time.Hour))
	for _, v := range []string{"garbage", "", "K{}", `T{"t":""}`, "T", "Tnot json", `K{"t":"hola"}`, `T{"s":"en"}`, "T[]"} {
		f.rdb.Set(f.ctx, f.st.k.cache("ck"), v, time.Hour)
		a := adm("deepl", 1, 0)
		a.CacheKey = "ck"
		got := f.admit(a)
		if got.Cached != nil || got.Lease == "" {
			t.Errorf("cache entry %q: %+v, want a miss with a lease", v, got)
			continue
		}
		f.settle(translate.Settlement{Lease: got.Lease})
	}
	text := &translate.StoredAnswer{Text: "hola", Source: "en", Engine: "deepl"}
	f.rdb.Set(f.ctx, f.st.k.cache("ck"), encodeAnswer(text), time.Hour)
	if got := f.admit(adm2(adm("deepl", 1, 0), "", "ck")); !cmp.Equal(text, got.Cached) {
		t.Errorf("a text answer: %+v, want %+v", got.Cached, text)
	}
}
