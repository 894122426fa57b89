package fidelity_test

import (
	"errors"
	"testing"

	"github.com/fanyi-go/translate/fidelity"
)

// TestNativeMarkupKeepsAttributes checks that an engine taking HTML natively must give
// back every attribute but the text ones as it was: a changed class, href or id is bad
// output, a translated alt or title is not, nor is an attribute order changed.
func TestNativeMarkupKeepsAttributes(t *testing.T) {
	src := `<p class="widget" id="p1">Buy <a href="/buy" title="Buy now">now</a><img src="x.png" alt="A cat"></p>`
	native := fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML}}
	for _, c := range []struct {
		name, answer string
		bad          bool
	}{
		{"translated text and text attributes", `<p class="widget" id="p1">Kaufen <a href="/buy" title="Jetzt kaufen">jetzt</a><img src="x.png" alt="Eine Katze"></p>`, false},
		{"attributes reordered", `<p id="p1" class="widget">Kaufen <a href="/buy" title="Jetzt kaufen">jetzt</a><img alt="Eine Katze" src="x.png"></p>`, false},
		{"class translated", `<p class="Bauteil" id="p1">Kaufen <a href="/buy" title="Jetzt kaufen">jetzt</a><img src="x.png" alt="Eine Katze"></p>`, true},
		{"href changed", `<p class="widget" id="p1">Kaufen <a href="/kaufen" title="Jetzt kaufen">jetzt</a><img src="x.png" alt="Eine Katze"></p>`, true},
		{"src dropped", `<p class="widget" id="p1">Kaufen <a href="/buy" title="Jetzt kaufen">jetzt</a><img alt="Eine Katze"></p>`, true},
	} {
		p, err := fidelity.New(fidelity.Options{Format: fidelity.FormatHTML})
		if err != nil {
			t.Fatal(err)
		}
		pr := p.Prepare(src, native)
		_, err = pr.Finish([]string{c.answer})
		var ve *fidelity.VerifyError
		if got := errors.As(err, &ve); got != c.bad {
			t.Errorf("%s: bad output %v (err %v), want %v", c.name, got, err, c.bad)
		}
	}
}
