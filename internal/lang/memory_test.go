package lang

import (
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPairMemory(t *testing.T) {
	var p PairMemory
	if p.Has(1, 2) || p.Len() != 0 {
		t.Fatal("the zero memory remembers")
	}
	p.Add(1, 2)
	got := []bool{p.Has(1, 2), p.Has(2, 1), p.Has(1, 3)}
	if diff := cmp.Diff([]bool{true, false, false}, got); diff != "" {
		t.Errorf("Has (-want +got):\n%s", diff)
	}
	for i := range MaxRemembered + 10 {
		p.Add(i, i+1)
	}
	if n := p.Len(); n > MaxRemembered || !p.Has(MaxRemembered+9, MaxRemembered+10) {
		t.Errorf("%d remembered (bound %d), or the newest forgotten", n, MaxRemembered)
	}
	p.Forget()
	if p.Has(MaxRemembered+9, MaxRemembered+10) || p.Len() != 0 {
		t.Error("Forget left pairs")
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { p.Add(i, i); p.Has(i, i) })
	}
	wg.Wait()
	if p.Len() != 4 {
		t.Errorf("concurrent adds: %d pairs, want 4", p.Len())
	}
}

var scenes = []string{"general", "legal", "chat"}

func TestParseKey(t *testing.T) {
	type res struct {
		Src, Tgt string
		Scene    int
		Err      string
	}
	tests := []struct {
		key  string
		want res
	}{
		{"en-de", res{"en", "de", -1, ""}},
		{"*-ja/legal", res{"*", "ja", 1, ""}},
		{"zh-Hant-en/chat", res{"zh-Hant", "en", 2, ""}},
		{"en-de/poetry", res{"", "", 0, "unknown scene (known: general, legal, chat)"}},
		{"ende", res{"", "", -1, ErrPairKey.Error()}},
	}
	for _, tt := range tests {
		src, tgt, sc, err := ParseKey(tt.key, scenes)
		got := res{src, tgt, sc, ""}
		if err != nil {
			got.Err = err.Error()
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseKey(%q) (-want +got):\n%s", tt.key, diff)
		}
	}
}

func TestCheckKeys(t *testing.T) {
	long := strings.Repeat("x", 50) + "-de"
	tests := []struct {
		m             map[string]float64
		name, problem string
	}{
		{nil, "", ""},
		{map[string]float64{"en-de": 90, "*-ja/legal": 0, "en-*": 100}, "", ""},
		{map[string]float64{"en-de": 90, "en-fr": 101}, `"en-fr"`, "must be within 0..100"},
		{map[string]float64{"en-fr": math.NaN()}, `"en-fr"`, "must be within 0..100"},
		{map[string]float64{"b-c/poetry": 50, "a-x/nope": 101}, `"a-x/nope"`, "unknown scene (known: general, legal, chat)"},
		{map[string]float64{long: 50}, `"` + long[:40] + `…"`, ErrPairKey.Error()},
		// Keys that name one pair once normalised: which would win depends on map order.
		{map[string]float64{"en-de": 0, "EN-DE": 100}, `"en-de"`, `names the same pair as "EN-DE"`},
		{map[string]float64{"en-Latn-de": 0, "en-de": 100}, `"en-de"`, `names the same pair as "en-Latn-de"`},
		{map[string]float64{"*-JA/legal": 0, "*-ja/legal": 100}, `"*-ja/legal"`, `names the same pair as "*-JA/legal"`},
		{map[string]float64{"zh-Hant-en": 1, "zh-en": 2, "en-de": 3, "en-de/legal": 4}, "", ""}, // zh is zh-Hans; a scene is another key
	}
	for _, tt := range tests {
		name, problem := CheckKeys(tt.m, scenes)
		if diff := cmp.Diff([]string{tt.name, tt.problem}, []string{name, problem}); diff != "" {
			t.Errorf("CheckKeys(%v) (-want +got):\n%s", tt.m, diff)
		}
	}
}

// BuildPairTable: a key with a scene overrides the key without one for its scene only;
// Factor finds the most specific entry, 1 when none.
func TestBuildPairTable(t *testing.T) {
	ids := map[string]int{"*": 0, "en": 1, "de": 2, "ja": 3}
	m := map[string]float64{"en-de": 80, "en-de/legal": 95, "*-ja": 70}
	tab, has := BuildPairTable(m, scenes, func(tag string) int { return ids[tag] },
		func(scene int, q float64) float64 { return q + float64(scene)/10 })
	if has != 0b111 {
		t.Errorf("has %b, want 111", has)
	}
	got := []float64{tab.Factor(1, 2, 0), tab.Factor(1, 2, 1), tab.Factor(1, 2, 2),
		tab.Factor(2, 3, 1), tab.Factor(1, 3, 0), tab.Factor(2, 1, 0)}
	if diff := cmp.Diff([]float64{80, 95.1, 80.2, 70.1, 70, 1}, got); diff != "" {
		t.Errorf("Factor (-want +got):\n%s", diff)
	}
	p, _ := tab.Find(1, 2, 1)
	if diff := cmp.Diff([]float64{80, 95, 80}, p.Q); diff != "" {
		t.Errorf("Q of en-de (-want +got):\n%s", diff)
	}
	if _, has := BuildPairTable(map[string]float64{"en-de/chat": 1, "ja-de/legal": 1}, scenes,
		func(tag string) int { return ids[tag] }, func(int, float64) float64 { return 1 }); has != 0b110 {
		t.Errorf("has %b, want 110", has)
	}
}
