package reload

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type opts struct {
	log     []string
	configs int
}

type option func(*opts)

func note(s string) option { return func(o *opts) { o.log = append(o.log, s) } }

func config(s string) option {
	return func(o *opts) { o.log = append(o.log, s); o.configs++ }
}

func configs(o *opts) int { return o.configs }

func names(fs []option) []string {
	var o opts
	Apply(&o, fs)
	return o.log
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name          string
		in            []option
		before, after []string // nil: no options kept
		applied       []string
	}{
		{"no config", []option{note("a"), nil, note("b")}, nil, nil, []string{"a", "b"}},
		{"one config", []option{note("a"), config("C"), nil, note("b")}, []string{"a"}, []string{"b"},
			[]string{"a", "C", "b"}},
		{"last config wins", []option{config("C1"), note("a"), config("C2"), note("b")},
			[]string{"C1", "a"}, []string{"b"}, []string{"C1", "a", "C2", "b"}},
		{"config last", []option{note("a"), config("C")}, []string{"a"}, nil, []string{"a", "C"}},
	}
	for _, tt := range tests {
		var o opts
		before, after := Split(&o, tt.in, configs)
		got := [][]string{names(before), names(after), o.log}
		if d := cmp.Diff([][]string{tt.before, tt.after, tt.applied}, got); d != "" {
			t.Errorf("%s: before, after, applied (-want +got):\n%s", tt.name, d)
		}
	}
}

func TestSplitCopies(t *testing.T) {
	in := []option{note("a"), config("C"), note("b")}
	var o opts
	before, after := Split(&o, in, configs)
	in[0], in[2] = note("x"), note("y")
	if d := cmp.Diff([]string{"a", "b"}, append(names(before), names(after)...)); d != "" {
		t.Errorf("Split keeps the caller's slice (-want +got):\n%s", d)
	}
}

func TestCache(t *testing.T) {
	tests := []struct {
		size     int
		disabled bool
		entries  int
		want     []string
	}{
		{10000, false, 0, nil},
		{10000, false, 10000, nil},
		{10000, false, 500, []string{"cache.entries"}},
		{500, false, 0, []string{"cache.entries"}},
		{10000, true, 0, []string{"cache.disabled"}},
		{0, false, 0, []string{"cache.disabled"}},
		{0, true, 500, nil},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, CacheNotApplied(tt.size, tt.disabled, tt.entries)); d != "" {
			t.Errorf("CacheNotApplied(%d, %v, %d) (-want +got):\n%s", tt.size, tt.disabled, tt.entries, d)
		}
	}
	got := []time.Duration{CacheTTL(0), CacheTTL(time.Minute)}
	if d := cmp.Diff([]time.Duration{24 * time.Hour, time.Minute}, got); d != "" {
		t.Errorf("CacheTTL (-want +got):\n%s", d)
	}
}

type cmpEngine struct{ name string }

type funcEngine struct{ f func() }

func TestSame(t *testing.T) {
	a, b := &cmpEngine{"a"}, &cmpEngine{"a"}
	f := funcEngine{func() {}}
	got := []bool{Same(a, a), Same(a, b), Same(cmpEngine{"a"}, cmpEngine{"a"}),
		Same(cmpEngine{"a"}, cmpEngine{"b"}), Same(f, f), Same(a, funcEngine{})}
	want := []bool{true, false, true, false, false, false}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Same (-want +got):\n%s", d)
	}
}

func TestNumbers(t *testing.T) {
	ns := NewNumbers()
	ns.Keep(0)
	ns.Keep(2)
	ns.Keep(5)
	got := []int{ns.Next(), ns.Next(), ns.Next(), ns.Next()}
	if d := cmp.Diff([]int{1, 3, 4, 6}, got); d != "" {
		t.Errorf("Next after keeping 0, 2, 5 (-want +got):\n%s", d)
	}
	fresh := NewNumbers()
	if d := cmp.Diff([]int{0, 1}, []int{fresh.Next(), fresh.Next()}); d != "" {
		t.Errorf("Next with none kept (-want +got):\n%s", d)
	}
}

func TestRetire(t *testing.T) {
	type eng struct {
		name string
		tel  int
	}
	prev := []eng{{"a", 1}, {"b", 2}, {"c", 3}}
	item := func(e eng) (string, int) { return e.name, e.tel }
	tests := []struct {
		next []string
		want map[string]int
	}{
		{[]string{"a", "b", "c"}, nil},
		{[]string{"b"}, map[string]int{"a": 1, "c": 3}},
		{nil, map[string]int{"a": 1, "b": 2, "c": 3}},
	}
	for _, tt := range tests {
		has := func(n string) bool { return slices.Contains(tt.next, n) }
		if d := cmp.Diff(tt.want, Retire(prev, item, has)); d != "" {
			t.Errorf("Retire to %q (-want +got):\n%s", tt.next, d)
		}
	}
	if got := Retire([]eng(nil), item, func(string) bool { return false }); got != nil {
		t.Errorf("Retire of none = %v, want nil", got)
	}
}
