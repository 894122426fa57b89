package google

import (
	"maps"
	"strings"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/fidelity/glossary"
	"golang.org/x/text/language"
)

// maxGlossaries bounds WithGlossaries' map.
const maxGlossaries = 10000

// WithGlossaries maps glossary names (glossary.Glossary.Name, the name a request's glossary
// has) to Cloud Translation Advanced glossary resources,
// "projects/{project-number-or-id}/locations/{location}/glossaries/{glossary-id}", which you
// create and keep in step with the terms yourself. A request whose glossary has a resource
// here sends it as glossaryConfig and takes Google's glossaryTranslations. v3 only (New
// refuses it), in the engine's location, which must not be "global" (Google applies custom
// glossaries only in a regional location); at most 10 000 entries. With at least one entry,
// Profile().Native.Glossary is true and AppliesGlossary takes the mapped names only (the
// Client masks the terms of any other glossary). The default is none.
func WithGlossaries(resources map[string]string) Option {
	return func(c *config) { c.glossaries = maps.Clone(resources) }
}

// checkGlossaries validates WithGlossaries against the edition and location.
func checkGlossaries(c config, v3 bool) error {
	if len(c.glossaries) == 0 {
		return nil
	}
	if !v3 {
		return invalidArg("google: WithGlossaries needs Cloud Translation Advanced (NewV3)")
	}
	if len(c.glossaries) > maxGlossaries {
		return invalidArg("google: WithGlossaries: more than 10000 glossaries")
	}
	if c.location == "global" {
		return invalidArg(`google: WithGlossaries needs a regional location, not "global"`)
	}
	for name, res := range c.glossaries {
		p := strings.Split(res, "/")
		if name == "" || len(p) != 6 || p[0] != "projects" || p[1] == "" || p[2] != "locations" ||
			p[3] != c.location || p[4] != "glossaries" || p[5] == "" {
			return invalidArg("google: WithGlossaries: glossary " + quote(name) +
				": want projects/{project}/locations/" + c.location + "/glossaries/{id}")
		}
	}
	return nil
}

func quote(s string) string { return `"` + s + `"` }

// native is what the engine declares in Profile().Native.
func (e *Engine) native() fidelity.Native {
	return fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML}, Glossary: len(e.glossaries) > 0}
}

// GlossaryResource returns the v3 glossary resource WithGlossaries gave for the glossary
// named name, and whether there is one: the engine applies that glossary itself, and no
// other. Safe for concurrent use.
func (e *Engine) GlossaryResource(name string) (string, bool) {
	r, ok := e.glossaries[name]
	return r, ok
}

// AppliesGlossary reports whether the engine applies g itself: whether WithGlossaries maps
// g's name to a resource (translate.GlossaryFilter). The Client masks the terms of any
// other glossary. Safe for concurrent use.
func (e *Engine) AppliesGlossary(g *glossary.Glossary) bool {
	_, ok := e.GlossaryResource(g.Name())
	return ok
}

// call is what one request sends besides the texts.
type call struct {
	src, tgt string
	html     bool   // v2 format "html", v3 mimeType "text/html"
	glossary string // v3 glossary resource, "" for none
}

// prepare builds the call for req: the codes, the format (Google takes HTML, not XML) and
// the glossary resource when one is configured for req.Glossary. A glossary needs the
// source language: with a request that detects it, the glossary's own source is sent.
func (e *Engine) prepare(req *translate.EngineRequest) (call, error) {
	var c call
	switch req.Format {
	case translate.FormatText:
	case translate.FormatHTML:
		c.html = true
	default:
		return c, e.errorf(translate.KindUnsupported, "format "+req.Format.String()+" is not one Google takes (text or HTML)")
	}
	src := req.Source
	if req.Glossary != nil {
		if res, ok := e.GlossaryResource(req.Glossary.Name()); ok {
			c.glossary = res
			if src == language.Und {
				src = glossarySource(req.Glossary)
			}
		}
	}
	var err error
	if c.tgt, err = e.code(req.Target, "target"); err != nil {
		return c, err
	}
	if src != language.Und {
		if c.src, err = e.code(src, "source"); err != nil {
			return c, err
		}
	}
	return c, nil
}

// glossarySource is g's source language, language.Und when it does not parse.
func glossarySource(g *glossary.Glossary) language.Tag {
	t, err := language.Parse(g.Source())
	if err != nil {
		return language.Und
	}
	return t
}
