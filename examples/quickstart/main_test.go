package main

import (
	"context"
	"flag"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		argv    []string
		want    args
		wantErr string
	}{
		{argv: nil, want: args{text: defaultText, from: "en", to: "es", n: 300}},
		{argv: []string{"-to", "fr", "-n", "0", "Good", "morning"}, want: args{text: "Good morning", from: "en", to: "fr", n: 0}},
		{argv: []string{"-config", "c.json", "hi"}, want: args{text: "hi", from: "en", to: "es", n: 300, config: "c.json"}},
		{argv: []string{"-n", "-5", "hi"}, wantErr: "-n must be 0 or more"},
		{argv: []string{""}, wantErr: "empty"},
		{argv: []string{" ", "\t"}, wantErr: "empty"},
	} {
		fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		got, err := parseArgs(fs, tc.argv)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseArgs(%q) = %v, want an error with %q", tc.argv, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseArgs(%q): %v", tc.argv, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(args{})); diff != "" {
			t.Errorf("parseArgs(%q) (-want +got):\n%s", tc.argv, diff)
		}
	}
}

func TestEngineNote(t *testing.T) {
	if got := engineNote(0, 3); !strings.HasPrefix(got, "These are simulated engines") {
		t.Errorf("simulated only: %q", got)
	}
	if got := engineNote(1, 3); strings.Contains(got, "These are simulated") || !strings.Contains(got, "Apertium is a real engine") {
		t.Errorf("local Apertium beside simulated engines: %q", got)
	}
	if got := engineNote(2, 0); got != "" {
		t.Errorf("vendor engines only: %q", got)
	}
}

func TestSummaryTarget(t *testing.T) {
	for to, want := range map[string]string{"fr": "fr", "zh-TW": "zh-TW", "en": "es", "en-GB": "es"} {
		if got := summaryTarget(to); got != want {
			t.Errorf("summaryTarget(%q) = %q, want %q", to, got, want)
		}
	}
}

// TestSummary: English texts go out as English, and failed requests are counted with their
// reasons and their failed attempts.
func TestSummary(t *testing.T) {
	down := fake.New("down")
	down.Down(translate.KindUnavailable)
	c, err := translate.New(translate.WithEngine(down, translate.Profile{}),
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1, MaxAttempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out strings.Builder
	summary(context.Background(), &out, c, "de", 5)
	if !regexp.MustCompile(`5 English texts to de .* 5 failed \(5 [a-z_]+\)`).MatchString(out.String()) {
		t.Errorf("summary does not give the failures with a reason:\n%s", out.String())
	}
	if !regexp.MustCompile(`(?m)^\s+down\s+0\.0%\s+0\s+5\s`).MatchString(out.String()) {
		t.Errorf("the failed requests' attempts are not counted:\n%s", out.String())
	}
	for _, r := range down.Requests() {
		if r.Source.String() != "en" {
			t.Errorf("a summary text went out as %s, want en", r.Source)
		}
	}
}
