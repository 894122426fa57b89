//go:build unix

package translate_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// settle is how long a call that must not block gets: generous, for a busy machine.
const settle = 10 * time.Second

// fifo makes a FIFO and, when the test ends, opens it for writing once, so that a reader
// blocked on it (the bug) is released instead of leaking.
func fifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return path
}

// Item 6: a FIFO at the config path blocked LoadConfig forever. A FIFO or a device is
// refused at once.
func TestLoadConfigRefusesFIFOAndDevices(t *testing.T) {
	for _, path := range []string{fifo(t), os.DevNull, "/dev/zero"} {
		done := make(chan error, 1)
		go func() { _, err := translate.LoadConfig(path); done <- err }()
		select {
		case err := <-done:
			if translate.KindOf(err) != translate.KindInvalidInput || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("LoadConfig(%s) = %v, want KindInvalidInput: not a regular file", path, err)
			}
		case <-time.After(settle):
			t.Errorf("LoadConfig(%s) still blocked after %v", path, settle)
		}
	}
}

// Item 6: WatchConfig on a FIFO was still blocked 5s after its ctx was canceled. It
// refuses the FIFO like an unreadable file (a warning), keeps watching, and returns ctx's
// error once ctx is done.
func TestWatchConfigFIFOHonoursCtx(t *testing.T) {
	path := fifo(t)
	warned := make(chan struct{})
	var once sync.Once
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) {
		if strings.Contains(string(p), "not a regular file") {
			once.Do(func() { close(warned) })
		}
	}), nil))
	c := newClient(t, translate.WithEngine(fake.New("a"), translate.Profile{}), translate.WithLogger(log))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- translate.WatchConfig(ctx, c, path) }()
	select {
	case <-warned:
	case <-time.After(settle):
		t.Fatalf("WatchConfig has not refused the FIFO after %v (blocked reading it?)", settle)
	}
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("WatchConfig = %v, want context.Canceled", err)
		}
	case <-time.After(settle):
		t.Errorf("WatchConfig still blocked %v after its ctx was canceled", settle)
	}
}

// writerFunc is an io.Writer that hands each write to a function.
type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }
