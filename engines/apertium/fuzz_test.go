package apertium_test

import (
	"context"
	"net/http"
	"net/url"
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
// key; a password in the base URL is the credential, so the harness's key is that password.
// (A fixed password, with the harness's key given to nobody, made a vendor that echoes the
// key fail the leak check with a string the adapter never had.)
func FuzzApertium(f *testing.F) {
	enginetest.FuzzVendor(f, enginetest.FuzzHarness{
		NewEngine: func(hc *http.Client, key string) (translate.Engine, error) {
			u := url.URL{Scheme: "https", User: url.UserPassword("apy", key), Host: "apy.test"}
			return apertium.New(u.String(), apertium.WithHTTPClient(hc))
		},
	}, seeds(f)...)
}
