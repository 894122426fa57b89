package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/enginetest"
	"github.com/fanyi-go/translate/fidelity/glossary"
)

// instructedTerm is one line of a glossary instruction in the system prompt.
var instructedTerm = regexp.MustCompile(`(?m)^"([^"]+)" => "([^"]+)"$`)

// followInstructions makes s answer as a model that follows the system prompt's glossary
// lines: each source term in the user's text becomes its target (the spec server alone
// ignores the prompt).
func followInstructions(s *fakeOpenAI) {
	s.reply = func(w http.ResponseWriter, seen *chatRequestSeen) {
		apply := func(text string) string {
			for _, m := range instructedTerm.FindAllStringSubmatch(seen.Body.Messages[0].Content, -1) {
				text = strings.ReplaceAll(text, m[1], m[2])
			}
			return enginetest.Expected(text)
		}
		user := seen.Body.Messages[len(seen.Body.Messages)-1].Content
		var texts []string
		if strings.Contains(seen.Body.Messages[0].Content, "JSON array") && json.Unmarshal([]byte(user), &texts) == nil {
			for i := range texts {
				texts[i] = apply(texts[i])
			}
			b, _ := json.Marshal(map[string][]string{"translations": texts})
			completion(w, seen.Body.Model, string(b))
			return
		}
		completion(w, seen.Body.Model, apply(user))
	}
}

// TestClientPromptFidelity: a Client of the bundled OpenAI-compatible engine (its own
// Profile) sends an HTML page with a glossary as it is, under a system prompt that carries
// the HTML rule and the glossary's terms; the Result keeps the tags, has the term's target
// and names the glossary's revision.
func TestClientPromptFidelity(t *testing.T) {
	s, e := newTest(t, modeOK)
	followInstructions(s)
	g, err := glossary.New("brand", "en", "fr", []glossary.Term{{Source: "widget", Target: "bidule"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := translate.New(translate.WithEngine(e, e.Profile()), translate.WithGlossaries(g))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const page = `<div class="product"><p>A <b>widget</b> today</p></div>`
	res, err := c.Translate(context.Background(), translate.Request{Text: page, Source: "en", Target: "fr",
		Format: translate.FormatHTML, Glossary: "brand"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := s.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	msgs := reqs[0].Body.Messages
	system, user := msgs[0].Content, msgs[len(msgs)-1].Content
	for _, want := range []string{htmlRule, "Translate these terms exactly as given (source => target):\n\"widget\" => \"bidule\""} {
		if !strings.Contains(system, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, system)
		}
	}
	if user != page {
		t.Errorf("user message = %q, want the page as it is %q", user, page)
	}
	want := `T:<div class="product"><p>A <b>bidule</b> today</p></div>`
	if res.Text != want || res.Engine != e.Name() || res.Glossary != g.Revision() {
		t.Errorf("Result = %q by %q, glossary %q; want %q by %q, %q", res.Text, res.Engine, res.Glossary, want, e.Name(), g.Revision())
	}
}
