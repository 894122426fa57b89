package translate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A shared hold moves offUntil both ways: it raises it, and its end lowers it back to the
// later of the engine's own reasons (a quota out, a Retry-After), never below them.
func TestSetHeldKeepsOwnReasons(t *testing.T) {
	e := &engine{engineState: &engineState{engineLive: &engineLive{}}}
	e.outFor(&e.coolUntil, 100)
	type off struct{ Off, Held int64 }
	var got []off
	for _, until := range []int64{300, 200, 0, 50} {
		e.setHeld(until)
		got = append(got, off{e.offUntil.Load(), e.heldUntil.Load()})
	}
	want := []off{{300, 300}, {200, 200}, {100, 0}, {100, 50}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("offUntil after holds ending at 300, 200, none, 50 with a cool-down to 100 (-want +got):\n%s", diff)
	}
	if e.heldDown(0) {
		t.Error("held down without a KindUnavailable hold")
	}
	e.heldKind.Store(int32(KindUnavailable))
	if !e.heldDown(49) || e.heldDown(50) {
		t.Error("heldDown does not follow the hold's end")
	}
}
