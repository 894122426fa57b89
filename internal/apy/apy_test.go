//go:build unix

package apy

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// installed skips the test unless apertium-apy and a pair are installed.
func installed(t *testing.T) *Installation {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("CI") == "true" { // CI installs it: missing is a failure there
		skip = t.Fatalf
	}
	in, err := Find()
	if errors.Is(err, ErrNotInstalled) {
		skip("skipping: %v (install with .ci/install-apertium.sh)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// gone reports whether no process of the server's process group is left.
func gone(s *Server) bool {
	return errors.Is(syscall.Kill(-s.cmd.Process.Pid, 0), syscall.ESRCH)
}

func TestStartClose(t *testing.T) {
	installed(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	s, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("started in %v: %q", time.Since(start), s.Args())
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %q is not a loopback URL", s.URL())
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get(s.URL() + "/listPairs")
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	resp.Body.Close()
	hc.CloseIdleConnections()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/listPairs: %s", resp.Status)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if !gone(s) {
		t.Errorf("processes of group %d still running after Close", s.cmd.Process.Pid)
	}
	if _, err := hc.Get(s.URL() + "/listPairs"); err == nil {
		t.Errorf("%s still answers after Close", s.URL())
	}
}

// TestStartCanceled: a start that gives up leaves nothing running.
func TestStartCanceled(t *testing.T) {
	in := installed(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, err := start(ctx, in)
	if err == nil {
		s.Close()
		t.Fatal("start with a canceled context succeeded")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestNotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Start(context.Background()); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Start with an empty PATH: err = %v, want ErrNotInstalled", err)
	}
}

func TestPythonOf(t *testing.T) {
	dir := t.TempDir()
	py := ""
	for _, c := range []string{"/usr/bin/python3", "/bin/python3"} {
		if _, err := os.Stat(c); err == nil {
			py = c
			break
		}
	}
	for _, tt := range []struct {
		name, content, want string
	}{
		{"python script", "#!" + py + "\nimport sys\n", py},
		{"shell script", "#!/bin/sh\nexec true\n", ""},
		{"no shebang", "\x7fELF...", ""},
		{"interpreter with flags", "#!" + py + " -E\n", ""},
	} {
		if py == "" && tt.want != "" {
			continue
		}
		p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
		if err := os.WriteFile(p, []byte(tt.content), 0o755); err != nil {
			t.Fatal(err)
		}
		if got := pythonOf(p); got != tt.want {
			t.Errorf("%s: pythonOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 5}
	b.Write([]byte("abc"))
	b.Write([]byte("defg"))
	if got := b.String(); got != "cdefg" {
		t.Errorf("tail = %q, want %q", got, "cdefg")
	}
}

func TestEnviron(t *testing.T) {
	t.Setenv("LC_ALL", "C")
	t.Setenv("NOTIFY_SOCKET", "/run/systemd/notify")
	env := environ()
	var lc []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "NOTIFY_SOCKET=") {
			t.Errorf("environ keeps %q", kv)
		}
		if strings.HasPrefix(kv, "LC_ALL=") {
			lc = append(lc, kv)
		}
	}
	if len(lc) != 1 || lc[0] != "LC_ALL=C.UTF-8" {
		t.Errorf("LC_ALL entries %q, want exactly LC_ALL=C.UTF-8", lc)
	}
}
