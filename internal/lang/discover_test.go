package lang

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"
)

type pair struct{ src, tgt language.Tag }

func sides(p pair) (language.Tag, language.Tag) { return p.src, p.tgt }

func TestDiscover(t *testing.T) {
	c := NewCache()
	var deadline bool
	list := func(pairs []pair, err error) func(context.Context) ([]pair, error) {
		return func(ctx context.Context) ([]pair, error) {
			_, deadline = ctx.Deadline()
			return pairs, err
		}
	}
	s := Discover(c, time.Second, list([]pair{{language.Und, language.German}, {language.English, language.French}}, nil), sides)
	if !deadline {
		t.Error("list was asked without a deadline")
	}
	var got []bool
	for _, k := range []string{"de", "en", "fr", "ja"} {
		in, err := c.Lookup(k)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s.Has(in.ID))
	}
	if d := cmp.Diff([]bool{true, true, true, false}, got); d != "" {
		t.Errorf("Has de, en, fr, ja (-want +got):\n%s", d)
	}
	if s := Discover(c, time.Second, list(nil, errors.New("down")), sides); s != nil {
		t.Error("a failed list gives a set")
	}
	if s := Discover(c, time.Second, list([]pair{}, nil), sides); s != nil {
		t.Error("an empty list gives a set")
	}
}

// TestDiscoverBoundsTheLanguages: an engine's list is interned for good, so one naming more
// than MaxDiscovered languages counts as a failed call and interns nothing; MaxDiscovered
// (and language.Und beside them) are taken.
func TestDiscoverBoundsTheLanguages(t *testing.T) {
	list := func(n int) func(context.Context) ([]pair, error) {
		return func(context.Context) ([]pair, error) {
			out := []pair{{language.Und, language.English}}
			for i := 1; i < n; i++ {
				tag := language.MustParse("qaa-x-" + strconv.Itoa(i))
				out = append(out, pair{language.English, tag})
			}
			return out, nil
		}
	}
	c := NewCache()
	if s := Discover(c, time.Second, list(MaxDiscovered), sides); s == nil {
		t.Errorf("a list of %d languages gives no set", MaxDiscovered)
	}
	c = NewCache()
	if s := Discover(c, time.Second, list(MaxDiscovered+1), sides); s != nil {
		t.Errorf("a list of %d languages gives a set", MaxDiscovered+1)
	}
	if n := c.nids.Load(); n != 0 {
		t.Errorf("the refused list interned %d languages", n)
	}
}
