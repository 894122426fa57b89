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
//	go run ./examples/quickstart "The house is red."
//	go run ./examples/quickstart -to fr -n 500 "Good morning"
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/language"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

func main() {
	from := flag.String("from", "en", "source language (BCP 47); empty means detect")
	to := flag.String("to", "es", "target language (BCP 47)")
	n := flag.Int("n", 300, "requests for the routing summary")
	flag.Usage = usage
	flag.Parse()
	text := strings.Join(flag.Args(), " ")
	if text == "" {
		text = "The house is red. Translation should keep working when an engine does not."
	}
	if err := run(text, *from, *to, *n); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintf(os.Stderr, `usage: quickstart [-from en] [-to es] [-n 300] [text ...]

Real engines are used when their settings are in the environment:
  DEEPL_AUTH_KEY, GOOGLE_API_KEY, AZURE_TRANSLATOR_KEY + AZURE_TRANSLATOR_REGION,
  BAIDU_APP_ID + BAIDU_SECRET, OPENAI_API_KEY + OPENAI_MODEL [+ OPENAI_BASE_URL],
  LIBRETRANSLATE_URL [+ LIBRETRANSLATE_API_KEY], APERTIUM_URL
Without vendor keys it runs on simulated engines (engines/fake) with a fault injected.

`)
	flag.PrintDefaults()
}

// jsonResult is what the program prints for the translation.
type jsonResult struct {
	Text      string        `json:"text"`
	Engine    string        `json:"engine"`
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

func run(text, from, to string, n int) error {
	ctx := context.Background()
	reals, warnings, cleanup := realEngines(ctx, os.Getenv)
	defer cleanup()
	for _, w := range warnings {
		fmt.Fprintln(os.Stderr, "warning:", w)
	}
	var opts []translate.Option
	var used []string
	vendorKeys := false
	for _, r := range reals {
		opts = append(opts, translate.WithEngine(r.Engine, r.Profile))
		used = append(used, fmt.Sprintf("%s (real, from %s)", r.Engine.Name(), r.Source))
		if !strings.Contains(r.Source, "(local") {
			vendorKeys = true
		}
	}
	if !vendorKeys {
		for _, s := range simulated() {
			opts = append(opts, translate.WithEngine(s.e, s.p))
			used = append(used, fmt.Sprintf("%s (simulated: %s)", s.e.Name(), s.note))
		}
	}
	c, err := translate.New(append(opts, translate.WithDeadline(5*time.Second))...)
	if err != nil {
		return err
	}
	defer c.Close()

	res, err := c.Translate(ctx, translate.Request{Text: text, Source: from, Target: to})
	if err != nil {
		return err
	}
	out := jsonResult{Text: res.Text, Engine: res.Engine, LatencyMS: ms(res.Latency), Cost: res.Cost,
		FromCache: res.FromCache, Degraded: res.Degraded, RequestID: res.RequestID, Attempts: []jsonAttempt{}}
	for _, a := range res.Attempts {
		ja := jsonAttempt{Engine: a.Engine, LatencyMS: ms(a.Latency)}
		if a.Err != nil {
			ja.Error = a.Err.Error()
		}
		out.Attempts = append(out.Attempts, ja)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}

	summary(ctx, c, from, to, n)
	fmt.Println("\nEngines used:")
	for _, u := range used {
		fmt.Println("  -", u)
	}
	if !vendorKeys {
		fmt.Println("\nThese are simulated engines. To plug in real ones, set for example DEEPL_AUTH_KEY,")
		fmt.Println("GOOGLE_API_KEY or OPENAI_API_KEY + OPENAI_MODEL (go run ./examples/quickstart -help),")
		fmt.Println("or in code: translate.WithEngine(deeplEngine, deeplEngine.Profile()).")
	}
	return nil
}

// summary routes n distinct texts, 16 at a time, and prints each engine's share.
func summary(ctx context.Context, c *translate.Client, from, to string, n int) {
	reqs := make([]translate.Request, n)
	for i := range reqs {
		reqs[i] = translate.Request{Text: fmt.Sprintf("Sentence number %d for the routing summary.", i), Source: from, Target: to}
	}
	t0 := time.Now()
	var mu sync.Mutex
	served := map[string]int{}
	failedAttempts := map[string]int{}
	failed, degraded := 0, 0
	for _, br := range c.TranslateBatch(ctx, reqs) {
		mu.Lock()
		if br.Err != nil {
			failed++
		} else {
			served[br.Result.Engine]++
			if br.Result.Degraded {
				degraded++
			}
			for _, a := range br.Result.Attempts {
				if a.Err != nil {
					failedAttempts[a.Engine]++
				}
			}
		}
		mu.Unlock()
	}
	fmt.Printf("\nRouting summary: %d requests in %v, %d failed, %d degraded\n", n, time.Since(t0).Round(time.Millisecond), failed, degraded)
	fmt.Printf("  %-14s %7s %9s %16s %9s %8s %7s\n", "engine", "share", "served", "failed attempts", "breaker", "pool", "score")
	st := c.Engines()
	sort.Slice(st, func(i, j int) bool { return served[st[i].Name] > served[st[j].Name] })
	for _, s := range st {
		fmt.Printf("  %-14s %6.1f%% %9d %16d %9s %8s %7.1f\n", s.Name, 100*float64(served[s.Name])/float64(max(n, 1)),
			served[s.Name], failedAttempts[s.Name], s.Breaker, s.Pool, s.Score)
	}
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
