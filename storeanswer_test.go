package translate_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// A Store's cached answer that no engine's answer could have been (no text, or the source
// text where a translation must change it) is no hit, from any Store: the engine is asked
// (one more Admit, without the cache key) and its answer settled under the cache key, which
// replaces the entry. A text the same in every language ("OK") still serves from the cache.
func TestStoreCachedAnswerWithoutATranslationIsAMiss(t *testing.T) {
	const src = "the weather is nice today"
	for _, tc := range []struct {
		name, text, cached string
		fromCache          bool
	}{
		{"empty", src, "", false},
		{"the source echoed", src, src, false},
		{"the source echoed, spaced", src, " " + src + "\n", false},
		{"a translation", src, "hace buen tiempo hoy", true},
		{"a text the same in every language", "OK", "OK", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &scriptStore{}
			st.answer = func(a translate.Admission) (translate.Admitted, error) {
				if a.CacheKey != "" {
					return translate.Admitted{Cached: &translate.StoredAnswer{Text: tc.cached, Engine: "a", Source: "en"}, QuotaLeft: -1}, nil
				}
				return translate.Admitted{Lease: "lease", QuotaLeft: -1}, nil
			}
			e := fake.New("a")
			c := newClient(t, translate.WithEngine(e, paidProfile(90)), translate.WithStore(st), translate.WithClock(newClock()),
				translate.WithCache(100, time.Hour))
			res, err := c.Translate(context.Background(), req(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			type outcome struct {
				FromCache       bool
				Calls, Admits   int
				SettledCacheKey bool
			}
			got := outcome{res.FromCache, e.Calls(), len(st.admits), len(st.settles) == 1 && st.settles[0].CacheKey != ""}
			want := outcome{FromCache: true, Admits: 1}
			if !tc.fromCache {
				want = outcome{Calls: 1, Admits: 2, SettledCacheKey: true}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("cached %q (-want +got):\n%s", tc.cached, diff)
			}
			if res.Text == "" || (!tc.fromCache && res.Text == tc.cached) {
				t.Errorf("served %q", res.Text)
			}
		})
	}
}

// A request id's prior answer that no engine's answer could have been is not served, and
// the id is not sent to the engine again: the engine is skipped as failed.
func TestStorePriorAnswerWithoutATranslationIsNotServed(t *testing.T) {
	const src = "the weather is nice today"
	st := &scriptStore{answer: func(translate.Admission) (translate.Admitted, error) {
		return translate.Admitted{Prior: &translate.StoredAnswer{Text: src, Engine: "a", Source: "en"}, QuotaLeft: -1}, nil
	}}
	e := fake.New("a")
	c := newClient(t, translate.WithEngine(e, paidProfile(90)), translate.WithStore(st), translate.WithClock(newClock()))
	r := req(src)
	r.RequestID = "id-1"
	res, err := c.Translate(context.Background(), r)
	if err == nil {
		t.Fatalf("served %q from a prior answer echoing the source", res.Text)
	}
	if n := e.Calls(); n != 0 {
		t.Errorf("the engine was called %d times with a request id that already reached it", n)
	}
	if !cmp.Equal([]translate.Kind{translate.KindBadOutput}, attemptKinds(err)) {
		t.Errorf("attempts %v, want one bad_output", attemptKinds(err))
	}
}

// attemptKinds lists the kinds of err's attempts.
func attemptKinds(err error) []translate.Kind {
	var out []translate.Kind
	if e, ok := err.(*translate.Error); ok {
		for _, a := range e.Attempts {
			out = append(out, translate.KindOf(a.Err))
		}
	}
	return out
}
