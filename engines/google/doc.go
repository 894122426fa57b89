// Package google is the translate.Engine adapter for Google Cloud Translation: the Basic
// edition (v2, API key) through New and the Advanced edition (v3, OAuth 2.0 access token)
// through NewV3.
//
// Both send plain text as plain text (format "text" in v2, mimeType "text/plain" in v3), so
// answers never come back HTML-escaped; a request in translate.FormatHTML goes as HTML
// (format "html", mimeType "text/html") and comes back as HTML. Google takes no XML
// (KindUnsupported). The bundled Profile declares Native{Formats: HTML}.
//
// A v3 engine applies glossaries that live in Google as resources: WithGlossaries maps a
// glossary's name to its resource, and a request whose glossary (EngineRequest.Glossary)
// has one sends glossaryConfig {"glossary": RESOURCE} and takes the answer's
// glossaryTranslations; with the source language the request gives or, when it detects,
// the glossary's source language (Google needs one). With WithGlossaries, Native.Glossary
// is true and AppliesGlossary (translate.GlossaryFilter) takes exactly the mapped names: for a glossary without a
// resource the Client masks the terms and inserts their targets itself, as for an engine
// without glossaries, and the request is sent without glossaryConfig. A request whose
// resource Google refuses (400 or 404 with glossaryConfig: missing, not ready, other
// languages) is sent again without it (the Client checks the terms on the way back and
// fails over when one is missing), and the resource is not sent again by this engine. The resources are yours to create and keep in step with the terms; the adapter
// never changes them. Language tags map to Google's codes (zh, zh-CN and zh-Hans go
// to zh-CN; zh-Hant, zh-TW and zh-HK to zh-TW; other tags to their base language, with the few
// regional and script variants Google lists, such as pt-PT and mni-Mtei). A source of
// language.Und lets Google detect the language, and EngineResult.Source reports what it found.
//
// Usage:
//
//	basic, err := google.New(os.Getenv("GOOGLE_API_KEY"))
//	if err != nil {
//		return err
//	}
//	advanced, err := google.NewV3("my-project", tokenSource, google.WithLocation("us-central1"))
//	if err != nil {
//		return err
//	}
//	client, err := translate.New(
//		translate.WithEngine(basic, basic.Profile()),
//		translate.WithEngine(advanced, advanced.Profile()),
//	)
//
// where tokenSource is any func(context.Context) (string, error) returning an OAuth 2.0
// access token, for example one wrapping golang.org/x/oauth2/google's TokenSource.
//
// Errors follow Google's documented dialects: in v2 the reason in error.errors[] tells a
// daily quota (dailyLimitExceeded, quotaExceeded: KindQuotaExhausted) from a rate limit
// (userRateLimitExceeded, rateLimitExceeded: KindRateLimited), both sent with HTTP 403; in v3
// the google.rpc.Status code decides (RESOURCE_EXHAUSTED is a rate limit unless it names a
// per-day quota).
package google
