package recovery

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/fanyi-go/translate/internal/lang"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDue(t *testing.T) {
	const every = time.Minute
	type step struct {
		now  int64
		want bool
		at   int64 // recorded after the call
	}
	cases := []struct {
		name  string
		first bool
		steps []step
	}{
		{"first starts the period", true, []step{
			{10, false, 10}, {10 + int64(every) - 1, false, 10}, {10 + int64(every), true, 10 + int64(every)},
			{20 + int64(every), false, 10 + int64(every)}}},
		{"without first, due at once", false, []step{
			{int64(every), true, int64(every)}, {int64(every) + 1, false, int64(every)}, {2 * int64(every), true, 2 * int64(every)}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var at atomic.Int64
			var got, want []step
			for _, s := range tc.steps {
				d := Due(&at, s.now, every, tc.first)
				got = append(got, step{s.now, d, at.Load()})
				want = append(want, s)
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(step{})); diff != "" {
				t.Errorf("Due (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	type verdict struct{ Field, Problem string }
	cases := []struct {
		text, src, tgt string
		want           verdict
	}{
		{"hello", "en", "es", verdict{}},
		{"  \t", "en", "es", verdict{"Text", "must not be blank"}},
		{"\xff", "en", "es", verdict{"Text", "is not valid UTF-8"}},
		{strings.Repeat("x", 11), "en", "es", verdict{"Text", "exceeds 1 MiB"}},
		{"hello", "e n", "es", verdict{"Source", "is not a valid BCP 47 tag"}},
		{"hello", "en", "??", verdict{"Target", "is not a valid BCP 47 tag"}},
		{"hello", "en", "en-US", verdict{"Target", "is the same language as Source"}},
	}
	for _, tc := range cases {
		f, p := Check(tc.text, tc.src, tc.tgt, 10)
		if diff := cmp.Diff(tc.want, verdict{f, p}); diff != "" {
			t.Errorf("Check(%q, %q, %q) (-want +got):\n%s", tc.text, tc.src, tc.tgt, diff)
		}
	}
}

func TestAccepts(t *testing.T) {
	cases := []struct {
		want   []string
		answer string
		ok     bool
	}{
		{nil, " hola ", true},
		{nil, "  ", false},
		{[]string{" Hola "}, "hola", true},
		{[]string{"hola", "buenas"}, "BUENAS\n", true},
		{[]string{"hola"}, "adios", false},
	}
	for _, tc := range cases {
		if got := Accepts(tc.want, tc.answer); got != tc.ok {
			t.Errorf("Accepts(%q, %q) = %v, want %v", tc.want, tc.answer, got, tc.ok)
		}
	}
}

func TestCloneExpect(t *testing.T) {
	if CloneExpect(nil) != nil {
		t.Error("CloneExpect(nil) is not nil")
	}
	in := map[string][]string{"a": {"x", "y"}}
	got := CloneExpect(in)
	in["a"][0], in["b"] = "changed", nil
	if diff := cmp.Diff(map[string][]string{"a": {"x", "y"}}, got); diff != "" {
		t.Errorf("CloneExpect shares the caller's map (-want +got):\n%s", diff)
	}
}

func TestRoundContext(t *testing.T) {
	stop := make(chan struct{})
	ctx, cancel := RoundContext(context.Background(), stop)
	defer cancel()
	close(stop)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second): // a generous bound: the cancel is immediate
		t.Fatal("closing stop did not cancel the round")
	}
	ctx2, cancel2 := RoundContext(context.Background(), make(chan struct{}))
	cancel2()
	if ctx2.Err() == nil {
		t.Error("cancel did not cancel")
	}
}

func TestKnown(t *testing.T) {
	c := lang.NewCache()
	id := func(tag string) int {
		in, err := c.Lookup(tag)
		if err != nil {
			t.Fatal(err)
		}
		return in.ID
	}
	type probe struct{ Source, Target, Text string }
	var got []probe
	for _, pair := range [][2]int{{id("en"), id("ja")}, {0, id("de")}, {id("de"), id("zh-Hant")}, {id("ko"), id("en")}, {0, 1 << 20}} {
		src, tgt, text, ok := Known(c, lang.PairKey(pair[0], pair[1]))
		if !ok {
			got = append(got, probe{})
			continue
		}
		p := probe{Target: tgt.Canon, Text: text}
		if src != nil {
			p.Source = src.Canon
		}
		got = append(got, p)
	}
	want := []probe{
		{"en", "ja", KnownSentence("en")},
		{"", "de", KnownSentence("en")}, // a detected source is sent English
		{"de", "zh-Hant", KnownSentence("de")},
		{}, // no Korean sentence: not probed
		{}, // no such language
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Known (-want +got):\n%s", diff)
	}
}

func TestKnownAnswer(t *testing.T) {
	text := KnownSentence("en")
	cases := []struct {
		got    string
		script []*unicode.RangeTable
		want   bool
	}{
		{"ご注文 {id} の商品 3 点は本日発送されます。", []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana}, true},
		{"ご注文 {id} の商品三点は本日発送されます。", []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana}, false},          // the number is lost
		{"[ja] Your order {id} with 3 items", []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana}, false}, // not in the script
		{"Ihre Bestellung {id} mit 3 Artikeln", nil, true}, // script unknown: digits only
		{"Ihre Bestellung {id} mit drei Artikeln", nil, false},
	}
	for _, tc := range cases {
		if got := KnownAnswer(text, tc.got, tc.script); got != tc.want {
			t.Errorf("KnownAnswer(%q) = %v, want %v", tc.got, got, tc.want)
		}
	}
}
