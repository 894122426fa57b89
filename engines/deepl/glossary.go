package deepl

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"
	"golang.org/x/text/language"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity/glossary"
	"github.com/fanyi-go/translate/internal/httpx"
)

// glossaryCacheSize is how many glossary revisions an Engine remembers the DeepL glossary
// of; the least recently used is forgotten first (and created again when it comes back).
const glossaryCacheSize = 256

// glossaryCodes are the languages DeepL's glossaries take (GlossarySourceLanguage and
// GlossaryTargetLanguage in DeepL's API description, v3.11.0), as a lookup list.
const glossaryCodes = " ar bg cs da de el en es et fi fr he hu id it ja ko lt lv nb nl pl pt ro ru sk sl sv th tr uk vi zh "

// glossaries maps fidelity glossaries to DeepL glossaries: it creates one per glossary
// revision (the content hash of the pair and terms, so changed terms make a new one) and
// remembers its id. Concurrent first uses of one revision create it once. Safe for
// concurrent use.
type glossaries struct {
	ids *lru.Cache[string, string] // revision -> glossary_id; "" when DeepL cannot have it
	sf  singleflight.Group
}

func newGlossaries() *glossaries {
	c, _ := lru.New[string, string](glossaryCacheSize) // the size is a positive constant
	return &glossaries{ids: c}
}

// glossaryRequest is what a translate request needs for its glossary: the id and, when
// the request detects its source, the source DeepL requires with a glossary.
type glossaryRequest struct {
	g      *glossary.Glossary
	id     string
	source string
}

// useGlossary returns the DeepL glossary for req's glossary, creating it when needed. The
// zero value (no glossary sent) is returned when req has none, or one DeepL cannot apply
// to this request: another language pair, languages DeepL has no glossaries for, no term
// DeepL's entry format can hold, or a glossary DeepL refused (remembered for the
// revision). The Client checks the terms on the way back in every case.
func (e *Engine) useGlossary(ctx context.Context, req *translate.EngineRequest, src, tgt string) (glossaryRequest, error) {
	g := req.Glossary
	if g == nil {
		return glossaryRequest{}, nil
	}
	gsrc, gtgt := glossaryCode(g.Source()), glossaryCode(g.Target())
	if gsrc == "" || gtgt == "" || gtgt != strings.ToLower(strings.SplitN(tgt, "-", 2)[0]) || src != "" && strings.ToLower(src) != gsrc {
		return glossaryRequest{}, nil
	}
	id, err := e.glossaryID(ctx, g)
	if err != nil || id == "" {
		return glossaryRequest{}, err
	}
	return glossaryRequest{g: g, id: id, source: strings.ToUpper(gsrc)}, nil
}

// AppliesGlossary reports whether DeepL has glossaries for g's languages
// (translate.GlossaryFilter): the Client masks the terms of any other glossary. Safe for
// concurrent use.
func (e *Engine) AppliesGlossary(g *glossary.Glossary) bool {
	return glossaryCode(g.Source()) != "" && glossaryCode(g.Target()) != ""
}

// glossaryCode is DeepL's glossary code for a BCP 47 tag ("en" for en-GB, "nb" for no), or
// "" when DeepL has no glossaries for the language.
func glossaryCode(tag string) string {
	t, err := language.Parse(tag)
	if err != nil {
		return ""
	}
	code := strings.ToLower(baseCode(t))
	if !strings.Contains(glossaryCodes, " "+code+" ") {
		return ""
	}
	return code
}

// glossaryID returns the id of the DeepL glossary for g, creating it once for all the
// callers that need it at the same time.
func (e *Engine) glossaryID(ctx context.Context, g *glossary.Glossary) (string, error) {
	rev := g.Revision()
	for try := 0; ; try++ {
		if id, ok := e.gl.ids.Get(rev); ok {
			return id, nil
		}
		ch := e.gl.sf.DoChan(rev, func() (any, error) {
			id, err := e.createGlossary(ctx, g)
			if err == nil {
				e.gl.ids.Add(rev, id)
			}
			return id, err
		})
		select {
		case <-ctx.Done():
			return "", httpx.TransportError(ctx, e.name, ctx.Err())
		case r := <-ch:
			if r.Err == nil {
				return r.Val.(string), nil
			}
			// Another caller's creation that its own context ended: try once ourselves.
			if try == 0 && ctx.Err() == nil && endedByContext(r.Err) {
				continue
			}
			return "", r.Err
		}
	}
}

