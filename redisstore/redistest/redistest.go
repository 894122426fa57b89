// Package redistest starts a real redis-server on a free loopback port for tests and
// examples, the way net/http/httptest starts an HTTP server: Start returns ErrMissing when
// redis-server is not installed, which tests should treat as a skip locally and as a
// failure in CI (InCI).
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Server is a redis-server process started by Start. Stop ends it.
type Server struct {
	Addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// ErrMissing says redis-server is not installed.
var ErrMissing = errors.New("redis-server not found in PATH (Debian: apt-get install redis-server)")

// Start runs redis-server on a free loopback port with persistence off and waits until it
// answers PING, for at most 10s.
func Start() (*Server, error) { return start(0, "redis-server") }

// start runs redis-server on port (a free one when 0, tried up to 5 times in case the port
// is taken between the probe and the start) with persistence off and the extra arguments,
// and waits until it answers PING, for at most 10s. what names the server in the error.
func start(port int, what string, extra ...string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrMissing
	}
	var last error
	for range 5 {
		p := port
		if p == 0 {
			if p, err = freePort(); err != nil {
				return nil, err
			}
		}
		s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(p), done: make(chan struct{})}
		args := append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(p),
			"--save", "", "--appendonly", "no", "--protected-mode", "yes", "--loglevel", "warning"}, extra...)
		s.cmd = exec.Command(bin, args...)
		if err := s.cmd.Start(); err != nil {
			return nil, err
		}
		go func() { _ = s.cmd.Wait(); close(s.done) }()
		if last = s.waitReady(10 * time.Second); last == nil {
			return s, nil
		}
		s.Stop()
		if port != 0 {
			break // a given port: another try would meet the same
		}
	}
	return nil, fmt.Errorf("redistest: %s did not start: %w", what, last)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls PING with a plain TCP client until the server answers or gives up.
func (s *Server) waitReady(limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := s.ping(); err == nil {
			return nil
		}
		select {
		case <-s.done:
			return errors.New("redis-server exited")
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func (s *Server) ping() error {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("unexpected %q", line)
	}
	return nil
}

// Pause stops the server process (SIGSTOP): connections stay open, nothing answers.
func (s *Server) Pause() error { return s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() error { return s.cmd.Process.Signal(syscall.SIGCONT) }

// Stop kills the server and waits for it to exit.
func (s *Server) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGCONT)
	_ = s.cmd.Process.Kill()
	<-s.done
}

// InCI reports whether CI=true: a missing server is then a failure, not a skip.
func InCI() bool { return os.Getenv("CI") == "true" }
