package deepl_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/deepl"
	"github.com/fanyi-go/translate/engines/enginetest"
	"golang.org/x/text/language"
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

// FuzzDeepL fuzzes the decoding of DeepL answers, successes and errors (see
// enginetest.FuzzVendor).
func FuzzDeepL(f *testing.F) {
	enginetest.FuzzVendor(f, enginetest.FuzzHarness{
		NewEngine: func(hc *http.Client, key string) (translate.Engine, error) {
			return deepl.New(key, deepl.WithBaseURL("https://api.deepl.test"), deepl.WithHTTPClient(hc))
		},
		Target: language.German,
	}, seeds(f)...)
}
