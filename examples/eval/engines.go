package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"golang.org/x/text/language"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
	"github.com/fanyi-go/translate/engines/apertium"
	"github.com/fanyi-go/translate/engines/fake"
	"github.com/fanyi-go/translate/eval"
	"github.com/fanyi-go/translate/internal/apy"
)

// client builds the Client to evaluate and the names of the engines to evaluate: the
// engines of -config, or the default engines. cleanup stops what it started.
func client(ctx context.Context, a args, set []eval.Item, getenv func(string) string, errw io.Writer) (*translate.Client, []string, func(), error) {
	cleanup := func() {}
	var opts []translate.Option
	if a.config != "" {
		all.Register()
		cfg, err := translate.LoadConfig(a.config)
		if err != nil {
			return nil, nil, cleanup, err
		}
		opts = append(opts, translate.WithConfig(cfg))
	} else {
		var engines []engineSpec
		engines, cleanup = defaultEngines(ctx, set, getenv, errw)
		for _, e := range engines {
			opts = append(opts, translate.WithEngine(e.e, e.p))
		}
	}
	opts = append(opts, translate.WithoutCache())
	c, err := translate.New(opts...)
	if err != nil {
		cleanup()
		return nil, nil, func() {}, err
	}
	names, err := pick(c, a.engines)
	if err != nil {
		c.Close()
		cleanup()
		return nil, nil, func() {}, err
	}
	return c, names, cleanup, nil
}

// pick returns the engines named in list (comma-separated), or every engine of c.
func pick(c *translate.Client, list string) ([]string, error) {
	var have []string
	for _, st := range c.Engines() {
		have = append(have, st.Name)
	}
	if list == "" {
		return have, nil
	}
	names := strings.Split(list, ",")
	for _, n := range names {
		if !slices.Contains(have, n) {
			return nil, fmt.Errorf("-engines: no engine %q (have %s)", n, strings.Join(have, ", "))
		}
	}
	return names, nil
}

type engineSpec struct {
	e translate.Engine
	p translate.Profile
}

// defaultEngines are Apertium (APERTIUM_URL, or a local APy when installed and
// APERTIUM_LOCAL is not "off") and a simulated engine that garbles the words of the
// reference; without Apertium, a simulated engine that answers with the reference stands
// in for a good one.
func defaultEngines(ctx context.Context, set []eval.Item, getenv func(string) string, errw io.Writer) ([]engineSpec, func()) {
	refs := map[[2]string]string{}
	for _, it := range set {
		refs[[2]string{it.Target, it.Text}] = it.Refs[0]
	}
	lookup := func(f func(string) string) func(string, language.Tag, language.Tag) string {
		return func(text string, _, target language.Tag) string {
			b, _ := target.Base()
			return f(refs[[2]string{b.String(), text}])
		}
	}
	garble := engineSpec{fake.New("garble", fake.WithTranslator(lookup(eval.Garble))), translate.Profile{}}
	ap, cleanup, err := apertiumEngine(ctx, getenv)
	if err != nil {
		fmt.Fprintf(errw, "eval: no Apertium (%v); simulated engines: \"reference\" answers with the reference, \"garble\" garbles its words\n", err)
		exact := engineSpec{fake.New("reference", fake.WithTranslator(lookup(func(s string) string { return s }))), translate.Profile{}}
		return []engineSpec{exact, garble}, cleanup
	}
	return []engineSpec{{ap, ap.Profile()}, garble}, cleanup
}

// apertiumEngine connects to APERTIUM_URL, or starts a local APy.
func apertiumEngine(ctx context.Context, getenv func(string) string) (*apertium.Engine, func(), error) {
	if u := getenv("APERTIUM_URL"); u != "" {
		e, err := apertium.New(u)
		return e, func() {}, err
	}
	if getenv("APERTIUM_LOCAL") == "off" {
		return nil, func() {}, errors.New("APERTIUM_LOCAL=off")
	}
	if _, err := apy.Find(); err != nil {
		return nil, func() {}, err
	}
	srv, err := apy.Start(ctx)
	if err != nil {
		return nil, func() {}, err
	}
	stop := func() { srv.Close() }
	e, err := apertium.New(srv.URL())
	if err != nil {
		stop()
		return nil, func() {}, err
	}
	return e, stop, nil
}
