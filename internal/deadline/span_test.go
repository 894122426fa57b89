package deadline

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSpan: a request ends total after its start, or at ctx's deadline when that comes
// first; a ctx deadline already past ends it at its start.
func TestSpan(t *testing.T) {
	t0 := time.Now()
	start := At(t0)
	tests := []struct {
		name    string
		ctxEnds time.Duration // after t0; 0: no deadline
		want    int64         // end - start
	}{
		{"no ctx deadline", 0, int64(8 * time.Second)},
		{"ctx deadline later", 10 * time.Second, int64(8 * time.Second)},
		{"ctx deadline first", 3 * time.Second, int64(3 * time.Second)},
		{"ctx deadline past", -time.Hour, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.ctxEnds != 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, t0.Add(tt.ctxEnds))
				defer cancel()
			}
			s, e := Span(ctx, t0, 8*time.Second)
			if diff := cmp.Diff([2]int64{start, tt.want}, [2]int64{s, e - s}); diff != "" {
				t.Fatalf("Span: (start, end-start) (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBackoff: the wait grows four times a retry, and the draw moves it +-20%.
func TestBackoff(t *testing.T) {
	tests := []struct {
		n    int
		u    float64
		want time.Duration
	}{
		{0, 0.5, 100 * time.Millisecond},
		{1, 0.5, 100 * time.Millisecond},
		{2, 0.5, 400 * time.Millisecond},
		{3, 0.5, 1600 * time.Millisecond},
		{1, 0, 80 * time.Millisecond},
		{2, 1, 480 * time.Millisecond},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Backoff(100*time.Millisecond, tt.n, tt.u)); diff != "" {
			t.Errorf("Backoff(100ms, %d, %v) (-want +got):\n%s", tt.n, tt.u, diff)
		}
	}
}
