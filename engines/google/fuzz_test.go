package google_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
	"github.com/fanyi-go/translate/engines/google"
)

var _ = context.Background

// seeds returns the recorded vendor answers in testdata, for the fuzz corpus.
func seeds(f *testing.F) []string {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*"))
	var out []string
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			out = append(out, string(b))
		}
	}
	return out
}

// FuzzGoogleV2 fuzzes the decoding of Cloud Translation v2 answers (see enginetest.FuzzVendor).
func FuzzGoogleV2(f *testing.F) {
	enginetest.FuzzVendor(f, enginetest.FuzzHarness{
		NewEngine: func(hc *http.Client, key string) (translate.Engine, error) {
			return google.New(key, google.WithBaseURL("https://translation.googleapis.test"), google.WithHTTPClient(hc))
		},
	}, seeds(f)...)
}

// FuzzGoogleV3 fuzzes the decoding of Cloud Translation v3 answers (see enginetest.FuzzVendor).
func FuzzGoogleV3(f *testing.F) {
	enginetest.FuzzVendor(f, enginetest.FuzzHarness{
		NewEngine: func(hc *http.Client, key string) (translate.Engine, error) {
			return google.NewV3("p", func(context.Context) (string, error) { return key, nil },
				google.WithBaseURL("https://translation.googleapis.test"), google.WithHTTPClient(hc))
		},
	}, seeds(f)...)
}
