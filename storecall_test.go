package translate_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// TestStoreKeysAreStable: the cache key and the request id's content digest are the same in
// every process and every version (replicas of two versions share one Redis during a
// rolling upgrade): a SHA-256 of source, target, scene, style and text, once per request.
func TestStoreKeysAreStable(t *testing.T) {
	st := &scriptStore{}
	c, err := translate.New(translate.WithStore(st),
		translate.WithEngine(fake.New("a"), paidProfile(0.9)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Translate(context.Background(), translate.Request{Text: "hello", Source: "en", Target: "es", RequestID: "id-1"}); err != nil {
		t.Fatal(err)
	}
	const want = "e1f52e045f7335c31e51171305664b01c130d33ff0c96681c76de30d0ca17988" // computed by the SHA-256 hasher of the first store
	got := []string{st.admits[0].CacheKey, st.admits[0].RequestID, st.settles[0].CacheKey}
	if diff := cmp.Diff([]string{want, "id-1#" + want[:32], want}, got); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}

// deadlineStore records the deadline of every Admit's context.
type deadlineStore struct {
	scriptStore
	deadlines []time.Time
}

func (s *deadlineStore) Admit(ctx context.Context, a translate.Admission) (translate.Admitted, error) {
	d, _ := ctx.Deadline()
	s.deadlines = append(s.deadlines, d)
	return s.scriptStore.Admit(ctx, a)
}

// TestStoreAdmitIsBoundedByTheRequest: a Store's Admit gets at most 250ms, and no more
// than the request has left.
func TestStoreAdmitIsBoundedByTheRequest(t *testing.T) {
	st := &deadlineStore{}
	c, err := translate.New(translate.WithStore(st), translate.WithEngine(fake.New("a"), paidProfile(0.9)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i, left := range []time.Duration{10 * time.Second, 100 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), left)
		start := time.Now()
		_, err := c.Translate(ctx, translate.Request{Text: "hello " + strconv.Itoa(i), Source: "en", Target: "es"})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		d := st.deadlines[len(st.deadlines)-1]
		if limit := start.Add(min(left, 250*time.Millisecond) + 50*time.Millisecond); d.IsZero() || d.After(limit) {
			t.Errorf("with %v left, Admit's deadline is %v after the request started, want at most %v", left, d.Sub(start), min(left, 250*time.Millisecond))
		}
	}
}
