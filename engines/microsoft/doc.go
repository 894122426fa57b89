// Package microsoft is the translate.Engine adapter for Azure AI Translator (Microsoft
// Translator Text API v3.0).
//
// It sends plain text (textType=Plain, or Html for HTML) as a JSON array of {"text": ...} objects, with the
// key in Ocp-Apim-Subscription-Key and, for regional or multi-service resources, the region
// in Ocp-Apim-Subscription-Region. Language tags map to Microsoft's codes (zh, zh-CN and
// zh-Hans go to zh-Hans; zh-Hant, zh-TW and zh-HK to zh-Hant; pt-PT stays pt-PT and other
// Portuguese is pt; sr and mn by script; other tags to their base language). A source of
// language.Und lets the service detect the language, and EngineResult.Source reports it;
// EngineResult.BilledChars is the x-metered-usage the service reports.
//
// # Markup and glossaries
//
// The bundled Profile declares Native{Formats: HTML; Glossary: true}. A request in
// translate.FormatHTML goes with textType=Html (FormatXML is KindUnsupported: Microsoft
// takes no XML). A request with a glossary (EngineRequest.Glossary) has every source term
// found in its texts wrapped in Microsoft's dynamic-dictionary markup,
//
//	<mstrans:dictionary translation="TARGET">term</mstrans:dictionary>
//
// and the service answers the translation with the target term in place, without the
// markup; nothing is stripped from the answer. Terms are found by package glossary's rules;
// in HTML only in the text between tags (never inside a tag, an attribute or a comment),
// with the target HTML-escaped in the attribute. In plain text, where Microsoft documents
// no escaping, a term whose source or target holds <, >, & or " is not wrapped, nor is any
// term of a text that the markup would take over 50 000 characters; the Client checks every
// term on the way back all the same.
//
// Usage:
//
//	ms, err := microsoft.New(os.Getenv("AZURE_TRANSLATOR_KEY"), "westeurope")
//	if err != nil {
//		return err
//	}
//	client, err := translate.New(translate.WithEngine(ms, ms.Profile()))
//
// Errors are sorted by Microsoft's six-digit codes: 403001 (free tier quota used up) is
// KindQuotaExhausted, 429000-429002 KindRateLimited, 400050 and 400077 KindTextTooLong,
// unsupported languages (400019, 400035, 400036, ...) KindUnsupported, 401000 KindUnauthorized.
package microsoft
