package google

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/text/language"

	"github.com/fanyi-go/translate"
)

func TestRegion(t *testing.T) {
	for loc, want := range map[string]string{
		"": "", "global": "", "eu": "eu", "europe-west1": "eu", "us": "us", "us-central1": "us", "US-East1": "us",
		// No multi-regional endpoint keeps these in place: the global endpoint serves them.
		"asia-northeast1": "", "northamerica-northeast1": "", "australia-southeast1": "",
	} {
		if got := Region(loc); got != want {
			t.Errorf("Region(%q) = %q, want %q", loc, got, want)
		}
	}
}

// hostRecorder is an http.RoundTripper that answers every request with a v3 translation
// and records the URLs it was sent to; nothing leaves the process.
type hostRecorder struct{ urls []string }

func (h *hostRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	h.urls = append(h.urls, r.URL.String())
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
		Body: io.NopCloser(strings.NewReader(`{"translations":[{"translatedText":"hola"}]}`))}, nil
}

// TestV3RegionalEndpoint: a v3 location in the EU or the US sends the text to that
// continent's multi-regional endpoint and says so in Profile().Region; other locations go
// to the global endpoint with Region "" (no promise of place); WithBaseURL replaces the
// host and keeps the location's Region; v2 ignores locations.
func TestV3RegionalEndpoint(t *testing.T) {
	tok := func(context.Context) (string, error) { return "t", nil }
	for _, tc := range []struct {
		opts       []Option
		url        string
		wantRegion string
	}{
		{nil, DefaultBaseURL + "/v3/projects/p/locations/global:translateText", ""},
		{[]Option{WithLocation("europe-west4")}, EUBaseURL + "/v3/projects/p/locations/europe-west4:translateText", "eu"},
		{[]Option{WithLocation("eu")}, EUBaseURL + "/v3/projects/p/locations/eu:translateText", "eu"},
		{[]Option{WithLocation("us-central1")}, USBaseURL + "/v3/projects/p/locations/us-central1:translateText", "us"},
		{[]Option{WithLocation("asia-northeast1")}, DefaultBaseURL + "/v3/projects/p/locations/asia-northeast1:translateText", ""},
		{[]Option{WithLocation("europe-west4"), WithBaseURL("https://proxy.example/")}, "https://proxy.example/v3/projects/p/locations/europe-west4:translateText", "eu"},
	} {
		rec := &hostRecorder{}
		e, err := NewV3("p", tok, append(tc.opts, WithHTTPClient(&http.Client{Transport: rec}))...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"hi"},
			Source: language.English, Target: language.Spanish}); err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		if len(rec.urls) != 1 || rec.urls[0] != tc.url || e.Profile().Region != tc.wantRegion {
			t.Errorf("sent to %q with Region %q, want %q with Region %q", rec.urls, e.Profile().Region, tc.url, tc.wantRegion)
		}
	}
	rec := &hostRecorder{}
	e, err := New("k", WithLocation("europe-west4"), WithHTTPClient(&http.Client{Transport: rec})) // v2 ignores locations
	if err != nil {
		t.Fatal(err)
	}
	e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"hi"}, Source: language.English, Target: language.Spanish})
	if len(rec.urls) != 1 || !strings.HasPrefix(rec.urls[0], DefaultBaseURL+"/language/translate/v2") || e.Profile().Region != "" {
		t.Errorf("v2 with a location: sent to %q, Region %q", rec.urls, e.Profile().Region)
	}
}
