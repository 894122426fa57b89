package translate

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// logSink is a slog.Handler that keeps every record's message and attributes.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (s *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (s *logSink) WithAttrs([]slog.Attr) slog.Handler       { return s }
func (s *logSink) WithGroup(string) slog.Handler            { return s }
func (s *logSink) Handle(_ context.Context, r slog.Record) error {
	line := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool { line += " " + a.String(); return true })
	s.mu.Lock()
	s.lines = append(s.lines, line)
	s.mu.Unlock()
	return nil
}

func (s *logSink) matching(sub string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.lines {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

// watch runs a watcher on path with a 1ms poll; every applied Config arrives on the
// returned channel. stop cancels the watch and returns its error.
type watched struct {
	applied chan *Config
	log     *logSink
	stop    func() error
}

func watch(t *testing.T, path string, apply func(*Config) error) *watched {
	t.Helper()
	registerTestTypes()
	w := &watched{applied: make(chan *Config, 16), log: &logSink{}}
	if apply == nil {
		apply = func(*Config) error { return nil }
	}
	ctx, cancel := context.WithCancel(context.Background())
	wr := newWatcher(path, func(cfg *Config) error {
		if err := apply(cfg); err != nil {
			return err
		}
		w.applied <- cfg
		return nil
	}, slog.New(w.log))
	done := make(chan error, 1)
	go func() { done <- wr.run(ctx, time.Millisecond) }()
	var once sync.Once
	var err error
	w.stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { w.stop() })
	return w
}

// next returns the next applied Config, failing the test after a generous deadline.
func (w *watched) next(t *testing.T) *Config {
	t.Helper()
	select {
	case cfg := <-w.applied:
		return cfg
	case <-time.After(10 * time.Second):
		t.Fatal("no config applied")
		return nil
	}
}

// waitLog polls the log until a line contains sub.
func (w *watched) waitLog(t *testing.T, sub string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); len(w.log.matching(sub)) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q; log: %q", sub, w.log.matching(""))
		}
		time.Sleep(time.Millisecond)
	}
}

func configWith(deadline string) []byte {
	return []byte(`{"engines":[{"name":"a","type":"cfgtest"}],"deadline":"` + deadline + `"}`)
}

