// Package translate puts many machine-translation engines behind one Client that keeps
// answering when some of them don't.
//
// Everything runs inside the caller's process: routing, scoring, retries, failover, circuit
// breakers, rate limits, quotas, a daily budget and a cache. There is no gateway and no extra
// network hop. Engines are adapters for DeepL, Google Cloud Translation, Microsoft
// Translator, Baidu Fanyi, OpenAI-compatible LLMs, LibreTranslate and Apertium (see the
// packages under engines/), a scriptable fake for tests (engines/fake), or your own type
// implementing the two-method Engine interface; engines/enginetest is the conformance suite
// every adapter passes.
//
//	c, err := translate.New(
//		translate.WithEngine(deeplEngine, deeplEngine.Profile()),
//		translate.WithEngine(googleEngine, googleEngine.Profile()),
//	)
//	if err != nil { ... }
//	defer c.Close()
//	res, err := c.Translate(ctx, translate.Request{Text: "Hello", Target: "zh-TW"})
//
// A Client is safe for concurrent use. Request names the text, the languages (BCP 47 tags,
// parsed with golang.org/x/text/language: zh, zh-CN and zh-Hans land on Simplified Chinese
// engines, zh-TW and zh-Hant-HK on Traditional ones), a scene, a style, a priority, a user and
// a request id; Result says which engine answered, how long it took, what it cost, whether
// it came from the cache and every attempt made.
//
// # Routing
//
// Each request is routed in three steps. Filters first remove the engines that may not serve
// it: an open circuit breaker, a quota with fewer characters left than the text, availability
// below RoutingPolicy.MinHealth, a language pair the engine does not list (Profile.Languages,
// or the pairs a LanguageSupporter reports), maintenance after failed probes, a cost class
// the priority or the budget does not allow (normal requests never reach premium engines;
// past Budget.EconomyAt of the daily or monthly budget, the Client's or the request's
// tenant's (Request.Tenant, Budget.Tenants), only free and standard engines serve; once one
// is spent only free ones), and scene rules (SceneLegal needs quality 90, SceneChat a recent
// latency of at most 3s). Then each candidate is scored 0..100:
//
//	quality*0.40 + availability*0.25 + speed*0.20 + cost*0.15
//
// where quality is the engine's figure for the request's pair and scene (Profile.PairQuality,
// keyed "en-de", "*-ja", "en-de/legal": the most specific key wins, then SceneQuality, then
// Quality; package eval measures them, and live signals move them: see below), availability
// is the success rate of the last five minutes of real calls, or one minus the error rate of
// the last six folds (a minute at 10s) when that is lower, times a latency factor
// 1 - ½·m/(m+Timeout) of their mean latency m (1.00 for an instant engine, 0.996 at 40ms,
// 0.988 at 120ms, 0.75 when m reaches the engine's Timeout), speed is
// absolute (100 at 100ms or less, 0 at 10s, logarithmic between: see SpeedScore) and cost is
// linear in price (CostScore). Weights are configurable in RoutingPolicy. Finally one
// candidate is drawn with probability proportional to exp(score/Temperature): by default
// scores 90 and 70 split traffic about 70/30, so the best engine takes most traffic while the
// others stay observed. Sticky routing (RoutingPolicy.Sticky) sends the same text to the same
// engine by rendezvous hashing; Profile.Canary routes a stable share of UserIDs to a canary
// engine, and with Profile.Ramp the canary ramps itself and is rolled back at once when it
// does worse than the engines it replaces (see Ramp); WithSeed makes the draws reproducible. Statistics are folded into scores every
// RoutingPolicy.HealthEvery, so scores and pools move at folds, not on every call; an engine
// whose availability falls below MinHealth, or drops more than 15% two folds in a row, moves
// to the fallback pool until two good folds or two passing probes. A demoted engine gets no
// ordinary traffic, so even without WithProbes the Client probes it: every 30s, while folds
// run (they run on the request path: an idle Client probes nothing), it translates "hello"
// from en to es on each demoted engine alone (120 calls and 600 characters an hour per
// demoted engine, charged like requests; nothing while every engine stands in its pool), and
// two passing probes bring it back to its full share, within 90s of its recovery. As an
// engine's request rate nears its RateLimit
// (or Profile.SafeRate) its weight falls (the traffic gate), before anything fails.
//
// Live quality signals move an engine's weight per language pair (seed 000 §4.5). Bad output
// (an empty text, a lost placeholder, an echo of the source) counts against the engine's
// pair, not its availability nor its breaker (which would cut every pair; only bad output of
// a pair the table cannot track counts there): each fold moves the pair's bad-output rate b by
// w = ½·min(1, n/3) towards the fold's k/n (k bad answers of n calls; a fold with none halves
// b; under 0.01 it is 0), and the engine's weight for the pair is multiplied by
// exp(-q·b·Weights.Quality/Temperature): its pair quality q (PairQuality, else SceneQuality,
// else Quality) lowered to q·(1-b). A pair whose b exceeds 1 - MinHealth (0.2), or on which a
// known-answer probe failed, is down: its weight is multiplied by 1/1000 more, so it keeps a
// trickle of the pair's traffic (all of it when nothing else serves the pair) while its other
// pairs keep their share. An engine that starts garbling en-ja loses en-ja within one fold;
// a down pair's rate halves at each fold it gets no calls, so it gets traffic again within
// about three folds, and good answers then bring it back to its full share over a few more.
// With WithProbes each probe round also checks up to 4 pairs per engine (those a probe marked
// down, then the busiest of the last fold) with a known sentence whose answer must keep its
// placeholder and number, not echo, and be in the target's script: a wrong answer marks the
// pair down at once, a right one lifts the mark. An engine tracks at most 32 pairs; a pair
// without calls for 30 folds leaves the table, and while the table is full a new pair has no
// live standing.
//
// Three more rules of the seeds move weight. An engine with a Profile.Quota and 20% or less
// of it left has its weight multiplied by left/(20% of Quota), so traffic moves to the others
// before it runs out (two equal engines: 50/50 down to 20% left, 43/57 at 15%, 20/80 at 5%).
// A StyleFormal or StyleCasual request adds 10 score points to engines that can restyle
// (Profile.Restyles; engines/openai's Profile sets it): at the default temperature such an
// engine takes about 60% of the traffic of an otherwise equal one. Within
// RoutingPolicy.PeakHours (UTC windows), and with RoutingPolicy.FreeWhenBusy while the traffic
// gate of every paid engine is closing, normal-priority requests go to free engines first, and
// to paid ones only when no free engine can serve, as past Budget.EconomyAt.
//
// An engine whose key the vendor refused (KindUnauthorized, after the adapter re-read its
// key once) is set aside: no traffic. A key check, one probe a minute on it alone while
// requests flow (60 refused vendor requests an hour while the key stays refused), brings it
// back as soon as its key function (the adapters' WithKeyFunc) returns a key the vendor
// accepts: within 70s of the rotation. Reconfigure brings it back at once.
//
// # Failover
//
// Every engine error carries a Kind, and the Client acts on it:
//
//	Kind            retry same engine               fail over                        breaker failure
//	InvalidInput    no                              no: returned at once             no
//	Unsupported     no                              yes (the pair is remembered)     no
//	Unauthorized    no                              yes; engine set aside            yes
//	QuotaExhausted  no                              yes; out until its period resets yes
//	RateLimited     once, if Retry-After fits       yes                              yes
//	Unavailable     once, with backoff              yes                              yes
//	Unknown         once, with backoff              yes                              yes
//	Timeout         no                              yes                              yes
//	TextTooLong     re-segmented smaller            then yes                         no
//	BadOutput       no                              yes                              yes
//	Canceled        no                              no: ctx's error is returned      no
//
// A request makes at most RetryPolicy.MaxAttempts engine calls and MaxSwitches switches, all
// inside one deadline (WithDeadline, 8s by default, or ctx's when it comes first); each
// attempt's timeout is the smaller of the engine's Profile.Timeout (grown with the text by
// Profile.TimeoutPerKTokens) and the time left, less, when another engine could make the
// next call, that call's reserve (a quarter of the deadline, or half the time left if less):
// a hung engine never takes the time its backup needs. Engine calls run on goroutines of the
// Client's, so a request returns by its deadline (plus 20ms) even when an engine ignores ctx;
// such a call is left running apart. When ctx ends the request, the error is ctx's: KindTimeout
// wrapping context.DeadlineExceeded, or KindCanceled wrapping context.Canceled. A
// rate-limited or saturated engine is skipped at once in favour of the next candidate, so
// traffic spills over instead of queueing.
// When the normal pool fails, a stale cache entry is returned (FromCache and Degraded), then
// the fallback-only engines are tried (Degraded), and only then an error listing every
// attempt. The source text is never returned as if it were a translation: an empty answer, an
// answer that lost a placeholder ({name}, {{name}}, %s, %1$s, <b>), or a long text that came
// back unchanged is KindBadOutput and fails over.
//
// Circuit breakers (failsafe-go's circuitbreaker) count the last 40 calls of an engine (or of
// an engine in one scene) and open at 50% failures once 20 calls are counted; after a 10s
// cooldown, doubled on each re-open up to 5 minutes, 5 trial calls go through whatever the
// engine's score, and close it when they succeed.
//
// Long texts are split at paragraph and sentence ends (Latin and CJK punctuation) under the
// engine's Profile.MaxChars, sent Profile.MaxTexts to a call, and stitched back with the
// original separators. A request's segments stay on one engine; if it fails mid-way, the rest
// fails over and Result.Engine names both ("a+b").
//
// # Errors
//
// Every failure is a *Error (or wraps one) with a Kind; callers test it with errors.Is against
// the sentinels (ErrRateLimited, ErrNoEngine, ...) or with KindOf, never by string. A request
// that failed carries Attempts, naming every engine tried and why it failed. Errors never
// carry a credential or the customer's text. New returns a KindInvalidInput error naming the
// bad field; Translate returns one for a bad request before any engine is called; a canceled
// context returns the context's error; a closed Client returns ErrClosed.
//
// # Caching
//
// Answers are cached in process (golang-lru/v2; WithCache, by default 10 000 entries fresh
// for 24h) under a key of the text, languages, scene, style, format, glossary revision
// (Result.Glossary) and pinned engine. Every entry
// keeps the engine that made it, and every hit names it in Result.Engine. An answer from a
// degradation path (a fallback engine) is cached as such: its hits are Degraded, and it is
// fresh for one minute at most, so the preferred engine answers again soon after it is
// back. Expired entries are kept until evicted and served, marked Degraded, when every
// engine fails.
// Identical requests in flight at the same time share one engine call (one exception: a
// request without a RequestID whose every possible engine has earned inline calls, its last
// 64 calls each answered within 500 µs in process, makes its own call, which costs less than
// waiting for another's and bills no vendor), and the same
// RequestID within 10 seconds is answered from its first call, so a retried request is
// never billed twice: it gets the first answer, or the first failure when that may have
// been billed (timeout, bad output), while a failure that cost nothing (429, 503, a call
// never made) is retried. An id is bound to its request's text, languages, scene, style,
// format and glossary revision:
// reused for another text or target it is a new request, never answered with the first
// one's translation. Request.NoCache skips the cache for one request; WithoutCache turns it
// off.
//
// Quotas, budgets and Result.Cost count standard characters: Unicode code points of the
// source text, whatever unit the vendor bills in; Cost is chars x CostPerMillion / 1e6. The
// daily budget is never exceeded, even by concurrent requests: each call reserves its cost
// before it is made and gets it back if it fails.
//
// # Observability
//
// A Client reports through OpenTelemetry and log/slog. Spans and metrics go to the providers
// given with WithTracerProvider and WithMeterProvider — by default the global ones
// (otel.GetTracerProvider, otel.GetMeterProvider) — under the instrumentation scope
// "github.com/fanyi-go/translate". While no global tracer provider has been set the Client
// makes no spans at all; it starts as soon as one is set.
//
// Every Translate call is one span, "translate.Translate" (kind internal), and engine calls
// are its child spans, "translate.attempt" (kind client): every call after the first for the
// same text (a retry, a failover, a hedge) and a first call that failed. A first call that
// succeeds, as most do, has no span of its own, which would double the cost of tracing a
// request: the request's span says which engine answered (translate.engine,
// translate.attempts, translate.outcome, translate.fallback), and the engine's own spans (an
// instrumented HTTP client) are the request span's children. A failed first call's span is
// made when the call returns, dated back to its start: a sibling of the engine's spans, not
// their parent. Each unit of a long text is a first call. Attempt spans carry translate.engine,
// translate.attempt (1-based, as in Result.Attempts), translate.fallback (the engine is in the
// fallback pool) and translate.outcome ("ok" or the Kind, such as "rate_limited"). Request
// spans carry translate.outcome, translate.cache_hit, translate.degraded, translate.fallback
// (served by a fallback-only engine), translate.engine, translate.attempts,
// translate.request_id and translate.text_len (code points). The flags translate.cache_hit,
// translate.degraded and translate.fallback are set only when true, on both kinds of span:
// absent means false, as OpenTelemetry's semantic conventions do with flags. On most
// requests all three are false, and each attribute is a copy the SDK makes per span. A
// failed span has status Error with the Kind as its description and error.type set to the
// Kind; error messages are never recorded.
//
// Metrics (attributes in brackets; outcome is "ok" or a Kind's name):
//
//	translate.requests                   {request}     counter    [outcome, cache_hit, degraded]
//	translate.request.duration           s             histogram  [outcome, cache_hit, degraded]
//	translate.attempts                   {attempt}     counter    [engine, outcome]
//	translate.attempt.duration           s             histogram  [engine]
//	translate.breaker.transitions        {transition}  counter    [engine, from, to]
//	translate.degradations               {request}     counter    [how = stale_cache | fallback_engine]
//	translate.cache.lookups              {lookup}      counter    [hit]
//	translate.cost                       {credit}      counter    [engine]
//	translate.chars                      {char}        counter    [engine]
//	translate.routing.decision.duration  s             histogram  (one decision in 16 is timed)
//	translate.quota.left                 {char}        gauge      [engine] (no series when unlimited)
//	translate.switches                   {switch}      counter    [engine] (the engine left for another)
//	translate.request.attempts           {attempt}     histogram  (engine calls per request not answered by the cache)
//	translate.request.cost               {credit}      histogram  (credits per request an engine answered)
//	translate.canary.step                {step}        counter    [engine from to reason] (a ramping canary's steps; see Ramp)
//
// With the SDK's default exemplar filter, translate.request.duration's exemplars point at
// request spans and translate.attempt.duration's at attempt spans (a first call that
// succeeded has none to point at); the other histograms and the counters carry none.
//
// Fresh cache hits read no clock, so they are counted in translate.requests but have no
// translate.request.duration. cache_hit is true for every answer made without an engine call: a fresh cache entry, an
// identical request in flight, or a repeated RequestID. translate.cost and translate.chars
// count successful engine calls, so a text split across engines is credited to each.
//
// With WithLogger, the Client logs at debug level each attempt ("translate: attempt": engine,
// attempt, latency, outcome) and each request ("translate: request": request_id, text_len,
// text_hash, outcome, latency, cache_hit, degraded, engine), and at warn level breaker and
// pool transitions and engines set aside (unauthorized, quota exhausted). No log line, span
// or metric ever carries a credential or the customer's text: only its length and text_hash,
// the first 8 hex digits of an HMAC-SHA256 under a key drawn for each Client, which matches
// equal texts within one Client and nothing else.
package translate
