package baidu

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"
)

// TestDetectSourceFirstKnown: with several requests, the source is the first code Baidu
// reports that maps to a tag; an unknown code is skipped, a later one does not override.
func TestDetectSourceFirstKnown(t *testing.T) {
	fake, e := newTest(t, modeOK)
	from := map[string]string{"a\nb": "zz", "c\nd": "jp", "e": "kor"}
	fake.reply = func(w http.ResponseWriter, f url.Values) {
		q := f.Get("q")
		var tr []transResult
		for _, l := range strings.Split(q, "\n") {
			tr = append(tr, transResult{Src: l, Dst: "T:" + l})
		}
		writeJSON(w, response{From: from[q], To: f.Get("to"), TransResult: tr})
	}
	res, err := e.Translate(context.Background(), request("", "en", "a\nb", "c\nd", "e"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"T:a\nT:b", "T:c\nT:d", "T:e"}, res.Texts); diff != "" {
		t.Errorf("Texts (-want +got):\n%s", diff)
	}
	if len(fake.requests()) != 3 {
		t.Fatalf("%d requests, want 3", len(fake.requests()))
	}
	if res.Source != language.Japanese {
		t.Errorf("Source = %v, want ja (the first known code, jp)", res.Source)
	}
}

// TestMultiLineLineTooLong: a line of a multi-line text over the limit fails the call
// before anything is sent.
func TestMultiLineLineTooLong(t *testing.T) {
	fake, e := newTest(t, modeOK)
	_, err := e.Translate(context.Background(), request("zh", "en", "ok", "fine\n"+strings.Repeat("汉", 2001)))
	if translate.KindOf(err) != translate.KindTextTooLong {
		t.Errorf("err = %v, want KindTextTooLong", err)
	}
	if n := len(fake.requests()); n != 0 {
		t.Errorf("%d requests, want 0", n)
	}
}
