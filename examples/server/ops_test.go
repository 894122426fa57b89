package main

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// TestOpsMetricNames scrapes a server whose Client has seen every kind of event (breaker
// transitions, degradations, cache hits, costs) and checks that every metric name and label
// value the alerting rules and the dashboard in ops/ use is in the scrape: the rules are
// written against the exporter's real names, and this keeps them so.
func TestOpsMetricNames(t *testing.T) {
	scraped := eventfulScrape(t)
	for _, name := range opsMetricNames(t) {
		if !regexp.MustCompile(`(?m)^` + name + `[{ ]`).MatchString(scraped) {
			t.Errorf("ops/ uses %s, which the server does not export", name)
		}
	}
	// Label values the rules select on.
	for _, sel := range []string{
		`translate_routing_decision_duration_seconds_bucket{le="0.001"`, `hit="true"`, `outcome="ok"`,
		`outcome="unavailable"`, `how="fallback_engine"`, `translate_engine_breaker_state{engine="down"`,
		`translate_requests_total{outcome="budget_exceeded"`,
	} {
		if !containsSel(scraped, sel) {
			t.Errorf("the scrape has no %s", sel)
		}
	}
	if !regexp.MustCompile(`(?m)^translate_engine_breaker_state\{[^}]*engine="down"[^}]*\} 1$`).MatchString(scraped) {
		t.Errorf("the dead engine's breaker is not reported open (1):\n%s", grep(scraped, "breaker_state"))
	}
}

// eventfulScrape returns the /metrics scrape of a server whose Client has seen every kind
// of event: breaker transitions, degradations, cache hits, costs and a spent budget.
func eventfulScrape(t *testing.T) string {
	t.Helper()
	tel, err := newTelemetry()
	if err != nil {
		t.Fatal(err)
	}
	defer tel.close()
	down := fake.New("down")
	down.Down(translate.KindUnavailable)
	c, err := translate.New(translate.WithMeterProvider(tel.provider),
		translate.WithEngine(down, translate.Profile{CostPerMillion: 10}),
		translate.WithEngine(fake.New("last"), translate.Profile{FallbackOnly: true, Class: translate.ClassFree, Quota: 1_000_000}),
		translate.WithBreaker(translate.BreakerPolicy{Window: 20, MinCalls: 10}),
		translate.WithBudget(translate.Budget{Daily: 100}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := tel.observeClient(c); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 40 {
		req := translate.Request{Text: "text " + strconv.Itoa(i%30), Target: "es"}
		c.Translate(ctx, req) // errors are fine: the events are what counts
	}
	exhaustBudget(t, tel)
	a := newAPI(c, testSettings, tel)
	srv := httptest.NewServer(accessLog(discardLogger(), tel, a.routes()))
	defer srv.Close()
	post(t, srv.URL+"/v1/translate", "application/json", `{"text":"hi","target_lang":"es"}`)
	return scrape(t, srv.URL)
}

// opsMetricNames returns the metric names the alerting rules and the dashboard in ops/ use,
// sorted.
func opsMetricNames(t *testing.T) []string {
	t.Helper()
	var used []string
	seen := map[string]bool{}
	files, _ := filepath.Glob("../../ops/prometheus/*.yml")
	files = append(files, "../../ops/grafana/translate.json")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Metric names: translate_ followed by name characters, not a recording rule
		// (translate:...).
		for _, m := range regexp.MustCompile(`\btranslate_[a-z_]+[a-z]`).FindAllString(string(data), -1) {
			if !seen[m] {
				seen[m] = true
				used = append(used, m)
			}
		}
	}
	if len(used) < 10 {
		t.Fatalf("found only %d metric names in %v", len(used), files)
	}
	sort.Strings(used)
	return used
}

// exhaustBudget spends a Client's daily budget on tel's meter provider the way production
// does, and checks what TranslateBudgetExhausted relies on: the library refuses requests with
// budget_exceeded (counted in translate_requests_total) while what it spent stays within the
// daily budget, so "spent >= daily" never holds.
func exhaustBudget(t *testing.T, tel *telemetry) {
	t.Helper()
	c, err := translate.New(translate.WithMeterProvider(tel.provider), translate.WithoutCache(),
		translate.WithEngine(fake.New("paid"), translate.Profile{CostPerMillion: 1_000_000}), // 1 credit a character
		translate.WithBudget(translate.Budget{Daily: 20}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	refused := 0
	for i := range 10 {
		_, err := c.Translate(context.Background(), translate.Request{Text: "text " + strconv.Itoa(i), Target: "es"})
		if translate.KindOf(err) == translate.KindBudgetExceeded {
			refused++
		}
	}
	if b := c.Budget(); refused == 0 || b.Spent > b.Daily || b.Spent == 0 {
		t.Fatalf("budget of %v: spent %v, %d of 10 requests refused; want some spent, within the budget, and refusals",
			b.Daily, b.Spent, refused)
	}
}

// containsSel matches "name{label=value" allowing other labels before the one named.
func containsSel(text, sel string) bool {
	i := regexp.MustCompile(`^([a-z_]+)\{(.*)$`).FindStringSubmatch(sel)
	if i == nil {
		return regexp.MustCompile(regexp.QuoteMeta(sel)).MatchString(text)
	}
	return regexp.MustCompile(`(?m)^` + i[1] + `\{[^}]*` + regexp.QuoteMeta(i[2])).MatchString(text)
}

func grep(text, substr string) string {
	var out []byte
	for _, l := range regexp.MustCompile(`(?m)^.*`+regexp.QuoteMeta(substr)+`.*$`).FindAllString(text, -1) {
		out = append(out, l...)
		out = append(out, '\n')
	}
	return string(out)
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
