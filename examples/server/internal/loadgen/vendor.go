package main

import (
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// vendor is an OpenAI-compatible chat completions server on loopback that answers every
// POST /v1/chat/completions after a fixed delay and counts the TCP connections it accepts and
// the ones that close. It is safe for concurrent use.
type vendor struct {
	srv            *http.Server
	ln             net.Listener
	delay          time.Duration
	opened, closed atomic.Int64
	served         atomic.Int64
}

// vendorAnswer is a complete chat completion, the shape OpenAI documents, so that a gateway
// passing it through or checking it finds every field it looks for.
const vendorAnswer = `{"id":"chatcmpl-peer","object":"chat.completion","created":1764633600,` +
	`"model":"peer-model","choices":[{"index":0,"message":{"role":"assistant","content":"La casa es roja."},` +
	`"logprobs":null,"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":40,"completion_tokens":6,"total_tokens":46}}`

// startVendor listens on a free loopback port and serves until close.
func startVendor(delay time.Duration) (*vendor, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	v := &vendor{ln: ln, delay: delay}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", v.complete)
	v.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ConnState: v.connState}
	go func() { _ = v.srv.Serve(ln) }()
	return v, nil
}

// baseURL is the OpenAI base URL of the vendor: clients append /chat/completions.
func (v *vendor) baseURL() string { return "http://" + v.ln.Addr().String() + "/v1" }

func (v *vendor) connState(_ net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		v.opened.Add(1)
	case http.StateClosed, http.StateHijacked:
		v.closed.Add(1)
	}
}

func (v *vendor) complete(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body) // read to the end, or the connection is not reused
	t := time.NewTimer(v.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		return
	}
	v.served.Add(1)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, vendorAnswer)
}

// conns returns the connections opened and closed so far.
func (v *vendor) conns() (opened, closed int64) { return v.opened.Load(), v.closed.Load() }

// close stops the server and closes its connections.
func (v *vendor) close() error { return v.srv.Close() }
