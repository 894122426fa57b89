package jsonfile

import (
	"context"
	"errors"
	"io"
	"os"
	"syscall"
)

// ErrNotRegular is Read's error for a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// Read reads the regular file at path (symbolic links are followed), at most limit bytes.
// A FIFO, a socket or a device is refused without being opened for a blocking read: the
// file is opened non-blocking, so a FIFO put in place between the checks cannot block the
// open, and checked again once open. It stops reading, and returns ctx's error, when ctx
// is done.
func Read(ctx context.Context, path string, limit int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(ctxReader{ctx, f}, limit))
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, err
	}
	return data, nil
}

// ctxReader stops reading when ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p[:min(len(p), 64<<10)])
}
