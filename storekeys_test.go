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
