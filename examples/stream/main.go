// Command stream translates a text file with translate.Client.TranslateStream and shows
// progress as the chunks arrive. The translated document goes to standard output segment
// by segment, in source order, as soon as each segment and every one before it is done;
// standard error tells when each segment was done and by which engine, and when a stream
// broke mid-way and another answer replaced it. On a terminal, standard error also shows
// the segment being written, word by word, while a streaming engine writes it.
//
// With no vendor settings in the environment it translates a built-in sample on simulated
// engines from engines/fake: "llm" streams its answers word by word and breaks off mid-way
// on one text in four (chosen by a hash of the text, so a run is repeatable); "steady", a
// last-resort engine, answers what llm could not. Set OPENAI_API_KEY + OPENAI_MODEL
// [+ OPENAI_BASE_URL] for a real streaming LLM, and DEEPL_AUTH_KEY or GOOGLE_API_KEY for real
// engines that answer whole segments.
//
//	go run ./examples/stream                  # the built-in sample
//	go run ./examples/stream -to fr notes.txt
//	go run ./examples/stream - < notes.txt    # standard input
//
// Press Ctrl-C to stop: the work in flight stops at once.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fanyi-go/translate"
)

//go:embed sample.txt
var sample string

func main() {
	flag.Usage = usage
	a, err := parseArgs(flag.CommandLine, os.Args[1:])
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "stream:", err)
		}
		os.Exit(2)
	}
	if a.progress == "auto" {
		a.progress = "lines"
		if isTerminal(os.Stderr) {
			a.progress = "live"
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	st := fromEnvironment(os.Getenv, os.Stderr)
	if err := run(ctx, a, st, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "stream:", err)
		os.Exit(1)
	}
}

type args struct {
	file     string // the text file; "-" is standard input, "" the built-in sample
	from, to string
	conc     int    // segments translated at once
	progress string // auto, live, lines or off
}

// parseArgs reads the flags and the file name from the command line into fs.
func parseArgs(fs *flag.FlagSet, argv []string) (args, error) {
	var a args
	fs.StringVar(&a.from, "from", "en", "source language (BCP 47); empty means detect")
	fs.StringVar(&a.to, "to", "es", "target language (BCP 47)")
	fs.IntVar(&a.conc, "conc", 4, "segments translated at once")
	fs.StringVar(&a.progress, "progress", "auto", "progress on standard error: live (the segment being written, in place), lines, off; auto is live on a terminal")
	if err := fs.Parse(argv); err != nil {
		return a, err
	}
	switch {
	case a.conc < 1:
		return a, fmt.Errorf("-conc must be 1 or more, not %d", a.conc)
	case fs.NArg() > 1:
		return a, fmt.Errorf("one file at a time, not %d", fs.NArg())
	}
	switch a.progress {
	case "auto", "live", "lines", "off":
	default:
		return a, fmt.Errorf("-progress must be auto, live, lines or off, not %q", a.progress)
	}
	a.file = fs.Arg(0)
	return a, nil
}

func usage() {
	fmt.Fprintf(os.Stderr, `usage: stream [-from en] [-to es] [-conc 4] [-progress auto] [file | -]

Translates the file (standard input for -, a built-in sample when none is given) and
writes the translation to standard output as it arrives; progress goes to standard error.
Real engines are used when their settings are in the environment:
  OPENAI_API_KEY + OPENAI_MODEL [+ OPENAI_BASE_URL] (streams), DEEPL_AUTH_KEY, GOOGLE_API_KEY
Without them it runs on simulated engines (engines/fake).

`)
	flag.PrintDefaults()
}

// readText returns the text to translate and a name for it.
func readText(file string, stdin io.Reader) (text, name string, err error) {
	var b []byte
	switch file {
	case "":
		return sample, "the built-in sample", nil
	case "-":
		name = "standard input"
		b, err = io.ReadAll(stdin)
	default:
		name = file
		b, err = os.ReadFile(file)
	}
	if err != nil {
		return "", "", err
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", "", fmt.Errorf("%s: nothing to translate", name)
	}
	return string(b), name, nil
}

// run translates the text a names with the engines of st, writing the translation to
// stdout as it arrives and progress to stderr.
func run(ctx context.Context, a args, st setup, stdin io.Reader, stdout, stderr io.Writer) error {
	text, name, err := readText(a.file, stdin)
	if err != nil {
		return err
	}
	c, err := translate.New(append(st.opts, translate.WithBatchConcurrency(a.conc))...)
	if err != nil {
		return err
	}
	defer c.Close()
	p := newProgress(stderr, a.progress)
	p.start(name, utf8.RuneCountInString(text), a, st)
	req := translate.Request{Text: text, Source: a.from, Target: a.to}
	for ch, err := range c.TranslateStream(ctx, req) {
		if err != nil {
			p.failed(ch.Segment, err)
			return err
		}
		if ch.Partial {
			p.partial(ch)
			continue
		}
		p.final(ch)
		if _, err := io.WriteString(stdout, ch.Text); err != nil {
			return err // a closed pipe: breaking out of the loop stops the work
		}
	}
	p.end()
	return nil
}

// isTerminal reports whether f is a terminal (a character device).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// since is how long ago t0 was, rounded for people.
func since(t0 time.Time) time.Duration { return time.Since(t0).Round(time.Millisecond) }
