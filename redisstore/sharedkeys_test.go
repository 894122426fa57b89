package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/redisstore"
)

// cacheReplica is a replica with a paid engine and the shared cache on, over addr under
// prefix.
func cacheReplica(t *testing.T, addr, prefix string, e *recEngine, copts ...translate.Option) *replica {
	t.Helper()
	return replicaOf(t, addr, prefix, 0, paid(e), append([]translate.Option{translate.WithCache(100, time.Hour)}, copts...),
		redisstore.WithCache(time.Hour))
}

// onlyKey returns the one key matching pattern.
func onlyKey(t *testing.T, r *replica, pattern string) string {
	t.Helper()
	keys, err := r.rdb.Keys(context.Background(), pattern).Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %q: %v %v, want one", pattern, keys, err)
	}
	return keys[0]
}

// Another application's hash at one request's shared-cache key: that request is served by
// the engine, and so is every later request on the replica (nothing is latched as a
// configuration error).
func TestClientServesAfterAForeignKeyAtOneCacheKey(t *testing.T) {
	srv := needRedis(t)
	ctx := context.Background()
	e := &recEngine{name: "paid"}
	a := cacheReplica(t, srv.Addr, "fk:", e)
	r := translate.Request{Text: "one bad key", Source: "en", Target: "es"}
	if _, err := a.c.Translate(ctx, r); err != nil {
		t.Fatal(err)
	}
	key := onlyKey(t, a, "fk:c:*")
	a.rdb.Del(ctx, key)
	a.rdb.HSet(ctx, key, "f", "v")
	b := cacheReplica(t, srv.Addr, "fk:", e)
	if res, err := b.c.Translate(ctx, r); err != nil || res.FromCache {
		t.Errorf("the request at the foreign key: %+v, %v; want the engine's answer", res, err)
	}
	for i, text := range []string{"other one", "other two", "other three"} {
		if _, err := b.c.Translate(ctx, translate.Request{Text: text, Source: "en", Target: "es"}); err != nil {
			t.Errorf("request %d with other content, after one foreign key: %v", i, err)
		}
	}
}

// A value the store did not write at a request's shared-cache key is never served: the
// request is answered by the engine, not with an empty text.
func TestClientNeverServesAnUnreadableCacheEntry(t *testing.T) {
	srv := needRedis(t)
	ctx := context.Background()
	e := &recEngine{name: "paid"}
	a := cacheReplica(t, srv.Addr, "gc:", e)
	r := translate.Request{Text: "an unreadable entry", Source: "en", Target: "es"}
	first, err := a.c.Translate(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	key := onlyKey(t, a, "gc:c:*")
	for _, v := range []string{"garbage", "", "K{}", `T{"t":""}`, "T", "Tnot json"} {
		a.rdb.Set(ctx, key, v, time.Hour)
		b := cacheReplica(t, srv.Addr, "gc:", e)
		res, err := b.c.Translate(ctx, r)
		if err != nil || res.Text != first.Text || res.FromCache {
			t.Errorf("entry %q: %+v, %v; want the engine's %q", v, res, err, first.Text)
		}
	}
}

// wordEngine translates a few English words and leaves the rest (placeholder masks
// included) alone.
type wordEngine struct{}

func (wordEngine) Name() string { return "paid" }

func (wordEngine) Translate(_ context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	rep := strings.NewReplacer("Hi", "Hola", "name", "nombre", "you have", "tienes")
	out := make([]string, len(r.Texts))
	for i, t := range r.Texts {
		out[i] = rep.Replace(t)
	}
	return &translate.EngineResult{Texts: out}, nil
}

// Two replicas on one Redis and prefix, B protecting ":name" placeholders too: A's
// answer, where the engine translated ":name", reaches B neither through the shared cache
// nor through the shared memory; a replica with B's settings shares B's.
func TestReplicasWithOtherPlaceholdersShareNoAnswer(t *testing.T) {
	srv := needRedis(t)
	colon := translate.WithPlaceholders(fidelity.DefaultSyntaxes|fidelity.Colon, nil)
	for name, tc := range map[string]struct {
		copts []translate.Option
		sopts []redisstore.Option
	}{
		"cache":  {[]translate.Option{translate.WithCache(100, time.Hour)}, []redisstore.Option{redisstore.WithCache(time.Hour)}},
		"memory": {[]translate.Option{translate.WithoutCache(), translate.WithMemory(translate.MemoryPolicy{})}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			replica := func(opts ...translate.Option) *translate.Client {
				return replicaOf(t, srv.Addr, "ph:"+name+":", 0, nil,
					append([]translate.Option{translate.WithEngine(wordEngine{}, translate.Profile{Quality: 90, Timeout: 2 * time.Second})},
						append(tc.copts, opts...)...), tc.sopts...).c
			}
			r := translate.Request{Text: "Hi :name you have %d", Source: "en", Target: "es"}
			type answer struct {
				Text   string
				Shared bool
			}
			ask := func(c *translate.Client) answer {
				res, err := c.Translate(context.Background(), r)
				if err != nil {
					t.Fatal(err)
				}
				return answer{res.Text, res.FromCache || res.FromMemory}
			}
			got := []answer{ask(replica()), ask(replica(colon)), ask(replica(colon))}
			want := []answer{{"Hola :nombre tienes %d", false}, {"Hola :name tienes %d", false}, {"Hola :name tienes %d", true}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("A (defaults), B (colon too), C (as B) (-want +got):\n%s", diff)
			}
		})
	}
}

// With Redis paused mid-run, requests with a 150ms deadline, 8 at once, return within
// their deadline's reach (bound: half the store's 6s WithTimeout), not after the store's
// own timeout: the Client's deadline and its store-step limit reach the store's waits.
func TestPausedRedisRequestsMeetTheirDeadline(t *testing.T) {
	const timeout = 6 * time.Second
	srv := needRedis(t)
	e := &recEngine{name: "paid"}
	a := replicaOf(t, srv.Addr, "pause:", 0, paid(e), nil, redisstore.WithTimeout(timeout))
	ctx := context.Background()
	if _, err := a.c.Translate(ctx, translate.Request{Text: "warm up", Source: "en", Target: "es"}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Resume() }()
	var wg sync.WaitGroup
	took := make([]time.Duration, 8)
	for i := range took {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, _ = a.c.Translate(cctx, translate.Request{Text: fmt.Sprint("text number ", i), Source: "en", Target: "es"})
			took[i] = time.Since(start)
		})
	}
	wg.Wait()
	if worst := slices.Max(took); worst > timeout/2 {
		t.Errorf("the slowest request with a 150ms deadline took %v while Redis was paused (store timeout %v): %v", worst, timeout, took)
	}
}
