package translate

import (
	"context"
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fanyi-go/translate/fidelity/glossary"
)

const glossaryFile = `{
  "engines": [{"name": "a", "type": "cfgtest"}],
  "glossaries": [
    {"name": "brands", "source": "en", "target": "de", "default": true,
     "terms": [{"source": "cart", "target": "Warenkorb"},
               {"source": "Acme", "target": "Acme", "case_sensitive": true}]},
    {"name": "legal", "source": "en", "target": "de",
     "terms": [{"source": "agreement", "target": "Vertrag"}]}
  ]
}`

// The "glossaries" section round-trips, and a Client built from it applies the default
// glossary of the pair.
func TestConfigGlossaries(t *testing.T) {
	registerTestTypes()
	cfg, err := ParseConfig([]byte(glossaryFile))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	want := []GlossaryConfig{
		{Name: "brands", Source: "en", Target: "de", Default: true,
			Terms: []glossary.Term{{Source: "cart", Target: "Warenkorb"}, {Source: "Acme", Target: "Acme", CaseSensitive: true}}},
		{Name: "legal", Source: "en", Target: "de", Terms: []glossary.Term{{Source: "agreement", Target: "Vertrag"}}},
	}
	if diff := cmp.Diff(want, cfg.Glossaries); diff != "" {
		t.Errorf("glossaries (-want +got):\n%s", diff)
	}
	data, err := cfg.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON: %v", err)
	}
	again, err := ParseConfig(data)
	if err != nil {
		t.Fatalf("ParseConfig(%s): %v", data, err)
	}
	if diff := cmp.Diff(cfg, again, cmpopts.IgnoreUnexported(EngineConfig{}), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip of %s (-want +got):\n%s", data, diff)
	}
	c, err := New(WithConfig(cfg), WithoutCache())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer c.Close()
	res, err := c.Translate(context.Background(), Request{Text: "my cart", Source: "en", Target: "de"})
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	// cfgtest echoes what it is sent; the term is masked and comes back as its target.
	if res.Text != "my Warenkorb" || res.Glossary == "" {
		t.Errorf("Translate = %q (glossary %q); want the default glossary applied", res.Text, res.Glossary)
	}
}

// Bad glossaries are refused with the JSON path of the fault.
func TestConfigGlossaryErrors(t *testing.T) {
	registerTestTypes()
	long := strings.Repeat("x", glossary.MaxTermSize+1)
	for _, tc := range []struct{ glossaries, path string }{
		{`[{"source": "en", "target": "de"}]`, "glossaries[0].name: is required"},
		{`[{"name": "g", "target": "de"}]`, "glossaries[0].source: is required"},
		{`[{"name": "g", "source": "en", "target": "de", "terms": [{"source": "a", "target": "b"}, {"source": "c"}]}]`, "glossaries[0].terms[1].target: must be 1..256 bytes"},
		{`[{"name": "g", "source": "en", "target": "de", "terms": [{"source": "` + long + `", "target": "b"}]}]`, "glossaries[0].terms[0].source: must be 1..256 bytes"},
		{`[{"name": "g", "source": "en", "target": "de", "terms": [{"source": "a", "target": "b"}, {"source": "A", "target": "c"}]}]`, "glossaries[0].terms:"},
		{`[{"name": "g", "source": "en", "target": "de"}, {"name": "g", "source": "en", "target": "de"}]`, "glossaries[1]:"},
		{`[{"name": "g", "source": "en", "target": "de", "default": true}, {"name": "h", "source": "en", "target": "de", "default": true}]`, "glossaries[1]:"},
		{`[{"name": "g", "source": "en", "target": "de", "terms": [{"source": "a", "target": "b", "weight": 2}]}]`, "glossaries[0].terms[0].weight: unknown field"},
		{`[{"name": "g", "source": "en", "target": "de", "terms": {}}]`, "glossaries[0].terms: must be an array"},
		{`{}`, "glossaries: must be an array"},
	} {
		data := `{"engines": [{"name": "a", "type": "cfgtest"}], "glossaries": ` + tc.glossaries + `}`
		_, err := ParseConfig([]byte(data))
		if KindOf(err) != KindInvalidInput || !strings.HasPrefix(strings.TrimPrefix(err.Error(), "translate: invalid_input: "), tc.path) {
			t.Errorf("ParseConfig(%s) = %v; want %q", tc.glossaries, err, tc.path)
		}
	}
	many := make([]*glossary.Glossary, maxGlossaries+1)
	for i := range many {
		many[i], _ = glossary.New("g"+itoa(i), "en", "de", nil)
	}
	if _, err := New(WithEngine(&cfgEngine{name: "a"}, Profile{}), WithGlossaries(many...)); KindOf(err) != KindInvalidInput {
		t.Errorf("New with %d glossaries: %v; want InvalidInput", len(many), err)
	}
	if _, err := New(WithEngine(&cfgEngine{name: "a"}, Profile{}), WithDefaultGlossaries("nope")); KindOf(err) != KindInvalidInput {
		t.Errorf("New with a default that names no glossary: %v; want InvalidInput", err)
	}
}

