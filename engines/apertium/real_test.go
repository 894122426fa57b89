package apertium

import (
	"context"
	"errors"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/internal/apy"
	"golang.org/x/text/language"
)

// TestRealAPy runs the adapter against a real apertium-apy server that it starts on a free
// loopback port. It skips only when apertium-apy or the eng-spa pair is not installed
// (Debian/Ubuntu: .ci/install-apertium.sh, or apt-get install apertium-apy apertium-eng-spa).
func TestRealAPy(t *testing.T) {
	skip := t.Skipf
	if os.Getenv("CI") == "true" { // CI installs it: missing is a failure there
		skip = t.Fatalf
	}
	in, err := apy.Find()
	if errors.Is(err, apy.ErrNotInstalled) {
		skip("skipping the real APy test: %v (install with .ci/install-apertium.sh)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !in.HasPair("eng-spa") {
		skip("skipping the real APy test: the eng-spa pair is not installed in %s (apt-get install apertium-eng-spa)", in.ModesDir)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	srv, err := apy.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("stopping apertium-apy: %v", err)
		}
	})
	t.Logf("apertium-apy ready at %s after %v", srv.URL(), time.Since(start))

	hc := &http.Client{Timeout: 30 * time.Second}
	t.Cleanup(hc.CloseIdleConnections)
	e, err := New(srv.URL(), WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("apertium-apy output:\n%s", srv.Output())
		}
	}()

	t.Run("EnglishToSpanish", func(t *testing.T) {
		texts := []string{
			"The house is red.",
			"",
			"The blorfle is here.",    // unknown word: no '*' with markUnknown=no
			"Fish & chips <b>now</b>", // plain text: '&' and '<b>' come back as they were
			"I have a small dog.",
			"The cat is black.",
		}
		res, err := e.Translate(ctx, &translate.EngineRequest{Texts: texts, Source: language.English, Target: language.Spanish})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%q", res.Texts)
		if len(res.Texts) != len(texts) {
			t.Fatalf("got %d texts, want %d", len(res.Texts), len(texts))
		}
		check := func(i int, want ...string) {
			t.Helper()
			for _, w := range want {
				if !strings.Contains(res.Texts[i], w) {
					t.Errorf("%q -> %q: missing %q", texts[i], res.Texts[i], w)
				}
			}
		}
		check(0, "casa", "roja")
		if res.Texts[1] != "" {
			t.Errorf("empty text -> %q, want \"\"", res.Texts[1])
		}
		check(2, "blorfle")
		if strings.Contains(res.Texts[2], "*") {
			t.Errorf("%q: unknown word marked with '*'", res.Texts[2])
		}
		check(3, "&", "<b>", "</b>")
		if strings.Contains(res.Texts[3], "&amp;") {
			t.Errorf("%q: text treated as HTML", res.Texts[3])
		}
		check(4, "perro")
		check(5, "gato", "negro")
	})

	t.Run("HTML", func(t *testing.T) {
		page := `<p title="x">The <b>house</b> is red &amp; <i>big</i>, 5 &lt; 6.</p>`
		res, err := e.Translate(ctx, &translate.EngineRequest{Texts: []string{page}, Source: language.English,
			Target: language.Spanish, Format: translate.FormatHTML})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%q", res.Texts)
		for _, w := range []string{`<p title="x">`, "<b>", "</b>", "<i>", "</i>", "</p>", "&amp;", "&lt;", "casa"} {
			if !strings.Contains(res.Texts[0], w) {
				t.Errorf("%q -> %q: missing %q", page, res.Texts[0], w)
			}
		}
	})

	t.Run("SpanishToAmericanEnglish", func(t *testing.T) {
		res, err := e.Translate(ctx, &translate.EngineRequest{Texts: []string{"La casa es roja."}, Source: language.Spanish, Target: language.AmericanEnglish})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.ToLower(res.Texts[0]); !strings.Contains(got, "house") || !strings.Contains(got, "red") {
			t.Errorf("es -> en-US: %q, want house and red", res.Texts[0])
		}
	})

	t.Run("PairNotInstalled", func(t *testing.T) {
		for _, tgt := range []language.Tag{language.German, language.BrazilianPortuguese} {
			_, err := e.Translate(ctx, &translate.EngineRequest{Texts: []string{"The house is red."}, Source: language.English, Target: tgt})
			var te *translate.Error
			if !errors.As(err, &te) || te.Kind != translate.KindUnsupported || te.StatusCode != http.StatusBadRequest {
				t.Errorf("en -> %v: err = %v, want KindUnsupported from APy's 400", tgt, err)
			}
		}
	})

	t.Run("SupportedPairs", func(t *testing.T) {
		pairs, err := e.SupportedPairs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v", pairs)
		for _, want := range []translate.LanguagePair{
			{Source: language.English, Target: language.Spanish},
			{Source: language.Spanish, Target: language.English},
		} {
			if !slices.Contains(pairs, want) {
				t.Errorf("pairs %v: missing %v -> %v", pairs, want.Source, want.Target)
			}
		}
	})
}
