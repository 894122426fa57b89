package microsoft_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
	"github.com/fanyi-go/translate/engines/microsoft"
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

// FuzzMicrosoft fuzzes the decoding of Translator answers (see enginetest.FuzzVendor).
func FuzzMicrosoft(f *testing.F) {
	enginetest.FuzzVendor(f, enginetest.FuzzHarness{
		NewEngine: func(hc *http.Client, key string) (translate.Engine, error) {
			return microsoft.New(key, "westeurope", microsoft.WithBaseURL("https://api.translator.test"), microsoft.WithHTTPClient(hc))
		},
	}, seeds(f)...)
}
