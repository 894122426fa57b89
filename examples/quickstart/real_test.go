package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/apertium"
	"github.com/fanyi-go/translate/engines/baidu"
	"github.com/fanyi-go/translate/engines/deepl"
	"github.com/fanyi-go/translate/engines/google"
	"github.com/fanyi-go/translate/engines/libretranslate"
	"github.com/fanyi-go/translate/engines/microsoft"
	"github.com/fanyi-go/translate/engines/openai"
	"github.com/fanyi-go/translate/internal/apy"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"golang.org/x/text/language"
)

// env is a fake environment; APERTIUM_LOCAL=off unless the test sets it, so that no
// local APy is started.
func env(kv ...string) func(string) string {
	m := map[string]string{"APERTIUM_LOCAL": "off"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

type built struct{ Name, Source string }

func builtSummary(t *testing.T, engines []realEngine) []built {
	t.Helper()
	var out []built
	for _, e := range engines {
		out = append(out, built{e.Engine.Name(), e.Source})
		if p, ok := e.Engine.(interface{ Profile() translate.Profile }); !ok {
			t.Errorf("%s: engine %T has no Profile method", e.Source, e.Engine)
		} else if diff := cmp.Diff(p.Profile(), e.Profile); diff != "" {
			t.Errorf("%s: Profile differs from the engine's (-engine +realEngine):\n%s", e.Source, diff)
		}
	}
	return out
}

const secret = "sk-very-secret-value"

// realEnginesCase is an environment and what realEngines builds from it.
type realEnginesCase struct {
	name         string
	getenv       func(string) string
	want         []built
	wantWarnings []string // substrings, one per warning, in order
}

// realEnginesCases are the environments of TestRealEngines.
func realEnginesCases() []realEnginesCase {
	return []realEnginesCase{
		{name: "nothing set", getenv: env()},
		{
			name: "everything set",
			getenv: env(
				"DEEPL_AUTH_KEY", secret+":fx",
				"GOOGLE_API_KEY", secret,
				"AZURE_TRANSLATOR_KEY", secret, "AZURE_TRANSLATOR_REGION", "westeurope",
				"BAIDU_APP_ID", "20240101000000001", "BAIDU_SECRET", secret,
				"OPENAI_API_KEY", secret, "OPENAI_MODEL", "gpt-4o-mini",
				"LIBRETRANSLATE_URL", "http://127.0.0.1:5000", "LIBRETRANSLATE_API_KEY", secret,
				"APERTIUM_URL", "http://127.0.0.1:2737",
			),
			want: []built{
				{deepl.Name, "DEEPL_AUTH_KEY"},
				{google.Name, "GOOGLE_API_KEY"},
				{microsoft.Name, "AZURE_TRANSLATOR_KEY+AZURE_TRANSLATOR_REGION"},
				{baidu.Name, "BAIDU_APP_ID+BAIDU_SECRET"},
				{openai.Name, "OPENAI_API_KEY+OPENAI_MODEL"},
				{libretranslate.Name, "LIBRETRANSLATE_URL+LIBRETRANSLATE_API_KEY"},
				{apertium.Name, "APERTIUM_URL"},
			},
		},
		{
			name:   "openai-compatible server, libretranslate without key",
			getenv: env("OPENAI_API_KEY", secret, "OPENAI_MODEL", "qwen2.5", "OPENAI_BASE_URL", "http://127.0.0.1:11434/v1", "LIBRETRANSLATE_URL", "http://127.0.0.1:5000"),
			want: []built{
				{openai.Name, "OPENAI_API_KEY+OPENAI_MODEL+OPENAI_BASE_URL"},
				{libretranslate.Name, "LIBRETRANSLATE_URL"},
			},
		},
		{
			name:         "half-configured engines are skipped with a warning",
			getenv:       env("AZURE_TRANSLATOR_KEY", secret, "BAIDU_SECRET", secret, "OPENAI_API_KEY", secret, "LIBRETRANSLATE_API_KEY", secret),
			wantWarnings: []string{"AZURE_TRANSLATOR_REGION", "BAIDU_APP_ID", "OPENAI_MODEL", "LIBRETRANSLATE_URL"},
		},
		{
			name:         "constructor errors are warnings",
			getenv:       env("APERTIUM_URL", "ftp://"+secret, "LIBRETRANSLATE_URL", "://bad", "GOOGLE_API_KEY", secret),
			want:         []built{{google.Name, "GOOGLE_API_KEY"}},
			wantWarnings: []string{"LIBRETRANSLATE_URL", "APERTIUM_URL"},
		},
	}
}

func TestRealEngines(t *testing.T) {
	for _, tt := range realEnginesCases() {
		t.Run(tt.name, func(t *testing.T) {
			engines, warnings, cleanup := realEngines(context.Background(), tt.getenv)
			defer cleanup()
			if diff := cmp.Diff(tt.want, builtSummary(t, engines)); diff != "" {
				t.Errorf("engines (-want +got):\n%s", diff)
			}
			if len(warnings) != len(tt.wantWarnings) {
				t.Fatalf("warnings %q, want %d mentioning %q", warnings, len(tt.wantWarnings), tt.wantWarnings)
			}
			for i, w := range warnings {
				if !strings.Contains(w, tt.wantWarnings[i]) {
					t.Errorf("warning %d %q does not mention %s", i, w, tt.wantWarnings[i])
				}
				if strings.Contains(w, secret) {
					t.Errorf("warning %q contains a secret", w)
				}
			}
		})
	}
}

// TestRealEnginesLocalAPy: with APERTIUM_URL unset and apertium-apy installed, realEngines
// starts a local APy, and cleanup stops it.
func TestRealEnginesLocalAPy(t *testing.T) {
	skip := t.Skipf
	if os.Getenv("CI") == "true" { // CI installs it: missing is a failure there
		skip = t.Fatalf
	}
	in, err := apy.Find()
	if errors.Is(err, apy.ErrNotInstalled) {
		skip("skipping: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !in.HasPair("eng-spa") {
		skip("skipping: the eng-spa Apertium pair is not installed")
	}
	defer goleak.VerifyNone(t)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	engines, warnings, cleanup := realEngines(ctx, env("APERTIUM_LOCAL", ""))
	stopped := false
	defer func() {
		if !stopped {
			cleanup()
		}
	}()
	if len(warnings) != 0 || len(engines) != 1 || !strings.HasPrefix(engines[0].Source, "apertium-apy (local, http://127.0.0.1:") {
		t.Fatalf("engines %v, warnings %q: want one local apertium engine", builtSummary(t, engines), warnings)
	}
	res, err := engines[0].Engine.Translate(ctx, &translate.EngineRequest{
		Texts: []string{"The house is red."}, Source: language.English, Target: language.Spanish,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Texts[0], "casa") {
		t.Errorf("got %q, want a Spanish house", res.Texts[0])
	}
	url := strings.TrimSuffix(strings.TrimPrefix(engines[0].Source, "apertium-apy (local, "), ")")
	cleanup()
	stopped = true
	hc := &http.Client{Timeout: 5 * time.Second}
	if resp, err := hc.Get(url + "/listPairs"); err == nil {
		resp.Body.Close()
		t.Errorf("%s still answers after cleanup", url)
	}
}
