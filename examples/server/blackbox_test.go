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
// exercises every endpoint with the seed's example; then it sends SIGTERM while a request is
// in flight and checks that the request finishes and the process exits 0.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := binary(t)

	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-sim-latency", "0")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")} // no vendor keys
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})

	// The first lines say where it listens and that the engines are simulated.
	lines := bufio.NewScanner(stdout)
	var banner []string
	for len(banner) < 2 && lines.Scan() {
		banner = append(banner, lines.Text())
	}
	go io.Copy(io.Discard, stdout)
	m := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(strings.Join(banner, "\n"))
	if m == nil {
		t.Fatalf("no address in the banner %q; log:\n%s", banner, logs)
	}
	base := m[1]
	if !strings.Contains(strings.Join(banner, "\n"), "SIMULATED") {
		t.Errorf("the banner does not say the engines are simulated: %q", banner)
	}

	body := `{"text":"` + seedText + `","source_lang":"en","target_lang":"zh"}`
	a := post(t, base+"/v1/translate", "application/json", body)
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
	b := post(t, base+"/v1/translate/batch", "application/json", `{"requests":[`+body+`,{"text":"The house is red.","source_lang":"en","target_lang":"es"}]}`)
	results, _ := b.body["data"].(map[string]any)["results"].([]any)
	if b.status != 200 || len(results) != 2 {
		t.Fatalf("POST /v1/translate/batch: %d %v", b.status, b.body)
	}
	if got := results[1].(map[string]any)["data"].(map[string]any)["translated_text"]; got != "La casa es roja." {
		t.Errorf("batch item 2: %v", got)
	}

	for _, path := range []string{"/v1/engines", "/healthz", "/readyz"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		a := decodeAnswer(t, resp)
		resp.Body.Close()
		if a.status != 200 || a.code() != 0 {
			t.Errorf("GET %s: %d %v", path, a.status, a.body)
		}
	}

	// The metric names the alerting rules in ops/ use.
	metrics := scrape(t, base)
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

	// Customer text never reaches the log.
	if strings.Contains(logs.String(), "rains") || strings.Contains(logs.String(), "casa") {
		t.Errorf("the log holds customer text:\n%s", logs)
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
	bin := binary(t)
	// Every simulated engine takes 2s: the request is surely in flight when the signal
	// arrives, whatever the machine's load.
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-sim-latency", "2s")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	stdout, _ := cmd.StdoutPipe()
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	sc := bufio.NewScanner(stdout)
	sc.Scan()
	go io.Copy(io.Discard, stdout)
	m := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(sc.Text())
	if m == "" {
		t.Fatalf("no address in %q", sc.Text())
	}

	answered := make(chan answer, 1)
	go func() {
		resp, err := http.Post(m+"/v1/translate", "application/json", strings.NewReader(`{"text":"`+seedText+`","target_lang":"zh"}`))
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
	// Wait until the server counts the request in flight.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inFlight := regexp.MustCompile(`(?m)^translate_server_http_in_flight\{[^}]*route="/v1/translate"[^}]*\} 1$`)
	for !inFlight.MatchString(scrape(t, m)) {
		select {
		case <-ctx.Done():
			t.Fatal("the request never showed as in flight")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitNotReady(ctx, t, m, logs)
	// Still served during the drain: a load balancer may send a few before it notices.
	late := post(t, m+"/v1/translate", "application/json", `{"text":"The house is red.","source_lang":"en","target_lang":"es"}`)
	if late.status != 200 || late.code() != 0 {
		t.Errorf("a request sent during the drain got %d %v", late.status, late.body)
	}
	a := <-answered
	if a.status != 200 || a.code() != 0 {
		t.Errorf("the request in flight at SIGTERM got %d %v", a.status, a.body)
	}
	checkStopped(ctx, t, exited, m, logs)
}

// TestSecondSignalEndsDrain: with a drain of 10 minutes, a second SIGTERM after /readyz
// turned 503 ends the drain, and the server exits 0 at once.
func TestSecondSignalEndsDrain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	cmd := exec.Command(binary(t), "-addr", "127.0.0.1:0", "-drain", "10m")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	stdout, _ := cmd.StdoutPipe()
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	sc := bufio.NewScanner(stdout)
	sc.Scan()
	go io.Copy(io.Discard, stdout)
	base := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(sc.Text())
	if base == "" {
		t.Fatalf("no address in %q", sc.Text())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitNotReady(ctx, t, base, logs)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil || !strings.Contains(logs.String(), "second signal: drain cut short") {
			t.Errorf("exit: %v; log:\n%s", err, logs)
		}
	case <-ctx.Done():
		t.Fatalf("still running 30s after the second SIGTERM; log:\n%s", logs)
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
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-config", "config.example.json", "-drain", "0") // no drain: TestGracefulShutdown tests it
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	stdout, _ := cmd.StdoutPipe()
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := <-exited; err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, logs)
		}
	}()
	sc := bufio.NewScanner(stdout)
	var banner []string
	for len(banner) < 2 && sc.Scan() {
		banner = append(banner, sc.Text())
	}
	go io.Copy(io.Discard, stdout)
	base := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(strings.Join(banner, "\n"))
	if base == "" || !strings.Contains(strings.Join(banner, "\n"), "engines: [sim-premium sim-standard sim-free]") {
		t.Fatalf("banner %q", banner)
	}
	a := post(t, base+"/v1/translate", "application/json", `{"text":"`+seedText+`","source_lang":"en","target_lang":"zh"}`)
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
	bin := binary(t)
	file := filepath.Join(t.TempDir(), "bundled.json")
	os.WriteFile(file, []byte(`{"engines":[{"name":"bundled","type":"fake","settings":{"prefix":"FAKE "}}]}`), 0o644)
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-config", file, "-drain", "0") // no drain: TestGracefulShutdown tests it
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	stdout, _ := cmd.StdoutPipe()
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := <-exited; err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, logs)
		}
	}()
	sc := bufio.NewScanner(stdout)
	var banner []string
	for len(banner) < 2 && sc.Scan() {
		banner = append(banner, sc.Text())
	}
	go io.Copy(io.Discard, stdout)
	base := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(strings.Join(banner, "\n"))
	if base == "" {
		t.Fatalf("banner %q; log:\n%s", banner, logs)
	}
	a := post(t, base+"/v1/translate", "application/json", `{"text":"hello","source_lang":"en","target_lang":"fr"}`)
	if a.code() != 0 || a.body["data"].(map[string]any)["translated_text"] != "FAKE hello" {
		t.Errorf("translate through the bundled fake type: %v", a.body)
	}
}
