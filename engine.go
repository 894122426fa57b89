package translate

import (
	"context"
	"iter"
	"time"

	"golang.org/x/text/language"

	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/fidelity/glossary"
	"github.com/fanyi-go/translate/internal/enum"
)

// Engine is a machine-translation engine: one vendor adapter, a fake, or your own.
// The Client does everything around the call (routing, retries, failover, caching,
// quotas, tracing); an Engine does exactly one call.
//
// Implementations must follow these rules:
//
//   - Name returns a constant, non-empty name, unique among the engines of one Client.
//   - Translate is safe for concurrent use by multiple goroutines.
//   - Translate returns exactly len(req.Texts) texts, in the order of req.Texts, or an error.
//     It never returns (nil, nil) and never a partial result with a nil error.
//   - Translate honours ctx: it returns promptly once ctx is done, with an error for which
//     errors.Is(err, ctx.Err()) holds or a *Error of KindTimeout or KindCanceled.
//   - Translate never retries, caches or fails over; the Client does that.
//   - Translate does not modify req and does not keep it after returning.
//   - Errors are *Error values whose Kind classifies the failure (see the Errors section of
//     the package documentation); any other error is treated as KindUnknown. Message carries
//     the vendor's message with credentials removed.
//   - An Engine never puts a credential or the customer's text in an error.
type Engine interface {
	// Name returns the engine's name, as used in Request.Engine, Result.Engine and metrics.
	Name() string
	// Translate translates req.Texts from req.Source to req.Target.
	Translate(ctx context.Context, req *EngineRequest) (*EngineResult, error)
}

// GlossaryFilter is implemented by an Engine whose Profile.Native.Glossary holds for some
// glossaries only: Google v3 applies those google.WithGlossaries maps to a resource, DeepL
// those of languages it has glossaries for. The Client gives a glossary the engine does
// not apply the treatment of an engine without glossaries (its terms masked and their
// targets inserted). AppliesGlossary must be cheap and safe for concurrent use.
type GlossaryFilter interface {
	AppliesGlossary(g *glossary.Glossary) bool
}

// EngineRequest is one call to an Engine. The Client builds it; engines must not modify it.
type EngineRequest struct {
	Texts     []string
	Source    language.Tag // language.Und means detect
	Target    language.Tag
	Scene     Scene
	Style     Style
	RequestID string
	// Format is what Texts are: FormatText (the default), or FormatHTML / FormatXML when the
	// engine takes that markup natively (Profile.Native.Formats) and must keep every tag.
	// For an engine that does not, the Client masks the markup and sends FormatText.
	Format Format
	// Glossary is the glossary the engine applies itself (Profile.Native.Glossary): DeepL
	// and Google map it to their glossary resources, Microsoft to dictionary markup. nil
	// when the request has none or the Client enforces it by masking. The Client checks
	// every term on the way back whoever applied it.
	Glossary *glossary.Glossary
	// Instruction is extra text for an engine that follows instructions
	// (Profile.Native.Instructions; a language model): the glossary terms to use, in
	// fidelity's fixed wording. "" means none.
	Instruction string
}

// EngineResult is what an Engine returns for one call.
type EngineResult struct {
	Texts  []string
	Source language.Tag // detected source, if the vendor reported it
	// Sources is the detected source of each text, in the order of Texts, for vendors that
	// detect per text (DeepL, Google and Microsoft do); nil otherwise, and Source then
	// stands for every text. A packed batch (TranslateBatch) gives each request its own.
	Sources     []language.Tag
	BilledChars int64 // as the vendor reported it, 0 if unknown
	// InputTokens and OutputTokens report LLM token usage where the vendor reports it
	// (OpenAI-compatible engines); 0 if unknown.
	InputTokens  int64
	OutputTokens int64
	// Limits is what the vendor said about its rate limits in this response (OpenAI's
	// x-ratelimit-* headers, for example); nil when it said nothing. The Client slows an
	// engine whose remaining requests or tokens run low, before the vendor answers 429.
	Limits *VendorLimits
}

// VendorLimits is a vendor's report of its own rate limits, from response headers. A
// negative Remaining value means the vendor did not report it; a zero Reset means unknown.
type VendorLimits struct {
	RemainingRequests int64         // requests left in the vendor's current window
	RemainingTokens   int64         // tokens (or characters) left in the vendor's current window
	ResetRequests     time.Duration // until the request window resets
	ResetTokens       time.Duration // until the token window resets
}

