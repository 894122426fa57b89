package registry

import (
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRegistry(t *testing.T) {
	var r Registry[int]
	if _, ok := r.Get("a"); ok {
		t.Error("the zero Registry has a")
	}
	if got := r.Names(); len(got) != 0 {
		t.Errorf("Names() of the zero Registry = %q", got)
	}
	for _, tc := range []struct {
		name string
		v    int
		want bool
	}{{"b", 1, true}, {"a", 2, true}, {"b", 3, false}, {"", 4, true}} {
		if got := r.Add(tc.name, tc.v); got != tc.want {
			t.Errorf("Add(%q, %d) = %v, want %v", tc.name, tc.v, got, tc.want)
		}
	}
	if diff := cmp.Diff([]string{"", "a", "b"}, r.Names()); diff != "" {
		t.Errorf("Names() (-want +got):\n%s", diff)
	}
	got := map[string]int{}
	for _, n := range []string{"", "a", "b", "c"} {
		if v, ok := r.Get(n); ok {
			got[n] = v
		}
	}
	if diff := cmp.Diff(map[string]int{"": 4, "a": 2, "b": 1}, got); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
}

func TestRegistryConcurrent(t *testing.T) {
	var r Registry[int]
	var wg sync.WaitGroup
	wins := make([]bool, 8)
	for i := range wins {
		wg.Go(func() {
			wins[i] = r.Add("x", i)
			r.Get("x")
			r.Names()
		})
	}
	wg.Wait()
	n := 0
	for _, w := range wins {
		if w {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d of 8 concurrent Adds of one name won, want 1", n)
	}
}

func TestCall(t *testing.T) {
	bad := errors.New("bad")
	for _, tc := range []struct {
		name     string
		f        func(int) (string, error)
		want     string
		wantErr  error
		panicked bool
	}{
		{"value", func(n int) (string, error) { return "v", nil }, "v", nil, false},
		{"error", func(n int) (string, error) { return "partial", bad }, "partial", bad, false},
		{"panic", func(n int) (string, error) { panic("secret") }, "", nil, true},
		{"panic after result", func(n int) (s string, err error) {
			defer func() { panic("late") }()
			return "v", bad
		}, "", nil, true},
	} {
		got, err, panicked := Call(tc.f, 1)
		if got != tc.want || err != tc.wantErr || panicked != tc.panicked {
			t.Errorf("%s: Call = %q, %v, %v; want %q, %v, %v", tc.name, got, err, panicked, tc.want, tc.wantErr, tc.panicked)
		}
	}
}
