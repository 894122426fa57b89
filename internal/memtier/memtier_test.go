package memtier

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate/fidelity/memory"
)

// shared is a Shared in a map, counting its calls; err fails every call.
type shared struct {
	m           map[string]memory.Entry
	err         error
	gets, puts  int
	hadDeadline bool
}

func (s *shared) MemoryGet(ctx context.Context, source, target, text string) (memory.Entry, bool, error) {
	s.gets++
	_, s.hadDeadline = ctx.Deadline()
	e, ok := s.m[source+"|"+target+"|"+text]
	return e, ok, s.err
}

func (s *shared) MemoryPut(ctx context.Context, e memory.Entry) error {
	s.puts++
	_, s.hadDeadline = ctx.Deadline()
	if s.err == nil {
		s.m[e.Source+"|"+e.Target+"|"+e.Text] = e
	}
	return s.err
}

func newOwn(t *testing.T, entries ...memory.Entry) *memory.Memory {
	t.Helper()
	m, err := memory.New(memory.Options{MaxBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := m.Put(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func entry(text, tr, engine string) memory.Entry {
	return memory.Entry{Source: "en", Target: "de", Text: text, Translation: tr, Engine: engine}
}

func TestFind(t *testing.T) {
	const text = "the quick brown fox jumps over the lazy dog"
	near := entry(text+"s", "near", "own")
	for _, tc := range []struct {
		name      string
		own       []memory.Entry
		shared    []memory.Entry
		sharedErr error
		noShared  bool
		th        float64
		want      memory.Match
		found     bool
		gets      int
	}{
		{"own exact: the shared memory is not asked", []memory.Entry{entry(text, "own", "a")}, []memory.Entry{entry(text, "shared", "b")}, nil, false, 0.9,
			memory.Match{Entry: entry(text, "own", "a"), Score: 1}, true, 0},
		{"shared exact over own fuzzy", []memory.Entry{near}, []memory.Entry{entry(text, "shared", "b")}, nil, false, 0.9,
			memory.Match{Entry: entry(text, "shared", "b"), Score: 1}, true, 1},
		{"own fuzzy when the shared misses", []memory.Entry{near}, nil, nil, false, 0.9,
			memory.Match{Entry: near, Score: memory.Score(near.Text, text)}, true, 1},
		{"shared errors are a miss", nil, []memory.Entry{entry(text, "shared", "b")}, errors.New("down"), false, 0.9, memory.Match{}, false, 1},
		{"no shared memory", []memory.Entry{near}, nil, nil, true, 1, memory.Match{}, false, 0},
	} {
		sh := &shared{m: map[string]memory.Entry{}, err: tc.sharedErr}
		for _, e := range tc.shared {
			sh.m[e.Source+"|"+e.Target+"|"+e.Text] = e
		}
		tiers := Tiers{Own: newOwn(t, tc.own...), Shared: sh, Wait: time.Minute}
		if tc.noShared {
			tiers.Shared = nil
		}
		got, found := tiers.Find(t.Context(), "en", "de", text, tc.th)
		if diff := cmp.Diff(tc.want, got); found != tc.found || (found && diff != "") {
			t.Errorf("%s: Find = %v (-want +got):\n%s", tc.name, found, diff)
		}
		if sh.gets != tc.gets || (sh.gets > 0 && !sh.hadDeadline) {
			t.Errorf("%s: %d shared gets (deadline %v), want %d", tc.name, sh.gets, sh.hadDeadline, tc.gets)
		}
	}
}

// What the shared memory answers is kept in the own memory, under the languages and text
// asked.
func TestFindKeepsShared(t *testing.T) {
	own := newOwn(t)
	sh := &shared{m: map[string]memory.Entry{"en|de|hi": {Translation: "hallo", Engine: "b"}}}
	tiers := Tiers{Own: own, Shared: sh, Wait: time.Minute}
	if _, found := tiers.Find(t.Context(), "en", "de", "hi", 1); !found {
		t.Fatal("not found")
	}
	if diff := cmp.Diff([]memory.Entry{entry("hi", "hallo", "b")}, own.Entries()); diff != "" {
		t.Errorf("own entries (-want +got):\n%s", diff)
	}
}

// failing is a memory.Store whose Lookup fails.
type failing struct{ memory.Store }

func (failing) Lookup(context.Context, string, string, string, float64) (memory.Match, bool, error) {
	return memory.Match{Entry: entry("x", "y", "z"), Score: 1}, true, errors.New("broken")
}

func TestFindOwnError(t *testing.T) {
	sh := &shared{m: map[string]memory.Entry{"en|de|x": entry("x", "shared", "b")}}
	tiers := Tiers{Own: failing{newOwn(t)}, Shared: sh, Wait: time.Minute}
	m, found := tiers.Find(t.Context(), "en", "de", "x", 1)
	if !found || m.Translation != "shared" {
		t.Errorf("own error: Find = %v, %v; want the shared entry", m, found)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if m, found := tiers.Find(ctx, "en", "de", "x", 1); found || sh.gets != 1 {
		t.Errorf("own error after ctx ended: Find = %v, %v, %d shared gets; want a miss, not asking", m, found, sh.gets)
	}
}

func TestPut(t *testing.T) {
	own := newOwn(t)
	sh := &shared{m: map[string]memory.Entry{}}
	tiers := Tiers{Own: own, Shared: sh, Wait: time.Minute}
	e := entry("hi", "hallo", "a")
	if err := tiers.Put(e); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]memory.Entry{e}, own.Entries()); diff != "" {
		t.Errorf("own entries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]memory.Entry{"en|de|hi": e}, sh.m); diff != "" || !sh.hadDeadline {
		t.Errorf("shared entries (deadline %v) (-want +got):\n%s", sh.hadDeadline, diff)
	}
	big := entry(strings.Repeat("x", 5000), "y", "a")
	if err := tiers.Put(big); err != nil {
		t.Errorf("Put of an entry too large: %v, want nil", err)
	}
	if sh.puts != 2 {
		t.Errorf("%d shared puts, want 2: an entry too large for the own memory is shared", sh.puts)
	}
	sh.err = errors.New("down")
	if err := (&Tiers{Own: own, Shared: sh, Wait: time.Minute}).Put(entry("a", "b", "c")); err != nil {
		t.Errorf("Put with the shared memory down: %v, want nil", err)
	}
	if err := (&Tiers{Own: own}).Put(entry("b", "c", "d")); err != nil || own.Len() != 3 {
		t.Errorf("Put without a shared memory: %v, %d entries, want nil, 3", err, own.Len())
	}
}

// putFailing is a memory.Store whose Put fails.
type putFailing struct{ memory.Store }

func (putFailing) Put(context.Context, memory.Entry) error { return errors.New("broken") }

func TestPutOwnError(t *testing.T) {
	if err := (&Tiers{Own: putFailing{}}).Put(entry("a", "b", "c")); err == nil {
		t.Error("Put with the own memory failing: no error")
	}
}

func TestImport(t *testing.T) {
	entries := []memory.Entry{
		entry("hello", "hallo", "a"),
		{Source: "en", Target: "xx", Text: "refused", Translation: "y"},
		entry(strings.Repeat("x", 5000), "too large", ""),
		entry("bye", "tschüss", ""),
		{Source: "en", Target: "de", Text: "", Translation: "empty"},
	}
	var tmx strings.Builder
	if err := memory.ExportTMX(&tmx, entries); err != nil {
		t.Fatal(err)
	}
	own := newOwn(t)
	norm := func(source, target string) (string, string, bool) {
		return strings.ToUpper(source), strings.ToUpper(target), target != "xx"
	}
	stored, skipped, err := Import(t.Context(), own, strings.NewReader(tmx.String()), norm)
	// Skipped: the refused pair, the entry too large, and both segments of the empty one.
	if err != nil || stored != 2 || skipped != 4 {
		t.Errorf("Import = %d stored, %d skipped, %v; want 2, 4, nil", stored, skipped, err)
	}
	up := func(e memory.Entry) memory.Entry { e.Source, e.Target = "EN", "DE"; return e }
	if diff := cmp.Diff([]memory.Entry{up(entries[0]), up(entries[3])}, own.Entries()); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	_, _, err = Import(t.Context(), putFailing{}, strings.NewReader(tmx.String()), norm)
	if err == nil {
		t.Error("Import into a failing memory: no error")
	}
}
