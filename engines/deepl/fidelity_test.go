package deepl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
	"github.com/fanyi-go/translate/fidelity/glossary"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"
)

func newGlossary(t *testing.T, name, src, tgt string, terms ...string) *glossary.Glossary {
	t.Helper()
	var ts []glossary.Term
	for i := 0; i+1 < len(terms); i += 2 {
		ts = append(ts, glossary.Term{Source: terms[i], Target: terms[i+1]})
	}
	g, err := glossary.New(name, src, tgt, ts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func withFidelity(r *translate.EngineRequest, f translate.Format, g *glossary.Glossary) *translate.EngineRequest {
	r.Format, r.Glossary = f, g
	return r
}

// TestTagHandlingOnTheWire: HTML and XML send tag_handling, plain text sends exactly what
// it sent before (no tag_handling, no glossary_id).
func TestTagHandlingOnTheWire(t *testing.T) {
	for _, tc := range []struct {
		format translate.Format
		want   string
	}{{translate.FormatText, ""}, {translate.FormatHTML, "html"}, {translate.FormatXML, "xml"}} {
		e, s := newEngine(t, enginetest.Scenario{})
		if _, err := e.Translate(context.Background(), withFidelity(req("en", "de", "<p>Hi</p>"), tc.format, nil)); err != nil {
			t.Fatal(err)
		}
		want := []translateBody{{Text: []string{"<p>Hi</p>"}, TargetLang: "DE", SourceLang: "EN", ShowBilledCharacters: true, TagHandling: tc.want}}
		if diff := cmp.Diff(want, s.bodies()); diff != "" {
			t.Errorf("%v: bodies (-want +got):\n%s", tc.format, diff)
		}
	}
}

// TestGlossaryOnTheWire: the glossary is created once with POST /v3/glossaries as the spec
// writes it and its id sent with every request; a detecting request sends the glossary's
// source.
func TestGlossaryOnTheWire(t *testing.T) {
	e, s := newEngine(t, enginetest.Scenario{})
	g := newGlossary(t, "brand", "en-GB", "de", "widget", "Dings", "Acme Cloud", "Acme-Wolke", "bad\tterm", "x", " padded", "y")
	ctx := context.Background()
	res, err := e.Translate(ctx, withFidelity(req("en", "de", "widget", "A widget"), translate.FormatHTML, g))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Dings", enginetest.Expected("A widget")}, res.Texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	if _, err := e.Translate(ctx, withFidelity(req("", "de-AT", "widget"), translate.FormatText, g)); err != nil {
		t.Fatal(err)
	}
	wantCreate := []createBody{{Name: "fanyi-go brand " + g.Revision(), Dictionaries: []dictionaryBody{{
		SourceLang: "en", TargetLang: "de", Entries: "widget\tDings\nAcme Cloud\tAcme-Wolke", EntriesFormat: "tsv"}}}}
	if diff := cmp.Diff(wantCreate, s.creations()); diff != "" {
		t.Errorf("creations (-want +got):\n%s", diff)
	}
	id := "def3a26b-3e84-45b3-84ae-000000000001"
	want := []translateBody{
		{Text: []string{"widget", "A widget"}, TargetLang: "DE", SourceLang: "EN", ShowBilledCharacters: true, TagHandling: "html", GlossaryID: id},
		{Text: []string{"widget"}, TargetLang: "DE", SourceLang: "EN", ShowBilledCharacters: true, GlossaryID: id},
	}
	if diff := cmp.Diff(want, s.bodies()); diff != "" {
		t.Errorf("bodies (-want +got):\n%s", diff)
	}
}

// TestGlossaryReuse: one DeepL glossary per revision: the same terms under another name
// reuse it, changed terms make a new one.
func TestGlossaryReuse(t *testing.T) {
	e, s := newEngine(t, enginetest.Scenario{})
	ctx := context.Background()
	for _, g := range []*glossary.Glossary{
		newGlossary(t, "brand", "en", "de", "widget", "Dings"),
		newGlossary(t, "brand", "en", "de", "widget", "Dings"),
		newGlossary(t, "renamed", "en", "de", "widget", "Dings"),
		newGlossary(t, "brand", "en", "de", "widget", "Ding"),
		newGlossary(t, "brand", "en", "de", "widget", "Dings"),
	} {
		if _, err := e.Translate(ctx, withFidelity(req("en", "de", "widget"), translate.FormatText, g)); err != nil {
			t.Fatal(err)
		}
	}
	var entries []string
	for _, c := range s.creations() {
		entries = append(entries, c.Dictionaries[0].Entries)
	}
	if diff := cmp.Diff([]string{"widget\tDings", "widget\tDing"}, entries); diff != "" {
		t.Errorf("created (-want +got):\n%s", diff)
	}
	var ids []string
	for _, b := range s.bodies() {
		ids = append(ids, b.GlossaryID[len(b.GlossaryID)-1:])
	}
	if diff := cmp.Diff([]string{"1", "1", "1", "2", "1"}, ids); diff != "" {
		t.Errorf("glossary ids sent (-want +got):\n%s", diff)
	}
}

// TestGlossaryCacheBounded: the engine remembers at most glossaryCacheSize revisions (the
// account lists none, so a forgotten one is made again).
func TestGlossaryCacheBounded(t *testing.T) {
	e, s := newEngine(t, enginetest.Scenario{}, func(s *server) { s.unlisted = true })
	ctx := context.Background()
	first := newGlossary(t, "g", "en", "de", "term0", "Begriff")
	for i := range glossaryCacheSize + 1 {
		g := newGlossary(t, "g", "en", "de", fmt.Sprintf("term%d", i), "Begriff")
		if _, err := e.Translate(ctx, withFidelity(req("en", "de", "x"), translate.FormatText, g)); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.gl.ids.Len(); n != glossaryCacheSize {
		t.Errorf("%d revisions remembered, want %d", n, glossaryCacheSize)
	}
	if _, err := e.Translate(ctx, withFidelity(req("en", "de", "x"), translate.FormatText, first)); err != nil {
		t.Fatal(err)
	}
	if n := len(s.creations()); n != glossaryCacheSize+2 {
		t.Errorf("%d creations, want %d (the forgotten first one again)", n, glossaryCacheSize+2)
	}
}

// TestGlossaryFoundInAccount: a glossary made earlier (by another engine, process or run)
// with the same revision is reused; one with the same name and other terms is not.
func TestGlossaryFoundInAccount(t *testing.T) {
	_, s := newEngine(t, enginetest.Scenario{})
	ctx := context.Background()
	g := newGlossary(t, "brand", "en", "de", "widget", "Dings", "gadget", "Gerät")
	// Same name and revision but edited by hand (one entry, or another pair): not reused.
	s.glossaries = map[string]*mockGlossary{
		"0aaaaaaa-3e84-45b3-84ae-000000000000": {name: "fanyi-go brand " + g.Revision(), source: "en", target: "de",
			entries: map[string]string{"widget": "Dings"}},
		"0bbbbbbb-3e84-45b3-84ae-000000000000": {name: "fanyi-go brand " + g.Revision(), source: "en", target: "fr",
			entries: map[string]string{"widget": "Dings", "gadget": "Gerät"}},
	}
	for _, gl := range []*glossary.Glossary{g, g, newGlossary(t, "brand", "en", "de", "widget", "Ding", "gadget", "Gerät")} {
		e, err := New(testKey, WithBaseURL(s.url)) // a fresh engine each time: nothing remembered
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Translate(ctx, withFidelity(req("en", "de", "widget"), translate.FormatText, gl)); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for _, b := range s.bodies() {
		ids = append(ids, b.GlossaryID[len(b.GlossaryID)-1:])
	}
	if diff := cmp.Diff([]string{"1", "1", "2"}, ids); diff != "" {
		t.Errorf("glossary ids sent (-want +got):\n%s", diff)
	}
}

// TestGlossaryGone: a glossary DeepL no longer has is created again, once per call.
func TestGlossaryGone(t *testing.T) {
	e, s := newEngine(t, enginetest.Scenario{})
	ctx := context.Background()
	g := newGlossary(t, "brand", "en", "de", "widget", "Dings")
	for range 2 {
		if _, err := e.Translate(ctx, withFidelity(req("en", "de", "widget"), translate.FormatText, g)); err != nil {
			t.Fatal(err)
		}
		s.forgetGlossaries()
	}
	var ids []string
	for _, b := range s.bodies() {
		ids = append(ids, b.GlossaryID[len(b.GlossaryID)-1:])
	}
	// 1 ok; 1 refused, 2 created and ok.
	if diff := cmp.Diff([]string{"1", "1", "2"}, ids); diff != "" {
		t.Errorf("glossary ids sent (-want +got):\n%s", diff)
	}
	// A glossary that is gone again right after its creation: one retry, then the text goes
	// without it, and so do later ones (the revision is remembered as refused).
	s.createReply = func(w http.ResponseWriter) {
		writeJSON(w, http.StatusCreated, []byte(`{"glossary_id":"def3a26b-3e84-45b3-84ae-999999999999","name":"x"}`))
	}
	before := len(s.bodies())
	for range 2 {
		if _, err := e.Translate(ctx, withFidelity(req("en", "de", "widget"), translate.FormatText, g)); err != nil {
			t.Fatal(err)
		}
	}
	ids = nil
	for _, b := range s.bodies()[before:] {
		ids = append(ids, b.GlossaryID)
	}
	want := []string{"def3a26b-3e84-45b3-84ae-000000000002", "def3a26b-3e84-45b3-84ae-999999999999", "", ""}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("glossary ids sent (-want +got):\n%s", diff)
	}
	if n := len(s.creations()); n != 3 {
		t.Errorf("%d creations, want 3", n)
	}
}

// TestGlossaryRefused: any other 400 with a glossary (deepl-mock's own failure, say) sends
// the text again without it; a 400 that is the text's fault stays the error it was.
func TestGlossaryRefused(t *testing.T) {
	e, s := newEngine(t, enginetest.Scenario{})
	s.glossaryFails = true
	ctx := context.Background()
	g := newGlossary(t, "brand", "en", "de", "widget", "Dings")
	res, err := e.Translate(ctx, withFidelity(req("en", "de", "widget"), translate.FormatText, g))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{enginetest.Expected("widget")}, res.Texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	var ids []string
	for _, b := range s.bodies() {
		ids = append(ids, b.GlossaryID)
	}
	if diff := cmp.Diff([]string{"def3a26b-3e84-45b3-84ae-000000000001", ""}, ids); diff != "" {
		t.Errorf("glossary ids sent (-want +got):\n%s", diff)
	}

	e, s = newEngine(t, enginetest.Scenario{})
	s.reply = func(w http.ResponseWriter) { writeJSON(w, http.StatusBadRequest, testdata(t, "error_400.json")) }
	_, err = e.Translate(ctx, withFidelity(req("en", "de", "widget"), translate.FormatText, g))
	if translate.KindOf(err) != translate.KindInvalidInput || len(s.bodies()) != 2 {
		t.Errorf("err = %v after %d requests, want KindInvalidInput after 2", err, len(s.bodies()))
	}
	if id, ok := e.gl.ids.Peek(g.Revision()); !ok || id == "" {
		t.Errorf("glossary remembered as %q, %v after the text's own failure; want its id", id, ok)
	}
}

// TestGlossaryNotSent: no glossary for another pair, for languages DeepL has none for, for
// a glossary without a term DeepL can hold, or one DeepL refused (asked once).
func TestGlossaryNotSent(t *testing.T) {
	ctx := context.Background()
	for name, g := range map[string]*glossary.Glossary{
		"other target":         newGlossary(t, "g", "en", "fr", "widget", "machin"),
		"other source":         newGlossary(t, "g", "fr", "de", "widget", "Dings"),
		"no glossaries for hi": newGlossary(t, "g", "en", "hi", "widget", "x"),
		"no term fits":         newGlossary(t, "g", "en", "de", "a\tb", "Dings"),
	} {
		e, s := newEngine(t, enginetest.Scenario{})
		tgt := "de"
		if g.Target() == "hi" {
			tgt = "hi"
		}
		if _, err := e.Translate(ctx, withFidelity(req("en", tgt, "widget"), translate.FormatText, g)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n, b := len(s.creations()), s.bodies(); n != 0 || b[0].GlossaryID != "" {
			t.Errorf("%s: %d creations, glossary_id %q", name, n, b[0].GlossaryID)
		}
	}
	e, s := newEngine(t, enginetest.Scenario{})
	s.createReply = func(w http.ResponseWriter) {
		writeJSON(w, http.StatusBadRequest, []byte(`{"message":"Invalid glossary entries provided"}`))
	}
	g := newGlossary(t, "g", "en", "de", "widget", "Dings")
	for range 2 {
		if _, err := e.Translate(ctx, withFidelity(req("en", "de", "widget"), translate.FormatText, g)); err != nil {
			t.Fatal(err)
		}
	}
	if n, b := len(s.creations()), s.bodies(); n != 1 || b[0].GlossaryID != "" || b[1].GlossaryID != "" {
		t.Errorf("refused: %d creations, bodies %+v", n, b)
	}
}

// TestGlossaryRateLimited: 456 from the glossary endpoint is a rate limit, not an exhausted
// translation quota.
func TestGlossaryRateLimited(t *testing.T) {
	e, s := newEngine(t, enginetest.Scenario{})
	s.createReply = func(w http.ResponseWriter) { writeJSON(w, 456, []byte(`{"message":"Too many requests"}`)) }
	_, err := e.Translate(context.Background(), withFidelity(req("en", "de", "widget"), translate.FormatText,
		newGlossary(t, "g", "en", "de", "widget", "Dings")))
	if translate.KindOf(err) != translate.KindRateLimited || len(s.bodies()) != 0 {
		t.Errorf("err = %v after %d translations, want KindRateLimited before any", err, len(s.bodies()))
	}
}

// direct is a RoundTripper that serves each request with h in the caller's goroutine, so
// that a synctest bubble sees every goroutine that waits.
type direct struct{ h http.Handler }

func (d direct) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	d.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// TestGlossaryCreatedOnce: concurrent first uses of a glossary create it once, whoever
// asked first.
func TestGlossaryCreatedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &server{t: t, key: testKey, sources: readLanguages(t, "source"), targets: readLanguages(t, "target")}
		gate := make(chan struct{})
		s.createGate = gate
		e, err := New(testKey, WithBaseURL("http://deepl.test"), WithHTTPClient(&http.Client{Transport: direct{s}}))
		if err != nil {
			t.Fatal(err)
		}
		g := newGlossary(t, "brand", "en", "de", "widget", "Dings")
		const n = 8
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Go(func() {
				_, err := e.Translate(context.Background(), withFidelity(req("en", "de", "widget"), translate.FormatText, g))
				errs <- err
			})
		}
		synctest.Wait() // every caller waits: for the creation, or in it
		if c := len(s.creations()); c != 1 {
			t.Errorf("%d creations under way, want 1", c)
		}
		close(gate)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		for _, b := range s.bodies() {
			if b.GlossaryID == "" {
				t.Errorf("request without the glossary: %+v", b)
			}
		}
	})
}