// LanguagePair is a translation direction an engine supports. A Source of language.Und
// means the engine accepts any of its sources for Target (and can detect the source).
type LanguagePair struct {
	Source language.Tag
	Target language.Tag
}

// LanguageSupporter is implemented by engines that can list the pairs they translate, such as
// Apertium (/listPairs) or DeepL (/v2/languages). When an engine's Profile.Languages is empty,
// the Client asks SupportedPairs once at New (bounded by the engine's Timeout) and then routes
// only the listed pairs to the engine; when the call fails, the engine is taken to support
// every pair. Safe for concurrent use.
type LanguageSupporter interface {
	SupportedPairs(ctx context.Context) ([]LanguagePair, error)
}

// StreamEngine is implemented by engines that can stream a translation as it is produced
// (engines/openai, over server-sent events). TranslateStream yields text deltas of the
// translation of req.Texts[0] (the Client sends one text per streamed call), in order; the
// concatenation of every delta is the whole translation. It yields a non-nil error at most
// once, as its last value: a *Error with the Kind of the failure, as Translate would return.
// It honours ctx and stops when the consumer stops ranging. Safe for concurrent use.
type StreamEngine interface {
	Engine
	TranslateStream(ctx context.Context, req *EngineRequest) iter.Seq2[string, error]
}

// Chunk is one piece of a streamed translation (Client.TranslateStream).
type Chunk struct {
	Segment int    // index of the segment, in source order
	Text    string // the segment's translation so far
	Partial bool   // more of this segment follows; a later Chunk for the same Segment supersedes it
	Engine  string
	// FromMemory: the segment's translation came from the translation memory (WithMemory).
	FromMemory bool
}

// Scene is the kind of content being translated. It selects per-scene quality, scene rules
// and, for LLM engines, the prompt. The zero value is SceneGeneral.
type Scene uint8

// Scenes.
const (
	SceneGeneral Scene = iota
	SceneTech
	SceneLegal
	SceneEcommerce
	SceneChat
)

var sceneNames = enum.Scenes

// String returns the scene's lower-case name, such as "legal".
func (s Scene) String() string { return enum.Name(sceneNames[:], int(s), "scene") }

// Style is the register of the translation. The zero value is StyleDefault.
type Style uint8

// Styles.
const (
	StyleDefault Style = iota
	StyleFormal
	StyleCasual
)

// String returns "default", "formal" or "casual".
func (s Style) String() string { return enum.Name(enum.Styles[:], int(s), "style") }

// Priority decides which cost classes may serve a request. The zero value is PriorityNormal:
// normal requests never reach premium engines.
type Priority uint8

// Priorities.
const (
	PriorityNormal Priority = iota
	PriorityHigh
)

// String returns "normal" or "high".
func (p Priority) String() string { return enum.Name(enum.Priorities[:], int(p), "priority") }

// CostClass groups engines by price for the budget and priority rules. The zero value is
// ClassStandard.
type CostClass uint8

// Cost classes.
const (
	ClassStandard CostClass = iota // the default
	ClassFree
	ClassPremium
)

// String returns "standard", "free" or "premium".
func (c CostClass) String() string {
	return enum.Name(enum.Classes[:], int(c), "class")
}

