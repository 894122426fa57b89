package baidu_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/baidu"
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

// FuzzBaidu fuzzes the decoding of Baidu answers, HTTP-200 errors included (see
// enginetest.FuzzVendor). The APP ID is a secret too.
func FuzzBaidu(f *testing.F) {
	const appID = "APPID-CANARY-20260101"
	enginetest.FuzzVendor(f, enginetest.FuzzHarness{
		NewEngine: func(hc *http.Client, key string) (translate.Engine, error) {
			return baidu.New(appID, key, baidu.WithBaseURL("https://fanyi-api.baidu.test"), baidu.WithHTTPClient(hc))
		},
		Secrets: []string{appID},
		Target:  language.Chinese,
	}, seeds(f)...)
}
