package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		argv    []string
		want    args
		wantErr string
	}{
		{argv: nil, want: args{from: "en", to: "es", conc: 4, progress: "auto"}},
		{argv: []string{"-to", "fr", "-conc", "2", "-progress", "off", "notes.txt"}, want: args{file: "notes.txt", from: "en", to: "fr", conc: 2, progress: "off"}},
		{argv: []string{"-"}, want: args{file: "-", from: "en", to: "es", conc: 4, progress: "auto"}},
		{argv: []string{"-conc", "0"}, wantErr: "-conc must be 1 or more"},
		{argv: []string{"a.txt", "b.txt"}, wantErr: "one file at a time"},
		{argv: []string{"-progress", "loud"}, wantErr: "-progress must be"},
	} {
		fs := flag.NewFlagSet("stream", flag.ContinueOnError)
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

// simulatedOutput is what the fake engines make of text whose paragraphs are apart by
// "\n\n": "[es] " before every paragraph, the layout kept.
func simulatedOutput(text string) string {
	return regexp.MustCompile(`(^|\n\n)(\S)`).ReplaceAllString(text, "$1[es] $2")
}

// runSimulated runs the program on the simulated engines in virtual time (synctest), so
// that the simulated latencies are exact and the progress it prints is the same on every
// run, however busy the machine.
func runSimulated(t *testing.T, a args, stdin io.Reader) (stdout, stderr string, err error) {
	synctest.Test(t, func(t *testing.T) {
		var out, errw strings.Builder
		err = run(context.Background(), a, simulated(25*time.Millisecond), stdin, &out, &errw)
		stdout, stderr = out.String(), errw.String()
	})
	return stdout, stderr, err
}

// TestSample runs the program as `stream -progress lines` does with no vendor keys: the
// sample comes out translated with its layout, and the progress tells each segment as it
// is done, in order, and the segment whose stream broke off and was replaced.
func TestSample(t *testing.T) {
	a := args{from: "en", to: "es", conc: 4, progress: "lines"}
	stdout, stderr, err := runSimulated(t, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := simulatedOutput(sample); stdout != want {
		t.Errorf("standard output:\n%s\nwant:\n%s", stdout, want)
	}
	want := `Translating the built-in sample (1101 characters) from en to es, up to 4 segments at a time.
  engine llm (simulated; streams a word every 25ms, breaks off half-way on one text in four)
  engine steady (simulated; last resort, answers whole segments)
These are simulated engines: their answers are not real translations.
  segment 0 done at 200ms by llm, streamed in N partial chunks
  segment 1: the stream from llm broke off after 95 characters; a new answer from steady replaces it
  segment 1 done at 725ms by steady, streamed in N partial chunks
  segment 2 done at 925ms by llm, streamed in N partial chunks
  segment 3 done at 1.025s by llm, streamed in N partial chunks
  segment 4 done at 1.175s by llm, streamed in N partial chunks
  segment 5 done at 1.75s by llm, streamed in N partial chunks
  segment 6 done at 1.75s by llm
Done: 7 segments (1123 characters) in 1.75s, the first after 200ms; by engine: llm 6, steady 1; streams replaced mid-way: 1.
`
	// How many partial chunks show depends on whether a word lands in the same instant
	// as the segment before is done: the count is not fixed.
	stderr = regexp.MustCompile(`streamed in \d+ partial`).ReplaceAllString(stderr, "streamed in N partial")
	if diff := cmp.Diff(want, stderr); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

// TestSampleOneAtATime: with -conc 1 every segment streams while it is at the top, so every
// one shows partial chunks, and the whole takes longer than with 4 at a time.
func TestSampleOneAtATime(t *testing.T) {
	stdout, stderr, err := runSimulated(t, args{from: "en", to: "es", conc: 1, progress: "lines"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := simulatedOutput(sample); stdout != want {
		t.Errorf("standard output:\n%s\nwant:\n%s", stdout, want)
	}
	done := regexp.MustCompile(`(?m)^  segment (\d) done at .* by \w+, streamed in \d+ partial chunks$`).FindAllStringSubmatch(stderr, -1)
	if len(done) != 7 {
		t.Fatalf("%d segments done with partial chunks, want 7:\n%s", len(done), stderr)
	}
	for i, m := range done {
		if m[1] != fmt.Sprint(i) {
			t.Errorf("segment %s done in place %d", m[1], i)
		}
	}
	total := regexp.MustCompile(`in (\S+), the first`).FindStringSubmatch(stderr)
	if d, err := time.ParseDuration(total[1]); err != nil || d <= 1750*time.Millisecond {
		t.Errorf("one at a time took %s, want longer than 4 at a time (1.75s)", total[1])
	}
}

// TestLive: live progress rewrites one line in place with the segment being written, and
// clears it before every other line.
func TestLive(t *testing.T) {
	_, stderr, err := runSimulated(t, args{from: "en", to: "es", conc: 1, progress: "live"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "\r\033[K  segment 0 · llm · [es] Streaming a") {
		t.Errorf("no live line for segment 0:\n%q", stderr)
	}
	for _, line := range strings.Split(stderr, "\n") {
		pieces := strings.Split(line, "\r\033[K")
		if last := pieces[len(pieces)-1]; strings.Contains(last, " · ") && strings.Contains(last, " done at ") {
			t.Errorf("a line printed over a live line without clearing it: %q", last)
		}
	}
	if strings.Count(stderr, " · ") < 20 {
		t.Errorf("%d live updates, want one per partial chunk", strings.Count(stderr, " · "))
	}
}

func TestFileAndStandardInput(t *testing.T) {
	const text = "First line.\n\nSecond paragraph,\nwith two lines.\n"
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]args{
		"file":  {file: path, from: "en", to: "es", conc: 2, progress: "off"},
		"stdin": {file: "-", from: "en", to: "es", conc: 2, progress: "off"},
	} {
		stdout, stderr, err := runSimulated(t, a, strings.NewReader(text))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Short paragraphs are merged into one segment (one call), answered as one.
		if want := "[es] " + text; stdout != want || stderr != "" {
			t.Errorf("%s: stdout %q, stderr %q; want %q and nothing", name, stdout, stderr, want)
		}
	}
}

func TestNothingToTranslate(t *testing.T) {
	blank := filepath.Join(t.TempDir(), "blank.txt")
	if err := os.WriteFile(blank, []byte(" \n\n\t"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{blank, filepath.Join(t.TempDir(), "missing.txt")} {
		_, _, err := runSimulated(t, args{file: file, from: "en", to: "es", conc: 1, progress: "lines"}, nil)
		if err == nil {
			t.Errorf("%s: no error", file)
		}
	}
}

// TestCtrlC: canceling the context (as Ctrl-C does) ends the run at once with the
// context's error, after the segments already shown.
func TestCtrlC(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(500*time.Millisecond, cancel)
		var out, errw strings.Builder
		t0 := time.Now()
		err := run(ctx, args{from: "en", to: "es", conc: 4, progress: "lines"}, simulated(25*time.Millisecond), nil, &out, &errw)
		if err != context.Canceled {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if d := time.Since(t0); d != 500*time.Millisecond {
			t.Errorf("the run ended %v after the start, want at the cancel (500ms)", d)
		}
		if want := simulatedOutput(strings.SplitAfter(sample, "\n\n")[0]); out.String() != want {
			t.Errorf("standard output %q, want segment 0 only (%q)", out.String(), want)
		}
		if !strings.Contains(errw.String(), "segment 1 failed after 500ms: context canceled") {
			t.Errorf("progress does not tell of the cancel:\n%s", errw.String())
		}
	})
}

// TestRealOpenAI runs the program as it runs with OPENAI_API_KEY, OPENAI_MODEL and
// OPENAI_BASE_URL set, against a local server that streams its answers as the API does
// (server-sent events, data: [DONE]).
func TestRealOpenAI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) != 2 {
			t.Errorf("request: %v", err)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, word := range strings.SplitAfter("«"+body.Messages[1].Content+"»", " ") {
			b, _ := json.Marshal(map[string]any{"object": "chat.completion.chunk",
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": word}}}})
			fmt.Fprintf(w, ": keep-alive\n\ndata: %s\n\n", b)
			http.NewResponseController(w).Flush()
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	env := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_MODEL": "test-model", "OPENAI_BASE_URL": srv.URL + "/v1"}
	var warnings strings.Builder
	st := fromEnvironment(func(k string) string { return env[k] }, &warnings)
	if st.simulated || warnings.Len() > 0 || len(st.used) != 1 || !strings.Contains(st.used[0], "streams") {
		t.Fatalf("setup %+v, warnings %q; want the OpenAI engine alone, streaming", st, warnings.String())
	}
	const text = "One paragraph here.\n\nAnother one there.\n"
	path := filepath.Join(t.TempDir(), "two.txt")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errw strings.Builder
	if err := run(context.Background(), args{file: path, from: "en", to: "es", conc: 2, progress: "lines"}, st, nil, &out, &errw); err != nil {
		t.Fatal(err)
	}
	// The two short paragraphs are merged into one segment: one call, one chunk.
	if want := "«One paragraph here.\n\nAnother one there.»\n"; out.String() != want {
		t.Errorf("standard output %q, want %q", out.String(), want)
	}
	if strings.Contains(errw.String(), "simulated") || !strings.Contains(errw.String(), "segment 0 done at") {
		t.Errorf("progress:\n%s", errw.String())
	}
}

func TestEnvironmentWarnings(t *testing.T) {
	var w strings.Builder
	st := fromEnvironment(func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-secret-value"
		}
		return ""
	}, &w)
	if !st.simulated || !strings.Contains(w.String(), "OPENAI_MODEL") || strings.Contains(w.String(), "sk-secret") {
		t.Errorf("simulated %v, warnings %q: want the simulated engines and a warning without the key", st.simulated, w.String())
	}
}
