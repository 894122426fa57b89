package translate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
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
// returned channel. stop cancels the watch and returns its error. Tests call it in a
// synctest bubble: the polls, and the waits of next and waitLog, are in virtual time.
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
	wr := newWatcher(context.Background(), path, func(cfg *Config) error {
		if err := apply(cfg); err != nil {
			return err
		}
		w.applied <- cfg
		return nil
	}, slog.New(w.log), nil)
	done := make(chan error, 1)
	go func() { done <- wr.Run(ctx, time.Millisecond) }()
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
	synctest.Test(t, func(t *testing.T) {
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
	})
}

// TestWatchUnchangedNotReapplied: the content found at start is not applied, and a write of
// the same bytes is no change: the first Config applied is the later, different one.
func TestWatchUnchangedNotReapplied(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.json")
		writeAtomic(t, path, configWith("1s"))
		w := watch(t, path, nil)
		for range 3 {
			writeAtomic(t, path, configWith("1s"))
			time.Sleep(5 * time.Millisecond) // five polls (virtual time) see it
		}
		writeAtomic(t, path, configWith("4s"))
		if got := w.next(t).Deadline; got != 4*time.Second {
			t.Fatalf("first applied deadline %v, want 4s", got)
		}
	})
}

// TestWatchKubernetesSymlinkSwap: a ConfigMap volume holds config.json -> ..data/config.json
// and ..data -> ..<timestamp>; an update writes a new timestamped directory and renames a
// new ..data link over the old one.
func TestWatchKubernetesSymlinkSwap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
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
	})
}

// TestWatchRejectedChangeKeepsConfig: a change that does not validate (the seed's
// incident: failure_ratio 0.1) is never applied, is logged once with its JSON path, and
// the watch goes on to apply the next good change.
func TestWatchRejectedChangeKeepsConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
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
	})
}

// TestWatchApplyRejected: when the Client refuses a Config, the watch logs it and goes on.
func TestWatchApplyRejected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
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
	})
}

