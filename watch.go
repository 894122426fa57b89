package translate

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"time"
)

// watchEvery is how often WatchConfig reads the file. A change is applied once two reads in
// a row agree, so within 2*watchEvery plus the time to parse and apply: about 1s.
const watchEvery = 500 * time.Millisecond

// WatchConfig makes c follow the configuration file at path until ctx is done, then returns
// ctx's error. Build c from the same file first: the content WatchConfig finds when it
// starts is taken as what c runs.
//
// It reads the file every 500ms as LoadConfigContext does (a regular file of at most
// 1 MiB: a FIFO or a device is refused, never waited on), following symbolic links at
// every read, so both an edit in place and the atomic symlink swap Kubernetes uses for
// ConfigMaps (a "..data" link moved to a new timestamped directory) are seen. When the content has changed and two
// reads in a row agree (a half-written file is never applied), it parses it with
// LoadConfig's rules and applies it with c.Reconfigure: within about a second, always
// within 2s. A file that cannot be read or parsed, or that Reconfigure rejects, leaves c
// as it was; WatchConfig logs a warning (through c's logger, else slog.Default) with the
// error, which names the offending JSON path and never a setting's value, once per
// distinct content, and keeps watching. A change that does not parse is counted in
// translate.config.rejected, like one Reconfigure rejects. It returns ErrClosed's error at
// once if c is closed while it watches.
func WatchConfig(ctx context.Context, c *Client, path string) error {
	switch {
	case c == nil:
		return &Error{Kind: KindInvalidInput, Message: "WatchConfig: nil Client"}
	case path == "":
		return &Error{Kind: KindInvalidInput, Message: "WatchConfig: empty path"}
	}
	return c.newConfigWatcher(ctx, path).run(ctx, watchEvery)
}

// newConfigWatcher is WatchConfig's watcher: it applies with c.Reconfigure and counts a
// file it cannot parse as Reconfigure counts a config it rejects (translate.config.rejected
// and a warning).
func (c *Client) newConfigWatcher(ctx context.Context, path string) *watcher {
	w := newWatcher(ctx, path, c.Reconfigure, c.configLogger())
	w.unparsed = c.obs.configRejectedOne
	return w
}

// configLogger is the logger for configuration warnings.
func (c *Client) configLogger() *slog.Logger {
	if c.obs != nil && c.obs.log != nil {
		return c.obs.log
	}
	return slog.Default()
}

// watcher holds what WatchConfig knows of the file between polls.
type watcher struct {
	path  string
	apply func(*Config) error
	log   *slog.Logger
	// unparsed, when set, is told of a settled change that does not parse (Reconfigure
	// reports the changes it rejects itself).
	unparsed func(error)

	current  [32]byte // the content c runs
	pending  [32]byte // content seen once, waiting for a second read to agree
	rejected [32]byte // content already rejected and logged
	readErr  string   // the last read error logged
}

// newWatcher reads path once: the content it finds is what the Client runs.
func newWatcher(ctx context.Context, path string, apply func(*Config) error, log *slog.Logger) *watcher {
	w := &watcher{path: path, apply: apply, log: log}
	if data, err := readConfigFile(ctx, path); err == nil {
		w.current = sha256.Sum256(data)
	} else if ctx.Err() == nil {
		w.warnRead(err)
	}
	w.pending = w.current
	return w
}

// run polls the file every interval until ctx is done or the Client is closed.
func (w *watcher) run(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if err := w.poll(ctx); err != nil {
			return err
		}
	}
}

// poll reads the file once; it returns an error only when watching must stop.
func (w *watcher) poll(ctx context.Context) error {
	data, err := readConfigFile(ctx, w.path)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		w.warnRead(err)
		return nil
	}
	w.readErr = ""
	sum := sha256.Sum256(data)
	settled := sum == w.pending
	w.pending = sum
	if sum == w.current || sum == w.rejected || !settled {
		return nil
	}
	cfg, err := ParseConfig(data)
	if err == nil {
		err = w.apply(cfg)
		if KindOf(err) == KindClosed {
			return err
		}
	} else if w.unparsed != nil {
		w.unparsed(err)
	}
	if err != nil {
		w.rejected = sum
		w.log.LogAttrs(ctx, slog.LevelWarn, "translate: config change rejected, keeping the running config",
			slog.String("path", w.path), slog.String("error", err.Error()))
		return nil
	}
	w.current = sum
	w.log.LogAttrs(ctx, slog.LevelInfo, "translate: config change applied", slog.String("path", w.path))
	return nil
}

// warnRead logs a read error once until the file reads again.
func (w *watcher) warnRead(err error) {
	if msg := err.Error(); msg != w.readErr {
		w.readErr = msg
		w.log.LogAttrs(context.Background(), slog.LevelWarn, "translate: config file unreadable, keeping the running config",
			slog.String("path", w.path), slog.String("error", msg))
	}
}