// endedByContext reports whether err is a call ended by its context.
func endedByContext(err error) bool {
	k := translate.KindOf(err)
	return k == translate.KindCanceled || k == translate.KindTimeout ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// forgetGlossary drops the remembered id of g when it is still id (DeepL no longer has it).
func (e *Engine) forgetGlossary(g *glossary.Glossary, id string) {
	if got, ok := e.gl.ids.Peek(g.Revision()); ok && got == id {
		e.gl.ids.Remove(g.Revision())
	}
}

// refuseGlossary remembers that DeepL refuses g's glossary id (no glossary for its
// revision from now on), unless the revision has another id by now.
func (e *Engine) refuseGlossary(g *glossary.Glossary, id string) {
	if got, ok := e.gl.ids.Peek(g.Revision()); !ok || got == id {
		e.gl.ids.Add(g.Revision(), "")
	}
}

// createBody is CreateMultilingualGlossaryParameters.
type createBody struct {
	Name         string           `json:"name"`
	Dictionaries []dictionaryBody `json:"dictionaries"`
}

// dictionaryBody is GlossaryDictionary.
type dictionaryBody struct {
	SourceLang    string `json:"source_lang"`
	TargetLang    string `json:"target_lang"`
	Entries       string `json:"entries"`
	EntriesFormat string `json:"entries_format"`
}

// createGlossary creates g on DeepL with POST /v3/glossaries (multilingual glossaries, the
// current API) and returns its id; "" with a nil error when DeepL cannot have it (no term
// fits, or DeepL refused it as invalid or forbidden), which is remembered like an id.
func (e *Engine) createGlossary(ctx context.Context, g *glossary.Glossary) (string, error) {
	entries := tsv(g.Terms())
	if entries == "" {
		return "", nil
	}
	body := createBody{
		Name: glossaryPrefix + g.Name() + " " + g.Revision(),
		Dictionaries: []dictionaryBody{{SourceLang: glossaryCode(g.Source()), TargetLang: glossaryCode(g.Target()),
			Entries: entries, EntriesFormat: "tsv"}},
	}
	if id, err := e.findGlossary(ctx, g.Revision(), body.Dictionaries[0], strings.Count(entries, "\n")+1); id != "" || err != nil {
		return id, err
	}
	resp, err := e.do(ctx, http.MethodPost, e.base+"/v3/glossaries", encode(&body), nil)
	if err != nil {
		return "", glossaryError(err)
	}
	var created struct {
		GlossaryID string `json:"glossary_id"`
	}
	if err := json.Unmarshal(resp.Body, &created); err != nil || created.GlossaryID == "" {
		return "", httpx.Error(e.name, translate.KindBadOutput, resp, "glossary created without a glossary_id")
	}
	return created.GlossaryID, nil
}

// glossaryPrefix starts the name of every DeepL glossary the engine creates.
const glossaryPrefix = "fanyi-go "

// glossaryList is the answer of GET /v3/glossaries.
type glossaryList struct {
	Glossaries []struct {
		GlossaryID   string `json:"glossary_id"`
		Name         string `json:"name"`
		Dictionaries []struct {
			SourceLang string `json:"source_lang"`
			TargetLang string `json:"target_lang"`
			EntryCount int    `json:"entry_count"`
		} `json:"dictionaries"`
	} `json:"glossaries"`
}

// findGlossary looks in the account (GET /v3/glossaries) for a glossary this library made
// earlier with the same revision, pair and entry count (by another process, or before a
// restart), so that it is reused rather than made again. A failed listing is no error:
// the glossary is created; only a call ended by its context stops.
func (e *Engine) findGlossary(ctx context.Context, rev string, d dictionaryBody, entries int) (string, error) {
	resp, err := e.do(ctx, http.MethodGet, e.base+"/v3/glossaries", nil, nil)
	if err != nil {
		if ctx.Err() != nil || endedByContext(err) {
			return "", err
		}
		return "", nil
	}
	var l glossaryList
	if json.Unmarshal(resp.Body, &l) != nil {
		return "", nil
	}
	for _, g := range l.Glossaries {
		if !strings.HasPrefix(g.Name, glossaryPrefix) || !strings.HasSuffix(g.Name, " "+rev) ||
			g.GlossaryID == "" || len(g.Dictionaries) != 1 {
			continue
		}
		gd := g.Dictionaries[0]
		if strings.EqualFold(gd.SourceLang, d.SourceLang) && strings.EqualFold(gd.TargetLang, d.TargetLang) &&
			gd.EntryCount == entries {
			return g.GlossaryID, nil
		}
	}
	return "", nil
}

// glossaryError sorts a failed glossary creation: DeepL refusing this glossary (400, 403
// for a key without the glossary scope, 404, 413, 415) is not the engine failing, so the
// request goes on without a glossary (nil); 456, on the glossary endpoints "too many
// requests", is a rate limit; the rest is as for a translation.
func glossaryError(err error) error {
	var te *translate.Error
	if !errors.As(err, &te) {
		return err
	}
	switch te.StatusCode {
	case http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusRequestEntityTooLarge,
		http.StatusUnsupportedMediaType:
		return nil
	case 456:
		te.Kind = translate.KindRateLimited
	}
	return te
}

// tsv writes the terms as DeepL's tab-separated entries, one "source\ttarget" a line. A
// term DeepL's format cannot hold as it is (a tab, a line break or another control
// character, or white space at either end, which DeepL trims) is left out.
func tsv(terms []glossary.Term) string {
	var b strings.Builder
	for _, t := range terms {
		if !entryFits(t.Source) || !entryFits(t.Target) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(t.Source)
		b.WriteByte('\t')
		b.WriteString(t.Target)
	}
	return b.String()
}

func entryFits(s string) bool {
	if s == "" || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 {
			return false
		}
	}
	return true
}

// refused reports whether a translate error is DeepL refusing the request as sent (400 or
// 404), which, with a glossary, may be the glossary's fault.
func refused(err error) bool {
	var te *translate.Error
	return errors.As(err, &te) && (te.StatusCode == http.StatusBadRequest || te.StatusCode == http.StatusNotFound)
}

// glossaryGone reports whether a translate error says the glossary sent is unknown to
// DeepL (deleted, or expired): 404, or 400 naming the glossary.
func glossaryGone(err error) bool {
	var te *translate.Error
	if !errors.As(err, &te) {
		return false
	}
	return te.StatusCode == http.StatusNotFound ||
		te.StatusCode == http.StatusBadRequest && strings.Contains(strings.ToLower(te.Message), "glossary")
}
