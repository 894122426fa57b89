package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// target is one service measured: a process started on a port of its own, in front of the
// vendor, and the request that asks it for one translation.
type target struct {
	name    string
	command func(port int, vendorURL string) *exec.Cmd
	ready   string // path answered once the process serves
	request func(ctx context.Context, base, vendorURL string, seq uint64) (*http.Request, error)
}

// serverTarget is examples/server with one openai engine pointed at the vendor, configured as
// its README says (OPENAI_API_KEY, OPENAI_MODEL, OPENAI_BASE_URL); translations go to its
// POST /v1/translate. Every text differs, so every request misses the cache.
func serverTarget(bin string) target {
	return target{
		name: "examples/server",
		command: func(port int, vendorURL string) *exec.Cmd {
			cmd := exec.Command(bin, "-addr", "127.0.0.1:"+strconv.Itoa(port), "-drain", "0", "-shutdown-timeout", "2s")
			cmd.Env = append(environ(), "OPENAI_API_KEY=sk-peer", "OPENAI_MODEL=peer-model", "OPENAI_BASE_URL="+vendorURL)
			return cmd
		},
		ready: "/readyz",
		request: func(ctx context.Context, base, _ string, seq uint64) (*http.Request, error) {
			body := `{"text":"` + text(seq) + `","source_lang":"en","target_lang":"es"}`
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/translate", strings.NewReader(body))
			if err == nil {
				req.Header.Set("Content-Type", "application/json")
			}
			return req, err
		},
	}
}

// portkeyTarget is the Portkey gateway (node, its build/start-server.js) forwarding OpenAI
// chat completions to the vendor as a custom host; each request is the chat completion a
// translation needs: a system prompt and the text.
func portkeyTarget(node, script, version string) target {
	return target{
		name: "Portkey gateway " + version,
		command: func(port int, _ string) *exec.Cmd {
			cmd := exec.Command(node, script, "--port="+strconv.Itoa(port), "--headless")
			cmd.Env = append(environ(), "NODE_ENV=production")
			return cmd
		},
		ready: "/",
		request: func(ctx context.Context, base, vendorURL string, seq uint64) (*http.Request, error) {
			body := `{"model":"peer-model","temperature":0,"messages":[` +
				`{"role":"system","content":"Translate the user's text from English to Spanish. Answer with the translation only."},` +
				`{"role":"user","content":"` + text(seq) + `"}]}`
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
			if err == nil {
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer sk-peer")
				req.Header.Set("x-portkey-provider", "openai")
				req.Header.Set("x-portkey-custom-host", vendorURL)
			}
			return req, err
		},
	}
}

// text is the seq-th source text: a sentence ending in seq spelled in letters, so that no two
// requests share a text (and none is a cache hit) and none holds a digit to preserve.
func text(seq uint64) string {
	var b []byte
	for {
		b = append(b, byte('a'+seq%26))
		seq /= 26
		if seq == 0 {
			break
		}
	}
	return "The house is red, said " + string(b) + "."
}

// environ is this process's environment without the vendor settings examples/server reads,
// so that the server sees the mock vendor only.
func environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "OPENAI_"), strings.HasPrefix(k, "LIBRETRANSLATE_"),
			k == "DEEPL_AUTH_KEY", k == "GOOGLE_API_KEY", k == "APERTIUM_URL":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// freePort returns a loopback port nobody listened on a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// process is a started target.
type process struct {
	cmd  *exec.Cmd
	base string // http://127.0.0.1:PORT
	log  *bytes.Buffer
	done chan struct{} // closed when the process exited
}

// start runs t's process on a free port and waits until it answers on t.ready.
func start(ctx context.Context, t target, vendorURL string) (*process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := t.command(port, vendorURL)
	p := &process{cmd: cmd, base: "http://127.0.0.1:" + strconv.Itoa(port), log: new(bytes.Buffer), done: make(chan struct{})}
	cmd.Stdout = &tail{buf: p.log}
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	if err := p.await(ctx, p.base+t.ready, 90*time.Second); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s did not start: %w; its last output:\n%s", t.name, err, p.log)
	}
	return p, nil
}

// await polls url until it answers below 500, the process exits or timeout passes.
func (p *process) await(ctx context.Context, url string, timeout time.Duration) error {
	c := &http.Client{Timeout: time.Second}
	defer c.CloseIdleConnections()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if resp, err := c.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return nil
			}
		}
		select {
		case <-p.done:
			return errors.New("it exited")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("no answer from %s within %v", url, timeout)
}

// stop sends SIGTERM, and SIGKILL if the process has not exited 10s later; it waits for the exit.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// tail keeps the last 4 KiB written to it: a process's output for an error message, without
// holding the access log of a whole run.
type tail struct{ buf *bytes.Buffer }

func (t *tail) Write(b []byte) (int, error) {
	const keep = 4 << 10
	t.buf.Write(b)
	if t.buf.Len() > 2*keep {
		rest := t.buf.Bytes()[t.buf.Len()-keep:]
		t.buf.Reset()
		t.buf.Write(rest)
	}
	return len(b), nil
}
