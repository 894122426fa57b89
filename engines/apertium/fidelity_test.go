package apertium

import (
	"context"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/google/go-cmp/cmp"
)

// TestFormatOnTheWire: FormatHTML sends format=html for every text (the fake fails the
// test on any other format), plain text format=txt as before, XML nothing at all.
func TestFormatOnTheWire(t *testing.T) {
	for _, tc := range []struct {
		format translate.Format
		want   string
	}{{translate.FormatText, "txt"}, {translate.FormatHTML, "html"}} {
		a := newAPy(t, "eng|spa")
		a.format = tc.want
		e := newEngine(t, a.start())
		r := enReq("<p>The <b>house</b></p>", "<i>red</i>", "x &amp; y")
		r.Format = tc.format
		res, err := e.Translate(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"T:<p>The <b>house</b></p>", "T:<i>red</i>", "T:x &amp; y"}
		if diff := cmp.Diff(want, res.Texts); diff != "" {
			t.Errorf("%v: texts (-want +got):\n%s", tc.format, diff)
		}
		if n := len(a.seen()); n != 3 {
			t.Errorf("%v: %d requests, want 3", tc.format, n)
		}
	}
	a := newAPy(t, "eng|spa")
	e := newEngine(t, a.start())
	r := enReq("<a>x</a>")
	r.Format = translate.FormatXML
	if _, err := e.Translate(context.Background(), r); translate.KindOf(err) != translate.KindUnsupported || len(a.seen()) != 0 {
		t.Errorf("XML: err = %v after %d requests, want KindUnsupported before any", err, len(a.seen()))
	}
}
