package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// dummyCredentials sets the variables translate.json reads to dummy values.
func dummyCredentials(t *testing.T) {
	for _, name := range []string{"DEEPL_AUTH_KEY", "MS_TRANSLATOR_KEY", "OPENAI_API_KEY"} {
		t.Setenv(name, "dummy-"+strings.ToLower(name))
	}
}

// TestSampleParses: the commented sample is a valid configuration, and a Client runs on
// it once its engines are swapped for simulated ones of the same names (the real ones
// would call the vendors).
func TestSampleParses(t *testing.T) {
	all.Register()
	dummyCredentials(t)
	cfg, err := translate.LoadConfig("translate.json")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range cfg.Engines {
		names = append(names, e.Name)
	}
	if strings.Join(names, " ") != "deepl microsoft gpt libre" || cfg.Breaker.FailureRatio != 0.5 || cfg.Probes == nil {
		t.Fatalf("translate.json parsed as engines %v, %+v", names, cfg)
	}
	for i := range cfg.Engines {
		cfg.Engines[i].Type, cfg.Engines[i].Settings = "fake", nil
	}
	c, err := translate.New(translate.WithConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Translate(context.Background(), translate.Request{Text: "hello", Source: "en", Target: "es"})
	if err != nil || res.Text != "[es] hello" {
		t.Fatalf("Translate = %+v, %v", res, err)
	}
	if len(c.Engines()) != 4 {
		t.Errorf("Engines() = %+v, want the file's 4", c.Engines())
	}
}

// TestSampleRejectsIncident: the sample with the seed's incident (failure_ratio 0.1) or a
// missing credential is refused with the JSON path.
func TestSampleRejectsIncident(t *testing.T) {
	all.Register()
	dummyCredentials(t)
	data, err := os.ReadFile("translate.json")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), `"failure_ratio": 0.5`, `"failure_ratio": 0.1`, 1)
	if _, err := translate.ParseConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "breaker.failure_ratio: must be within 0.2..0.9") {
		t.Errorf("ParseConfig(failure_ratio 0.1) = %v", err)
	}
	os.Unsetenv("OPENAI_API_KEY")
	if _, err := translate.ParseConfig(data); err == nil || !strings.Contains(err.Error(), "engines[2].settings.api_key: environment variable OPENAI_API_KEY is not set") {
		t.Errorf("ParseConfig without OPENAI_API_KEY = %v", err)
	}
}

func TestRunSimulated(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"-config", "simulated.json", "hello"}, &out, &errOut); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "] hello  (engine ") {
		t.Errorf("output %q", out.String())
	}
}
