package redistest

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func TestReportSkips(t *testing.T) {
	want := "redisstore: 3 tests SKIPPED: " + ErrMissing.Error() + "; with CI=true they fail\n"
	var stderr, tty bytes.Buffer
	open := func() (io.WriteCloser, error) { return nopCloser{&tty}, nil }
	if !reportSkips(&stderr, open, "redisstore", 3, ErrMissing) {
		t.Error("reportSkips(3) reported nothing")
	}
	if diff := cmp.Diff([]string{want, want}, []string{stderr.String(), tty.String()}); diff != "" {
		t.Errorf("stderr, terminal (-want +got):\n%s", diff)
	}

	// No terminal: stderr only.
	stderr.Reset()
	noTTY := func() (io.WriteCloser, error) { return nil, errors.New("no tty") }
	reportSkips(&stderr, noTTY, "redisstore", 3, ErrMissing)
	if stderr.String() != want {
		t.Errorf("stderr without a terminal = %q, want %q", stderr.String(), want)
	}

	// Nothing skipped: nothing said.
	stderr.Reset()
	if reportSkips(&stderr, open, "redisstore", 0, nil) || stderr.Len() != 0 {
		t.Errorf("reportSkips(0) wrote %q", stderr.String())
	}
}
