package main

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/language"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/apertium"
	"github.com/fanyi-go/translate/engines/deepl"
	"github.com/fanyi-go/translate/engines/fake"
	"github.com/fanyi-go/translate/engines/google"
	"github.com/fanyi-go/translate/engines/libretranslate"
	"github.com/fanyi-go/translate/engines/openai"
)

// engineSpec is one engine with its routing profile.
type engineSpec struct {
	engine  translate.Engine
	profile translate.Profile
}

// profiled is what every adapter in engines/ provides besides translate.Engine.
type profiled interface {
	translate.Engine
	Profile() translate.Profile
}

// buildEngines returns the engines whose settings are in the environment, or simulated
// engines when there are none (simulated is then true). warnings name engines left out
// because their settings are incomplete or rejected; they never quote a value.
func buildEngines(getenv func(string) string, simLatency time.Duration) (specs []engineSpec, simulated bool, warnings []string) {
	add := func(source string, e profiled, err error) {
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: %v", source, err))
			return
		}
		specs = append(specs, engineSpec{e, e.Profile()})
	}
	if getenv("DEEPL_AUTH_KEY") != "" {
		e, err := deepl.New(getenv("DEEPL_AUTH_KEY"))
		add("DEEPL_AUTH_KEY", e, err)
	}
	if getenv("GOOGLE_API_KEY") != "" {
		e, err := google.New(getenv("GOOGLE_API_KEY"))
		add("GOOGLE_API_KEY", e, err)
	}
	switch key, model := getenv("OPENAI_API_KEY"), getenv("OPENAI_MODEL"); {
	case key != "" && model != "":
		var opts []openai.Option
		if u := getenv("OPENAI_BASE_URL"); u != "" {
			opts = append(opts, openai.WithBaseURL(u))
		}
		e, err := openai.New(key, model, opts...)
		add("OPENAI_API_KEY+OPENAI_MODEL", e, err)
	case key != "" || model != "":
		warnings = append(warnings, "OPENAI_API_KEY+OPENAI_MODEL: only one of the two is set")
	}
	if getenv("LIBRETRANSLATE_URL") != "" {
		e, err := libretranslate.New(getenv("LIBRETRANSLATE_URL"), getenv("LIBRETRANSLATE_API_KEY"))
		add("LIBRETRANSLATE_URL", e, err)
	}
	if getenv("APERTIUM_URL") != "" {
		e, err := apertium.New(getenv("APERTIUM_URL"))
		add("APERTIUM_URL", e, err)
	}
	if len(specs) > 0 {
		return specs, false, warnings
	}
	return simulatedEngines(simLatency), true, warnings
}

// simulatedEngines are three in-process engines (engines/fake) with different quality, speed
// and price, so that routing, failover and the metrics show something without vendor keys.
// They know a few phrases and otherwise answer "[<target>] <text>".
// extra is added to every engine's latency; with it, their timeout grows by as much.
func simulatedEngines(extra time.Duration) []engineSpec {
	tr := fake.WithTranslator(phrasebook)
	timeout := 5*time.Second + extra
	return []engineSpec{
		{fake.New("sim-premium", tr, fake.WithLatency(3*time.Millisecond+extra)),
			translate.Profile{Quality: 92, CostPerMillion: 20, Timeout: timeout}},
		{fake.New("sim-standard", tr, fake.WithLatency(5*time.Millisecond+extra)),
			translate.Profile{Quality: 84, CostPerMillion: 10, Timeout: timeout}},
		{fake.New("sim-free", tr, fake.WithLatency(8*time.Millisecond+extra)),
			translate.Profile{Quality: 72, Class: translate.ClassFree, Timeout: timeout}},
	}
}

var phrases = map[string]map[string]string{
	"zh": {"it rains cats and dogs.": "下着倾盆大雨。", "the house is red.": "房子是红色的。"},
	"es": {"it rains cats and dogs.": "Llueve a cántaros.", "the house is red.": "La casa es roja."},
	"fr": {"it rains cats and dogs.": "Il pleut des cordes.", "the house is red.": "La maison est rouge."},
}

func phrasebook(text string, _, target language.Tag) string {
	base, _ := target.Base()
	if t, ok := phrases[base.String()][strings.ToLower(strings.TrimSpace(text))]; ok {
		return t
	}
	return "[" + target.String() + "] " + text
}

// simulatedType is the engine type of simulated engines in a configuration file:
//
//	{"name": "sim", "type": "simulated", "settings": {"latency": "5ms"}, "profile": {"quality": 84}}
const simulatedType = "simulated"

var registerOnce sync.Once

// registerSimulated registers simulatedType with translate.RegisterEngineType, once per
// process (registering a type twice panics).
func registerSimulated() {
	registerOnce.Do(func() {
		translate.RegisterEngineType(simulatedType, func(ec translate.EngineConfig) (translate.Engine, error) {
			var latency time.Duration
			for k, v := range ec.Settings {
				if k != "latency" {
					return nil, &translate.Error{Kind: translate.KindInvalidInput, Message: "settings." + k + ": unknown setting (simulated engines take only latency)"}
				}
				d, err := time.ParseDuration(v)
				if err != nil || d < 0 {
					return nil, &translate.Error{Kind: translate.KindInvalidInput, Message: "settings.latency: want a duration such as \"5ms\""}
				}
				latency = d
			}
			return fake.New(ec.Name, fake.WithTranslator(phrasebook), fake.WithLatency(latency)), nil
		})
	})
}
