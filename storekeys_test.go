package translate_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/fanyi-go/translate/fidelity/glossary"
)

// The shared-cache key and the request id's digest cover the placeholder settings: a
// Client protecting other placeholders (another syntax, its own pattern, another pattern)
// never shares an answer with one protecting the defaults, whose engine may have translated
// them. The default settings, given or not, keep the keys every version made before.
func TestStoreKeysCoverPlaceholderSettings(t *testing.T) {
	const stable = "e1f52e045f7335c31e51171305664b01c130d33ff0c96681c76de30d0ca17988" // TestStoreKeysAreStable
	keys := func(opts ...translate.Option) [2]string {
		st := &scriptStore{}
		c := newClient(t, append([]translate.Option{translate.WithStore(st), translate.WithCache(10, time.Hour),
			translate.WithEngine(fake.New("a"), paidProfile(0.9))}, opts...)...)
		if _, err := c.Translate(context.Background(), translate.Request{Text: "hello", Source: "en", Target: "es", RequestID: "id-1"}); err != nil {
			t.Fatal(err)
		}
		return [2]string{st.admits[0].CacheKey, st.admits[0].RequestID}
	}
	def := keys()
	if diff := cmp.Diff([2]string{stable, "id-1#" + stable[:32]}, def); diff != "" {
		t.Errorf("default settings (-want +got):\n%s", diff)
	}
	if got := keys(translate.WithPlaceholders(fidelity.DefaultSyntaxes, nil)); got != def {
		t.Errorf("the default syntaxes given: keys %v, want the default's", got)
	}
	seen := map[[2]string]string{def: "default"}
	for name, opt := range map[string]translate.Option{
		"colon too":   translate.WithPlaceholders(fidelity.DefaultSyntaxes|fidelity.Colon, nil),
		"printf only": translate.WithPlaceholders(fidelity.Printf, nil),
		"a pattern":   translate.WithPlaceholders(0, regexp.MustCompile(`\$[A-Z]+`)),
		"another":     translate.WithPlaceholders(0, regexp.MustCompile(`#[a-z]+`)),
	} {
		got := keys(opt)
		if other, dup := seen[got]; dup {
			t.Errorf("%s: the same keys as %s", name, other)
		}
		seen[got] = name
		if again := keys(opt); again != got {
			t.Errorf("%s: keys %v, then %v: not the same in every Client", name, got, again)
		}
	}
}

// The memory keys an entry by the placeholder settings too, as private-use subtags of its
// target ("p" and 7 hex digits each, of a SHA-256 of the syntaxes and the pattern), and by
// nothing more with the default settings.
func TestMemoryKeyHoldsPlaceholderSettings(t *testing.T) {
	target := func(opts ...translate.Option) string {
		c := newClient(t, append([]translate.Option{translate.WithMemory(translate.MemoryPolicy{}),
			translate.WithEngine(fake.New("a"), translate.Profile{Quality: 100})}, opts...)...)
		mustTranslate(t, c, req("Hi :name, you have mail"))
		var tmx bytes.Buffer
		if err := c.ExportMemory(&tmx); err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`<tuv xml:lang="([^"]+)">\s*<seg>\[es\]`).FindStringSubmatch(tmx.String())
		if m == nil {
			t.Fatalf("no target in\n%s", tmx.String())
		}
		return m[1]
	}
	def := target()
	if strings.Contains(def, "-x-") {
		t.Errorf("default settings: target %q, want no private-use subtags", def)
	}
	sum := sha256.Sum256([]byte(strconv.Itoa(int(fidelity.DefaultSyntaxes | fidelity.Colon))))
	h := hex.EncodeToString(sum[:14])
	want := def + "-x-p" + h[:7] + "-p" + h[7:14] + "-p" + h[14:21] + "-p" + h[21:]
	if got := target(translate.WithPlaceholders(fidelity.DefaultSyntaxes|fidelity.Colon, nil)); got != want {
		t.Errorf("colon too: target %q, want %q", got, want)
	}
}

// Two glossaries of one pair whose revisions share their first 7 hex digits (a birthday
// search over numbered glossaries finds a pair in some 2^14 tries; the same pair every
// run): the memory keys an entry by the whole revision, so the translation made under one
// never answers a request under the other.
func TestMemoryKeyHoldsTheWholeGlossaryRevision(t *testing.T) {
	g1, g2 := glossariesSharingARevisionPrefix(t, 7)
	c := newClient(t, translate.WithEngine(fake.New("a"), translate.Profile{Quality: 90}),
		translate.WithMemory(translate.MemoryPolicy{}), translate.WithGlossaries(g1, g2))
	ctx := context.Background()
	r := translate.Request{Text: "my cloud", Source: "en", Target: "de", Glossary: g1.Name()}
	if _, err := c.Translate(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Glossary = g2.Name()
	res, err := c.Translate(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if want := g2.Terms()[0].Target; res.FromMemory || !strings.Contains(res.Text, want) {
		t.Errorf("under %s (revision %s): %q, FromMemory %v; want a translation with %q, not the one made under %s (revision %s)",
			g2.Name(), g2.Revision(), res.Text, res.FromMemory, want, g1.Name(), g1.Revision())
	}
	if res, err := c.Translate(ctx, r); err != nil || !res.FromMemory {
		t.Errorf("asked again under %s: FromMemory %v, %v; want its own entry", g2.Name(), res != nil && res.FromMemory, err)
	}
	var tmx bytes.Buffer
	if err := c.ExportMemory(&tmx); err != nil {
		t.Fatal(err)
	}
	rev := g2.Revision()
	if want := `xml:lang="de-Latn-x-g` + rev[:7] + "-g" + rev[7:14] + "-g" + rev[14:21] + "-g" + rev[21:] + `"`; !strings.Contains(tmx.String(), want) {
		t.Errorf("no target %s in\n%s", want, tmx.String())
	}
}

// glossariesSharingARevisionPrefix returns two en->de glossaries whose revisions differ
// but share their first n hex digits.
func glossariesSharingARevisionPrefix(t *testing.T, n int) (*glossary.Glossary, *glossary.Glossary) {
	t.Helper()
	seen := map[string]*glossary.Glossary{}
	for i := range 1 << 20 {
		g, err := glossary.New("g"+strconv.Itoa(i), "en", "de", []glossary.Term{{Source: "cloud", Target: "Wolke" + strconv.Itoa(i)}})
		if err != nil {
			t.Fatal(err)
		}
		p := g.Revision()[:n]
		if o := seen[p]; o != nil && o.Revision() != g.Revision() {
			return o, g
		}
		seen[p] = g
	}
	t.Fatal("no pair found")
	return nil, nil
}
