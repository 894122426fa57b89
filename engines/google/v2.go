package google

import (
	"context"
	"net/http"

	"github.com/fanyi-go/translate/internal/httpx"
)

// v2Request is the TranslateTextRequest of the v2 discovery document.
type v2Request struct {
	Q      []string `json:"q"`
	Target string   `json:"target"`
	Source string   `json:"source,omitempty"`
	Format string   `json:"format"`
}

// v2Response is the TranslationsListResponse, inside the "data" wrapper the discovery
// document announces (features: dataWrapper).
type v2Response struct {
	Data struct {
		Translations []struct {
			TranslatedText         string `json:"translatedText"`
			DetectedSourceLanguage string `json:"detectedSourceLanguage"`
		} `json:"translations"`
	} `json:"data"`
}

// v2Languages is the LanguagesListResponse, inside "data".
type v2Languages struct {
	Data struct {
		Languages []struct {
			Language string `json:"language"`
		} `json:"languages"`
	} `json:"data"`
}

// translateV2 is one POST /language/translate/v2 (language.translations.translate).
func (e *Engine) translateV2(ctx context.Context, texts []string, c call) ([]string, string, error) {
	body := v2Request{Q: texts, Target: c.tgt, Source: c.src, Format: "text"}
	if c.html {
		body.Format = "html"
	}
	resp, err := e.do(ctx, http.MethodPost, e.base+"/language/translate/v2", body, texts)
	if err != nil {
		return nil, "", err
	}
	var r v2Response
	if err := httpx.Decode(e.name, resp, &r); err != nil {
		return nil, "", err
	}
	out := make([]string, len(r.Data.Translations))
	detected := ""
	for i, t := range r.Data.Translations {
		out[i] = t.TranslatedText
		if detected == "" {
			detected = t.DetectedSourceLanguage
		}
	}
	return out, detected, nil
}

// languagesV2 is GET /language/translate/v2/languages (language.languages.list). v2 lists
// one set of languages, each usable as source and as target.
func (e *Engine) languagesV2(ctx context.Context) (sources, targets []string, err error) {
	resp, err := e.do(ctx, http.MethodGet, e.base+"/language/translate/v2/languages", nil, nil)
	if err != nil {
		return nil, nil, err
	}
	var r v2Languages
	if err := httpx.Decode(e.name, resp, &r); err != nil {
		return nil, nil, err
	}
	codes := make([]string, 0, len(r.Data.Languages))
	for _, l := range r.Data.Languages {
		codes = append(codes, l.Language)
	}
	return codes, codes, nil
}
