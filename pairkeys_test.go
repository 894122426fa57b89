package translate_test

import (
	"strings"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
	"github.com/fanyi-go/translate/engines/fake"
)

// TestPairQualityEquivalentKeysRefused: two PairQuality keys that name the same pair
// ("en-de" and "EN-DE") are a configuration error naming both, from New and from a file:
// otherwise which one applies changes from one New to the next (map order).
func TestPairQualityEquivalentKeysRefused(t *testing.T) {
	_, err := translate.New(translate.WithEngine(fake.New("a"),
		translate.Profile{PairQuality: map[string]float64{"en-de": 0, "EN-DE": 100}}))
	want := `config: WithEngine[0].Profile.PairQuality "en-de": names the same pair as "EN-DE"`
	if translate.KindOf(err) != translate.KindInvalidInput || !strings.Contains(err.Error(), want) {
		t.Errorf("New: %v, want %q", err, want)
	}
	all.Register()
	_, err = translate.ParseConfig([]byte(`{"engines": [{"name": "a", "type": "fake",
		"profile": {"pair_quality": {"en-Latn-de": 90, "en-de": 10}}}]}`))
	if want := `"en-de": names the same pair as "en-Latn-de"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ParseConfig: %v, want an error with %q", err, want)
	}
}
