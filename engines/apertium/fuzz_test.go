package apertium_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/apertium"
	"github.com/fanyi-go/translate/engines/enginetest"
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

// FuzzApertium fuzzes the decoding of APy answers (see enginetest.FuzzVendor). APy takes no
// key; a password in the base URL is the credential.
func FuzzApertium(f *testing.F) {
	enginetest.FuzzVendor(f, enginetest.FuzzHarness{
		NewEngine: func(hc *http.Client, key string) (translate.Engine, error) {
			return apertium.New("https://apy:PASSWORD-CANARY-77@apy.test", apertium.WithHTTPClient(hc))
		},
		Secrets: []string{"PASSWORD-CANARY-77"},
	}, seeds(f)...)
}
