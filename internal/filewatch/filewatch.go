// Package filewatch follows a configuration file: it reads it at an interval, and applies a
// changed content once two reads in a row agree, so that a half-written file is never
// applied. What the content means, and what applying it does, is the caller's.
package filewatch

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"time"
)

// File is what a Watcher follows and what it does with a change.
type File struct {
	// Path is the file, read with Read at every poll.
	Path string
	// Read reads the file; an error that is ctx's ends a poll quietly.
	Read func(ctx context.Context, path string) ([]byte, error)
	// Apply parses and applies a settled change; an error leaves it rejected, logged once
	// per distinct content.
	Apply func(data []byte) error
	// Stop reports whether an error of Apply ends the watch (Poll and Run return it).
	Stop func(err error) bool
	// Log receives a warning per read error (once until the file reads again) and per
	// rejected content, and an info line per applied change.
	Log *slog.Logger
}

// Watcher holds what is known of the file between polls. It is not safe for concurrent use.
type Watcher struct {
	f        File
	current  [32]byte // the content running
	pending  [32]byte // content seen once, waiting for a second read to agree
	rejected [32]byte // content already rejected and logged
	readErr  string   // the last read error logged
}

// New reads f.Path once: the content it finds is taken as what runs.
func New(ctx context.Context, f File) *Watcher {
	w := &Watcher{f: f}
	if data, err := f.Read(ctx, f.Path); err == nil {
		w.current = sha256.Sum256(data)
	} else if ctx.Err() == nil {
		w.warnRead(err)
	}
	w.pending = w.current
	return w
}

// Run polls the file every interval until ctx is done (it returns ctx's error) or a poll
// returns an error.
func (w *Watcher) Run(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if err := w.Poll(ctx); err != nil {
			return err
		}
	}
}

// Poll reads the file once and applies a settled change; it returns an error only when
// watching must stop: ctx's, or an Apply error that Stop reports.
func (w *Watcher) Poll(ctx context.Context) error {
	data, err := w.f.Read(ctx, w.f.Path)
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
	if err := w.f.Apply(data); err != nil {
		if w.f.Stop != nil && w.f.Stop(err) {
			return err
		}
		w.rejected = sum
		w.f.Log.LogAttrs(ctx, slog.LevelWarn, "translate: config change rejected, keeping the running config",
			slog.String("path", w.f.Path), slog.String("error", err.Error()))
		return nil
	}
	w.current = sum
	w.f.Log.LogAttrs(ctx, slog.LevelInfo, "translate: config change applied", slog.String("path", w.f.Path))
	return nil
}

// warnRead logs a read error once until the file reads again.
func (w *Watcher) warnRead(err error) {
	if msg := err.Error(); msg != w.readErr {
		w.readErr = msg
		w.f.Log.LogAttrs(context.Background(), slog.LevelWarn, "translate: config file unreadable, keeping the running config",
			slog.String("path", w.f.Path), slog.String("error", msg))
	}
}
