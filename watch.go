package translate

import (
	"context"
	"log/slog"
	"time"

	"github.com/fanyi-go/translate/internal/filewatch"
	"github.com/fanyi-go/translate/internal/recovery"
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
	wctx, cancel := recovery.RoundContext(ctx, c.stop) // ends when c closes, file unchanged or not
	defer cancel()
	err := c.newConfigWatcher(wctx, path).Run(wctx, watchEvery)
	if ctx.Err() == nil && c.closed.Load() {
		return ErrClosed
	}
	return err
}

// newConfigWatcher is WatchConfig's watcher: it applies with c.Reconfigure and counts a
// file it cannot parse as Reconfigure counts a config it rejects (translate.config.rejected
// and a warning).
func (c *Client) newConfigWatcher(ctx context.Context, path string) *watcher {
	return newWatcher(ctx, path, c.Reconfigure, c.configLogger(), c.obs.configRejectedOne)
}

// configLogger is the logger for configuration warnings.
func (c *Client) configLogger() *slog.Logger {
	if c.obs != nil && c.obs.log != nil {
		return c.obs.log
	}
	return slog.Default()
}

// watcher follows a configuration file between polls (internal/filewatch).
type watcher = filewatch.Watcher

// newWatcher watches path, read as LoadConfigContext does and parsed with ParseConfig;
// unparsed, when set, is told of a settled change that does not parse (apply reports the
// changes it rejects itself). An ErrClosed from apply ends the watch.
func newWatcher(ctx context.Context, path string, apply func(*Config) error, log *slog.Logger, unparsed func(error)) *watcher {
	return filewatch.New(ctx, filewatch.File{Path: path, Read: readConfigFile, Log: log,
		Apply: func(data []byte) error {
			cfg, err := ParseConfig(data)
			if err != nil {
				if unparsed != nil {
					unparsed(err)
				}
				return err
			}
			return apply(cfg)
		},
		Stop: func(err error) bool { return KindOf(err) == KindClosed }})
}
