package eval

import (
	"encoding/json"
	"net/http"
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/text/language"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// refsOf maps each item's target and text to its first reference.
func refsOf(set []Item) map[[2]string]string {
	m := map[[2]string]string{}
	for _, it := range set {
		m[[2]string{it.Target, it.Text}] = it.Refs[0]
	}
	return m
}

// lookupEngine is a fake that answers each text of set with f of its first reference.
func lookupEngine(name string, set []Item, f func(string) string) *fake.Engine {
	refs := refsOf(set)
	return fake.New(name, fake.WithTranslator(func(text string, _, target language.Tag) string {
		b, _ := target.Base()
		return f(refs[[2]string{b.String(), text}])
	}))
}

// newClient is a Client over engines (each with its own Profile()), its cache off.
func newClient(t *testing.T, opts ...translate.Option) *translate.Client {
	t.Helper()
	c, err := translate.New(append([]translate.Option{translate.WithoutCache(), translate.WithSeed(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func identity(s string) string { return s }

func jsonDecode(r *http.Request, v any) error { return json.NewDecoder(r.Body).Decode(v) }
