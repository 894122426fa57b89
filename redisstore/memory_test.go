package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity/memory"
	"github.com/fanyi-go/translate/redisstore"
	"github.com/fanyi-go/translate/redisstore/redistest"
)

// memReplica is a replica with the translation memory on and one free engine (no budget
// block to lease), over addr under prefix.
func memReplica(t *testing.T, addr, prefix string, e *recEngine, sopts ...redisstore.Option) *replica {
	t.Helper()
	free := map[*recEngine]translate.Profile{e: {Quality: 90, Timeout: 2 * time.Second}}
	return replicaOf(t, addr, prefix, 0, free,
		[]translate.Option{translate.WithMemory(translate.MemoryPolicy{})}, sopts...)
}

func memReq(text string) translate.Request {
	return translate.Request{Text: text, Source: "en", Target: "es"}
}

// A text replica A's engine translated answers on replica B from the shared memory: exact,
// with A's engine named, and B's engine never called; B keeps the entry in its own memory,
// so asking again costs no round trip to Redis. The entry is one key under the prefix with
// an expiry of at most the memory TTL, holding the translation but not the text.
func TestReplicasShareTheMemory(t *testing.T) {
	srv := needRedis(t)
	const prefix = "share:mem:"
	ea, eb := &recEngine{name: "paid"}, &recEngine{name: "paid"}
	const ttl = 2 * time.Hour
	a := memReplica(t, srv.Addr, prefix, ea, redisstore.WithMemoryTTL(ttl))
	b := memReplica(t, srv.Addr, prefix, eb, redisstore.WithMemoryTTL(ttl))
	ctx := context.Background()
	const text = "Where is the station?"
	ra, err := a.c.Translate(ctx, memReq(text))
	if err != nil || ra.FromMemory {
		t.Fatalf("replica A: %+v, %v; want an engine's answer", ra, err)
	}
	rb, err := b.c.Translate(ctx, memReq(text))
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Text, Engine string
		FromMemory   bool
		Score        float64
		Calls        int
	}
	want := got{Text: ra.Text, Engine: "paid", FromMemory: true, Score: 1}
	if diff := cmp.Diff(want, got{rb.Text, rb.Engine, rb.FromMemory, rb.MemoryScore, len(eb.calls())}); diff != "" {
		t.Errorf("replica B (-want +got):\n%s", diff)
	}
	b.rt.n.Store(0)
	if r, err := b.c.Translate(ctx, memReq(text)); err != nil || !r.FromMemory {
		t.Fatalf("again on B: %+v, %v", r, err)
	}
	if n := b.rt.n.Load(); n != 0 {
		t.Errorf("B's second hit: %d round trips to Redis, want 0 (kept in its own memory)", n)
	}
	checkMemoryKeys(t, a.rdb, prefix, ttl, text)
}

// checkMemoryKeys checks the single memory key under prefix: it expires within ttl and
// holds no source text.
func checkMemoryKeys(t *testing.T, rdb *redis.Client, prefix string, ttl time.Duration, text string) {
	t.Helper()
	mem := dumpKeys(t, rdb, prefix+"m:")
	if len(mem) != 1 {
		t.Fatalf("memory keys %v, want 1", mem)
	}
	for k, v := range mem {
		if d := rdb.PTTL(context.Background(), k).Val(); d <= 0 || d > ttl {
			t.Errorf("memory key %q: TTL %v, want in (0, %v]", k, d, ttl)
		}
		if strings.Contains(k, text) || strings.Contains(v, text) || !strings.Contains(v, "[es]") {
			t.Errorf("memory key %q = %q: want the translation only", k, v)
		}
	}
}

// With Redis stopped, the memory is only an optimisation lost: every request still
// succeeds, from the Client's own memory and cache or from its engine (free: a paid one
// would spend what its leased blocks hold, as without the memory).
func TestSharedMemoryOutageFailsNoRequest(t *testing.T) {
	srv := needRedis(t)
	ea, eb := &recEngine{name: "paid"}, &recEngine{name: "paid"}
	a := memReplica(t, srv.Addr, "share:memdown:", ea)
	b := memReplica(t, srv.Addr, "share:memdown:", eb)
	ctx := context.Background()
	if _, err := a.c.Translate(ctx, memReq("known text")); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	type got struct {
		Local bool // from the Client's memory or cache
		Err   bool
	}
	for _, tc := range []struct {
		name string
		c    *translate.Client
		text string
		want got
	}{
		{"A, its own entry", a.c, "known text", got{Local: true}},
		{"A, a new text", a.c, "new text", got{}},
		{"B, A's entry", b.c, "known text", got{}},
		{"B, a new text", b.c, "another text", got{}},
	} {
		r, err := tc.c.Translate(ctx, memReq(tc.text))
		g := got{Err: err != nil}
		if err == nil {
			g.Local = r.FromMemory || r.FromCache
		}
		if diff := cmp.Diff(tc.want, g); diff != "" {
			t.Errorf("%s (-want +got):\n%s; err %v", tc.name, diff, err)
		}
	}
	if n := len(eb.calls()); n != 2 {
		t.Errorf("B's engine: %d calls, want 2", n)
	}
}

