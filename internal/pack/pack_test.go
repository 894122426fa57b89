package pack

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"
)

func TestGroup(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string // "" is unpackable
		size int
		want [][]int
	}{
		{"empty", nil, 3, nil},
		{"singles first", []string{"a", "", "a", ""}, 3, [][]int{{1}, {3}, {0, 2}}},
		{"keys in first-seen order", []string{"b", "a", "b", "a"}, 3, [][]int{{0, 2}, {1, 3}}},
		{"cut at size", []string{"a", "a", "a", "a", "a"}, 2, [][]int{{0, 1}, {2, 3}, {4}}},
		{"size one", []string{"a", "a"}, 1, [][]int{{0}, {1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Group(len(tc.keys), tc.size, func(i int) (string, bool) { return tc.keys[i], tc.keys[i] != "" })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Group (-want +got):\n%s", diff)
			}
			for k, task := range got {
				if cap(task) != len(task) {
					t.Errorf("task %d has room past its end: appending would overwrite the next", k)
				}
			}
		})
	}
}

func TestIndexAdd(t *testing.T) {
	x := Index{}
	var parts []string
	var got []Slot
	for k, s := range []string{"x", "y", "x", "z", "y"} {
		var sl Slot
		sl, parts = x.Add(parts, k, s)
		got = append(got, sl)
	}
	want := []Slot{{0, 0}, {1, 1}, {Lead: 0}, {3, 2}, {Lead: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("slots (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"x", "y", "z"}, parts); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
}

type item struct {
	Name string
	Slot
}

func TestHalve(t *testing.T) {
	// texts a b c d; items: a, b, a', c, d, b', d'
	x := Index{}
	var texts []string
	var items []item
	for k, s := range []string{"a", "b", "a", "c", "d", "b", "d"} {
		var sl Slot
		sl, texts = x.Add(texts, k, s)
		items = append(items, item{Name: s, Slot: sl})
	}
	got := Halve(items, texts, func(it *item) *Slot { return &it.Slot })
	want := [2]Half[item]{
		{Items: []item{{"a", Slot{0, 0}}, {"b", Slot{1, 1}}, {"a", Slot{Lead: 0}}, {"b", Slot{Lead: 1}}}, Texts: []string{"a", "b"}},
		{Items: []item{{"c", Slot{0, 0}}, {"d", Slot{1, 1}}, {"d", Slot{Lead: 1}}}, Texts: []string{"c", "d"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Halve (-want +got):\n%s", diff)
	}
	if items[4].Slot != (Slot{4, 3}) {
		t.Errorf("Halve changed its input: %v", items[4].Slot)
	}
	three := Halve(items[:4], texts[:3], func(it *item) *Slot { return &it.Slot })
	if diff := cmp.Diff([][]string{{"a"}, {"b", "c"}}, [][]string{three[0].Texts, three[1].Texts}); diff != "" {
		t.Errorf("Halve of 3 texts (-want +got):\n%s", diff)
	}
}

func TestSplits(t *testing.T) {
	for n, want := range map[int]int{1: 4, 2: 8, 3: 8, 50: 24, 1000: 40} {
		if got := Splits(n); got != want {
			t.Errorf("Splits(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestTextSource(t *testing.T) {
	de, fr := language.German, language.French
	for _, tc := range []struct {
		name string
		call language.Tag
		per  []language.Tag
		i    int
		want string
	}{
		{"call", de, nil, 1, "de"},
		{"per text", de, []language.Tag{de, fr}, 1, "fr"},
		{"per text of another length", de, []language.Tag{fr}, 0, "de"},
		{"none", language.Und, nil, 0, ""},
		{"per text none", de, []language.Tag{de, language.Und}, 1, ""},
	} {
		if got := TextSource(tc.call, tc.per, 2, tc.i); got != tc.want {
			t.Errorf("%s: TextSource = %q, want %q", tc.name, got, tc.want)
		}
	}
}
