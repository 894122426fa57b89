package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// simulatedConfig is the sample file that runs without keys or network.
const simulatedConfig = "../config/simulated.json"

// incidentConfig writes the seed's incident, a breaker failure ratio of 0.1, into a file
// and returns its path.
func incidentConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "incident.json")
	const doc = `{"engines":[{"name":"swift","type":"fake"}],"breaker":{"failure_ratio":0.1}}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunConfig: with -config the engines and policies are the file's: every answer comes
// from one of its fake engines (their prefixes), and the engines are listed as the file's.
func TestRunConfig(t *testing.T) {
	var out bytes.Buffer
	a := args{text: "Good morning", from: "en", to: "es", n: 30, config: simulatedConfig}
	if err := run(a, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	var res jsonResult
	if err := json.NewDecoder(bytes.NewReader(out.Bytes())).Decode(&res); err != nil {
		t.Fatalf("the output does not start with the JSON result: %v\n%s", err, out.String())
	}
	if want := "[" + res.Engine + "] Good morning"; res.Text != want || !res.Simulated {
		t.Errorf("result %+v: want the text %q from one of the file's simulated engines", res, want)
	}
	if !slices.Contains([]string{"swift", "flaky", "backup"}, res.Engine) {
		t.Errorf("served by %q, not an engine of %s", res.Engine, simulatedConfig)
	}
	m := regexp.MustCompile(`(?s)\nEngines used:\n(.*?)\n\n`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no engine list in the output:\n%s", out.String())
	}
	var want []string
	for _, name := range []string{"swift", "flaky", "backup"} {
		want = append(want, "  - "+name+" (simulated, type fake, from "+simulatedConfig+")")
	}
	if diff := cmp.Diff(want, strings.Split(m[1], "\n")); diff != "" {
		t.Errorf("engines used (-want +got):\n%s", diff)
	}
	if !strings.Contains(out.String(), "30 English texts to es") || !strings.Contains(out.String(), "type fake") ||
		!strings.Contains(out.String(), `"env:NAME"`) {
		t.Errorf("no routing summary or no note on putting vendor engines in the file:\n%s", out.String())
	}
}

// TestRunConfigRejected: a file New would refuse (the seed's incident) is an error naming
// the file and the JSON path of the bad value, and nothing is translated.
func TestRunConfigRejected(t *testing.T) {
	path := incidentConfig(t)
	var out bytes.Buffer
	err := run(args{text: "hi", from: "en", to: "es", config: path}, &out)
	want := path + ": translate: invalid_input: breaker.failure_ratio: must be within 0.2..0.9"
	if err == nil || err.Error() != want {
		t.Errorf("run = %v, want %q", err, want)
	}
	if out.Len() != 0 {
		t.Errorf("a rejected file printed:\n%s", out.String())
	}
	if err := run(args{text: "hi", from: "en", to: "es", config: filepath.Join(t.TempDir(), "none.json")}, &out); err == nil ||
		!strings.Contains(err.Error(), "none.json") {
		t.Errorf("run with a missing file = %v, want an error naming it", err)
	}
}

// TestCommand builds the program and runs it as a user on a fresh machine would, with no
// vendor keys in the environment: from the sample file, from a rejected file (exit 1 and
// a one-line error) and with no arguments at all (the simulated engines, as always).
func TestCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the program")
	}
	bin := filepath.Join(t.TempDir(), "quickstart")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	runBin := func(argv ...string) (stdout, stderr string, code int) {
		cmd := exec.Command(bin, argv...)
		cmd.Env = []string{"PATH=/nonexistent", "HOME=" + t.TempDir()} // no keys, no local Apertium
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}

	stdout, stderr, code := runBin("-n", "20", "-config", simulatedConfig, "Good morning")
	if code != 0 || !regexp.MustCompile(`"text": "\[(swift|flaky|backup)\] Good morning"`).MatchString(stdout) {
		t.Errorf("-config %s: exit %d\nstdout:\n%s\nstderr:\n%s", simulatedConfig, code, stdout, stderr)
	}

	path := incidentConfig(t)
	stdout, stderr, code = runBin("-config", path, "Good morning")
	want := "quickstart: " + path + ": translate: invalid_input: breaker.failure_ratio: must be within 0.2..0.9\n"
	if code != 1 || stdout != "" || stderr != want {
		t.Errorf("-config with the incident: exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, want)
	}

	stdout, stderr, code = runBin("-n", "20")
	if code != 0 || !strings.Contains(stdout, `"text": "[es] `+defaultText+`"`) ||
		!strings.Contains(stdout, "These are simulated engines") || !strings.Contains(stdout, "DEEPL_AUTH_KEY") {
		t.Errorf("no arguments: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
