package errtext

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHead(t *testing.T) {
	tests := []struct {
		engine, kind string
		status       int
		message      string
		want         string
	}{
		{"", "unknown", 0, "", "unknown"},
		{"deepl", "rate_limited", 429, "slow down", "deepl: rate_limited (HTTP 429): slow down"},
		{"", "closed", 0, "client closed", "closed: client closed"},
		{"google", "unavailable", 503, "", "google: unavailable (HTTP 503)"},
	}
	var got, want []string
	for _, tt := range tests {
		var b strings.Builder
		Head(&b, tt.engine, tt.kind, tt.status, tt.message)
		got, want = append(got, b.String()), append(want, tt.want)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Head (-want +got):\n%s", d)
	}
}

func pairs(kv ...string) func(func(string, string) bool) {
	return func(yield func(string, string) bool) {
		for i := 0; i+1 < len(kv); i += 2 {
			if !yield(kv[i], kv[i+1]) {
				return
			}
		}
	}
}

func TestAttempts(t *testing.T) {
	var b strings.Builder
	Attempts(&b, pairs("a", "timeout", "b", "ok"))
	if d := cmp.Diff(" [tried: a=timeout b=ok]", b.String()); d != "" {
		t.Errorf("Attempts (-want +got):\n%s", d)
	}
	b.Reset()
	Attempts(&b, pairs())
	if d := cmp.Diff(" [tried:]", b.String()); d != "" {
		t.Errorf("Attempts of none (-want +got):\n%s", d)
	}
	// Past Max, no more engines are asked for.
	b.Reset()
	b.WriteString(strings.Repeat("x", Max+1))
	asked := 0
	Attempts(&b, func(yield func(string, string) bool) {
		for asked = 1; asked < 3 && yield("a", "ok"); asked++ {
		}
	})
	if asked != 1 || !strings.HasSuffix(b.String(), "x [tried:]") {
		t.Errorf("past Max: asked %d, text ends %q", asked, b.String()[b.Len()-12:])
	}
}

func TestCut(t *testing.T) {
	long := strings.Repeat("y", Max+1)
	got := []int{len(Cut("short")), len(Cut(long)), len(Cut(long[:Max]))}
	if d := cmp.Diff([]int{5, Max, Max}, got); d != "" {
		t.Errorf("Cut lengths (-want +got):\n%s", d)
	}
}