// TestWatchMissingFile: a file that is missing is logged once, not at every poll, and
// applied when it appears; a second disappearance is logged again (polls driven by hand).
func TestWatchMissingFile(t *testing.T) {
	registerTestTypes()
	path := filepath.Join(t.TempDir(), "config.json")
	var applied []time.Duration
	sink := &logSink{}
	w := newWatcher(context.Background(), path, func(cfg *Config) error { applied = append(applied, cfg.Deadline); return nil }, slog.New(sink), nil)
	poll := func(n int) {
		t.Helper()
		for range n {
			if err := w.Poll(context.Background()); err != nil {
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
	synctest.Test(t, func(t *testing.T) {
		registerTestTypes()
		path := filepath.Join(t.TempDir(), "config.json")
		writeAtomic(t, path, configWith("1s"))
		wr := newWatcher(context.Background(), path, func(*Config) error { return ErrClosed }, slog.New(&logSink{}), nil)
		done := make(chan error, 1)
		go func() { done <- wr.Run(context.Background(), time.Millisecond) }()
		writeAtomic(t, path, configWith("2s"))
		select {
		case err := <-done:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("run returned %v, want ErrClosed", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("run did not return on a closed Client")
		}
	})
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

// TestWatchWaitsForSettledContent: content is applied only when two reads in a row agree,
// so a file caught half-written is never applied (polls driven by hand).
func TestWatchWaitsForSettledContent(t *testing.T) {
	registerTestTypes()
	path := filepath.Join(t.TempDir(), "config.json")
	writeAtomic(t, path, configWith("1s"))
	var applied []time.Duration
	w := newWatcher(context.Background(), path, func(cfg *Config) error { applied = append(applied, cfg.Deadline); return nil }, slog.New(&logSink{}), nil)
	poll := func() {
		t.Helper()
		if err := w.Poll(context.Background()); err != nil {
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
// TestWatchSeedIncident: the seed's incident pushed through the watcher. A failure ratio
// of 0.1 is rejected once (the same content polled again is not counted twice), the
// running 0.5 stays, a warning names the field and translate.config.rejected counts it;
// the next good push applies.
func TestWatchSeedIncident(t *testing.T) {
	registerTestTypes()
	path := filepath.Join(t.TempDir(), "config.json")
	writeAtomic(t, path, ratioFile("0.5"))
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
	w := c.newConfigWatcher(context.Background(), path)
	rejected := func() int64 { return sumCounter(t, reader, "translate.config.rejected") }

	writeAtomic(t, path, ratioFile("0.1"))
	pollUntilApplied(t, w)
	pollUntilApplied(t, w) // the same bad content is not counted twice
	if got := c.cfg.Load().breaker.FailureRatio; got != 0.5 {
		t.Errorf("failure ratio %v after the bad push, want the running 0.5", got)
	}
	if n := rejected(); n != 1 {
		t.Errorf("translate.config.rejected = %d, want 1", n)
	}
	if lines := sink.matching("breaker.failure_ratio: must be within 0.2..0.9"); len(lines) == 0 || !strings.HasPrefix(lines[0], "WARN") {
		t.Errorf("no warning naming breaker.failure_ratio; log %q", sink.matching(""))
	}

	writeAtomic(t, path, ratioFile("0.6"))
	pollUntilApplied(t, w)
	if got := c.cfg.Load().breaker.FailureRatio; got != 0.6 {
		t.Errorf("failure ratio %v after a good push, want 0.6", got)
	}
	if n := rejected(); n != 1 {
		t.Errorf("translate.config.rejected = %d after a good push, want still 1", n)
	}
}

// ratioFile is a configuration file with one engine and the breaker's failure ratio.
func ratioFile(ratio string) []byte {
	return []byte(`{"engines":[{"name":"a","type":"cfgtest"}],"breaker":{"failure_ratio":` + ratio + `}}`)
}

// pollUntilApplied polls w twice: a change applies once two reads agree.
func pollUntilApplied(t *testing.T, w *watcher) {
	t.Helper()
	for range 2 {
		if err := w.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// sumCounter collects reader and returns the sum of the int64 counter name's points; 0
// when it has none.
func sumCounter(t *testing.T, reader *sdkmetric.ManualReader, name string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
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

// kubeDir is a directory laid out as Kubernetes mounts a ConfigMap: config.json ->
// ..data/config.json, ..data -> ..<version>.
type kubeDir struct {
	t   *testing.T
	dir string
	cur string // the version ..data points to
	n   int    // versions written
}

func newKubeDir(t *testing.T, data []byte) *kubeDir {
	k := &kubeDir{t: t, dir: t.TempDir()}
	k.update(data)
	if err := os.Symlink(filepath.Join("..data", "config.json"), k.path()); err != nil {
		t.Fatal(err)
	}
	return k
}

func (k *kubeDir) path() string { return filepath.Join(k.dir, "config.json") }

// update writes data as a new version and swaps ..data to it atomically (a new link
// renamed over the old one), then removes the old version, as the kubelet does.
func (k *kubeDir) update(data []byte) {
	t := k.t
	t.Helper()
	k.n++
	name := fmt.Sprintf("..2026_01_01_00_00_%02d.%d", k.n, k.n)
	if err := os.Mkdir(filepath.Join(k.dir, name), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(k.dir, name, "config.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(k.dir, "..data_tmp")
	if err := os.Symlink(name, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(k.dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if k.cur != "" {
		if err := os.RemoveAll(filepath.Join(k.dir, k.cur)); err != nil {
			t.Fatal(err)
		}
	}
	k.cur = name
}

// TestWatchConfigWithin2s runs WatchConfig itself on a Client in virtual time (a synctest
// bubble: its ticker is the real watchEvery, the machine's load cannot move it). A change
// made at any point between two polls, an edit in place, a file renamed over the old one
// or a Kubernetes ConfigMap swap, is running within 2s; a change the Client rejects
// leaves the running config, and the next good one is running within 2s again.
func TestWatchConfigWithin2s(t *testing.T) {
	registerTestTypes()
	for name, writer := range configWriters {
		for _, offset := range []time.Duration{0, time.Millisecond, watchEvery / 2, watchEvery - time.Millisecond} {
			t.Run(fmt.Sprintf("%s/%v after a poll", name, offset), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { watchConfigWithin2s(t, writer, offset) })
			})
		}
	}
}

// watchConfigWithin2s runs WatchConfig on a Client built from a file writer made, and
// pushes changes offset after a poll: a good change, a rejected one, a good one again.
func watchConfigWithin2s(t *testing.T, writer configWriter, offset time.Duration) {
	path, write := writer(t, engineFile("a"))
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(WithConfig(cfg), WithLogger(slog.New(&logSink{})))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- WatchConfig(ctx, c, path) }()
	defer func() { cancel(); <-done }()
	synctest.Wait() // WatchConfig has read the file and waits for its first poll

	time.Sleep(offset)
	if d := runningWithin(t, c, write, engineFile("a", "b"), "a,b"); d > 2*time.Second {
		t.Errorf("the change ran after %v, want within 2s", d)
	}

	// Rejected (the seed's incident): the running config stays, through more polls than
	// a good change needs.
	write([]byte(`{"engines":[{"name":"a","type":"cfgtest"}],"breaker":{"failure_ratio":0.1}}`))
	time.Sleep(5 * watchEvery)
	if got := engineList(c); got != "a,b" || c.cfg.Load().breaker.FailureRatio == 0.1 {
		t.Fatalf("after a rejected change: engines %s, failure ratio %v", got, c.cfg.Load().breaker.FailureRatio)
	}
	time.Sleep(offset)
	if d := runningWithin(t, c, write, engineFile("b"), "b"); d > 2*time.Second {
		t.Errorf("the change after a rejected one ran after %v, want within 2s", d)
	}
}

// runningWithin pushes data with write and returns how long until c's engines are want
// (engineList); it fails the test after 10s.
func runningWithin(t *testing.T, c *Client, write func([]byte), data []byte, want string) time.Duration {
	t.Helper()
	start := time.Now()
	write(data)
	for engineList(c) != want {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("engines %s 10s after the change, want %s", engineList(c), want)
		}
		time.Sleep(time.Millisecond)
	}
	return time.Since(start)
}

// engineList is c's engine names, comma-separated.
func engineList(c *Client) string { return strings.Join(clientEngineNames(c), ",") }

// engineFile is a configuration file with an engine of type cfgtest for each name.
func engineFile(names ...string) []byte {
	var es []string
	for _, n := range names {
		es = append(es, `{"name":"`+n+`","type":"cfgtest"}`)
	}
	return []byte(`{"engines":[` + strings.Join(es, ",") + `]}`)
}

// configWriter writes first to a new configuration file and returns its path and a
// function that changes the file.
type configWriter func(t *testing.T, first []byte) (path string, write func([]byte))

// configWriters are the ways a configuration file changes: edited in place, a new file
// renamed over it, a Kubernetes ConfigMap's symlink swap.
var configWriters = map[string]configWriter{
	"in place":   writeInPlace,
	"renamed":    writeRenamed,
	"kubernetes": writeKubernetes,
}

func writeInPlace(t *testing.T, first []byte) (string, func([]byte)) {
	path := filepath.Join(t.TempDir(), "config.json")
	write := func(data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(first)
	return path, write
}

func writeRenamed(t *testing.T, first []byte) (string, func([]byte)) {
	path := filepath.Join(t.TempDir(), "config.json")
	writeAtomic(t, path, first)
	return path, func(data []byte) { writeAtomic(t, path, data) }
}

func writeKubernetes(t *testing.T, first []byte) (string, func([]byte)) {
	k := newKubeDir(t, first)
	return k.path(), k.update
}

// TestWatchConfigEndsWhenClientClosed: WatchConfig on a file that never changes returns
// ErrClosed as soon as its Client is closed (in virtual time: no poll is needed), and
// leaves no goroutine behind (the bubble ends only when all of its goroutines have).
func TestWatchConfigEndsWhenClientClosed(t *testing.T) {
	registerTestTypes()
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.json")
		writeAtomic(t, path, engineFile("a"))
		cfg, err := LoadConfig(path)
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(WithConfig(cfg), WithLogger(slog.New(&logSink{})))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- WatchConfig(ctx, c, path) }()
		time.Sleep(3 * watchEvery) // polls that find the file unchanged
		c.Close()
		synctest.Wait()
		select {
		case err := <-done:
			if KindOf(err) != KindClosed {
				t.Errorf("WatchConfig returned %v, want ErrClosed", err)
			}
		default:
			t.Error("WatchConfig still runs after its Client closed")
			cancel()
			<-done
		}
	})
}
