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
	s := &realSetup{getenv: getenv}
	for _, k := range keyedEngines() {
		if s.need(k.vars...) {
			e, err := k.build(getenv)
			s.add(strings.Join(k.vars, "+"), e, err)
		}
	}
	s.openAI()
	s.libreTranslate()
	cleanup = s.apertium(ctx)
	return s.engines, s.warnings, cleanup
}

// realSetup collects the engines realEngines builds and the warnings about the ones it
// leaves out.
type realSetup struct {
	getenv   func(string) string
	engines  []realEngine
	warnings []string
}

// add keeps e, enabled by the variables named in source, or warns with err.
func (s *realSetup) add(source string, e profiled, err error) {
	if err != nil {
		s.warnings = append(s.warnings, fmt.Sprintf("%s: %v", source, err))
		return
	}
	s.engines = append(s.engines, realEngine{Engine: e, Profile: e.Profile(), Source: source})
}

// need reports whether all of the variables are set; when some but not all are, it warns.
func (s *realSetup) need(names ...string) bool {
	var missing []string
	for _, n := range names {
		if s.getenv(n) == "" {
			missing = append(missing, n)
		}
	}
	if len(missing) == len(names) {
		return false
	}
	if len(missing) > 0 {
		s.warnings = append(s.warnings, fmt.Sprintf("%s: set, but %v missing; engine skipped", strings.Join(names, "+"), missing))
		return false
	}
	return true
}

// keyed is an engine that needs every one of its variables, and nothing else.
type keyed struct {
	vars  []string
	build func(getenv func(string) string) (profiled, error)
}

// keyedEngines lists the engines enabled by keys alone, in the order they are tried.
func keyedEngines() []keyed {
	return []keyed{
		{[]string{"DEEPL_AUTH_KEY"}, func(getenv func(string) string) (profiled, error) {
			return deepl.New(getenv("DEEPL_AUTH_KEY"))
		}},
		{[]string{"GOOGLE_API_KEY"}, func(getenv func(string) string) (profiled, error) {
			return google.New(getenv("GOOGLE_API_KEY"))
		}},
		{[]string{"AZURE_TRANSLATOR_KEY", "AZURE_TRANSLATOR_REGION"}, func(getenv func(string) string) (profiled, error) {
			return microsoft.New(getenv("AZURE_TRANSLATOR_KEY"), getenv("AZURE_TRANSLATOR_REGION"))
		}},
		{[]string{"BAIDU_APP_ID", "BAIDU_SECRET"}, func(getenv func(string) string) (profiled, error) {
			return baidu.New(getenv("BAIDU_APP_ID"), getenv("BAIDU_SECRET"))
		}},
	}
}

// openAI adds an OpenAI-compatible chat model when OPENAI_API_KEY and OPENAI_MODEL are set,
// at OPENAI_BASE_URL if that is set too.
func (s *realSetup) openAI() {
	if !s.need("OPENAI_API_KEY", "OPENAI_MODEL") {
		return
	}
	source := "OPENAI_API_KEY+OPENAI_MODEL"
	var opts []openai.Option
	if u := s.getenv("OPENAI_BASE_URL"); u != "" {
		opts = append(opts, openai.WithBaseURL(u))
		source += "+OPENAI_BASE_URL"
	}
	e, err := openai.New(s.getenv("OPENAI_API_KEY"), s.getenv("OPENAI_MODEL"), opts...)
	s.add(source, e, err)
}

// libreTranslate adds the LibreTranslate server at LIBRETRANSLATE_URL, with
// LIBRETRANSLATE_API_KEY if that is set; a key without a URL is a warning.
func (s *realSetup) libreTranslate() {
	url, key := s.getenv("LIBRETRANSLATE_URL"), s.getenv("LIBRETRANSLATE_API_KEY")
	if url == "" {
		if key != "" {
			s.warnings = append(s.warnings, "LIBRETRANSLATE_API_KEY: set, but LIBRETRANSLATE_URL missing; engine skipped")
		}
		return
	}
	source := "LIBRETRANSLATE_URL"
	if key != "" {
		source += "+LIBRETRANSLATE_API_KEY"
	}
	e, err := libretranslate.New(url, key)
	s.add(source, e, err)
}

// apertium adds the APy server at APERTIUM_URL or, unless APERTIUM_LOCAL=off, a local one
// it starts. The returned cleanup stops what it started.
func (s *realSetup) apertium(ctx context.Context) (cleanup func()) {
	switch {
	case s.getenv("APERTIUM_URL") != "":
		e, err := apertium.New(s.getenv("APERTIUM_URL"))
		s.add("APERTIUM_URL", e, err)
	case s.getenv("APERTIUM_LOCAL") != "off":
		return s.localApertium(ctx)
	}
	return func() {}
}

// localApertium starts apertium-apy on a free loopback port and adds it, when it is
// installed. The returned cleanup stops it.
func (s *realSetup) localApertium(ctx context.Context) (cleanup func()) {
	srv, err := apy.Start(ctx)
	if errors.Is(err, apy.ErrNotInstalled) {
		return func() {} // nothing to start: not worth a warning
	}
	if err != nil {
		s.warnings = append(s.warnings, fmt.Sprintf("local apertium-apy: %v", err))
		return func() {}
	}
	cleanup = func() { _ = srv.Close() }
	e, err := apertium.New(srv.URL())
	if err != nil {
		cleanup()
		cleanup = func() {}
	}
	s.add("apertium-apy (local, "+srv.URL()+")", e, err)
	return cleanup
}
