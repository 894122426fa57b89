package filewatch

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// logLines records the messages logged.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, r.Message)
	return nil
}
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logLines) WithGroup(string) slog.Handler      { return l }

var errGone = errors.New("gone")

// script is the file's content at each read ("!" is a read error); Apply rejects "bad" and
// stops on "stop".
func run(t *testing.T, start string, reads []string) (applied, logged []string, err error) {
	t.Helper()
	i := 0
	read := func(context.Context, string) ([]byte, error) {
		s := start
		if i > 0 {
			s = reads[i-1]
		}
		i++
		if s == "!" {
			return nil, errGone
		}
		return []byte(s), nil
	}
	log := &logLines{}
	w := New(context.Background(), File{Path: "p", Read: read, Log: slog.New(log),
		Apply: func(data []byte) error {
			switch s := string(data); s {
			case "bad", "stop":
				return errors.New(s)
			default:
				applied = append(applied, s)
				return nil
			}
		},
		Stop: func(err error) bool { return err.Error() == "stop" }})
	for range reads {
		if err = w.Poll(context.Background()); err != nil {
			break
		}
	}
	for _, l := range log.lines {
		logged = append(logged, strings.Fields(l)[3])
	}
	return applied, logged, err
}

func TestPoll(t *testing.T) {
	for _, tc := range []struct {
		name          string
		start         string
		reads         []string
		applied, logs []string
		stops         bool
	}{
		{"unchanged", "a", []string{"a", "a", "a"}, nil, nil, false},
		{"settled once", "a", []string{"b", "b", "b"}, []string{"b"}, []string{"applied"}, false},
		{"unsettled", "a", []string{"b", "c", "b", "c"}, nil, nil, false},
		{"back and forth", "a", []string{"b", "b", "a", "a"}, []string{"b", "a"}, []string{"applied", "applied"}, false},
		{"rejected once", "a", []string{"bad", "bad", "bad", "bad"}, nil, []string{"rejected,"}, false},
		{"read error once", "a", []string{"!", "!", "a", "!"}, nil, []string{"unreadable,", "unreadable,"}, false},
		{"unreadable at start", "!", []string{"!", "a", "a"}, []string{"a"}, []string{"unreadable,", "applied"}, false},
		{"stop", "a", []string{"stop", "stop", "b", "b"}, nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			applied, logs, err := run(t, tc.start, tc.reads)
			if diff := cmp.Diff(tc.applied, applied); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.logs, logs); diff != "" {
				t.Errorf("logged (-want +got):\n%s", diff)
			}
			if (err != nil) != tc.stops {
				t.Errorf("Poll error %v, want stop %v", err, tc.stops)
			}
		})
	}
}

// TestRun: Run polls at its interval until ctx ends, and returns ctx's error.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reads int
		w := New(context.Background(), File{Path: "p", Log: slog.New(&logLines{}),
			Read:  func(context.Context, string) ([]byte, error) { reads++; return []byte("a"), nil },
			Apply: func([]byte) error { return nil }})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second+time.Millisecond)
		defer cancel()
		if err := w.Run(ctx, time.Second); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Run returned %v, want the deadline", err)
		}
		if reads != 11 {
			t.Errorf("%d reads, want 11 (New and 10 polls)", reads)
		}
	})
}
