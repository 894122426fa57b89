// Package apy starts a local Apertium APy server (the Debian/Ubuntu package apertium-apy) on
// a free loopback port, for the apertium adapter's tests against the real thing and for the
// quickstart example.
//
//	srv, err := apy.Start(ctx)
//	if errors.Is(err, apy.ErrNotInstalled) {
//		// skip
//	}
//	defer srv.Close()
//	e, err := apertium.New(srv.URL())
//
// APy 0.11 has no option for the listening address and binds every interface. When
// apertium-apy is the usual Python script, Start runs it through its own interpreter with a
// two-line bootstrap that makes Tornado bind 127.0.0.1 only; otherwise it runs the binary
// as it is (and it listens on every interface, on the chosen port).
package apy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrNotInstalled is returned (wrapped) by Start and Pairs when the apertium-apy binary or
// any installed Apertium language pair is missing.
var ErrNotInstalled = errors.New("apy: apertium-apy or its language pairs are not installed")

// modesDirs are the directories searched, in order, for Apertium's installed pair modes
// (*.mode files): Debian's package layout, then a source install's.
var modesDirs = []string{"/usr/share/apertium/modes", "/usr/local/share/apertium/modes"}

// langNamesDBs are where Debian and a pip install keep APy's language-names database.
var langNamesDBs = []string{"/usr/share/apertium-apy/langNames.db", "/usr/local/share/apertium-apy/langNames.db"}

const (
	startTimeout = 30 * time.Second // the most Start waits for APy to answer
	stopTimeout  = 5 * time.Second  // the most Close waits after SIGTERM before SIGKILL
	startTries   = 3                // port clashes tolerated before giving up
)

// bootstrap runs APy's entry point with Tornado's default bind address set to 127.0.0.1.
const bootstrap = `import sys, tornado.tcpserver as t
b = t.TCPServer.bind
t.TCPServer.bind = lambda self, port, address=None, *a, **k: b(self, port, "127.0.0.1" if address is None else address, *a, **k)
from apertium_apy.apy import main
sys.argv[0] = "apertium-apy"
sys.exit(main())`

// Server is a running apertium-apy process. Its methods are safe for concurrent use.
type Server struct {
	url     string
	cmd     *exec.Cmd
	argv    []string
	out     *tailBuffer
	done    chan struct{} // closed when the process has exited
	waitErr error         // set before done is closed

	closeOnce sync.Once
	closeErr  error
}

// Installation describes what Start would run.
type Installation struct {
	Binary   string   // the apertium-apy executable
	ModesDir string   // the directory of *.mode files given to APy
	Pairs    []string // installed pairs, as mode names: "eng-spa", "spa-eng_US"
}

// Find locates apertium-apy and its installed pairs. It returns an error wrapping
// ErrNotInstalled when the binary is not on PATH or neither /usr/share/apertium/modes nor
// /usr/local/share/apertium/modes holds a *.mode file.
func Find() (*Installation, error) {
	bin, err := exec.LookPath("apertium-apy")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotInstalled, err)
	}
	for _, dir := range modesDirs {
		var pairs []string
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".mode") {
				pairs = append(pairs, strings.TrimSuffix(d.Name(), ".mode"))
			}
			return nil
		})
		if len(pairs) > 0 {
			slices.Sort(pairs)
			return &Installation{Binary: bin, ModesDir: dir, Pairs: pairs}, nil
		}
	}
	return nil, fmt.Errorf("%w: no *.mode files in %s", ErrNotInstalled, strings.Join(modesDirs, " or "))
}

// HasPair reports whether the installation has the pair mode, such as "eng-spa".
func (in *Installation) HasPair(mode string) bool { return slices.Contains(in.Pairs, mode) }

// Start finds apertium-apy (see Find), starts it on a free loopback port in its own process
// group and waits, polling /listPairs with backoff, until it answers — at most 30 seconds or
// until ctx is done. ctx bounds only the start; the server runs until Close. On failure
// nothing is left running.
func Start(ctx context.Context) (*Server, error) {
	in, err := Find()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	var lastErr error
	for range startTries {
		s, err := start(ctx, in)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if ctx.Err() != nil || !errors.Is(err, errPortInUse) {
			break
		}
	}
	return nil, lastErr
}

var errPortInUse = errors.New("address already in use")

