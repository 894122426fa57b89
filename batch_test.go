package translate_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// shortTexts returns n distinct texts of 20 to 60 characters.
func shortTexts(n int) []translate.Request {
	reqs := make([]translate.Request, n)
	for i := range reqs {
		t := fmt.Sprintf("item %04d of the catalogue ", i)
		t += strings.Repeat("x", i%33) // 27 + 0..32 characters
		reqs[i] = req(t)
	}
	return reqs
}

// packed is a profile that takes 50 texts and 5,000 characters per call, like DeepL.
var packed = translate.Profile{Quality: 90, MaxTexts: 50, MaxChars: 5000}

// TestBatchPacksCalls: the target: 1,000 short texts to an engine taking 50 texts
// per call make at most 25 calls (1,000 before), and every answer is its own text's.
func TestBatchPacksCalls(t *testing.T) {
	a := fake.New("a")
	c := newClient(t, translate.WithEngine(a, packed), translate.WithClock(newClock()))
	reqs := shortTexts(1000)
	out := c.TranslateBatch(context.Background(), reqs)
	for i, br := range out {
		if br.Err != nil {
			t.Fatalf("item %d: %v", i, br.Err)
		}
		if want := "[es] " + reqs[i].Text; br.Result.Text != want || br.Result.Engine != "a" {
			t.Fatalf("item %d: %q by %s, want %q", i, br.Result.Text, br.Result.Engine, want)
		}
	}
	if a.Calls() > 25 {
		t.Errorf("%d engine calls for 1,000 texts with MaxTexts 50, want at most 25", a.Calls())
	}
	for _, r := range a.Requests() {
		if len(r.Texts) > 50 {
			t.Errorf("a call of %d texts, MaxTexts is 50", len(r.Texts))
		}
	}
}

// TestBatchPackRespectsMaxChars: a call never carries more than MaxChars characters.
func TestBatchPackRespectsMaxChars(t *testing.T) {
	a := fake.New("a")
	p := packed
	p.MaxChars = 500
	c := newClient(t, translate.WithEngine(a, p), translate.WithClock(newClock()))
	out := c.TranslateBatch(context.Background(), shortTexts(200))
	for i, br := range out {
		if br.Err != nil {
			t.Fatalf("item %d: %v", i, br.Err)
		}
	}
	for _, r := range a.Requests() {
		n := 0
		for _, s := range r.Texts {
			n += len(s)
		}
		if n > 500 {
			t.Fatalf("a call of %d characters, MaxChars is 500", n)
		}
	}
	if a.Calls() < 200*27/500 {
		t.Errorf("%d calls: too few for 500 characters each", a.Calls())
	}
}

// TestBatchItemsKeepCacheCostAndErrors: each item has its own cache lookup and entry,
// cost, request id and error; duplicates are translated once.
func TestBatchItemsKeepCacheCostAndErrors(t *testing.T) {
	a := fake.New("a")
	p := packed
	p.CostPerMillion = 1_000_000 // one credit per character
	c := newClient(t, translate.WithEngine(a, p), translate.WithCache(100, time.Hour), translate.WithClock(newClock()))
	ctx := context.Background()
	if _, err := c.Translate(ctx, req("cached before")); err != nil {
		t.Fatal(err)
	}
	reqs := []translate.Request{req("cached before"), req("one"), req("three"), req("one"),
		{Text: "bad target", Target: "not a tag!"}}
	out := c.TranslateBatch(ctx, reqs)
	type item struct {
		Text      string
		FromCache bool
		Cost      float64
		Err       translate.Kind
	}
	var got []item
	ids := map[string]bool{}
	for _, br := range out {
		if br.Err != nil {
			got = append(got, item{Err: translate.KindOf(br.Err)})
			continue
		}
		got = append(got, item{br.Result.Text, br.Result.FromCache, br.Result.Cost, translate.KindUnknown})
		ids[br.Result.RequestID] = true
	}
	want := []item{{"[es] cached before", true, 0, translate.KindUnknown}, {"[es] one", false, 3, translate.KindUnknown},
		{"[es] three", false, 5, translate.KindUnknown}, {"[es] one", false, 0, translate.KindUnknown}, {Err: translate.KindInvalidInput}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}
	if len(ids) != 4 {
		t.Errorf("%d distinct request ids for 4 answers", len(ids))
	}
	if got := a.Requests(); len(got) != 2 || len(got[1].Texts) != 2 {
		t.Errorf("engine requests %+v, want the warm-up and one call of the 2 distinct new texts", got)
	}
	res, err := c.Translate(ctx, req("three"))
	if err != nil || !res.FromCache {
		t.Errorf("a packed answer was not cached: %+v, %v", res, err)
	}
}

