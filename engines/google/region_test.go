package google

import (
	"context"
	"testing"
)

func TestRegion(t *testing.T) {
	for loc, want := range map[string]string{
		"": "", "global": "", "eu": "eu", "europe-west1": "eu", "us": "us", "us-central1": "us",
		"asia-northeast1": "asia", "northamerica-northeast1": "northamerica", "US-East1": "us",
	} {
		if got := Region(loc); got != want {
			t.Errorf("Region(%q) = %q, want %q", loc, got, want)
		}
	}
	tok := func(context.Context) (string, error) { return "t", nil }
	e, err := NewV3("p", tok, WithLocation("europe-west4"))
	if err != nil || e.Profile().Region != "eu" || e.parent != "projects/p/locations/europe-west4" {
		t.Fatalf("v3: %v %q %q", err, e.Profile().Region, e.parent)
	}
	e, _ = NewV3("p", tok)
	if e.Profile().Region != "" {
		t.Errorf("global v3 region %q", e.Profile().Region)
	}
	e, _ = New("k", WithLocation("europe-west4")) // v2 ignores locations
	if e.Profile().Region != "" {
		t.Errorf("v2 region %q", e.Profile().Region)
	}
}
