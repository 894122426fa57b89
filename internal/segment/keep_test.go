package segment

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Keep joins the parts a span runs across, keeps the others and the white space, and
// Join still gives the text.
func TestKeepJoinsThePartsASpanRunsAcross(t *testing.T) {
	text := " One. {n, plural, one {A. B.} other {C. D.}} Two. Three.\n"
	s := Split(text, 6)
	open := strings.Index(text, "{n")
	spans := [][2]int{{open, strings.LastIndex(text, "}") + 1}}
	got := s.Keep(text, spans)
	want := Segments{Prefix: " ", Parts: []string{"One.", "{n, plural, one {A. B.} other {C. D.}}", "Two.", "Three."}, Seps: []string{" ", " ", " ", "\n"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Keep (-want +got):\n%s\nfrom %q", diff, s.Parts)
	}
	if j, err := got.Join(got.Parts); err != nil || j != text {
		t.Errorf("Join = %q, %v; want the text", j, err)
	}
	if diff := cmp.Diff(s, s.Keep(text, nil)); diff != "" {
		t.Errorf("no spans changed the parts:\n%s", diff)
	}
	if diff := cmp.Diff(s, s.Keep("another text", spans)); diff != "" {
		t.Errorf("a text s does not cut changed the parts:\n%s", diff)
	}
}