// With Redis paused (it accepts connections and never answers), a miss waits for the shared
// memory at most the Client's own store wait (250ms), not the store's timeout (2s here), and
// then the store stops asking until its next probe: the request is served by the engine.
func TestSharedMemoryPausedRedisBoundsTheWait(t *testing.T) {
	srv := needRedis(t)
	e := &recEngine{name: "paid"}
	a := memReplica(t, srv.Addr, "share:mempause:", e)
	ctx := context.Background()
	if _, err := a.c.Translate(ctx, memReq("before the pause")); err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Resume() }()
	start := time.Now()
	r, err := a.c.Translate(ctx, memReq("during the pause"))
	took := time.Since(start)
	if err != nil || r.FromMemory {
		t.Fatalf("during the pause: %+v, %v; want the engine's answer", r, err)
	}
	if took > 1500*time.Millisecond {
		t.Errorf("a miss during the pause took %v, want about 250ms (the Client's store wait)", took)
	}
}

// The store compares as package fidelity/memory does: languages case-insensitively, texts in
// NFC; it refuses a translation over 64 KiB, and WithMemoryTTL has a range.
func TestMemoryStoreKeysAndBounds(t *testing.T) {
	srv := needRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, DisableIdentity: true})
	t.Cleanup(func() { _ = rdb.Close() })
	st, err := redisstore.New(rdb, redisstore.WithPrefix("mem:keys:"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e := memory.Entry{Source: "en-Latn", Target: "fr-Latn", Text: "caf\u00e9", Translation: "café", Engine: "x"}
	if err := st.MemoryPut(ctx, e); err != nil {
		t.Fatal(err)
	}
	got, found, err := st.MemoryGet(ctx, "EN-latn", "fr-LATN", "cafe\u0301")
	if err != nil || !found || got.Translation != "café" || got.Engine != "x" {
		t.Errorf("NFD text, other case: %+v, %v, %v; want the NFC entry", got, found, err)
	}
	if _, found, _ := st.MemoryGet(ctx, "en-Latn", "de-Latn", "caf\u00e9"); found {
		t.Error("another target found the entry")
	}
	big := e
	big.Translation = strings.Repeat("a", 64<<10+1)
	if err := st.MemoryPut(ctx, big); !errors.Is(err, memory.ErrTooLarge) {
		t.Errorf("64 KiB + 1 translation: %v, want ErrTooLarge", err)
	}
	for _, ttl := range []time.Duration{0, time.Minute - 1, 365*24*time.Hour + 1} {
		if _, err := redisstore.New(rdb, redisstore.WithMemoryTTL(ttl)); err == nil {
			t.Errorf("WithMemoryTTL(%v) accepted", ttl)
		}
	}
}

// BenchmarkMemoryPutGet is what sharing one translation costs the store: the SET after an
// engine call on one replica and the GET of another replica's miss; each iteration a new text.
func BenchmarkMemoryPutGet(b *testing.B) {
	srv, err := redistest.Start()
	if err != nil {
		redistest.Skip(b, err)
	}
	defer srv.Stop()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, DisableIdentity: true})
	defer rdb.Close()
	st, err := redisstore.New(rdb, redisstore.WithPrefix("bench:mem:"))
	if err != nil {
		b.Fatal(err)
	}
	e := memory.Entry{Source: "en-Latn", Target: "es-Latn", Translation: "¿Dónde está la estación?", Engine: "x"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		e.Text = "Where is the station? " + strconv.Itoa(i)
		if err := st.MemoryPut(ctx, e); err != nil {
			b.Fatal(err)
		}
		if _, ok, err := st.MemoryGet(ctx, e.Source, e.Target, e.Text); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
