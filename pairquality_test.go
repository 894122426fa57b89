package translate_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
	"github.com/fanyi-go/translate/engines/fake"
)

// Two engines with opposite strengths: "de" is good at English to German (95) and poor at
// English to Japanese (60), "ja" the reverse; both are 80 elsewhere (the default Quality).
// Each carries most of its strong pair's traffic, and the split is the softmax of the
// quality gap: with the default weights and temperature a 35-point gap is 14 score points,
// exp(14/T) = 1.81, so 64.4% of the pair to the strong engine. Other pairs split evenly.
func TestPairQualitySteersEachPair(t *testing.T) {
	c := newClient(t, translate.WithClock(newClock()),
		translate.WithEngine(fake.New("de"), translate.Profile{PairQuality: map[string]float64{"en-de": 95, "*-ja": 60}}),
		translate.WithEngine(fake.New("ja"), translate.Profile{PairQuality: map[string]float64{"en-de": 60, "*-ja": 95}}))
	want := math.Exp(14/translate.DefaultTemperature) / (1 + math.Exp(14/translate.DefaultTemperature)) // 0.644
	for _, tc := range []struct {
		target, strong string
		want           float64
	}{
		{"de", "de", want}, {"ja", "ja", want}, {"fr", "de", 0.5},
	} {
		got := shares(t, c, 4000, func(i int) translate.Request {
			return translate.Request{Text: fmt.Sprint("text ", i), Source: "en", Target: tc.target}
		})
		t.Logf("en->%s: %.3f to %s (want %.3f)", tc.target, got[tc.strong], tc.strong, tc.want)
		if math.Abs(got[tc.strong]-tc.want) > 0.03 {
			t.Errorf("en->%s: share of %s = %.3f, want %.3f ± 0.03", tc.target, tc.strong, got[tc.strong], tc.want)
		}
	}
}

// The most specific key wins: "en-de/legal" over "en-de" over "*-de" over "en-*", then
// SceneQuality, then Quality. Each engine below is the only candidate with a rule that
// puts it under LegalMinQuality (90) or over it, so whether it serves a legal request shows
// which quality the router used.
func TestPairQualityMostSpecificWins(t *testing.T) {
	prof := translate.Profile{Quality: 95, SceneQuality: map[translate.Scene]float64{translate.SceneLegal: 92},
		PairQuality: map[string]float64{"en-de/legal": 91, "en-de": 50, "*-de": 50, "en-*": 80, "fr-*/legal": 93, "*-ja/tech": 10}}
	c := newClient(t, translate.WithClock(newClock()), translate.WithEngine(fake.New("only"), prof))
	for _, tc := range []struct {
		src, tgt string
		ok       bool // quality >= 90 for legal
		why      string
	}{
		{"en", "de", true, `"en-de/legal" 91 over "en-de" 50`},
		{"en-GB", "de-AT", true, "regions do not matter"},
		{"fr", "de", false, `"*-de" 50 (no "*-de/legal")`},
		{"en", "it", false, `"en-*" 80 over SceneQuality 92`},
		{"fr", "it", true, `"fr-*/legal" 93`},
		{"it", "ja", true, `"*-ja/tech" is for tech only: SceneQuality 92`},
		{"", "de", false, `a detected source matches "*-de" 50`},
		{"", "it", true, `no key: SceneQuality 92`},
	} {
		_, err := c.Translate(t.Context(), translate.Request{Text: "x " + tc.src + tc.tgt, Source: tc.src, Target: tc.tgt, Scene: translate.SceneLegal})
		if got := err == nil; got != tc.ok {
			t.Errorf("%s->%s legal: served = %v (%v), want %v: %s", tc.src, tc.tgt, got, err, tc.ok, tc.why)
		}
	}
}