// contentRules: glossaries and placeholders (TestEveryNewRuleInConfig).
func contentRules() []newRule {
	many := make([]*glossary.Glossary, maxGlossaries+1)
	file := make([]string, maxGlossaries+1)
	for i := range many {
		many[i], _ = glossary.New("g"+itoa(i), "en", "de", nil)
		file[i] = `{"name":"g` + itoa(i) + `","source":"en","target":"de"}`
	}
	badTag, _ := glossary.New("g", "en", "no such tag", nil)
	return []newRule{
		{opts: []Option{WithPlaceholders(1<<7, nil)}, newMsg: "config: WithPlaceholders unknown placeholder syntax"},
		{opts: []Option{WithGlossaries(many...)}, newMsg: "config: WithGlossaries at most 1000 glossaries",
			json: `"glossaries":[` + strings.Join(file, ",") + `]`, path: "glossaries: at most 1000 glossaries"},
		{opts: []Option{WithGlossaries(nil)}, newMsg: "config: WithGlossaries nil glossary"},
		{opts: []Option{WithGlossaries(badTag)}, newMsg: "config: WithGlossaries language is not a valid BCP 47 tag",
			json: `"glossaries":[{"name":"g","source":"en","target":"no such tag"}]`, path: "glossaries[0].target: language is not a valid BCP 47 tag"},
	}
}

// A glossary changed by Reconfigure (same name, other terms) has another revision: the
// cache entry made under the old terms is not served.
func TestReconfiguredGlossaryMissesTheCache(t *testing.T) {
	registerTestTypes()
	cfg, err := ParseConfig([]byte(glossaryFile))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(WithConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ask := func() *Result {
		t.Helper()
		res, err := c.Translate(context.Background(), Request{Text: "my cart", Source: "en", Target: "de"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := ask()
	if again := ask(); !again.FromCache {
		t.Fatalf("the same request again was not a cache hit")
	}
	changed := strings.Replace(glossaryFile, `"Warenkorb"`, `"Einkaufskorb"`, 1)
	cfg2, err := ParseConfig([]byte(changed))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Reconfigure(cfg2); err != nil {
		t.Fatal(err)
	}
	res := ask()
	if res.FromCache || res.Text != "my Einkaufskorb" || res.Glossary == first.Glossary {
		t.Errorf("after the change: %q (cache %v, revision %q, before %q)", res.Text, res.FromCache, res.Glossary, first.Glossary)
	}
}

// The Store's keys (second-level cache, request id digest) hold the format and the
// glossary revision, and stay as they were for plain text without a glossary.
func TestStoreKeysHoldContent(t *testing.T) {
	registerTestTypes()
	g, _ := glossary.New("g", "en", "de", []glossary.Term{{Source: "cart", Target: "Korb"}})
	c, err := New(WithEngine(&cfgEngine{name: "a"}, Profile{}), WithGlossaries(g))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	digest := func(req Request) string {
		t.Helper()
		var r request
		if err := c.prepare(&req, &r, 0); err != nil {
			t.Fatal(err)
		}
		sum := contentDigest(&r)
		return string(sum[:])
	}
	plain := Request{Text: "a cart", Source: "en", Target: "de"}
	html, gl := plain, plain
	html.Format, gl.Glossary = FormatHTML, "g"
	if d := digest(plain); d == digest(html) || d == digest(gl) || digest(html) == digest(gl) {
		t.Errorf("digests do not tell format and glossary apart")
	}
	var r request
	_ = c.prepare(&plain, &r, 0)
	h := sha256.New()
	for _, f := range []string{r.src.Key, r.tgt.Full, "0", "0"} {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	h.Write([]byte(plain.Text))
	if got := digest(plain); got != string(h.Sum(nil)) {
		t.Errorf("the plain digest changed")
	}
}
