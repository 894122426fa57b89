package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestBinary builds the server, starts it on a free loopback port with no vendor keys, and
// exercises every endpoint with the seed's example: the answers, the metric names and a log
// free of customer text.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")} // no vendor keys
	s := startServer(t, env, "-addr", "127.0.0.1:0", "-sim-latency", "0")
	// The first lines say where it listens and that the engines are simulated.
	if !strings.Contains(s.banner, "SIMULATED") {
		t.Errorf("the banner does not say the engines are simulated: %q", s.banner)
	}
	checkTranslate(t, s.base)
	checkBatch(t, s.base)
	for _, path := range []string{"/v1/engines", "/healthz", "/readyz"} {
		resp, err := http.Get(s.base + path)
		if err != nil {
			t.Fatal(err)
		}
		a := decodeAnswer(t, resp)
		resp.Body.Close()
		if a.status != 200 || a.code() != 0 {
			t.Errorf("GET %s: %d %v", path, a.status, a.body)
		}
	}
	checkMetricNames(t, scrape(t, s.base))
	// Customer text never reaches the log.
	if strings.Contains(s.logs.String(), "rains") || strings.Contains(s.logs.String(), "casa") {
		t.Errorf("the log holds customer text:\n%s", s.logs)
	}
}

// seedBody is the seed's example request.
const seedBody = `{"text":"` + seedText + `","source_lang":"en","target_lang":"zh"}`

// checkTranslate: POST /v1/translate answers the seed's example with every field of the
// data, and refuses an empty text with invalid_input.
func checkTranslate(t *testing.T, base string) {
	t.Helper()
	a := post(t, base+"/v1/translate", "application/json", seedBody)
	data, _ := a.body["data"].(map[string]any)
	if a.status != 200 || a.code() != 0 || data["translated_text"] != "下着倾盆大雨。" || !strings.HasPrefix(data["engine"].(string), "sim-") {
		t.Fatalf("POST /v1/translate: %d %v", a.status, a.body)
	}
	for _, k := range []string{"translated_text", "engine", "latency_ms", "cost_credit", "from_cache", "degraded", "attempts"} {
		if _, ok := data[k]; !ok {
			t.Errorf("data has no %q: %v", k, data)
		}
	}
	if id, _ := a.body["request_id"].(string); id == "" {
		t.Errorf("no request_id: %v", a.body)
	}
	if a := post(t, base+"/v1/translate", "application/json", `{"text":"","target_lang":"zh"}`); a.status != 400 || a.code() != codeInvalidInput {
		t.Errorf("empty text: %d %v", a.status, a.body)
	}
}

// checkBatch: POST /v1/translate/batch answers each item.
func checkBatch(t *testing.T, base string) {
	t.Helper()
	b := post(t, base+"/v1/translate/batch", "application/json", `{"requests":[`+seedBody+`,{"text":"The house is red.","source_lang":"en","target_lang":"es"}]}`)
	results, _ := b.body["data"].(map[string]any)["results"].([]any)
	if b.status != 200 || len(results) != 2 {
		t.Fatalf("POST /v1/translate/batch: %d %v", b.status, b.body)
	}
	if got := results[1].(map[string]any)["data"].(map[string]any)["translated_text"]; got != "La casa es roja." {
		t.Errorf("batch item 2: %v", got)
	}
}

// checkMetricNames: /metrics has the metric names the alerting rules in ops/ use, with
// their labels, and no quota series for engines without a quota.
func checkMetricNames(t *testing.T, metrics string) {
	t.Helper()
	for _, name := range []string{
		"translate_requests_total", "translate_attempts_total", "translate_request_duration_seconds_bucket",
		"translate_attempt_duration_seconds_bucket", "translate_cache_lookups_total", "translate_cost_total",
		"translate_chars_total", "translate_routing_decision_duration_seconds_bucket",
		"translate_engine_breaker_state", "translate_engine_usable", "translate_budget_spent", "translate_budget_daily",
		"translate_server_http_requests_total", "translate_server_http_in_flight",
	} {
		if !regexp.MustCompile(`(?m)^` + name + `[{ ]`).MatchString(metrics) {
			t.Errorf("/metrics has no %s", name)
		}
	}
	noQuotaSeries(t, metrics)
	if !strings.Contains(metrics, `translate_attempts_total{engine="sim-`) || !strings.Contains(metrics, `outcome="ok"`) {
		t.Errorf("translate_attempts_total lacks its engine and outcome labels")
	}
}

