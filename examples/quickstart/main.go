// Command quickstart translates the text given on the command line through a translate.Client
// and prints the result as JSON, then routes a few hundred more requests and prints a short
// routing summary.
//
// With no vendor settings in the environment it runs on simulated engines from engines/fake,
// one of them failing on a third of its calls, so you can watch retries and failover work.
// Set any of the variables listed by -help (DEEPL_AUTH_KEY, GOOGLE_API_KEY, ...) to use real
// engines instead; when apertium-apy is installed, a local Apertium server is started and
// used too.
//
// With -config it runs from a configuration file instead (translate.LoadConfig's format),
// its engines named by type: the bundled adapters ("deepl", "openai", "fake", ...) are
// registered with engines/all.
//
//	go run ./examples/quickstart "The house is red."
//	go run ./examples/quickstart -to fr -n 500 "Good morning"
//	go run ./examples/quickstart -config examples/config/simulated.json "Good morning"
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/text/language"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
	"github.com/fanyi-go/translate/engines/fake"
)

func main() {
	flag.Usage = usage
	a, err := parseArgs(flag.CommandLine, os.Args[1:])
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "quickstart:", err)
		}
		os.Exit(2)
	}
	if err := run(a, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

type args struct {
	text, from, to string
	n              int
	config         string // configuration file; "" means engines from the environment
}

// parseArgs reads the flags and the text from the command line into fs.
func parseArgs(fs *flag.FlagSet, argv []string) (args, error) {
	var a args
	fs.StringVar(&a.from, "from", "en", "source language (BCP 47); empty means detect")
	fs.StringVar(&a.to, "to", "es", "target language (BCP 47)")
	fs.IntVar(&a.n, "n", 300, "requests for the routing summary; 0 skips it")
	fs.StringVar(&a.config, "config", "", "configuration file (translate.LoadConfig format; engine types: "+
		strings.Join(all.Types(), ", ")+"); replaces the engines of the environment")
	if err := fs.Parse(argv); err != nil {
		return a, err
	}
	if a.n < 0 {
		return a, fmt.Errorf("-n must be 0 or more, not %d", a.n)
	}
	var err error
	a.text, err = textOf(fs.Args())
	return a, err
}

// defaultText is translated when no text is given.
const defaultText = "The house is red. Translation should keep working when an engine does not."

// textOf joins the arguments into the text to translate: defaultText when there are none,
// an error when they are given but blank (quickstart "" must not translate something else).
func textOf(args []string) (string, error) {
	if len(args) == 0 {
		return defaultText, nil
	}
	text := strings.Join(args, " ")
	if strings.TrimSpace(text) == "" {
		return "", errors.New("the text to translate is empty")
	}
	return text, nil
}

func usage() {
	fmt.Fprintf(os.Stderr, `usage: quickstart [-from en] [-to es] [-n 300] [-config file.json] [text ...]

Real engines are used when their settings are in the environment:
  DEEPL_AUTH_KEY, GOOGLE_API_KEY, AZURE_TRANSLATOR_KEY + AZURE_TRANSLATOR_REGION,
  BAIDU_APP_ID + BAIDU_SECRET, OPENAI_API_KEY + OPENAI_MODEL [+ OPENAI_BASE_URL],
  LIBRETRANSLATE_URL [+ LIBRETRANSLATE_API_KEY], APERTIUM_URL
Without vendor keys it runs on simulated engines (engines/fake) with a fault injected.
With -config the file says everything: engines, by type, and policies.

`)
	flag.PrintDefaults()
}

// jsonResult is what the program prints for the translation.
type jsonResult struct {
	Text      string        `json:"text"`
	Source    string        `json:"source"` // the given or detected source language
	Target    string        `json:"target"`
	Engine    string        `json:"engine"`
	Simulated bool          `json:"simulated"` // the engine is one of engines/fake's, not a real translation
	LatencyMS float64       `json:"latency_ms"`
	Cost      float64       `json:"cost"`
	FromCache bool          `json:"from_cache"`
	Degraded  bool          `json:"degraded,omitempty"`
	RequestID string        `json:"request_id"`
	Attempts  []jsonAttempt `json:"attempts"`
}

type jsonAttempt struct {
	Engine    string  `json:"engine"`
	LatencyMS float64 `json:"latency_ms"`
	Error     string  `json:"error,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// setup is the Client's options and what the program says about its engines.
type setup struct {
	opts  []translate.Option
	used  []string        // one line per engine
	reals int             // real engines
	sims  map[string]bool // names of the simulated engines
	file  string          // the configuration file; "" when the engines come from the environment
}

func run(a args, w io.Writer) error {
	ctx := context.Background()
	var st setup
	if a.config != "" {
		var err error
		if st, err = fromConfig(a.config); err != nil {
			return err
		}
	} else {
		var cleanup func()
		st, cleanup = fromEnvironment(ctx)
		defer cleanup()
	}
	c, err := translate.New(st.opts...)
	if err != nil {
		return err
	}
	defer c.Close()
	text, from, to, n := a.text, a.from, a.to, a.n
	sims := st.sims

	res, err := c.Translate(ctx, translate.Request{Text: text, Source: from, Target: to})
	if err != nil {
		return err
	}
	out := jsonResult{Text: res.Text, Source: res.Source, Target: to, Engine: res.Engine, Simulated: sims[res.Engine],
		LatencyMS: ms(res.Latency), Cost: res.Cost,
		FromCache: res.FromCache, Degraded: res.Degraded, RequestID: res.RequestID, Attempts: []jsonAttempt{}}
	for _, a := range res.Attempts {
		ja := jsonAttempt{Engine: a.Engine, LatencyMS: ms(a.Latency)}
		if a.Err != nil {
			ja.Error = a.Err.Error()
		}
		out.Attempts = append(out.Attempts, ja)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}

	if n > 0 {
		summary(ctx, w, c, summaryTarget(to), n)
	}
	fmt.Fprintln(w, "\nEngines used:")
	for _, u := range st.used {
		fmt.Fprintln(w, "  -", u)
	}
	if note := st.note(); note != "" {
		fmt.Fprintln(w, "\n"+note)
	}
	return nil
}

// note is what the program says after the engines it used.
func (st setup) note() string {
	if st.file == "" {
		return engineNote(st.reals, len(st.sims))
	}
	return configNote(st.file, st.reals, len(st.sims))
}

// fromEnvironment uses the real engines whose settings are in the environment and, without
// vendor keys, the simulated ones. cleanup stops what it started (a local Apertium).
func fromEnvironment(ctx context.Context) (setup, func()) {
	reals, warnings, cleanup := realEngines(ctx, os.Getenv)
	for _, w := range warnings {
		fmt.Fprintln(os.Stderr, "warning:", w)
	}
	st := setup{reals: len(reals), sims: map[string]bool{}}
	vendorKeys := false
	for _, r := range reals {
		st.opts = append(st.opts, translate.WithEngine(r.Engine, r.Profile))
		st.used = append(st.used, fmt.Sprintf("%s (real, from %s)", r.Engine.Name(), r.Source))
		if !strings.Contains(r.Source, "(local") {
			vendorKeys = true
		}
	}
	if !vendorKeys {
		for _, s := range simulated() {
			st.opts = append(st.opts, translate.WithEngine(s.e, s.p))
			st.used = append(st.used, fmt.Sprintf("%s (simulated: %s)", s.e.Name(), s.note))
			st.sims[s.e.Name()] = true
		}
	}
	st.opts = append(st.opts, translate.WithDeadline(5*time.Second))
	return st, cleanup
}

// fromConfig uses the engines and policies of the configuration file at path, with the
// bundled adapters' types registered (engines/all).
func fromConfig(path string) (setup, error) {
	all.Register()
	cfg, err := translate.LoadConfig(path)
	if err != nil {
		return setup{}, fmt.Errorf("%s: %w", path, err)
	}
	st := setup{opts: []translate.Option{translate.WithConfig(cfg)}, sims: map[string]bool{}, file: path}
	for _, ec := range cfg.Engines {
		name := ec.Name
		if name == "" {
			name = ec.Type
		}
		if ec.Type == "fake" {
			st.sims[name] = true
			st.used = append(st.used, fmt.Sprintf("%s (simulated, type fake, from %s)", name, path))
			continue
		}
		st.reals++
		st.used = append(st.used, fmt.Sprintf("%s (type %s, from %s)", name, ec.Type, path))
	}
	return st, nil
}

// engineNote tells the user what served: only simulated engines, real local ones beside
// simulated ones, or (vendor keys set) nothing to add.
func engineNote(reals, sims int) string {
	const howto = "To plug in vendor engines, set for example DEEPL_AUTH_KEY, GOOGLE_API_KEY or\n" +
		"OPENAI_API_KEY + OPENAI_MODEL (go run ./examples/quickstart -help), or in code:\n" +
		"translate.WithEngine(deeplEngine, deeplEngine.Profile())."
	switch {
	case sims == 0:
		return ""
	case reals == 0:
		return "These are simulated engines: their answers are not real translations.\n" + howto
	}
	return "The local Apertium is a real engine; the others are simulated (their answers are not\n" +
		"real translations) and stand in for vendor engines.\n" + howto
}

// configNote tells the user, when the configuration file's engines are all simulated, how
// to put vendor engines in it.
func configNote(file string, reals, sims int) string {
	if sims == 0 || reals > 0 {
		return ""
	}
	return "These are simulated engines (type fake): their answers are not real translations.\n" +
		"To use vendor engines, give " + file + " engines of their types (deepl, google, microsoft,\n" +
		"openai, ...) with their keys as \"env:NAME\" settings; examples/config/translate.json\n" +
		"shows each."
}

// summaryTarget is the target language of the routing summary: its texts are English, so
// they go to the language asked for, or to Spanish when that is English.
func summaryTarget(to string) string {
	if t, err := language.Parse(to); err == nil {
		if base, _ := t.Base(); base.String() == "en" {
			return "es"
		}
	}
	return to
}

// summary routes n distinct English texts to target, at most 8 at a time
// (TranslateBatch), and prints each engine's share, the failed requests with their reasons,
// and every engine's failed attempts, those of failed requests included.
func summary(ctx context.Context, w io.Writer, c *translate.Client, target string, n int) {
	reqs := make([]translate.Request, n)
	for i := range reqs {
		reqs[i] = translate.Request{Text: fmt.Sprintf("Sentence number %d for the routing summary.", i), Source: "en", Target: target}
	}
	t0 := time.Now()
	served := map[string]int{}
	failedAttempts := map[string]int{}
	failedKinds := map[string]int{}
	failed, degraded := 0, 0
	for _, br := range c.TranslateBatch(ctx, reqs) {
		var attempts []translate.Attempt
		if br.Err != nil {
			failed++
			failedKinds[translate.KindOf(br.Err).String()]++
			var te *translate.Error
			if errors.As(br.Err, &te) {
				attempts = te.Attempts
			}
		} else {
			served[br.Result.Engine]++
			if br.Result.Degraded {
				degraded++
			}
			attempts = br.Result.Attempts
		}
		for _, a := range attempts {
			if a.Err != nil {
				failedAttempts[a.Engine]++
			}
		}
	}
	fmt.Fprintf(w, "\nRouting summary: %d English texts to %s in %v, %d failed%s, %d degraded\n", n, target,
		time.Since(t0).Round(time.Millisecond), failed, reasons(failedKinds), degraded)
	fmt.Fprintf(w, "  %-14s %7s %9s %16s %9s %8s %7s\n", "engine", "share", "served", "failed attempts", "breaker", "pool", "score")
	st := c.Engines()
	sort.SliceStable(st, func(i, j int) bool { return served[st[i].Name] > served[st[j].Name] })
	for _, s := range st {
		fmt.Fprintf(w, "  %-14s %6.1f%% %9d %16d %9s %8s %7.1f\n", s.Name, 100*float64(served[s.Name])/float64(max(n, 1)),
			served[s.Name], failedAttempts[s.Name], s.Breaker, s.Pool, s.Score)
	}
}

// reasons formats failure counts by kind: " (3 no_engine, 2 timeout)", "" for none.
func reasons(kinds map[string]int) string {
	if len(kinds) == 0 {
		return ""
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%d %s", kinds[k], k)
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

type sim struct {
	e    *fake.Engine
	p    translate.Profile
	note string
}

// simulated returns three engines with different strengths; "swift" fails a third of its
// calls, so retries and failover show in the output.
func simulated() []sim {
	word := func(prefix string) func(string, language.Tag, language.Tag) string {
		return func(text string, _, target language.Tag) string { return prefix + "[" + target.String() + "] " + text }
	}
	swift := fake.New("swift", fake.WithLatency(2*time.Millisecond), fake.WithTranslator(word("")))
	swift.FailRate(translate.KindUnavailable, 0.33, 42)
	return []sim{
		{swift, translate.Profile{Quality: 90, CostPerMillion: 20}, "quality 90, fails 33% of calls with 503"},
		{fake.New("steady", fake.WithLatency(5*time.Millisecond), fake.WithTranslator(word(""))),
			translate.Profile{Quality: 82, CostPerMillion: 10}, "quality 82, always up"},
		{fake.New("budget", fake.WithLatency(8*time.Millisecond), fake.WithTranslator(word(""))),
			translate.Profile{Quality: 70, Class: translate.ClassFree}, "quality 70, free"},
	}
}
