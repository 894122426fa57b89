package translate_test

import (
	"strings"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
)

// TestReconfigureMemorySection: the translation memory is New's; a config whose memory
// section asks for another (on, off, other bounds, threshold or FuzzyFirst) is applied but
// for that section, and a warning names the fields that were not; the defaults spelt out
// warn of nothing.
func TestReconfigureMemorySection(t *testing.T) {
	all.Register()
	file := func(memory string) *translate.Config {
		t.Helper()
		if memory != "" {
			memory = `, "memory": ` + memory
		}
		cfg, err := translate.ParseConfig([]byte(`{"engines": [{"name": "e", "type": "fake"}]` + memory + `}`))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	for _, tc := range []struct {
		name, running, next string
		want                string // the fields named; "" for no warning
	}{
		{"none", ``, ``, ""},
		{"same", `{"max_entries": 10}`, `{"max_entries": 10}`, ""},
		{"defaults, spelt out", `{}`, `{"max_entries": 10000, "max_bytes": 33554432, "threshold": 0.95}`, ""},
		{"turned off", `{}`, ``, "fields=memory"},
		{"turned on", ``, `{}`, "fields=memory"},
		{"other bounds", `{"max_entries": 10}`, `{"max_bytes": 2048}`, `fields="memory.max_entries, memory.max_bytes"`},
		{"threshold and fuzzy first", `{}`, `{"threshold": 0.8, "fuzzy_first": true}`, `fields="memory.threshold, memory.fuzzy_first"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log telemetryLog
			c := newClient(t, translate.WithConfig(file(tc.running)), translate.WithLogger(newWarnLogger(&log)))
			if err := c.Reconfigure(file(tc.next)); err != nil {
				t.Fatalf("Reconfigure: %v", err)
			}
			warned := strings.Contains(log.String(), "memory section is not applied")
			if warned != (tc.want != "") || !strings.Contains(log.String(), tc.want) {
				t.Errorf("warnings %q, want one naming %s", log.String(), tc.want)
			}
		})
	}
}
