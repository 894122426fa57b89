package main

import (
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBanner: the banner names the address and the engines, and says loudly when they are
// simulated: all of them (no vendor keys) or some (from the configuration file).
func TestBanner(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	names := []string{"deepl", "sim-free"}
	for _, tc := range []struct {
		simulated, configured bool
		want                  string
	}{
		{true, false, "no vendor keys in the environment: serving SIMULATED engines [deepl sim-free] (answers are not real translations)"},
		{true, true, `engines: [deepl sim-free]; SIMULATED ones among them (type "simulated") give no real translations`},
		{false, true, "engines: [deepl sim-free]"},
		{false, false, "engines: [deepl sim-free]"},
	} {
		var out strings.Builder
		banner(&out, addr, engineSet{names: names, simulated: tc.simulated}, tc.configured)
		want := "translate server listening on http://127.0.0.1:8080\n" + tc.want + "\n"
		if diff := cmp.Diff(want, out.String()); diff != "" {
			t.Errorf("simulated %v, configured %v (-want +got):\n%s", tc.simulated, tc.configured, diff)
		}
	}
}