// TestGlossaryWaitHonoursContext: a caller waiting for another's creation returns when its
// own context ends.
func TestGlossaryWaitHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &server{t: t, key: testKey, sources: readLanguages(t, "source"), targets: readLanguages(t, "target")}
		gate := make(chan struct{})
		s.createGate = gate
		e, _ := New(testKey, WithBaseURL("http://deepl.test"), WithHTTPClient(&http.Client{Transport: direct{s}}))
		g := newGlossary(t, "brand", "en", "de", "widget", "Dings")
		first := make(chan error, 1)
		go func() {
			_, err := e.Translate(context.Background(), withFidelity(req("en", "de", "widget"), translate.FormatText, g))
			first <- err
		}()
		synctest.Wait()
		ctx, cancel := context.WithCancel(context.Background())
		waiter := make(chan error, 1)
		go func() {
			_, err := e.Translate(ctx, withFidelity(req("en", "de", "widget"), translate.FormatText, g))
			waiter <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-waiter; translate.KindOf(err) != translate.KindCanceled || !errors.Is(err, context.Canceled) {
			t.Errorf("waiter: err = %v, want KindCanceled wrapping context.Canceled", err)
		}
		close(gate)
		if err := <-first; err != nil {
			t.Error(err)
		}
		if c := len(s.creations()); c != 1 {
			t.Errorf("%d creations, want 1", c)
		}
	})
}

var _ = language.Und
