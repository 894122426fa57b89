package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/apertium"
	"github.com/fanyi-go/translate/engines/baidu"
	"github.com/fanyi-go/translate/engines/deepl"
	"github.com/fanyi-go/translate/engines/google"
	"github.com/fanyi-go/translate/engines/libretranslate"
	"github.com/fanyi-go/translate/engines/microsoft"
	"github.com/fanyi-go/translate/engines/openai"
	"github.com/fanyi-go/translate/internal/apy"
)

// realEngine is an engine configured from the environment, with its profile.
type realEngine struct {
	Engine  translate.Engine
	Profile translate.Profile
	Source  string // the environment variable(s) that enabled it
}

// profiled is what every adapter in engines/ provides besides translate.Engine.
type profiled interface {
	translate.Engine
	Profile() translate.Profile
}

// realEngines builds every engine whose settings are in the environment:
//
//	DEEPL_AUTH_KEY                                  DeepL (a key ending in ":fx" uses the free API)
//	GOOGLE_API_KEY                                  Google Cloud Translation v2
//	AZURE_TRANSLATOR_KEY + AZURE_TRANSLATOR_REGION  Microsoft Translator
//	BAIDU_APP_ID + BAIDU_SECRET                     Baidu Fanyi
//	OPENAI_API_KEY + OPENAI_MODEL                   an OpenAI-compatible chat model;
//	  [+ OPENAI_BASE_URL]                           default: OpenAI's own API
//	LIBRETRANSLATE_URL [+ LIBRETRANSLATE_API_KEY]   a LibreTranslate server
//	APERTIUM_URL                                    an Apertium APy server
//
// When APERTIUM_URL is unset and apertium-apy is installed (Debian/Ubuntu: apt-get install
// apertium-apy apertium-eng-spa), it starts a local APy on a free loopback port and adds
// it; APERTIUM_LOCAL=off prevents that. A half-configured engine (a key without its
// region, say) or one whose constructor fails is reported in warnings and left out; values
// of the variables never appear in them. cleanup stops what realEngines started; call it
// once, even when no engine was built.
func realEngines(ctx context.Context, getenv func(string) string) (engines []realEngine, warnings []string, cleanup func()) {
	cleanup = func() {}
	add := func(source string, e profiled, err error) {
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: %v", source, err))
			return
		}
		engines = append(engines, realEngine{Engine: e, Profile: e.Profile(), Source: source})
	}
	// need reports which of the variables are set; when some but not all are, it warns.
	need := func(names ...string) bool {
		var missing []string
		for _, n := range names {
			if getenv(n) == "" {
				missing = append(missing, n)
			}
		}
		if len(missing) == len(names) {
			return false
		}
		if len(missing) > 0 {
			warnings = append(warnings, fmt.Sprintf("%s: set, but %v missing; engine skipped", strings.Join(names, "+"), missing))
			return false
		}
		return true
	}

	if need("DEEPL_AUTH_KEY") {
		e, err := deepl.New(getenv("DEEPL_AUTH_KEY"))
		add("DEEPL_AUTH_KEY", e, err)
	}
	if need("GOOGLE_API_KEY") {
		e, err := google.New(getenv("GOOGLE_API_KEY"))
		add("GOOGLE_API_KEY", e, err)
	}
	if need("AZURE_TRANSLATOR_KEY", "AZURE_TRANSLATOR_REGION") {
		e, err := microsoft.New(getenv("AZURE_TRANSLATOR_KEY"), getenv("AZURE_TRANSLATOR_REGION"))
		add("AZURE_TRANSLATOR_KEY+AZURE_TRANSLATOR_REGION", e, err)
	}
	if need("BAIDU_APP_ID", "BAIDU_SECRET") {
		e, err := baidu.New(getenv("BAIDU_APP_ID"), getenv("BAIDU_SECRET"))
		add("BAIDU_APP_ID+BAIDU_SECRET", e, err)
	}
	if need("OPENAI_API_KEY", "OPENAI_MODEL") {
		source := "OPENAI_API_KEY+OPENAI_MODEL"
		var opts []openai.Option
		if u := getenv("OPENAI_BASE_URL"); u != "" {
			opts = append(opts, openai.WithBaseURL(u))
			source += "+OPENAI_BASE_URL"
		}
		e, err := openai.New(getenv("OPENAI_API_KEY"), getenv("OPENAI_MODEL"), opts...)
		add(source, e, err)
	}
	if getenv("LIBRETRANSLATE_URL") != "" {
		source := "LIBRETRANSLATE_URL"
		if getenv("LIBRETRANSLATE_API_KEY") != "" {
			source += "+LIBRETRANSLATE_API_KEY"
		}
		e, err := libretranslate.New(getenv("LIBRETRANSLATE_URL"), getenv("LIBRETRANSLATE_API_KEY"))
		add(source, e, err)
	} else if getenv("LIBRETRANSLATE_API_KEY") != "" {
		warnings = append(warnings, "LIBRETRANSLATE_API_KEY: set, but LIBRETRANSLATE_URL missing; engine skipped")
	}

	switch {
	case getenv("APERTIUM_URL") != "":
		e, err := apertium.New(getenv("APERTIUM_URL"))
		add("APERTIUM_URL", e, err)
	case getenv("APERTIUM_LOCAL") == "off":
	default:
		srv, err := apy.Start(ctx)
		if errors.Is(err, apy.ErrNotInstalled) {
			break // nothing to start: not worth a warning
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("local apertium-apy: %v", err))
			break
		}
		cleanup = func() { _ = srv.Close() }
		e, err := apertium.New(srv.URL())
		if err != nil {
			cleanup()
			cleanup = func() {}
		}
		add("apertium-apy (local, "+srv.URL()+")", e, err)
	}
	return engines, warnings, cleanup
}
