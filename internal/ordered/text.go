package ordered

import "strings"

// MaxBytes bounds the translation a stream may send for a source of n bytes: far more than
// any language needs, far less than a runaway stream would send.
func MaxBytes(n int) int { return 8*n + 4096 }

// Text assembles a streamed translation of one source text from its deltas. It bounds the
// text's length (MaxBytes of the source), and tells whether the text so far may be shown:
// not while it is blank or still the start of the source, so that an engine that echoes
// never shows the source, even in part. The zero value is for an empty source; Reset
// starts another.
type Text struct {
	src      string
	limit    int
	b        strings.Builder
	diverged bool // the text so far is no longer the start of the source
}

// Reset starts the translation of src anew.
func (t *Text) Reset(src string) {
	t.src = strings.TrimSpace(src)
	t.limit = MaxBytes(len(t.src))
	t.b.Reset()
	t.diverged = false
}

// Add appends delta. It reports false, appending nothing, when the text would grow past
// MaxBytes of the source.
func (t *Text) Add(delta string) bool {
	if t.b.Len()+len(delta) > max(t.limit, MaxBytes(0)) {
		return false
	}
	t.b.WriteString(delta)
	if !t.diverged && delta != "" {
		s := strings.TrimSpace(t.b.String())
		t.diverged = !strings.HasPrefix(t.src, s) // a blank s is a prefix
	}
	return true
}

// Shown reports whether the text so far may be shown: it is not blank, and no longer the
// start of the source.
func (t *Text) Shown() bool { return t.diverged }

// String is the text so far.
func (t *Text) String() string { return t.b.String() }
