package ordered

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// step is the state after one Add: whether it was taken, whether the text shows, the text.
type step struct {
	OK, Shown bool
	Text      string
}

func TestText(t *testing.T) {
	long := strings.Repeat("x", MaxBytes(len("Hello"))-1)
	for _, tc := range []struct {
		name   string
		src    string
		deltas []string
		want   []step
	}{
		{"echo held back", " Hello world ", []string{"Hel", "lo", " wor"}, []step{{true, false, "Hel"}, {true, false, "Hello"}, {true, false, "Hello wor"}}},
		{"blank held back", "Hello", []string{" ", "\n", "Bon"}, []step{{true, false, " "}, {true, false, " \n"}, {true, true, " \nBon"}}},
		{"diverges after an echoed start", "Hello", []string{"Hel", "p"}, []step{{true, false, "Hel"}, {true, true, "Help"}}},
		{"stays shown", "Hello", []string{"Bon", "", "Hello"}, []step{{true, true, "Bon"}, {true, true, "Bon"}, {true, true, "BonHello"}}},
		{"limit", "Hello", []string{long, "y", "zz"}, []step{{true, true, long}, {true, true, long + "y"}, {false, true, long + "y"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var text Text
			text.Reset("stale")
			text.Add("old")
			text.Reset(tc.src)
			var got []step
			for _, d := range tc.deltas {
				ok := text.Add(d)
				got = append(got, step{ok, text.Shown(), text.String()})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMaxBytes(t *testing.T) {
	for n, want := range map[int]int{0: 4096, 1: 4104, 1000: 12096} {
		if got := MaxBytes(n); got != want {
			t.Errorf("MaxBytes(%d) = %d, want %d", n, got, want)
		}
	}
}
