// Command config runs a translate.Client from a configuration file, and with -watch keeps
// following the file as it changes.
//
//	go run ./examples/config -config examples/config/simulated.json "hello world"
//	go run ./examples/config -config examples/config/simulated.json -watch
//	DEEPL_AUTH_KEY=... MS_TRANSLATOR_KEY=... OPENAI_API_KEY=... \
//	    go run ./examples/config -config examples/config/translate.json "hello world"
//
// translate.json is a commented sample of every section (see README.md); simulated.json
// runs on simulated engines, without credentials or network.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "examples/config/translate.json", "configuration file")
	watch := fs.Bool("watch", false, "keep running and apply changes of the file (Ctrl-C stops)")
	from := fs.String("from", "en", "source language")
	to := fs.String("to", "es", "target language")
	if err := fs.Parse(args); err != nil {
		return err
	}
	text := strings.Join(fs.Args(), " ")
	if text == "" {
		text = "hello world"
	}

	// The three lines an application needs: register the bundled adapters by type, read
	// the file, build the Client from it (options after WithConfig override the file).
	all.Register()
	cfg, err := translate.LoadConfig(*path)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c, err := translate.New(translate.WithConfig(cfg), translate.WithLogger(logger))
	if err != nil {
		return err
	}
	defer c.Close()

	translateOnce := func() {
		res, err := c.Translate(ctx, translate.Request{Text: text, Source: *from, Target: *to})
		if err != nil {
			fmt.Fprintln(stdout, "error:", err)
			return
		}
		fmt.Fprintf(stdout, "%s  (engine %s, %v)\n", res.Text, res.Engine, res.Latency.Round(time.Millisecond))
	}
	translateOnce()
	if !*watch {
		return nil
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- translate.WatchConfig(ctx, c, *path) }()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		case <-tick.C:
			translateOnce()
		}
	}
}
