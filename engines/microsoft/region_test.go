package microsoft

import (
	"testing"

	"github.com/fanyi-go/translate"
)

func TestWithGeography(t *testing.T) {
	for geo, want := range map[string]string{
		"": DefaultBaseURL, "eu": EuropeURL, "us": AmericasURL, "apac": AsiaPacificURL,
	} {
		e, err := New("k", "", WithGeography(geo))
		if err != nil {
			t.Fatalf("%q: %v", geo, err)
		}
		if e.base != want || e.Profile().Region != geo {
			t.Errorf("%q: base %q region %q, want %q %q", geo, e.base, e.Profile().Region, want, geo)
		}
	}
	// WithBaseURL wins for the host, the geography still names the region.
	e, err := New("k", "", WithGeography("eu"), WithBaseURL("http://127.0.0.1:1"))
	if err != nil || e.base != "http://127.0.0.1:1" || e.Profile().Region != "eu" {
		t.Fatalf("base %q region %q err %v", e.base, e.Profile().Region, err)
	}
	if _, err := New("k", "", WithGeography("mars")); translate.KindOf(err) != translate.KindInvalidInput {
		t.Fatalf("unknown geography: %v", err)
	}
}