// writeAtomic replaces path's content the way careful writers do: a temp file renamed.
func writeAtomic(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestWatchAppliesChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	writeAtomic(t, path, configWith("1s"))
	w := watch(t, path, nil)
	writeAtomic(t, path, configWith("2s"))
	if got := w.next(t).Deadline; got != 2*time.Second {
		t.Fatalf("applied deadline %v, want 2s", got)
	}
	// An edit in place (same inode) is seen too.
	if err := os.WriteFile(path, configWith("3s"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := w.next(t).Deadline; got != 3*time.Second {
		t.Fatalf("applied deadline %v, want 3s", got)
	}
	if err := w.stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("run returned %v, want context.Canceled", err)
	}
	if lines := w.log.matching("config change applied"); len(lines) != 2 {
		t.Errorf("applied log lines %q, want 2", lines)
	}
}

// TestWatchUnchangedNotReapplied: the content found at start is not applied, and a write of
// the same bytes is no change: the first Config applied is the later, different one.
func TestWatchUnchangedNotReapplied(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	writeAtomic(t, path, configWith("1s"))
	w := watch(t, path, nil)
	for range 3 {
		writeAtomic(t, path, configWith("1s"))
	}
	writeAtomic(t, path, configWith("4s"))
	if got := w.next(t).Deadline; got != 4*time.Second {
		t.Fatalf("first applied deadline %v, want 4s", got)
	}
}

// TestWatchKubernetesSymlinkSwap: a ConfigMap volume holds config.json -> ..data/config.json
// and ..data -> ..<timestamp>; an update writes a new timestamped directory and renames a
// new ..data link over the old one.
func TestWatchKubernetesSymlinkSwap(t *testing.T) {
	dir := t.TempDir()
	version := func(name string, data []byte) {
		if err := os.Mkdir(filepath.Join(dir, name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "config.json"), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	swap := func(name string) {
		tmp := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink(name, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	version("..2026_01_01_00_00_00.1", configWith("1s"))
	swap("..2026_01_01_00_00_00.1")
	path := filepath.Join(dir, "config.json")
	if err := os.Symlink(filepath.Join("..data", "config.json"), path); err != nil {
		t.Fatal(err)
	}

	w := watch(t, path, nil)
	version("..2026_01_01_00_01_00.2", configWith("5s"))
	swap("..2026_01_01_00_01_00.2")
	os.RemoveAll(filepath.Join(dir, "..2026_01_01_00_00_00.1"))
	if got := w.next(t).Deadline; got != 5*time.Second {
		t.Fatalf("applied deadline %v after the swap, want 5s", got)
	}
}

// TestWatchRejectedChangeKeepsConfig: a change that does not validate (the seed's
// incident: failure_ratio 0.1) is never applied, is logged once with its JSON path, and
// the watch goes on to apply the next good change.
func TestWatchRejectedChangeKeepsConfig(t *testing.T) {
	t.Setenv("CFGTEST_KEY", "super-secret-key-value")
	path := filepath.Join(t.TempDir(), "config.json")
	writeAtomic(t, path, configWith("1s"))
	w := watch(t, path, nil)
	writeAtomic(t, path, []byte(`{"engines":[{"name":"a","type":"cfgtest","settings":{"key":"env:CFGTEST_KEY"}}],
		"breaker":{"failure_ratio":0.1}}`))
	w.waitLog(t, "breaker.failure_ratio: must be within 0.2..0.9")
	writeAtomic(t, path, []byte(`{"engines": [`)) // a broken file: rejected too
	w.waitLog(t, "invalid JSON")
	writeAtomic(t, path, configWith("6s"))
	if got := w.next(t).Deadline; got != 6*time.Second {
		t.Fatalf("applied deadline %v, want 6s (the rejected changes must not be applied)", got)
	}
	if lines := w.log.matching("rejected"); len(lines) != 2 {
		t.Errorf("rejection log lines %q, want one per rejected content", lines)
	}
	for _, l := range w.log.matching("") {
		if strings.Contains(l, "super-secret-key-value") {
			t.Errorf("log line quotes a secret: %s", l)
		}
		if strings.HasPrefix(l, "WARN") != strings.Contains(l, "rejected") {
			t.Errorf("unexpected log line %s", l)
		}
	}
}

// TestWatchApplyRejected: when the Client refuses a Config, the watch logs it and goes on.
func TestWatchApplyRejected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	writeAtomic(t, path, configWith("1s"))
	w := watch(t, path, func(cfg *Config) error {
		if cfg.Deadline == 7*time.Second {
			return &Error{Kind: KindInvalidInput, Message: "refused by the client"}
		}
		return nil
	})
	writeAtomic(t, path, configWith("7s"))
	w.waitLog(t, "refused by the client")
	writeAtomic(t, path, configWith("8s"))
	if got := w.next(t).Deadline; got != 8*time.Second {
		t.Fatalf("applied deadline %v, want 8s", got)
	}
}

// TestWatchMissingFile: a file that is missing is logged once, not at every poll, and
// applied when it appears; a second disappearance is logged again (polls driven by hand).
func TestWatchMissingFile(t *testing.T) {
	registerTestTypes()
	path := filepath.Join(t.TempDir(), "config.json")
	var applied []time.Duration
	sink := &logSink{}
	w := newWatcher(path, func(cfg *Config) error { applied = append(applied, cfg.Deadline); return nil }, slog.New(sink))
	poll := func(n int) {
		t.Helper()
		for range n {
			if err := w.poll(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	poll(3)
	if lines := sink.matching("unreadable"); len(lines) != 1 {
		t.Errorf("unreadable log lines %q, want 1", lines)
	}
	writeAtomic(t, path, configWith("9s"))
	poll(2)
	if diff := cmp.Diff([]time.Duration{9 * time.Second}, applied); diff != "" {
		t.Errorf("applied (-want +got):\n%s", diff)
	}
	os.Remove(path)
	poll(3)
	if lines := sink.matching("unreadable"); len(lines) != 2 {
		t.Errorf("unreadable log lines %q, want 2", lines)
	}
}

func TestWatchStopsWhenClientClosed(t *testing.T) {
	registerTestTypes()
	path := filepath.Join(t.TempDir(), "config.json")
	writeAtomic(t, path, configWith("1s"))
	wr := newWatcher(path, func(*Config) error { return ErrClosed }, slog.New(&logSink{}))
	done := make(chan error, 1)
	go func() { done <- wr.run(context.Background(), time.Millisecond) }()
	writeAtomic(t, path, configWith("2s"))
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("run returned %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return on a closed Client")
	}
}

func TestWatchConfigArguments(t *testing.T) {
	if err := WatchConfig(context.Background(), nil, "x"); KindOf(err) != KindInvalidInput {
		t.Errorf("WatchConfig(nil Client) = %v", err)
	}
	registerTestTypes()
	c, err := New(WithEngine(&cfgEngine{name: "a"}, Profile{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := WatchConfig(context.Background(), c, ""); KindOf(err) != KindInvalidInput {
		t.Errorf("WatchConfig(empty path) = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WatchConfig(ctx, c, filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, context.Canceled) {
		t.Errorf("WatchConfig(canceled ctx) = %v", err)
	}
}

// TestWatchBound: a change is applied after at most two polls, within the 2s the design
// promises with room for parsing and applying.
func TestWatchBound(t *testing.T) {
	if 2*watchEvery > 1500*time.Millisecond {
		t.Errorf("watchEvery %v: two polls exceed 1.5s", watchEvery)
	}
}

// TestWatchConfigReconfiguresClient runs WatchConfig's watcher on a real Client, at
// WatchConfig's pace: a new engine in the file shows in Engines.
func TestWatchConfigReconfiguresClient(t *testing.T) {
	registerTestTypes()
	path := filepath.Join(t.TempDir(), "config.json")
	writeAtomic(t, path, []byte(`{"engines":[{"name":"a","type":"cfgtest"}]}`))
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(WithConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	w := c.newConfigWatcher(path) // what WatchConfig runs; built here so that it reads the file before the change
	go func() { done <- w.run(ctx, watchEvery) }()
	defer func() { cancel(); <-done }()
	writeAtomic(t, path, []byte(`{"engines":[{"name":"a","type":"cfgtest"},{"name":"b","type":"cfgtest"}]}`))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if len(c.Engines()) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("engine b not added; engines %+v", c.Engines())
		}
	}
}

// TestWatchWaitsForSettledContent: content is applied only when two reads in a row agree,
// so a file caught half-written is never applied (polls driven by hand).
func TestWatchWaitsForSettledContent(t *testing.T) {
	registerTestTypes()
	path := filepath.Join(t.TempDir(), "config.json")
	writeAtomic(t, path, configWith("1s"))
	var applied []time.Duration
	w := newWatcher(path, func(cfg *Config) error { applied = append(applied, cfg.Deadline); return nil }, slog.New(&logSink{}))
	poll := func() {
		t.Helper()
		if err := w.poll(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	poll()
	writeAtomic(t, path, configWith("2s"))
	poll() // seen once
	if len(applied) != 0 {
		t.Fatalf("applied %v after one read of the new content", applied)
	}
	writeAtomic(t, path, configWith("3s")) // still being written
	poll()
	poll() // 3s seen twice
	poll()
	if diff := cmp.Diff([]time.Duration{3 * time.Second}, applied); diff != "" {
		t.Errorf("applied (-want +got):\n%s", diff)
	}
}

// TestWatchSeedIncident is the seed's incident through WatchConfig: a pushed file with
// failure_ratio 0.1 is rejected; the Client keeps 0.5, warns naming the field and counts
// translate.config.rejected; the next good file applies (polls driven by hand).
func TestWatchSeedIncident(t *testing.T) {
	registerTestTypes()
	path := filepath.Join(t.TempDir(), "config.json")
	file := func(ratio string) []byte {
		return []byte(`{"engines":[{"name":"a","type":"cfgtest"}],"breaker":{"failure_ratio":` + ratio + `}}`)
	}
	writeAtomic(t, path, file("0.5"))
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	sink := &logSink{}
	c, err := New(WithConfig(cfg), WithMeterProvider(mp), WithLogger(slog.New(sink)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := c.newConfigWatcher(path)
	poll := func() {
		t.Helper()
		for range 2 { // a change applies once two reads agree
			if err := w.poll(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	rejected := func() int64 {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "translate.config.rejected" {
					var n int64
					for _, p := range sum.DataPoints {
						n += p.Value
					}
					return n
				}
			}
		}
		return 0
	}

	writeAtomic(t, path, file("0.1"))
	poll()
	poll() // the same bad content is not counted twice
	if got := c.cfg.Load().breaker.FailureRatio; got != 0.5 {
		t.Errorf("failure ratio %v after the bad push, want the running 0.5", got)
	}
	if n := rejected(); n != 1 {
		t.Errorf("translate.config.rejected = %d, want 1", n)
	}
	if lines := sink.matching("breaker.failure_ratio: must be within 0.2..0.9"); len(lines) == 0 || !strings.HasPrefix(lines[0], "WARN") {
		t.Errorf("no warning naming breaker.failure_ratio; log %q", sink.matching(""))
	}

	writeAtomic(t, path, file("0.6"))
	poll()
	if got := c.cfg.Load().breaker.FailureRatio; got != 0.6 {
		t.Errorf("failure ratio %v after a good push, want 0.6", got)
	}
	if n := rejected(); n != 1 {
		t.Errorf("translate.config.rejected = %d after a good push, want still 1", n)
	}
}
