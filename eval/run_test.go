package eval

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

func TestShippedSet(t *testing.T) {
	set := ApertiumSet()
	count := map[string]int{}
	for _, it := range set {
		count[it.Pair()]++
	}
	if diff := cmp.Diff(map[string]int{"en-es": 24, "en-ca": 24, "es-pt": 24}, count); diff != "" {
		t.Errorf("items per pair (-want +got):\n%s", diff)
	}
}

func TestReadSetForms(t *testing.T) {
	jsonl := `{"id":"a","source":"en","target":"de","scene":"legal","text":"Hello.","refs":["Hallo.","Guten Tag."]}` + "\n\n" +
		`{"source":"en","target":"de","text":"Bye.","refs":["Tschüss."]}` + "\n"
	tsv := "# comment\nen\tde\tlegal\tHello.\tHallo.\tGuten Tag.\n\nen\tde\t\tBye.\tTschüss.\n"
	want := []Item{{ID: "a", Source: "en", Target: "de", Scene: "legal", Text: "Hello.", Refs: []string{"Hallo.", "Guten Tag."}},
		{ID: "L3", Source: "en", Target: "de", Text: "Bye.", Refs: []string{"Tschüss."}}}
	got, err := ReadSet(strings.NewReader(jsonl))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON lines (-want +got):\n%s", diff)
	}
	want[0].ID, want[1].ID = "L2", "L4"
	if got, err = ReadSet(strings.NewReader("\ufeff" + tsv)); err != nil { // a byte order mark is dropped
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TSV (-want +got):\n%s", diff)
	}
	for _, bad := range []string{
		"en\tde\tgeneral\tHello.\n", "en\tde\tpoetry\tHello.\tHallo.\n", "en-GB\tde\tgeneral\tHello.\tHallo.\n",
		"en\tde\tgeneral\t \tHallo.\n", "en\tde\tgeneral\tHello.\t\n", `{"source":"en","target":"de","text":"x","refs":["y"],"extra":1}`,
		`{"id":"x","source":"en","target":"de","text":"x","refs":["y"]}` + "\n" + `{"id":"x","source":"en","target":"de","text":"x","refs":["y"]}`,
	} {
		if _, err := ReadSet(strings.NewReader(bad)); err == nil || !strings.HasPrefix(err.Error(), "eval: set line ") {
			t.Errorf("ReadSet(%q) = %v, want an error naming the line", bad, err)
		}
	}
}

// smallSet is the shipped set's first n items of each pair.
func smallSet(n int) []Item {
	var out []Item
	seen := map[string]int{}
	for _, it := range ApertiumSet() {
		if seen[it.Pair()]++; seen[it.Pair()] <= n {
			out = append(out, it)
		}
	}
	return out
}

