package google

import (
	"context"
	"net/http"
)

// v3Request is the JSON form of google.cloud.translation.v3.TranslateTextRequest; parent
// rides in the path.
type v3Request struct {
	Contents           []string `json:"contents"`
	MimeType           string   `json:"mimeType"`
	SourceLanguageCode string   `json:"sourceLanguageCode,omitempty"`
	TargetLanguageCode string   `json:"targetLanguageCode"`
}

// v3Response is the JSON form of TranslateTextResponse.
type v3Response struct {
	Translations []struct {
		TranslatedText       string `json:"translatedText"`
		DetectedLanguageCode string `json:"detectedLanguageCode"`
	} `json:"translations"`
}

// v3Languages is the JSON form of SupportedLanguages.
type v3Languages struct {
	Languages []struct {
		LanguageCode  string `json:"languageCode"`
		SupportSource bool   `json:"supportSource"`
		SupportTarget bool   `json:"supportTarget"`
	} `json:"languages"`
}

// translateV3 is one POST /v3/{parent}:translateText.
func (e *Engine) translateV3(ctx context.Context, texts []string, src, tgt string) ([]string, string, error) {
	body := v3Request{Contents: texts, MimeType: "text/plain", SourceLanguageCode: src, TargetLanguageCode: tgt}
	resp, err := e.do(ctx, http.MethodPost, e.base+"/v3/"+e.parent+":translateText", body, texts)
	if err != nil {
		return nil, "", err
	}
	var r v3Response
	if err := e.decode(resp, &r); err != nil {
		return nil, "", err
	}
	out := make([]string, len(r.Translations))
	detected := ""
	for i, t := range r.Translations {
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
	if err := e.decode(resp, &r); err != nil {
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
