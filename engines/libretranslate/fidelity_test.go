package libretranslate

import (
	"context"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
	"github.com/google/go-cmp/cmp"
)

// TestFormatOnTheWire: FormatHTML sends format "html", text sends "text" as before, XML is
// refused before any request.
func TestFormatOnTheWire(t *testing.T) {
	key := testKey
	for _, tc := range []struct {
		format translate.Format
		html   bool
	}{{translate.FormatText, false}, {translate.FormatHTML, true}} {
		e, s := newEngine(t, enginetest.Scenario{})
		r := req("en", "es", "<p>Hello</p>")
		r.Format = tc.format
		if _, err := e.Translate(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		want := []request{{Q: []string{"<p>Hello</p>"}, Source: "en", Target: "es", APIKey: &key, HTML: tc.html}}
		if diff := cmp.Diff(want, s.got()); diff != "" {
			t.Errorf("%v: requests (-want +got):\n%s", tc.format, diff)
		}
	}
	e, s := newEngine(t, enginetest.Scenario{})
	r := req("en", "es", "<a>x</a>")
	r.Format = translate.FormatXML
	if _, err := e.Translate(context.Background(), r); translate.KindOf(err) != translate.KindUnsupported || len(s.got()) != 0 {
		t.Errorf("XML: err = %v after %d requests, want KindUnsupported before any", err, len(s.got()))
	}
}