// server is the server binary running under a test.
type server struct {
	cmd    *exec.Cmd
	base   string        // http://127.0.0.1:port
	banner string        // its first two lines
	logs   *lockedBuffer // its stderr
	exited chan error    // cmd.Wait's result; whoever receives it sends it back
}

// startServer starts the binary with args in env, reads the address from its banner, and
// kills it when the test ends.
func startServer(t *testing.T, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, logs: &lockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = s.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-s.exited
	})
	sc := bufio.NewScanner(stdout)
	var banner []string
	for len(banner) < 2 && sc.Scan() {
		banner = append(banner, sc.Text())
	}
	go io.Copy(io.Discard, stdout)
	s.banner = strings.Join(banner, "\n")
	m := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(s.banner)
	if m == nil {
		t.Fatalf("no address in the banner %q; log:\n%s", s.banner, s.logs)
	}
	s.base = m[1]
	return s
}

// signal sends the server a SIGTERM.
func (s *server) signal(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

// terminate sends a SIGTERM and checks that the server exits 0.
func (s *server) terminate(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	err := <-s.exited
	s.exited <- err // for the cleanup
	if err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, s.logs)
	}
}

// TestGracefulShutdown sends SIGTERM while a slow request is in flight, with the default
// drain (10s): /readyz answers 503 while the listener stays open and a new request is still
// served; the request in flight gets its answer; then the process exits 0 and new
// connections are refused.
func TestGracefulShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	// Every simulated engine takes 2s: the request is surely in flight when the signal
	// arrives, whatever the machine's load.
	s := startServer(t, []string{"PATH=" + os.Getenv("PATH")}, "-addr", "127.0.0.1:0", "-sim-latency", "2s")
	answered := postAsync(s.base+"/v1/translate", `{"text":"`+seedText+`","target_lang":"zh"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitInFlight(ctx, t, s.base)
	s.signal(t)
	waitNotReady(ctx, t, s.base, s.logs)
	// Still served during the drain: a load balancer may send a few before it notices.
	late := post(t, s.base+"/v1/translate", "application/json", `{"text":"The house is red.","source_lang":"en","target_lang":"es"}`)
	if late.status != 200 || late.code() != 0 {
		t.Errorf("a request sent during the drain got %d %v", late.status, late.body)
	}
	a := <-answered
	if a.status != 200 || a.code() != 0 {
		t.Errorf("the request in flight at SIGTERM got %d %v", a.status, a.body)
	}
	checkStopped(ctx, t, s.exited, s.base, s.logs)
}

// postAsync posts a JSON body to url in the background; the answer arrives on the channel,
// with status -1 when the request failed.
func postAsync(url, body string) <-chan answer {
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			answered <- answer{status: -1, body: map[string]any{"error": err.Error()}}
			return
		}
		defer resp.Body.Close()
		a := answer{status: resp.StatusCode}
		if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
			a.body = map[string]any{"error": err.Error()}
		}
		answered <- a
	}()
	return answered
}

// waitInFlight polls /metrics until the server counts a /v1/translate request in flight.
func waitInFlight(ctx context.Context, t *testing.T, base string) {
	t.Helper()
	inFlight := regexp.MustCompile(`(?m)^translate_server_http_in_flight\{[^}]*route="/v1/translate"[^}]*\} 1$`)
	for !inFlight.MatchString(scrape(t, base)) {
		select {
		case <-ctx.Done():
			t.Fatal("the request never showed as in flight")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestSecondSignalEndsDrain: with a drain of 10 minutes, a second SIGTERM after /readyz
// turned 503 ends the drain, and the server exits 0 at once.
func TestSecondSignalEndsDrain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	s := startServer(t, []string{"PATH=" + os.Getenv("PATH")}, "-addr", "127.0.0.1:0", "-drain", "10m")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.signal(t)
	waitNotReady(ctx, t, s.base, s.logs)
	s.signal(t)
	select {
	case err := <-s.exited:
		s.exited <- err // for the cleanup
		if err != nil || !strings.Contains(s.logs.String(), "second signal: drain cut short") {
			t.Errorf("exit: %v; log:\n%s", err, s.logs)
		}
	case <-ctx.Done():
		t.Fatalf("still running 30s after the second SIGTERM; log:\n%s", s.logs)
	}
}

// checkStopped checks that the server exits 0 after the drain, refuses connections and
// logged both steps.
func checkStopped(ctx context.Context, t *testing.T, exited chan error, base string, logs *lockedBuffer) {
	t.Helper()
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Errorf("exit: %v; log:\n%s", err, logs)
		}
	case <-ctx.Done():
		t.Fatal("the server did not exit after SIGTERM")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the server still accepts connections after shutdown")
	}
	for _, line := range []string{`"msg":"draining: /readyz answers 503, requests still served","drain":"10s"`, "shutting down"} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("no %s line in the log:\n%s", line, logs)
		}
	}
}

// noQuotaSeries: no simulated engine has a quota, so there is no translate_quota_left series
// (it used to say -1, which broke sums over engines).
func noQuotaSeries(t *testing.T, metrics string) {
	t.Helper()
	if regexp.MustCompile(`(?m)^translate_quota_left[{ ]`).MatchString(metrics) {
		t.Errorf("/metrics reports translate_quota_left for engines without a quota:\n%s", grep(metrics, "quota_left"))
	}
}

// waitNotReady polls /readyz after a SIGTERM until it answers 503. The signal is handled
// asynchronously, so it may answer 200 a few times first; but it must answer 503 before the
// listener closes.
func waitNotReady(ctx context.Context, t *testing.T, base string, logs *lockedBuffer) {
	t.Helper()
	for {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatalf("/readyz never answered 503 after SIGTERM before the listener closed: %v; log:\n%s", err, logs)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case 503:
			return
		case 200:
		default:
			t.Fatalf("/readyz after SIGTERM: %d, want 503", resp.StatusCode)
		}
		select {
		case <-ctx.Done():
			t.Fatal("/readyz still answers 200 after SIGTERM")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// binary builds the server once per test run.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "server-test-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "server")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestConfigFile starts the server from config.example.json, and refuses a bad file with
// exit status 2 and an error naming the offending field.
func TestConfigFile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := binary(t)
	s := startServer(t, []string{"PATH=" + os.Getenv("PATH")}, "-addr", "127.0.0.1:0", "-config", "config.example.json", "-drain", "0") // no drain: TestGracefulShutdown tests it
	defer s.terminate(t)
	if !strings.Contains(s.banner, "engines: [sim-premium sim-standard sim-free]") {
		t.Fatalf("banner %q", s.banner)
	}
	a := post(t, s.base+"/v1/translate", "application/json", seedBody)
	if a.code() != 0 || a.body["data"].(map[string]any)["translated_text"] != "下着倾盆大雨。" {
		t.Errorf("translate: %v", a.body)
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"engines":[{"name":"x","type":"simulated","settings":{"speed":"fast"}}]}`), 0o644)
	out, err := exec.Command(bin, "-addr", "127.0.0.1:0", "-config", bad).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "settings.speed") {
		t.Errorf("bad config: %v\n%s", err, out)
	}
}

// TestConfigFileBundledTypes: a configuration file may name the bundled adapters' types
// (registered by engines/all), here the simulated "fake" with a prefix.
func TestConfigFileBundledTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	file := filepath.Join(t.TempDir(), "bundled.json")
	os.WriteFile(file, []byte(`{"engines":[{"name":"bundled","type":"fake","settings":{"prefix":"FAKE "}}]}`), 0o644)
	s := startServer(t, []string{"PATH=" + os.Getenv("PATH")}, "-addr", "127.0.0.1:0", "-config", file, "-drain", "0") // no drain: TestGracefulShutdown tests it
	defer s.terminate(t)
	a := post(t, s.base+"/v1/translate", "application/json", `{"text":"hello","source_lang":"en","target_lang":"fr"}`)
	if a.code() != 0 || a.body["data"].(map[string]any)["translated_text"] != "FAKE hello" {
		t.Errorf("translate through the bundled fake type: %v", a.body)
	}
}