// A run scores a perfect engine 100 and a garbling one far below, per pair and scene; the
// report's table, JSON, chart and configuration figures all come from the same scores.
func TestRunScoresEngines(t *testing.T) {
	set := ApertiumSet()
	c := newClient(t, translate.WithEngine(lookupEngine("exact", set, identity), translate.Profile{}),
		translate.WithEngine(lookupEngine("garble", set, Garble), translate.Profile{}))
	var progress []int
	outs, err := Run(t.Context(), c, set, Config{Engines: []string{"exact", "garble"}, Progress: func(done, total int) {
		if total != 2*len(set) {
			t.Errorf("Progress total = %d, want %d", total, 2*len(set))
		}
		progress = append(progress, done)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2*len(set) || len(progress) != len(outs) || progress[len(progress)-1] != len(outs) {
		t.Fatalf("%d outputs, progress %v; want %d", len(outs), progress, 2*len(set))
	}
	r := NewReport(set, []string{"exact", "garble"}, outs)
	for _, pair := range []string{"en-es", "en-ca", "es-pt"} {
		ex, _ := r.Find("exact", pair, AllScenes)
		ga, _ := r.Find("garble", pair, AllScenes)
		if ex.ChrF != 100 || ex.BLEU != 100 || ex.Items != 24 {
			t.Errorf("%s: exact = %+v, want chrF 100, BLEU 100 over 24 items", pair, ex)
		}
		if ga.ChrF > 50 || ga.BLEU > 20 {
			t.Errorf("%s: garble = chrF %.2f, BLEU %.2f; want under 50 and 20", pair, ga.ChrF, ga.BLEU)
		}
		t.Logf("%s: garble chrF %.2f BLEU %.2f", pair, ga.ChrF, ga.BLEU)
	}
	if s, ok := r.Find("exact", "en-es", "tech"); !ok || s.Items != 5 {
		t.Errorf("en-es tech = %+v, %v; want 5 items", s, ok)
	}
}

// Requests are pinned to each engine and bypass the Client's cache (on by default); a
// failing engine's items are errors in the report, not in Run.
func TestRunPinsAndCountsErrors(t *testing.T) {
	set := smallSet(3)
	down := fake.New("down")
	down.Down(translate.KindUnavailable)
	up := lookupEngine("up", set, identity)
	c, err := translate.New(translate.WithEngine(up, translate.Profile{}), translate.WithEngine(down, translate.Profile{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	outs, err := Run(t.Context(), c, set, Config{Engines: []string{"up", "down"}})
	if err != nil {
		t.Fatal(err)
	}
	r := NewReport(set, []string{"up", "down"}, outs)
	if s, _ := r.Find("down", "en-es", AllScenes); s.Errors != 3 || s.Items != 3 {
		t.Errorf("down on en-es: %+v, want 3 errors of 3 items", s)
	}
	if up.Calls() != len(set) {
		t.Errorf("up answered %d calls, want %d (each item once, nothing failed over)", up.Calls(), len(set))
	}
	if _, err := Run(t.Context(), c, set, Config{Engines: []string{"up"}}); err != nil {
		t.Fatal(err)
	}
	if up.Calls() != 2*len(set) {
		t.Errorf("after a second run up answered %d calls, want %d (the Client's cache is bypassed)", up.Calls(), 2*len(set))
	}
	if _, ok := r.PairQuality(MetricChrF)["down"]; ok {
		t.Error("PairQuality has figures for an engine that answered nothing")
	}
}

// A run resumes from its results file: what succeeded is not asked again, what failed is.
func TestRunResumes(t *testing.T) {
	set := smallSet(4)
	flaky := lookupEngine("flaky", set, identity)
	flaky.FailRate(translate.KindUnavailable, 0.5, 7)
	c := newClient(t, translate.WithEngine(flaky, translate.Profile{}), translate.WithRetry(translate.RetryPolicy{PerEngine: 1}))
	var file bytes.Buffer
	first, err := Run(t.Context(), c, set, Config{Engines: []string{"flaky"}, Record: NewRecorder(&file)})
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, o := range first {
		failed += b2i(o.Err != "")
	}
	if failed == 0 || failed == len(set) {
		t.Fatalf("%d of %d failed; the test wants some of each", failed, len(set))
	}
	file.WriteString(`{"item":"L9","engi`) // a line cut short by a crash
	prior, err := ReadOutputs(&file)
	if err != nil || len(prior) != len(set) {
		t.Fatalf("ReadOutputs = %d outputs, %v; want %d", len(prior), err, len(set))
	}
	flaky.FailRate(translate.KindUnavailable, 0, 0)
	before := flaky.Calls()
	second, err := Run(t.Context(), c, set, Config{Engines: []string{"flaky"}, Resume: prior})
	if err != nil {
		t.Fatal(err)
	}
	if asked := flaky.Calls() - before; asked != failed {
		t.Errorf("the resumed run asked %d items, want the %d that failed", asked, failed)
	}
	for _, o := range second {
		if o.Err != "" {
			t.Errorf("after the resumed run, %s still failed: %s", o.Item, o.Err)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Concurrency bounds the requests in flight; MaxCost stops the run with ErrBudget.
func TestRunBoundsConcurrencyAndCost(t *testing.T) {
	set := smallSet(8)
	var inFlight, peak atomic.Int32
	full := make(chan struct{}) // closed once 3 calls are in flight: then every call passes
	var once sync.Once
	slow := fake.New("slow", fake.WithHook(func(ctx context.Context, _ *translate.EngineRequest) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		if n >= 3 {
			once.Do(func() { close(full) })
		}
		select {
		case <-full:
		case <-ctx.Done():
		}
		return nil
	}))
	c := newClient(t, translate.WithEngine(slow, translate.Profile{CostPerMillion: 10000}))
	// Each item costs 10000 x chars / 1e6 credits, 0.1 to 0.5: the cap of 1 stops the run
	// after a handful.
	outs, err := Run(t.Context(), c, set, Config{Engines: []string{"slow"}, Concurrency: 3, MaxCost: 1})
	if !errors.Is(err, ErrBudget) {
		t.Fatalf("Run = %v, want ErrBudget", err)
	}
	spent := 0.0
	for _, o := range outs {
		spent += o.Cost
	}
	if p := peak.Load(); p != 3 {
		t.Errorf("peak in flight = %d, want 3 (Concurrency 3)", p)
	}
	// The output that reached the cap passes it, and so may the requests then in flight:
	// at most Concurrency.
	maxItem := 0.0
	for _, it := range set {
		maxItem = max(maxItem, float64(len([]rune(it.Text)))*10000/1e6)
	}
	if len(outs) == len(set) || spent < 1 || spent > 1+4*maxItem {
		t.Errorf("%d of %d outputs, %.3f credits spent; want a stop past the cap of 1 by at most 4 items (%.3f)", len(outs), len(set), spent, 4*maxItem)
	}
}

// judgeServer is an OpenAI-compatible chat completions endpoint that scores a candidate
// 100 when it equals the reference and 10 otherwise, reporting 100 tokens per call.
func judgeServer(t *testing.T, calls *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer judge-key" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var body struct {
			Model       string
			Temperature float64
			Messages    []chatMessage
		}
		if err := jsonDecode(r, &body); err != nil || body.Model != "judge-1" || len(body.Messages) != 2 || body.Messages[0].Content != JudgePrompt {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		score := "10"
		u := body.Messages[1].Content
		ref, cand := between(u, "Reference: ", "\n"), between(u, "Candidate: ", "\n")
		if ref == cand {
			score = "100"
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":" ` + score + ` "}}],"usage":{"prompt_tokens":90,"completion_tokens":10}}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(rest, to)
	return v
}

// The judge scores each answer with the fixed prompt and stops at its own budget.
func TestRunWithJudge(t *testing.T) {
	set := smallSet(5) // 15 items
	var calls atomic.Int32
	srv := judgeServer(t, &calls)
	// 100 tokens a call at 10 000 credits per million tokens: 1 credit a call, budget 8.
	j := &Judge{BaseURL: srv.URL + "/v1", Key: "judge-key", Model: "judge-1", Budget: 8, CostPerMillionTokens: 10000, HTTPClient: srv.Client()}
	c := newClient(t, translate.WithEngine(lookupEngine("exact", set, identity), translate.Profile{}),
		translate.WithEngine(lookupEngine("garble", set, Garble), translate.Profile{}))
	outs, err := Run(t.Context(), c, set, Config{Engines: []string{"exact", "garble"}, Judge: j, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	credits, n := j.Spent()
	if n != 8 || int(calls.Load()) != 8 || math.Abs(credits-8) > 1e-9 {
		t.Errorf("judge calls %d (server saw %d), credits %.2f; want 8, 8 and 8 (its budget)", n, calls.Load(), credits)
	}
	judged := 0
	for _, o := range outs {
		if o.Judge == nil {
			continue
		}
		judged++
		if want := map[string]float64{"exact": 100, "garble": 10}[o.Engine]; *o.Judge != want {
			t.Errorf("%s on %s: judge %v, want %v", o.Engine, o.Item, *o.Judge, want)
		}
	}
	if judged != 8 {
		t.Errorf("%d outputs judged, want 8", judged)
	}
	r := NewReport(set, []string{"exact", "garble"}, outs)
	if s, _ := r.Find("exact", "en-es", AllScenes); s.Judged != 4 || s.Judge != 100 {
		t.Errorf("exact on en-es: judge %.1f over %d, want 100 over 4 (items 1..4 of the first engine, one at a time)", s.Judge, s.Judged)
	}
	if _, err := j.Score(t.Context(), set[0], "x"); !errors.Is(err, ErrJudgeBudget) {
		t.Errorf("Score past the budget = %v, want ErrJudgeBudget", err)
	}
}

// The judge's errors name neither its key nor the texts.
func TestJudgeErrorsLeakNothing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("case") {
		case "status":
			http.Error(w, "the key judge-key is wrong for 'secret text'", http.StatusUnauthorized)
		default:
			w.Write([]byte(`{"choices":[{"message":{"content":"I think 95 because secret text"}}]}`))
		}
	}))
	defer srv.Close()
	it := Item{Source: "en", Target: "de", Text: "secret text", Refs: []string{"geheimer Text"}}
	for _, q := range []string{"status", "reply"} {
		j := &Judge{BaseURL: srv.URL + "/v1?case=" + q, Key: "judge-key", Model: "m", HTTPClient: srv.Client()}
		_, err := j.Score(t.Context(), it, "secret text")
		if err == nil || strings.Contains(err.Error(), "judge-key") || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: Score = %v, want an error without key or text", q, err)
		}
	}
}
