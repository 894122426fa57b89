package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/eval"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// With no Apertium the command runs the shipped set on its simulated engines, prints the
// table and the figures, writes the files asked for, and a second run with the same
// results file asks nothing again.
func TestRunSimulated(t *testing.T) {
	dir := t.TempDir()
	argv := []string{"-json", filepath.Join(dir, "r.json"), "-svg", filepath.Join(dir, "c.svg"),
		"-quality", filepath.Join(dir, "q.json"), "-results", filepath.Join(dir, "run.jsonl")}
	a, err := parseArgs(flag.NewFlagSet("eval", flag.ContinueOnError), argv)
	if err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	if err := run(t.Context(), a, env(map[string]string{"APERTIUM_LOCAL": "off"}), &out, &errw); err != nil {
		t.Fatalf("run: %v\n%s", err, errw.String())
	}
	for _, want := range []string{
		"   pair      scene     engine  items  errors   chrF2    BLEU  judge    cost",
		"  en-es          *  reference     24       0  100.00  100.00      -  0.0000",
		`"en-es/tech": 100`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errw.String(), "144/144") || !strings.Contains(errw.String(), "no Apertium") {
		t.Errorf("stderr = %q, want the progress to 144/144 and the note on simulated engines", errw.String())
	}
	checkFiles(t, dir)
	errw.Reset()
	out.Reset()
	if err := run(t.Context(), a, env(map[string]string{"APERTIUM_LOCAL": "off"}), &out, &errw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(errw.String(), "/144") {
		t.Errorf("the resumed run asked again: %q", errw.String())
	}
	if !strings.Contains(out.String(), "  en-es          *  reference     24       0  100.00  100.00") {
		t.Errorf("the resumed run's table:\n%s", out.String())
	}
}

// checkFiles checks the report, chart and figures written in dir.
func checkFiles(t *testing.T, dir string) {
	t.Helper()
	var r eval.Report
	if data, err := os.ReadFile(filepath.Join(dir, "r.json")); err != nil || json.Unmarshal(data, &r) != nil || len(r.Scores) != 24 {
		t.Errorf("r.json: %d scores (%v), want 24", len(r.Scores), err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "c.svg")); err != nil || !bytes.HasPrefix(data, []byte("<svg")) {
		t.Errorf("c.svg: %.40q (%v)", data, err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "q.json")); err != nil || !bytes.Contains(data, []byte(`"pair_quality"`)) {
		t.Errorf("q.json: %s (%v)", data, err)
	}
}

func TestArgs(t *testing.T) {
	for _, bad := range [][]string{{"-metric", "meteor"}, {"-judge-url", "http://x"}, {"extra"}} {
		if _, err := parseArgs(flag.NewFlagSet("eval", flag.ContinueOnError), bad); err == nil {
			t.Errorf("parseArgs(%q) accepted", bad)
		}
	}
}

// With -config and -apply the configuration comes back with the measured pair_quality.
func TestApplyToConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "translate.json")
	doc := `{"engines":[{"name":"fa","type":"fake"},{"name":"fb","type":"fake","profile":{"quality":70}}]}`
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "measured.json")
	a, err := parseArgs(flag.NewFlagSet("eval", flag.ContinueOnError), []string{"-config", cfg, "-engines", "fb", "-apply", out})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, errw bytes.Buffer
	if err := run(t.Context(), a, env(nil), &stdout, &errw); err != nil {
		t.Fatalf("run: %v\n%s", err, errw.String())
	}
	c, err := translate.LoadConfig(out)
	if err != nil {
		t.Fatal(err)
	}
	if pq := c.Engines[1].Profile.PairQuality; len(pq) != 9 || c.Engines[1].Profile.Quality != 70 || c.Engines[0].Profile.PairQuality != nil {
		t.Errorf("measured config: fa %+v, fb %+v; want fb's quality kept and 9 pair_quality figures, fa untouched", c.Engines[0].Profile, c.Engines[1].Profile)
	}
}
