// Package google is the translate.Engine adapter for Google Cloud Translation: the Basic
// edition (v2, API key) through New and the Advanced edition (v3, OAuth 2.0 access token)
// through NewV3.
//
// Both speak plain text only (format "text" in v2, mimeType "text/plain" in v3), so answers
// never come back HTML-escaped. Language tags map to Google's codes (zh, zh-CN and zh-Hans go
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