func start(ctx context.Context, in *Installation) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("apy: finding a free port: %w", err)
	}
	args := []string{"-p", strconv.Itoa(port)}
	for _, db := range langNamesDBs {
		if _, err := os.Stat(db); err == nil {
			args = append(args, "-l", db)
			break
		}
	}
	args = append(args, in.ModesDir)
	argv := append([]string{in.Binary}, args...)
	if py := pythonOf(in.Binary); py != "" {
		argv = append([]string{py, "-c", bootstrap}, args...)
	}

	s := &Server{
		url:  "http://127.0.0.1:" + strconv.Itoa(port),
		argv: argv,
		out:  &tailBuffer{max: 8 << 10},
		done: make(chan struct{}),
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = os.TempDir()
	cmd.Env = environ()
	cmd.Stdout, cmd.Stderr = s.out, s.out
	cmd.WaitDelay = stopTimeout // do not hang on a pipe held open by a stray child
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("apy: starting %s: %w", in.Binary, err)
	}
	s.cmd = cmd
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// waitReady polls /listPairs until it answers 200, the process exits or ctx is done.
func (s *Server) waitReady(ctx context.Context) error {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	defer hc.CloseIdleConnections()
	delay := 20 * time.Millisecond
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("apy: %s did not answer in time: %w; output:\n%s", s.url, ctx.Err(), s.out)
		case <-s.done:
			if strings.Contains(s.out.String(), "Address already in use") {
				return fmt.Errorf("apy: %w: %s", errPortInUse, s.url)
			}
			return fmt.Errorf("apy: apertium-apy exited during start (%v); output:\n%s", s.waitErr, s.out)
		case <-timer.C:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/listPairs", nil)
		if err != nil {
			return err
		}
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		timer.Reset(delay)
		delay = min(delay*2, 500*time.Millisecond)
	}
}

// URL returns the server's base URL, such as "http://127.0.0.1:40123".
func (s *Server) URL() string { return s.url }

// Args returns the command line that started the server.
func (s *Server) Args() []string { return slices.Clone(s.argv) }

// Output returns the last few kilobytes the server wrote to stdout and stderr.
func (s *Server) Output() string { return s.out.String() }

// Close stops the server and every pipeline process it started: SIGTERM to its process
// group, then SIGKILL after 5 seconds. It waits for the process to exit. It is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = s.stop()
	})
	return s.closeErr
}

func (s *Server) stop() error {
	signalGroup(s.cmd, false)
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-s.done:
	case <-timer.C:
		signalGroup(s.cmd, true)
		timer.Reset(stopTimeout)
		select {
		case <-s.done:
		case <-timer.C:
			return fmt.Errorf("apy: process %d did not exit after SIGKILL", s.cmd.Process.Pid)
		}
	}
	// The pipeline processes (lt-proc, apertium-transfer, ...) got the signal too, but APy
	// does not wait for them: kill what is left and give init a moment to reap them, so
	// that nothing of the server is left when Close returns.
	signalGroup(s.cmd, true)
	delay := time.Millisecond
	for deadline := time.Now().Add(2 * time.Second); !groupGone(s.cmd) && time.Now().Before(deadline); {
		time.Sleep(delay)
		delay = min(2*delay, 100*time.Millisecond)
	}
	return nil
}

// freePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// pythonOf returns the interpreter of a Python entry-point script ("#!/usr/bin/python3"),
// or "" when bin is not one.
func pythonOf(bin string) string {
	f, err := os.Open(bin)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "#!") {
		return ""
	}
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(fields) == 0 {
		return ""
	}
	if filepath.Base(fields[0]) == "env" && len(fields) == 2 { // #!/usr/bin/env python3
		fields = fields[1:]
	}
	if len(fields) != 1 || !strings.HasPrefix(filepath.Base(fields[0]), "python") {
		return ""
	}
	py, err := exec.LookPath(fields[0])
	if err != nil {
		return ""
	}
	return py
}

// environ is the process environment with a UTF-8 locale (APy refuses to start without one)
// and without systemd's notification variables (APy would talk to the caller's service
// manager).
func environ() []string {
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "LC_ALL", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C.UTF-8")
}

// tailBuffer keeps the last max bytes written to it. It is safe for concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.Clone(t.b))
}
