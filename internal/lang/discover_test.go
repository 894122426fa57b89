package lang

import (
	"context"
	"errors"
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
