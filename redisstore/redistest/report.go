package redistest

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"testing"
)

// skips counts the tests Skip skipped in this process; reason is the first one's error.
var (
	skips  atomic.Int64
	reason atomic.Value // error
)

// Skip fails t when InCI, and otherwise skips it because redis-server is missing (err says
// so), counting it for ReportSkips.
func Skip(t testing.TB, err error) {
	t.Helper()
	if InCI() {
		t.Fatal(err)
	}
	if skips.Add(1) == 1 {
		reason.Store(err)
		uncached() // inside a test, where go test's input log sees it
	}
	t.Skip("skipping: ", err)
}

// ReportSkips tells whoever runs go test, in one line, how many tests of pkg Skip skipped;
// it says nothing when none were. Call it from TestMain after m.Run.
//
// go test ./... (package list mode) shows nothing of a passing package's output unless -v,
// so a line on stderr alone would never be seen: the line goes to stderr (seen with -v, in
// directory mode and when the package fails) and also to the terminal (/dev/tty) when the
// process has one and stderr is not it. Skip also keeps the run out of go test's cache, so
// that a rerun says it again (and sees a redis-server installed since) instead of
// replaying "ok (cached)".
func ReportSkips(pkg string) {
	tty := func() (io.WriteCloser, error) {
		if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return nil, os.ErrExist // stderr is the terminal already
		}
		return os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	}
	why, _ := reason.Load().(error)
	if !reportSkips(os.Stderr, tty, pkg, int(skips.Load()), why) {
		_ = os.Remove(skipMark)
	}
}

// reportSkips writes the line to stderr and to the terminal tty opens, if it opens one. It
// reports whether it wrote anything.
func reportSkips(stderr io.Writer, tty func() (io.WriteCloser, error), pkg string, n int, why error) bool {
	if n <= 0 {
		return false
	}
	line := fmt.Sprintf("%s: %d tests SKIPPED: %v; with CI=true they fail\n", pkg, n, why)
	fmt.Fprint(stderr, line)
	if w, err := tty(); err == nil {
		fmt.Fprint(w, line)
		_ = w.Close()
	}
	return true
}

// skipMark is the file uncached writes, in the package directory (the test's working
// directory): go test rechecks only files inside the module, and *.test is ignored by git.
const skipMark = "redistest-skipped.test"

// uncached keeps this test run out of go test's cache, so that installing redis-server
// later is not answered by a cached "ok" of skipped tests: go test does not cache a run
// whose tests opened a file of the module modified less than 2s before the run ended
// (cmd/go's modTimeCutoff). A later run with nothing skipped removes the file.
func uncached() {
	if err := os.WriteFile(skipMark, []byte("tests skipped without redis-server; see redistest.ReportSkips\n"), 0o600); err != nil {
		return
	}
	if f, err := os.Open(skipMark); err == nil {
		_ = f.Close()
	}
}
