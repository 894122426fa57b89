package translate

import (
	"context"
	"crypto/sha256"
	"errors"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fanyi-go/translate/internal/lang"
)

type ctxKey struct{}

// TestStoreCtxEndsAtItsDeadline: a Store that waits on the call's context is released at
// the deadline (DeadlineExceeded), sees the request's values but not its cancellation, and
// a context nobody waited on costs no timer.
func TestStoreCtxEndsAtItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
		start := time.Now()
		c := newStoreCtx(parent, start.Add(storeWait))
		cancel() // the request ends: a settlement still goes on
		if v, _ := c.Value(ctxKey{}).(string); v != "v" {
			t.Errorf("Value = %q, want the parent's", v)
		}
		if d, ok := c.Deadline(); !ok || !d.Equal(start.Add(storeWait)) {
			t.Errorf("Deadline = %v %v, want %v", d, ok, start.Add(storeWait))
		}
		if c.timer != nil {
			t.Error("a timer before anyone asked for Done")
		}
		if err := c.Err(); err != nil {
			t.Fatalf("Err before the deadline = %v", err)
		}
		<-c.Done()
		if got := time.Since(start); got != storeWait {
			t.Errorf("Done after %v, want %v", got, storeWait)
		}
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Err = %v, want DeadlineExceeded", err)
		}
		c.release()
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Err after release = %v, want DeadlineExceeded still", err)
		}
	})
}

// TestStoreCtxReleaseCancels: release ends the context like a cancel function, whether or
// not Done was asked for, and stops the timer (no goroutine or timer left behind).
func TestStoreCtxReleaseCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		waited := newStoreCtx(nil, time.Now().Add(time.Hour))
		child, stop := context.WithTimeout(waited, time.Minute) // as a Store that calls Redis does
		defer stop()
		waited.release()
		<-child.Done() // at once, not after a minute
		if err := child.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("child Err = %v, want Canceled", err)
		}
		idle := newStoreCtx(nil, time.Now().Add(time.Hour))
		idle.release()
		select {
		case <-idle.Done():
		default:
			t.Error("Done after release is open")
		}
		if err := idle.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err = %v, want Canceled", err)
		}
		synctest.Wait()
	})
}

// TestStoreCtxAfterFunc: a context derived from the Store's (context.WithTimeout in a
// Store) is ended through AfterFunc, without a goroutine waiting on Done; a stopped
// function never runs, the others run once the context ends.
func TestStoreCtxAfterFunc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newStoreCtx(nil, time.Now().Add(time.Hour))
		var ran, stopped bool
		stop := context.AfterFunc(c, func() { stopped = true })
		context.AfterFunc(c, func() { ran = true })
		if len(c.after) != 2 {
			t.Fatalf("%d functions registered with AfterFunc, want 2 (context.AfterFunc uses it)", len(c.after))
		}
		if !stop() {
			t.Error("stop before the end = false, want true")
		}
		c.release()
		synctest.Wait()
		if !ran || stopped {
			t.Errorf("after release: ran %v, stopped one ran %v; want true, false", ran, stopped)
		}
		late := false
		context.AfterFunc(c, func() { late = true })
		synctest.Wait()
		if !late {
			t.Error("a function registered after the end never ran")
		}
	})
}

// TestContentDigestBytes: the digest hashes exactly what the first store's streaming hasher
// did (each field and a NUL, the format and glossary revision when not text and none, then
// the text), so replicas of two versions share keys.
func TestContentDigestBytes(t *testing.T) {
	tgt := &lang.Info{Full: "es-Latn"}
	src := &lang.Info{Key: "en"}
	for _, r := range []*request{
		{Request: Request{Text: "hello", Scene: 2, Style: 1}, src: src, tgt: tgt},
		{Request: Request{Text: "<b>hi</b>"}, tgt: tgt, key: keyFields{format: FormatHTML}},
	} {
		h := sha256.New()
		for _, f := range []string{"", r.tgt.Full, strconv.Itoa(int(r.Scene)), strconv.Itoa(int(r.Style))} {
			if r.src != nil && f == "" {
				f = r.src.Key
			}
			h.Write([]byte(f))
			h.Write([]byte{0})
		}
		if r.key.format != FormatText {
			h.Write([]byte(r.key.format.String() + "\x00" + "" + "\x00"))
		}
		h.Write([]byte(r.Text))
		var want [sha256.Size]byte
		h.Sum(want[:0])
		if got := contentDigest(r); got != want {
			t.Errorf("contentDigest(%q, %v) = %x, want %x", r.Text, r.key.format, got, want)
		}
	}
}
