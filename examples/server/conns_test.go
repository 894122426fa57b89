package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
)

// connVendor is a loopback OpenAI-compatible vendor that counts the connections it accepts
// and the ones that close. While gate is set, each request waits until gate requests have
// arrived, so that exactly that many connections are open at once.
type connVendor struct {
	srv            *httptest.Server
	opened, closed atomic.Int64

	mu      sync.Mutex
	gate    int           // requests to hold until this many arrived; 0: answer at once
	arrived int           // requests held so far
	full    chan struct{} // closed when arrived reaches gate
}

func newConnVendor(t *testing.T) *connVendor {
	v := &connVendor{full: make(chan struct{})}
	v.srv = httptest.NewUnstartedServer(http.HandlerFunc(v.serve))
	v.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			v.opened.Add(1)
		case http.StateClosed, http.StateHijacked:
			v.closed.Add(1)
		}
	}
	v.srv.Start()
	t.Cleanup(v.srv.Close)
	return v
}

func (v *connVendor) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	v.mu.Lock()
	if v.gate > 0 {
		v.arrived++
		if v.arrived == v.gate {
			close(v.full)
		}
		full := v.full
		v.mu.Unlock()
		select {
		case <-full:
		case <-time.After(20 * time.Second): // a safety net only: the test then fails on counts
		}
	} else {
		v.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"choices":[{"index":0,"message":{"content":"hola"},"finish_reason":"stop"}]}`)
}

// TestVendorConnectionsReused: at concurrency 50 through the server, with the bundled
// OpenAI-compatible adapter and its default HTTP client, connections to the vendor are
// reused: once 50 are open, no request opens another and none closes (issue 20, item 6).
func TestVendorConnectionsReused(t *testing.T) {
	const conc, perWorker = 50, 20
	v := newConnVendor(t)
	env := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_MODEL": "m", "OPENAI_BASE_URL": v.srv.URL}
	specs, sim, warn := buildEngines(func(k string) string { return env[k] }, 0)
	if sim || len(specs) != 1 || len(warn) != 0 {
		t.Fatalf("engines: simulated %v, %d engines, warnings %v", sim, len(specs), warn)
	}
	srv, _, _ := serve(t, translate.WithDeadline(30*time.Second), translate.WithEngine(specs[0].engine, specs[0].profile))
	load := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	defer load.CloseIdleConnections()

	var failed atomic.Int64
	run := func(worker, n int, phase string) {
		for i := range n {
			body := fmt.Sprintf(`{"text":"%s %d %d","source_lang":"en","target_lang":"es"}`, phase, worker, i)
			resp, err := load.Post(srv.URL+"/v1/translate", "application/json", strings.NewReader(body))
			if err != nil {
				failed.Add(1)
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				failed.Add(1)
			}
		}
	}
	wave := func(n int, phase string) {
		var wg sync.WaitGroup
		for w := range conc {
			wg.Go(func() { run(w, n, phase) })
		}
		wg.Wait()
	}

	// Warm-up: 50 requests held at the vendor together open 50 connections.
	v.mu.Lock()
	v.gate = conc
	v.mu.Unlock()
	wave(1, "warm")
	v.mu.Lock()
	v.gate = 0
	v.mu.Unlock()
	opened := v.opened.Load()
	if opened != conc || failed.Load() != 0 {
		t.Fatalf("warm-up: %d connections opened, %d requests failed; want %d and 0", opened, failed.Load(), conc)
	}

	wave(perWorker, "steady")
	if failed.Load() != 0 {
		t.Errorf("%d of %d requests failed", failed.Load(), conc*perWorker)
	}
	if n, c := v.opened.Load()-opened, v.closed.Load(); n != 0 || c != 0 {
		t.Errorf("concurrency %d: %d new connections to the vendor after warm-up, %d closed; want 0 and 0", conc, n, c)
	}
}