// Profile describes an engine to the router. Zero values mean the documented defaults.
type Profile struct {
	Quality        float64           // 0..100 offline evaluation score; 0 means 80
	SceneQuality   map[Scene]float64 // per-scene overrides of Quality, each 0..100
	Class          CostClass         // ClassFree, ClassStandard (default), ClassPremium
	CostPerMillion float64           // credits per million standard characters, 0..1e9
	Languages      []string          // BCP 47 tags it translates between; empty means any
	Timeout        time.Duration     // per attempt, 1ns..1h (see TimeoutPerKTokens); 0 means 5s
	RateLimit      float64           // requests per second, 0..1e6; 0 means unlimited
	Burst          int               // rate limiter burst, 0..1e6; 0 means max(1, ceil(RateLimit))
	MaxConcurrency int               // in-flight calls, 0..10000; 0 means unlimited
	Quota          int64             // standard characters per QuotaPeriod, 0..1e15; 0 means unlimited
	QuotaPeriod    time.Duration     // 1s..8760h; 0 means 24h
	// MaxChars bounds the characters (code points) of one call, all its texts together,
	// 0..1e7; 0 means unlimited. A long text is cut into segments that fit (see MaxTextChars).
	MaxChars int
	MaxTexts int // texts per call, 1..10000; 0 means 1
	// MaxTextChars bounds the characters of one text in a call, 0..1e7: a longer text is cut
	// into segments of at most this many, and several segments go in one call as MaxTexts
	// and MaxChars allow. 0 means MaxChars; a value above MaxChars counts as MaxChars.
	MaxTextChars int
	FallbackOnly bool // last resort: used only when the normal pool has failed
	// Canary is the percentage, 0..100, of UserIDs this engine serves as a canary: a stable
	// share of users, chosen by hashing the UserID, is routed to it whenever it is a
	// candidate; everybody else reaches it only when no other engine can serve. Raising the
	// share keeps every user who was in. 0 means the engine is not a canary, unless Staged
	// or Ramp is set. With a Ramp, Canary is where the ramp starts.
	Canary float64
	// Staged keeps the engine a canary at any share, 0 included: lowering Canary to 0 then
	// stops its traffic at the next request (the rollback of a gray release), where an
	// engine that is not staged would become a normal one. In a configuration file,
	// "canary": 0 stages the engine; leaving "canary" out promotes a canary to normal.
	Staged bool
	// Ramp makes the Client move the canary's share itself, step by step (1, 5, 20, 100%
	// by default), while its error rate, latency and answers stay within tolerance of the
	// engines it replaces, and roll it back to 0 at once when they do not (see Ramp). A
	// Ramp makes the engine a canary. nil (the default) means the share stays at Canary.
	Ramp *Ramp
	// SafeRate is the request rate (per second, 0..1e6) the engine can take safely; as its
	// recent rate nears it, its routing weight falls (the traffic gate). 0 means RateLimit,
	// and no gate when both are 0.
	SafeRate float64
	// CostPerMillionTokens prices LLM engines by the tokens they report
	// (EngineResult.InputTokens + OutputTokens); when set and reported, it is what a call
	// is charged instead of CostPerMillion; 0..1e9. 0 means characters only. An engine with
	// it is paid even when CostPerMillion is 0: a call is reserved a token per character
	// each way (or its characters' price, if more) and charged what it reports.
	CostPerMillionTokens float64
	// TimeoutPerKTokens grows an attempt's timeout with the length of its texts, for engines
	// whose answer takes longer the more they write (language models): Timeout plus this
	// much per 1,000 tokens, estimated generously (a token per 4 ASCII characters, one per
	// other character). Any attempt still ends by the request's deadline, leaving the next
	// engine its reserve. Range 0s..1h; 0 (the default) means a fixed Timeout.
	TimeoutPerKTokens time.Duration
	// Region is where the vendor processes the data: "eu", "us", "cn", ... ("" = global,
	// unknown). Request.Regions filters on it.
	Region string
	// PairQuality is quality (0..100) per language pair, as an evaluation measures it
	// (package eval writes it): "en-de" from English to German, "*-ja" from any source to
	// Japanese, "en-*" from English to any target, each optionally for one scene,
	// "en-de/legal". Each side is a language with an optional script ("zh-Hant"), matched as
	// Languages are (en-GB is en). The most specific key wins: "en-de/legal", "en-de",
	// "*-de/legal", "*-de", "en-*/legal", "en-*"; then SceneQuality, then Quality. A request
	// that detects its source matches only "*-" keys. nil means none.
	PairQuality map[string]float64
	// Restyles says the engine can translate in a register (Request.Style), as language
	// models can: Formal and Casual requests prefer it, by styleBonus (10 score points; see
	// Routing in the package doc). false (the default) means it ignores Style.
	Restyles bool
	// Native is what the engine does itself with markup and glossaries: the formats it
	// translates keeping tags, whether it applies a glossary (EngineRequest.Glossary) or
	// follows instructions (EngineRequest.Instruction). The adapters' bundled profiles
	// declare it; the zero value is an engine that takes plain text only, for which the
	// Client masks markup and glossary terms (package fidelity).
	Native fidelity.Native
}

// Format is what a request's text is: FormatText (the default), FormatHTML or FormatXML.
// See package fidelity for what each protects.
type Format = fidelity.Format

// The formats.
const (
	FormatText = fidelity.FormatText
	FormatHTML = fidelity.FormatHTML
	FormatXML  = fidelity.FormatXML
)

// itoa avoids strconv in String methods of tiny enums.
func itoa(n int) string { return enum.Itoa(n) }
