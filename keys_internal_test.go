package translate

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate/internal/lang"
)

// gatheringEngine answers "[target] text", but only once want calls are in it, or a second
// after its first call (when fewer came: some requests shared a call).
type gatheringEngine struct {
	want  int32
	in    atomic.Int32
	all   chan struct{}
	first sync.Once
}

func (*gatheringEngine) Name() string { return "gather" }

func (g *gatheringEngine) Translate(ctx context.Context, r *EngineRequest) (*EngineResult, error) {
	if g.in.Add(1) == g.want {
		close(g.all)
	}
	select {
	case <-g.all:
	case <-time.After(time.Second):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &EngineResult{Texts: []string{"[" + r.Target.String() + "] " + r.Texts[0]}}, nil
}

// TestOverflowedTargetsNeverShare: once the Client has interned lang.MaxFullIDs full
// targets, a new target has no id of its own (0, the same for all of them): identical texts
// into such targets must share no engine call and no request id's answer.
func TestOverflowedTargetsNeverShare(t *testing.T) {
	targets := []string{"ja", "ko", "fr", "ru"}
	g := &gatheringEngine{want: int32(len(targets)), all: make(chan struct{})}
	c, err := New(WithSeed(1), WithoutCache(), WithEngine(g, Profile{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < lang.MaxFullIDs; i++ {
		if _, err := c.langs.Lookup("de-x-" + strconv.FormatInt(int64(i), 36)); err != nil {
			t.Fatal(err)
		}
	}
	if in, _ := c.langs.Lookup("ja"); in.FullID != 0 {
		t.Fatalf("ja has full id %d: the Client has not run out", in.FullID)
	}
	ctx := context.Background()
	got := make([]string, len(targets))
	var wg sync.WaitGroup
	for i, tgt := range targets {
		wg.Go(func() {
			res, err := c.Translate(ctx, Request{Text: "Good morning, friends", Source: "en", Target: tgt})
			if err != nil {
				got[i] = err.Error()
				return
			}
			got[i] = res.Text
		})
	}
	wg.Wait()
	var want []string
	for _, tgt := range targets {
		want = append(want, "["+tgt+"] Good morning, friends")
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("concurrent requests into four overflowed targets (-want +got):\n%s", d)
	}
	for _, tgt := range []string{"ja", "ko"} { // one id, reused with another target
		res, err := c.Translate(ctx, Request{Text: "Good evening", Source: "en", Target: tgt, RequestID: "r1"})
		if err != nil || res.Text != "["+tgt+"] Good evening" {
			t.Errorf("id r1 into %s: %v, %v", tgt, res, err)
		}
	}
}

// TestDefaultCacheBoundsBytes: the default cache holds 10,000 entries and at most 64 MiB:
// 100 texts of 1 MiB (2 MiB with their translations) held 200 MiB before.
func TestDefaultCacheBoundsBytes(t *testing.T) {
	c, err := New(WithSeed(1), WithEngine(nopEngine{"a"}, Profile{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	text := strings.Repeat("word ", 200_000) // 1,000,000 bytes
	for i := range 100 {
		if _, err := c.Translate(context.Background(), Request{Text: strconv.Itoa(i) + text, Source: "en", Target: "es"}); err != nil {
			t.Fatal(err)
		}
	}
	if b := c.cache.m.Bytes(); b > cacheBytes(10_000) || b < cacheBytes(10_000)/2 {
		t.Errorf("the default cache holds %d MiB, want at most %d", b>>20, cacheBytes(10_000)>>20)
	}
}