// TestBatchBadItemFailsOverAlone: a text that comes back echoed from a packed call goes to
// another engine alone; the others keep the packed call's answers.
func TestBatchBadItemFailsOverAlone(t *testing.T) {
	a := fake.New("a", fake.WithTranslator(func(text string, _, target language.Tag) string {
		if text == "echo me please" {
			return text
		}
		return "[" + target.String() + "] " + text
	}))
	b := fake.New("b")
	c := newClient(t, sharp, translate.WithEngine(a, packed), translate.WithEngine(b, translate.Profile{Quality: 1, MaxTexts: 50}),
		translate.WithClock(newClock()))
	reqs := []translate.Request{req("first text here"), req("echo me please"), req("third text here")}
	out := c.TranslateBatch(context.Background(), reqs)
	var got []string
	for _, br := range out {
		if br.Err != nil {
			t.Fatal(br.Err)
		}
		got = append(got, br.Result.Engine+": "+br.Result.Text)
	}
	want := []string{"a: [es] first text here", "b: [es] echo me please", "a: [es] third text here"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if a.Calls() != 1 || b.Calls() != 1 {
		t.Errorf("calls a=%d b=%d, want 1 and 1 (b for the echoed text alone)", a.Calls(), b.Calls())
	}
	if n := len(b.Requests()[0].Texts); n != 1 {
		t.Errorf("b got %d texts, want the bad one alone", n)
	}
}

// TestBatchPackFailsOverAsAWhole: a packed call that fails goes to the next engine as one
// call.
func TestBatchPackFailsOverAsAWhole(t *testing.T) {
	a, b := fake.New("a"), fake.New("b")
	a.Down(translate.KindUnavailable)
	c := newClient(t, sharp, translate.WithEngine(a, packed), translate.WithEngine(b, translate.Profile{Quality: 1, MaxTexts: 50}),
		translate.WithClock(newClock()))
	out := c.TranslateBatch(context.Background(), shortTexts(50))
	for i, br := range out {
		if br.Err != nil || br.Result.Engine != "b" {
			t.Fatalf("item %d: %+v, %v", i, br.Result, br.Err)
		}
		if d := cmp.Diff([]string{"a", "b"}, engineNames(br.Result.Attempts)); d != "" {
			t.Fatalf("item %d attempts (-want +got):\n%s", i, d)
		}
	}
	if a.Calls() != 1 || b.Calls() != 1 {
		t.Errorf("calls a=%d b=%d, want one packed call each", a.Calls(), b.Calls())
	}
}

// TestBatchAloneWhenItMust: requests with their own RequestID, and different targets, are
// not packed together.
func TestBatchAloneWhenItMust(t *testing.T) {
	a := fake.New("a")
	c := newClient(t, translate.WithEngine(a, packed), translate.WithClock(newClock()))
	withID := req("has an id")
	withID.RequestID = "id-7"
	fr := req("to french")
	fr.Target = "fr"
	out := c.TranslateBatch(context.Background(), []translate.Request{req("one"), withID, req("two"), fr})
	for i, br := range out {
		if br.Err != nil {
			t.Fatalf("item %d: %v", i, br.Err)
		}
	}
	var sizes []int
	for _, r := range a.Requests() {
		sizes = append(sizes, len(r.Texts))
	}
	if len(sizes) != 3 || sizes[0]+sizes[1]+sizes[2] != 4 {
		t.Errorf("call sizes %v, want one pack of 2 and two single calls", sizes)
	}
	if out[1].Result.RequestID != "id-7" {
		t.Errorf("request id %q, want id-7", out[1].Result.RequestID)
	}
}

// TestBatchPacksByTenantAndRegions: a pack is walked as its first request, so requests
// of different tenants, or limited to different regions, never share one: a tenant whose
// budget is spent is refused in a batch as alone, and another's is served and charged to
// it alone; Regions ["eu,us"] (one region of that name) is not ["eu", "us"].
func TestBatchPacksByTenantAndRegions(t *testing.T) {
	paid := fake.New("paid")
	c := newClient(t, translate.WithEngine(paid, translate.Profile{CostPerMillion: 1e6, MaxTexts: 50, Region: "us"}),
		translate.WithBudget(translate.Budget{Tenants: map[string]translate.Budget{"rich": {Daily: 1000}, "poor": {Daily: 1}}}))
	ctx := context.Background()
	rich, poor := req("Hello there my friend"), req("Good morning to you")
	rich.Tenant, poor.Tenant = "rich", "poor"
	for _, batch := range [][]translate.Request{{rich, poor}, {poor, rich}} {
		out := c.TranslateBatch(ctx, batch)
		for i, br := range out {
			want := batch[i].Tenant == "rich"
			if served := br.Err == nil; served != want {
				t.Errorf("tenant %s in batch %s+%s: served %v (%v), want %v", batch[i].Tenant, batch[0].Tenant, batch[1].Tenant, served, br.Err, want)
			}
		}
	}
	if st, _ := c.TenantBudget("rich"); st.Spent != 2*21 {
		t.Errorf("rich spent %v, want 42: its own text twice", st.Spent)
	}
	comma, both := req("The house is red"), req("The garden is green")
	comma.Regions, both.Regions = []string{"eu,us"}, []string{"eu", "us"}
	out := c.TranslateBatch(ctx, []translate.Request{both, comma})
	if out[0].Err != nil || out[1].Err == nil {
		t.Errorf("Regions [eu us]: %v; [\"eu,us\"]: %+v, %v; want the first served by us, the second refused", out[0].Err, out[1].Result, out[1].Err)
	}
}

// detectEcho sends every text back unchanged, detecting each text's source on its own: en
// for a text starting "Hello", else de.
type detectEcho struct{}

func (detectEcho) Name() string { return "echo" }

func (detectEcho) Translate(_ context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	out := &translate.EngineResult{Texts: append([]string(nil), r.Texts...)}
	for _, t := range r.Texts {
		src := language.German
		if strings.HasPrefix(t, "Hello") {
			src = language.English
		}
		out.Sources = append(out.Sources, src)
	}
	out.Source = out.Sources[0]
	return out, nil
}

// TestBatchEchoJudgedByTheTextsOwnSource: a German text sent back for target en is an
// echo in a pack too, where the call's detected source (its first text's) is en: each
// text is judged by the source detected for it, as it would be alone.
func TestBatchEchoJudgedByTheTextsOwnSource(t *testing.T) {
	c := newClient(t, translate.WithEngine(detectEcho{}, translate.Profile{MaxTexts: 50}))
	de := translate.Request{Text: "Das Haus ist rot und der Garten ist grün.", Target: "en"}
	if res, err := c.Translate(context.Background(), de); err == nil {
		t.Fatalf("alone, the German echo was served: %q", res.Text)
	}
	out := c.TranslateBatch(context.Background(), []translate.Request{{Text: "Hello, how are you today?", Target: "en"}, de})
	if out[1].Err == nil {
		t.Errorf("in a pack, the German source was served as its English translation: %+v", out[1].Result)
	}
}

// flatten answers each text with its white space collapsed, as a language model that
// joins lines sends back a text it did not translate.
type flatten struct{}

func (flatten) Name() string { return "flatten" }

func (flatten) Translate(_ context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	out := &translate.EngineResult{}
	for _, t := range r.Texts {
		out.Texts = append(out.Texts, strings.Join(strings.Fields(t), " "))
	}
	return out, nil
}

// TestEchoWithWhiteSpaceChanged: the source sent back with its line break or double space
// collapsed is an echo, not a translation.
func TestEchoWithWhiteSpaceChanged(t *testing.T) {
	c := newClient(t, translate.WithEngine(flatten{}, translate.Profile{}))
	for _, text := range []string{"The house is red.\nThe garden is green.", "The house  is red."} {
		if res, err := c.Translate(context.Background(), translate.Request{Text: text, Source: "en", Target: "de"}); translate.KindOf(err) != translate.KindBadOutput {
			t.Errorf("%q came back as %+v, %v; want bad output", text, res, err)
		}
	}
}

// spoilRest answers a pack's first text and sends the others back empty.
type spoilRest struct{}

func (spoilRest) Name() string { return "spoil" }

func (spoilRest) Translate(_ context.Context, r *translate.EngineRequest) (*translate.EngineResult, error) {
	out := make([]string, len(r.Texts))
	out[0] = "[de] " + r.Texts[0]
	return &translate.EngineResult{Texts: out}, nil
}

// TestBatchBadTextsFailOverWithinThePacksDeadline: the texts of a pack that came back bad
// fail over alone, together, within the deadline the pack began with: each call of the
// hung backup that is made has the same deadline (those not made by then fail with it).
// One after another, each with a deadline of its own, 19 bad texts took 19 deadlines (5.9 s
// at 300 ms; about 5 minutes at the default).
func TestBatchBadTextsFailOverWithinThePacksDeadline(t *testing.T) {
	const deadline = time.Second // room for a busy machine before the failovers start
	var mu sync.Mutex
	var ends []time.Time
	hung := fake.New("hung", fake.WithHook(func(ctx context.Context, _ *translate.EngineRequest) error {
		d, _ := ctx.Deadline()
		mu.Lock()
		ends = append(ends, d)
		mu.Unlock()
		<-ctx.Done()
		return ctx.Err()
	}))
	c := newClient(t, sharp, translate.WithDeadline(deadline),
		translate.WithEngine(spoilRest{}, translate.Profile{Quality: 95, MaxTexts: 50}),
		translate.WithEngine(hung, translate.Profile{Quality: 60, MaxTexts: 50}))
	var reqs []translate.Request
	for i := range 20 {
		reqs = append(reqs, translate.Request{Text: fmt.Sprintf("Sentence number %d to translate", i), Source: "en", Target: "de"})
	}
	out := c.TranslateBatch(context.Background(), reqs)
	if out[0].Err != nil {
		t.Fatalf("the first text: %v", out[0].Err)
	}
	for i, br := range out[1:] {
		if br.Err == nil {
			t.Errorf("text %d, bad from spoil and hung on the backup, was served: %+v", i+1, br.Result)
		}
	}
	if len(ends) == 0 {
		t.Fatal("no bad text reached the backup")
	}
	first, last := slices.MinFunc(ends, time.Time.Compare), slices.MaxFunc(ends, time.Time.Compare)
	if spread := last.Sub(first); spread > deadline/2 {
		t.Errorf("the bad texts' calls ended over %v, want within the pack's one deadline (%v)", spread, deadline)
	}
}