// PairQuality is checked by New and by ParseConfig alike: keys well-formed, values 0..100.
func TestPairQualityValidation(t *testing.T) {
	for _, tc := range []struct {
		key  string
		q    float64
		want string // the error after the field
	}{
		{"en-de", 101, `"en-de": must be within 0..100`},
		{"en-de", math.NaN(), `"en-de": must be within 0..100`},
		{"en-de/poetry", 90, `"en-de/poetry": unknown scene (known: general, tech, legal, ecommerce, chat)`},
		{"*-*", 90, `"*-*": wants "src-tgt", each side "*" or a language with an optional script ("en", "zh-Hant")`},
		{"en", 90, `"en": wants "src-tgt", each side "*" or a language with an optional script ("en", "zh-Hant")`},
		{"en-GB-de", 90, `"en-GB-de": wants "src-tgt", each side "*" or a language with an optional script ("en", "zh-Hant")`},
		{"en-xx1", 90, `"en-xx1": wants "src-tgt", each side "*" or a language with an optional script ("en", "zh-Hant")`},
	} {
		_, err := translate.New(translate.WithEngine(fake.New("a"), translate.Profile{PairQuality: map[string]float64{tc.key: tc.q}}))
		var e *translate.Error
		if want := "config: WithEngine[0].Profile.PairQuality " + tc.want; !errors.As(err, &e) || e.Kind != translate.KindInvalidInput || e.Message != want {
			t.Errorf("New with %q: %v, want %q", tc.key, err, want)
		}
		if math.IsNaN(tc.q) {
			continue // a file cannot hold NaN
		}
		all.Register()
		doc := fmt.Sprintf(`{"engines":[{"name":"a","type":"fake","profile":{"pair_quality":{%q:%v}}}]}`, tc.key, tc.q)
		_, err = translate.ParseConfig([]byte(doc))
		if want := "engines[0].profile.pair_quality: " + tc.want; !errors.As(err, &e) || e.Message != want {
			t.Errorf("ParseConfig(%s): %v, want %q", doc, err, want)
		}
	}
	for _, key := range []string{"en-de", "*-ja", "en-*", "zh-Hant-en", "en-zh-Hant/legal", "sr-Latn-sr-Cyrl"} {
		c, err := translate.New(translate.WithEngine(fake.New("a"), translate.Profile{PairQuality: map[string]float64{key: 0}}))
		if err != nil {
			t.Errorf("New with %q: %v", key, err)
			continue
		}
		c.Close()
	}
}

// A configuration file carries pair_quality, and writing the Config back keeps it.
func TestPairQualityInConfigFile(t *testing.T) {
	all.Register()
	doc := `{"engines":[{"name":"a","type":"fake","profile":{"pair_quality":{"en-de":91.5,"*-ja/legal":70}}}]}`
	cfg, err := translate.ParseConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"en-de": 91.5, "*-ja/legal": 70}
	if diff := cmp.Diff(want, cfg.Engines[0].Profile.PairQuality, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("pair_quality (-want +got):\n%s", diff)
	}
	out, err := cfg.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	again, err := translate.ParseConfig(out)
	if err != nil {
		t.Fatalf("ParseConfig(MarshalJSON()) = %v\n%s", err, out)
	}
	if diff := cmp.Diff(want, again.Engines[0].Profile.PairQuality); diff != "" {
		t.Errorf("pair_quality after a round trip (-want +got):\n%s", diff)
	}
}

// The pair lookup allocates nothing: a miss over 8 engines, each with PairQuality (one key
// of which names the request's pair), allocates once, its Result, as without PairQuality.
func TestPairQualityAllocatesNothing(t *testing.T) {
	opts := []translate.Option{translate.WithSeed(1), translate.WithoutCache()}
	for i := range 8 {
		p := translate.Profile{PairQuality: map[string]float64{"en-es": float64(60 + i), "*-ja": 90, "en-de/legal": 95}}
		opts = append(opts, translate.WithEngine(&named{*newNoop(), fmt.Sprint("e", i)}, p))
	}
	c := newClient(t, opts...)
	if got := allocsPerRequest(t, c, benchReq); got > 1 && !raceEnabled {
		t.Errorf("a miss with PairQuality allocates %.2f times, want 1", got)
	}
}

// Reconfigure brings in new figures: an evaluation's pair_quality loaded into the running
// configuration moves a pair's traffic at the next request.
func TestPairQualityReconfigure(t *testing.T) {
	all.Register()
	parse := func(doc string) *translate.Config {
		cfg, err := translate.ParseConfig([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	c := newClient(t, translate.WithClock(newClock()),
		translate.WithConfig(parse(`{"engines":[{"name":"a","type":"fake"},{"name":"b","type":"fake"}]}`)),
		translate.WithoutCache()) // after WithConfig, whose cache section would turn it back on
	de := func(i int) translate.Request {
		return translate.Request{Text: fmt.Sprint("text ", i), Source: "en", Target: "de"}
	}
	if got := shares(t, c, 2000, de); math.Abs(got["a"]-0.5) > 0.04 {
		t.Fatalf("before: share of a = %.3f, want 0.5", got["a"])
	}
	measured := parse(`{"engines":[{"name":"a","type":"fake","profile":{"pair_quality":{"en-de":95}}},` +
		`{"name":"b","type":"fake","profile":{"pair_quality":{"en-de":60}}}]}`)
	if err := c.Reconfigure(measured); err != nil {
		t.Fatal(err)
	}
	want := math.Exp(14/translate.DefaultTemperature) / (1 + math.Exp(14/translate.DefaultTemperature))
	if got := shares(t, c, 2000, de); math.Abs(got["a"]-want) > 0.04 {
		t.Errorf("after: share of a = %.3f, want %.3f", got["a"], want)
	}
}
