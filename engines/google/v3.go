package google

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/internal/httpx"
)

// resourceSet is a set of glossary resources, bounded by WithGlossaries' map. Safe for
// concurrent use.
type resourceSet struct {
	mu sync.Mutex
	m  map[string]bool
}

func (s *resourceSet) Load(r string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[r]
}

func (s *resourceSet) Store(r string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]bool)
	}
	s.m[r] = true
}

// v3Request is the JSON form of google.cloud.translation.v3.TranslateTextRequest; parent
// rides in the path.
type v3Request struct {
	Contents           []string          `json:"contents"`
	MimeType           string            `json:"mimeType"`
	SourceLanguageCode string            `json:"sourceLanguageCode,omitempty"`
	TargetLanguageCode string            `json:"targetLanguageCode"`
	GlossaryConfig     *v3GlossaryConfig `json:"glossaryConfig,omitempty"`
}

// v3GlossaryConfig is the JSON form of TranslateTextGlossaryConfig.
type v3GlossaryConfig struct {
	Glossary string `json:"glossary"`
}

// v3Translation is the JSON form of Translation.
type v3Translation struct {
	TranslatedText       string `json:"translatedText"`
	DetectedLanguageCode string `json:"detectedLanguageCode"`
}

// v3Response is the JSON form of TranslateTextResponse.
type v3Response struct {
	Translations []v3Translation `json:"translations"`
	// GlossaryTranslations are the translations with the glossary applied, when one was
	// sent; as long as Translations.
	GlossaryTranslations []v3Translation `json:"glossaryTranslations"`
}

// v3Languages is the JSON form of SupportedLanguages.
type v3Languages struct {
	Languages []struct {
		LanguageCode  string `json:"languageCode"`
		SupportSource bool   `json:"supportSource"`
		SupportTarget bool   `json:"supportTarget"`
	} `json:"languages"`
}

// translateV3 is one POST /v3/{parent}:translateText. A glossary that Google refuses
// (400 or 404 with glossaryConfig: a resource that does not exist, is not ready, or is
// for other languages) does not fail the call: the texts go again without it, the
// resource is remembered as refused and not sent again, and the Client checks the terms.
func (e *Engine) translateV3(ctx context.Context, texts []string, c call) ([]string, string, error) {
	if c.glossary != "" && e.refused.Load(c.glossary) {
		c.glossary = ""
	}
	out, detected, err := e.postV3(ctx, texts, c)
	var te *translate.Error
	if c.glossary != "" && errors.As(err, &te) && (te.StatusCode == http.StatusBadRequest || te.StatusCode == http.StatusNotFound) {
		res := c.glossary
		c.glossary = ""
		if out, detected, err = e.postV3(ctx, texts, c); err == nil {
			e.refused.Store(res)
		}
	}
	return out, detected, err
}

// postV3 sends texts in one POST /v3/{parent}:translateText.
func (e *Engine) postV3(ctx context.Context, texts []string, c call) ([]string, string, error) {
	body := v3Request{Contents: texts, MimeType: "text/plain", SourceLanguageCode: c.src, TargetLanguageCode: c.tgt}
	if c.html {
		body.MimeType = "text/html"
	}
	if c.glossary != "" {
		body.GlossaryConfig = &v3GlossaryConfig{Glossary: c.glossary}
	}
	resp, err := e.do(ctx, http.MethodPost, e.base+"/v3/"+e.parent+":translateText", body, texts)
	if err != nil {
		return nil, "", err
	}
	var r v3Response
	if err := httpx.Decode(e.name, resp, &r); err != nil {
		return nil, "", err
	}
	ts := r.Translations
	if c.glossary != "" {
		ts = r.GlossaryTranslations // the glossary's translations; counted by the caller
	}
	out := make([]string, len(ts))
	detected := ""
	for i, t := range ts {
		out[i] = t.TranslatedText
		if detected == "" {
			detected = t.DetectedLanguageCode
		}
	}
	return out, detected, nil
}

// languagesV3 is GET /v3/{parent}/supportedLanguages.
func (e *Engine) languagesV3(ctx context.Context) (sources, targets []string, err error) {
	resp, err := e.do(ctx, http.MethodGet, e.base+"/v3/"+e.parent+"/supportedLanguages", nil, nil)
	if err != nil {
		return nil, nil, err
	}
	var r v3Languages
	if err := httpx.Decode(e.name, resp, &r); err != nil {
		return nil, nil, err
	}
	for _, l := range r.Languages {
		if l.SupportSource {
			sources = append(sources, l.LanguageCode)
		}
		if l.SupportTarget {
			targets = append(targets, l.LanguageCode)
		}
	}
	return sources, targets, nil
}
