package enginetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
)

// httpEngine is a minimal adapter over HTTP, the way the bundled ones talk to their vendors:
// POST {"texts": [...]}, answer {"texts": [...]}, an HTTP status per error kind.
type httpEngine struct {
	url string
	hc  *http.Client
}

// statusOf is the status the fake vendor answers for each error kind, and back.
var statusOf = map[translate.Kind]int{
	translate.KindUnauthorized: http.StatusForbidden, translate.KindRateLimited: http.StatusTooManyRequests,
	translate.KindUnavailable: http.StatusServiceUnavailable, translate.KindInvalidInput: http.StatusBadRequest,
}

func (e *httpEngine) Name() string { return "http" }

func (e *httpEngine) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	body, _ := json.Marshal(map[string][]string{"texts": req.Texts})
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return nil, &translate.Error{Kind: translate.KindInvalidInput, Engine: e.Name(), Err: err}
	}
	resp, err := e.hc.Do(hr)
	if err != nil {
		kind := translate.KindUnavailable
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			kind = translate.KindTimeout
		case errors.Is(err, context.Canceled):
			kind = translate.KindCanceled
		}
		return nil, &translate.Error{Kind: kind, Engine: e.Name(), Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		kind := translate.KindUnknown
		for k, st := range statusOf {
			if st == resp.StatusCode {
				kind = k
			}
		}
		return nil, &translate.Error{Kind: kind, Engine: e.Name(), StatusCode: resp.StatusCode}
	}
	var out struct{ Texts []string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, &translate.Error{Kind: translate.KindBadOutput, Engine: e.Name(), Err: err}
	}
	return &translate.EngineResult{Texts: out.Texts}, nil
}

// httpHarness is a Harness over httpEngine and an httptest.Server that plays ModeHang with
// hang.
func httpHarness(hang http.HandlerFunc) Harness {
	return Harness{
		NewEngine: func(t *testing.T, sc Scenario) translate.Engine {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch sc.Mode {
				case ModeHang:
					hang(w, r)
					return
				case ModeError:
					http.Error(w, "no", statusOf[sc.Kind])
					return
				}
				var in struct{ Texts []string }
				if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				out := make([]string, len(in.Texts))
				for i, txt := range in.Texts {
					out[i] = Expected(txt)
				}
				_ = json.NewEncoder(w).Encode(map[string][]string{"texts": out})
			}))
			t.Cleanup(srv.Close)
			tr := &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
			return &httpEngine{url: srv.URL, hc: &http.Client{Transport: tr}}
		},
		ErrorKinds: []translate.Kind{translate.KindUnauthorized, translate.KindRateLimited, translate.KindUnavailable},
		MaxTexts:   10,
	}
}

// TestRunHTTPHang runs the whole suite, with its real limits, over HTTP with the ModeHang
// handler the package doc shows (Hang): every subtest passes and every cleanup returns.
func TestRunHTTPHang(t *testing.T) {
	Run(t, httpHarness(Hang))
}

// TestRunHTTPHangRecorded is TestRunHTTPHang in a recorded run with a short cleanup bound:
// a Hang that stops reading the body fails here within seconds.
func TestRunHTTPHangRecorded(t *testing.T) {
	rel := &releaser{}
	if got := runRecordedStuck(t, httpHarness(releasable(Hang, rel)), rel.release); len(got) != 0 {
		t.Errorf("failures with enginetest.Hang:\n%s", strings.Join(got, "\n"))
	}
}

// releaser hands each hanging request the channel current when it arrived; release closes
// it and starts a new one.
type releaser struct {
	mu sync.Mutex
	c  chan struct{}
}

func (r *releaser) current() chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c == nil {
		r.c = make(chan struct{})
	}
	return r.c
}

func (r *releaser) release() {
	c := r.current()
	r.mu.Lock()
	defer r.mu.Unlock()
	close(c)
	r.c = make(chan struct{})
}

// releasable runs h and returns when h does or when rel releases the request, whichever
// comes first; once the handler has returned, net/http cancels the request's context, which
// ends a handler waiting on it.
func releasable(h http.HandlerFunc, rel *releaser) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := rel.current()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h(w, r)
		}()
		select {
		case <-done:
		case <-c:
		}
	}
}

// TestRunReportsStuckCleanup: the handler the package doc used to show (wait on the request's
// context without reading the body) never returns, so httptest.Server.Close blocks in the
// subtest's cleanup. The suite reports it, naming the subtest and the cure, within its
// cleanup bound; the test then releases the handler.
func TestRunReportsStuckCleanup(t *testing.T) {
	rel := &releaser{}
	oldDoc := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-rel.current():
		}
	}
	// Backstop: without the suite's watchdog, release every 10s so that this test fails
	// instead of hanging.
	stop := make(chan struct{})
	backstop := make(chan struct{})
	go func() {
		defer close(backstop)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Second):
				rel.release()
			}
		}
	}()
	got := strings.Join(runRecordedStuck(t, httpHarness(oldDoc), rel.release), "\n")
	close(stop)
	<-backstop
	for _, want := range []string{
		"enginetest: " + t.Name() + "/suite/Deadline: the cleanups Harness.NewEngine registered (scenario hang) have not returned 1s after the subtest ended",
		"enginetest: " + t.Name() + "/suite/CancelInFlight: the cleanups",
		"blocks httptest.Server.Close; a ModeHang handler must read the request body before it waits on r.Context().Done()",
		"use enginetest.Hang",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no failure contains %q; failures:\n%s", want, got)
		}
	}
}
