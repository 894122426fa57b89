package openai_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
	"github.com/fanyi-go/translate/engines/openai"
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

// FuzzOpenAI fuzzes the decoding of chat completion answers and the x-ratelimit-* headers
// (see enginetest.FuzzVendor).
func FuzzOpenAI(f *testing.F) {
	enginetest.FuzzVendor(f, enginetest.FuzzHarness{
		NewEngine: func(hc *http.Client, key string) (translate.Engine, error) {
			return openai.New(key, "gpt-test", openai.WithBaseURL("https://api.openai.test/v1"), openai.WithHTTPClient(hc))
		},
	}, seeds(f)...)
}
