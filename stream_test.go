package translate_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// streamer is a StreamEngine whose streams the test plays per call; Translate collects the
// same stream.
type streamer struct {
	name  string
	play  func(ctx context.Context, text string, yield func(string, error) bool)
	calls atomic.Int32
}

func (s *streamer) Name() string { return s.name }

func (s *streamer) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	var b strings.Builder
	for d, err := range s.TranslateStream(ctx, req) {
		if err != nil {
			return nil, err
		}
		b.WriteString(d)
	}
	return &translate.EngineResult{Texts: []string{b.String()}}, nil
}

func (s *streamer) TranslateStream(ctx context.Context, req *translate.EngineRequest) iter.Seq2[string, error] {
	s.calls.Add(1)
	return func(yield func(string, error) bool) { s.play(ctx, req.Texts[0], yield) }
}

// collect ranges over a stream: every chunk, and the error that ended it (nil when none).
func collect(seq iter.Seq2[translate.Chunk, error]) ([]translate.Chunk, error) {
	var out []translate.Chunk
	for ch, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, ch)
	}
	return out, nil
}

// finals returns the final chunks.
func finals(chs []translate.Chunk) []translate.Chunk {
	var out []translate.Chunk
	for _, ch := range chs {
		if !ch.Partial {
			out = append(out, ch)
		}
	}
	return out
}

// joined is the document the final chunks make.
func joined(chs []translate.Chunk) string {
	var b strings.Builder
	for _, ch := range finals(chs) {
		b.WriteString(ch.Text)
	}
	return b.String()
}

// parts returns a document of n paragraphs "Part 0.", "Part 1.", ...
func parts(n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = partText(i)
	}
	return strings.Join(ps, "\n\n")
}

// perParagraph is the Profile of the engines of the tests on parts: a call takes at most
// 10 code points, so that every paragraph of parts ("Part 123.") is a segment of its own.
var perParagraph = translate.Profile{MaxChars: 10}

// partText is paragraph i of parts: "Part i.".
func partText(i int) string { return fmt.Sprintf("Part %d.", i) }

// partIndex reads i back from "Part i." (-1 for another text).
func partIndex(text string) int {
	var i int
	if _, err := fmt.Sscanf(text, "Part %d.", &i); err != nil {
		return -1
	}
	return i
}

// item is one value of a stream sent over a channel.
type item struct {
	ch  translate.Chunk
	err error
}

// pump ranges over seq in a goroutine and sends every value on the returned channel, which
// is closed when the range ends.
func pump(seq iter.Seq2[translate.Chunk, error]) <-chan item {
	out := make(chan item)
	go func() {
		defer close(out)
		for ch, err := range seq {
			out <- item{ch, err}
		}
	}()
	return out
}

func TestStreamJoinsToTheDocumentWithItsLayout(t *testing.T) {
	var lb strings.Builder
	for i := range 60 {
		fmt.Fprintf(&lb, "Sentence %02d is one of many in this long paragraph. ", i) // 50 code points
	}
	long := lb.String() + "The end."
	doc := "\n  Title\n\nFirst line\nsecond line.\n \n\tSecond.\n\n\n" + long + "\n"
	eng := fake.New("upper", fake.WithTranslator(func(text string, _, _ languageTagT) string { return strings.ToUpper(text) }))
	c := newClient(t, translate.WithEngine(eng, translate.Profile{}))
	chs, err := collect(c.TranslateStream(context.Background(), req(doc)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := joined(chs), strings.ToUpper(doc); got != want {
		t.Errorf("joined final chunks = %q, want %q", got, want)
	}
	for _, r := range eng.Requests() {
		for _, s := range r.Texts {
			if n := utf8.RuneCountInString(s); n > 1000 {
				t.Errorf("segment of %d code points, want at most 1000", n)
			}
		}
	}
	if n := len(finals(chs)); n != 5 { // the short paragraphs merged into one, the long one in 4
		t.Errorf("%d segments, want 5", n)
	}
	for i, ch := range finals(chs) {
		if ch.Segment != i || ch.Engine != "upper" {
			t.Errorf("final chunk %d = %+v", i, ch)
		}
	}
	if !strings.HasPrefix(chs[0].Text, "\n  TITLE\n\n") {
		t.Errorf("first chunk %q: want the leading and following white space", chs[0].Text)
	}
}

// Segments finishing out of order are yielded in order, each as soon as every one before
// it is done. In virtual time (synctest): after synctest.Wait every chunk that is ready
// waits on the channel, so "not yet" is exact, and a chunk held back is a deadlock, not a
// hang.
func TestStreamYieldsInSourceOrderAsSoonAsReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make([]chan struct{}, 4)
		for i := range release {
			release[i] = make(chan struct{})
		}
		eng := fake.New("e", fake.WithHook(func(ctx context.Context, r *translate.EngineRequest) error {
			select {
			case <-release[partIndex(r.Texts[0])]:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}))
		c := newClient(t, translate.WithEngine(eng, perParagraph), translate.WithBatchConcurrency(4))
		items := pump(c.TranslateStream(context.Background(), req(parts(4))))
		want := func(i int) {
			t.Helper()
			it := recv(t, items)
			want := translate.Chunk{Segment: i, Text: fmt.Sprintf("[es] Part %d.", i), Engine: "e"}
			if i < 3 {
				want.Text += "\n\n"
			}
			if diff := cmp.Diff(item{ch: want}, it, cmp.AllowUnexported(item{})); diff != "" {
				t.Errorf("chunk (-want +got):\n%s", diff)
			}
		}
		none := func(when string) {
			t.Helper()
			synctest.Wait()
			select {
			case it := <-items:
				t.Fatalf("%s: chunk %+v, want none yet", when, it)
			default:
			}
		}
		close(release[2])
		none("segment 2 done, 0 and 1 not")
		close(release[0])
		want(0) // at once, though 1 is not done
		none("segments 0 and 2 done, 1 not")
		close(release[3])
		none("segments 0, 2 and 3 done, 1 not")
		close(release[1])
		want(1)
		want(2)
		want(3)
		if it, ok := <-items; ok {
			t.Errorf("after the last chunk: %+v", it)
		}
	})
}

// recv receives the next value of a pumped stream in a synctest bubble. A stream that
// holds it back fails the test after a virtual minute instead of hanging it (the Client's
// clock ticks, so the bubble never looks deadlocked).
func recv(t *testing.T, items <-chan item) item {
	t.Helper()
	select {
	case it, ok := <-items:
		if !ok {
			t.Fatal("the stream ended early")
		}
		return it
	case <-time.After(time.Minute):
		t.Fatal("no chunk after a minute")
		return item{}
	}
}

// inflight counts calls running at once.
type inflight struct {
	now, peak, started, returned atomic.Int32
}

func (f *inflight) enter() {
	f.started.Add(1)
	n := f.now.Add(1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (f *inflight) leave() {
	f.now.Add(-1)
	f.returned.Add(1)
}

// Up to WithBatchConcurrency segments are translated at once, and none starts more than
// 4 × WithBatchConcurrency segments after the first not yet yielded. In virtual time
// (synctest): synctest.Wait returns once every call that could start has started and
// blocked, so the counts are exact.
func TestStreamTranslatesSeveralAtOnceBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const conc = 3
		var f inflight
		head := make(chan struct{}) // segment 0 waits on it
		rest := make(chan struct{}) // every other segment waits on it
		eng := fake.New("e", fake.WithHook(func(ctx context.Context, r *translate.EngineRequest) error {
			f.enter()
			defer f.leave()
			gate := rest
			if partIndex(r.Texts[0]) == 0 {
				gate = head
			}
			select {
			case <-gate:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}))
		c := newClient(t, translate.WithEngine(eng, perParagraph), translate.WithBatchConcurrency(conc))
		items := pump(c.TranslateStream(context.Background(), req(parts(40))))
		synctest.Wait()
		if s, n := f.started.Load(), f.now.Load(); s != conc || n != conc {
			t.Fatalf("all calls blocked: %d started, %d running; want %d at once", s, n, conc)
		}
		close(rest) // every segment but the head finishes at once: the stream runs ahead
		synctest.Wait()
		if s, n := f.started.Load(), f.now.Load(); s != 4*conc || n != 1 {
			t.Fatalf("head blocked: %d started, %d running; want %d started (4 × %d ahead), the head running", s, n, 4*conc, conc)
		}
		close(head)
		for i := range 40 {
			it := recv(t, items)
			if it.err != nil || it.ch.Segment != i || it.ch.Partial {
				t.Fatalf("chunk %d: %+v, %v", i, it.ch, it.err)
			}
		}
		if it, ok := <-items; ok {
			t.Errorf("after the last chunk: %+v", it)
		}
		if p := f.peak.Load(); p != conc {
			t.Errorf("at most %d calls at once, want %d", p, conc)
		}
	})
}

// stopping runs a stream of 50 segments in virtual time in which segment 0 takes 1s and
// every other segment 10s, and hands the range to stop, which ends it after segment 0.
// It checks that the range returns at once (no virtual time passes after segment 0), that
// every engine call has returned by then, that no goroutine of the stream is left and that
// no call starts afterwards. It returns what the range yielded.
func stopping(t *testing.T, stop func(seq iter.Seq2[translate.Chunk, error], cancel context.CancelFunc) []item) []item {
	var got []item
	synctest.Test(t, func(t *testing.T) {
		var f inflight
		eng := fake.New("e", fake.WithHook(func(ctx context.Context, r *translate.EngineRequest) error {
			f.enter()
			defer f.leave()
			d := 10 * time.Second
			if partIndex(r.Texts[0]) == 0 {
				d = time.Second
			}
			select {
			case <-time.After(d):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}))
		c := newClient(t, translate.WithEngine(eng, translate.Profile{Timeout: time.Minute, MaxChars: 10}), translate.WithBatchConcurrency(4))
		before := goleak.IgnoreCurrent() // the Client's own goroutines
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		t0 := time.Now()
		got = stop(c.TranslateStream(ctx, req(parts(50))), cancel)
		if d := time.Since(t0); d != time.Second {
			t.Errorf("the range returned after %v, want 1s: the work was not stopped at once", d)
		}
		if s, r := f.started.Load(), f.returned.Load(); s != r || s != 4 {
			t.Errorf("when the range returned: %d calls started, %d returned; want 4 and 4", s, r)
		}
		synctest.Wait() // goroutines on their way out exit; any left is a leak
		goleak.VerifyNone(t, before)
		time.Sleep(time.Minute)
		if s := f.started.Load(); s != 4 {
			t.Errorf("%d calls started after the range, want none", s-4)
		}
	})
	return got
}

// Breaking out of the loop stops every call at once and leaves no goroutine behind.
func TestStreamBreakStopsAllWork(t *testing.T) {
	got := stopping(t, func(seq iter.Seq2[translate.Chunk, error], _ context.CancelFunc) []item {
		var got []item
		for ch, err := range seq {
			got = append(got, item{ch, err})
			break
		}
		return got
	})
	want := []item{{ch: translate.Chunk{Segment: 0, Text: "[es] Part 0.\n\n", Engine: "e"}}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(item{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Canceling ctx stops every call at once and ends the stream with ctx's error.
func TestStreamCancel(t *testing.T) {
	got := stopping(t, func(seq iter.Seq2[translate.Chunk, error], cancel context.CancelFunc) []item {
		var got []item
		for ch, err := range seq {
			got = append(got, item{ch, err})
			cancel()
		}
		return got
	})
	want := []item{{ch: translate.Chunk{Segment: 0, Text: "[es] Part 0.\n\n", Engine: "e"}}, {ch: translate.Chunk{Segment: 1}, err: context.Canceled}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(item{}), cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) || errors.Is(b, a) })); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A stream that breaks mid-way fails over for its segment: Partial chunks, then the final
// chunk with the next engine's text.
func TestStreamFailsOverMidStream(t *testing.T) {
	next := make(chan struct{}, 1)
	llm := &streamer{name: "llm", play: func(ctx context.Context, text string, yield func(string, error) bool) {
		for _, d := range []string{"Hola", " mun"} {
			if !yield(d, nil) {
				return
			}
			select { // the test saw the partial chunk
			case <-next:
			case <-ctx.Done():
				return
			}
		}
		yield("", &translate.Error{Kind: translate.KindUnavailable, Message: "connection cut"})
	}}
	backup := fake.New("backup")
	c := newClient(t, sharp, translate.WithEngine(llm, primary), translate.WithEngine(backup, secondary))
	got := streamAcking(t, c, "Hello world.", next)
	want := []translate.Chunk{
		{Segment: 0, Text: "Hola", Partial: true, Engine: "llm"},
		{Segment: 0, Text: "Hola mun", Partial: true, Engine: "llm"},
		{Segment: 0, Text: "[es] Hello world.", Engine: "backup"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// acked plays deltas, each yielded only after the test acknowledged the one before on ack,
// then ends with end (nil: the stream completes).
func acked(ack <-chan struct{}, end error, deltas ...string) func(ctx context.Context, text string, yield func(string, error) bool) {
	return func(ctx context.Context, text string, yield func(string, error) bool) {
		for _, d := range deltas {
			if !yield(d, nil) {
				return
			}
			select {
			case <-ack:
			case <-ctx.Done():
				return
			}
		}
		if end != nil {
			yield("", end)
		}
	}
}

// When the engine a segment fails over to streams too, its partial text replaces the
// broken stream's: the next chunk holds the new engine's text alone, never appended to
// the old.
func TestStreamFailoverPartialReplaced(t *testing.T) {
	ack := make(chan struct{})
	cut := &translate.Error{Kind: translate.KindUnavailable, Message: "connection cut"}
	llm := &streamer{name: "llm", play: acked(ack, cut, "Hola", " mun")}
	llm2 := &streamer{name: "llm2", play: acked(ack, nil, "Hola,", " mundo.")}
	c := newClient(t, sharp, translate.WithEngine(llm, primary), translate.WithEngine(llm2, secondary))
	got := streamAcking(t, c, "Hello world.", ack)
	want := []translate.Chunk{
		{Segment: 0, Text: "Hola", Partial: true, Engine: "llm"},
		{Segment: 0, Text: "Hola mun", Partial: true, Engine: "llm"},
		{Segment: 0, Text: "Hola,", Partial: true, Engine: "llm2"},
		{Segment: 0, Text: "Hola, mundo.", Partial: true, Engine: "llm2"},
		{Segment: 0, Text: "Hola, mundo.", Engine: "llm2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if a, b := llm.calls.Load(), llm2.calls.Load(); a != 1 || b != 1 {
		t.Errorf("calls: llm %d, llm2 %d; want 1 each", a, b)
	}
}

// Only the head segment has Partial chunks; a later segment still streaming when it
// becomes the head shows its latest text.
func TestStreamPartialOnlyForTheHead(t *testing.T) {
	releaseA, releaseB := make(chan struct{}), make(chan struct{})
	bSent := make(chan struct{})
	llm := &streamer{name: "llm", play: func(ctx context.Context, text string, yield func(string, error) bool) {
		switch text {
		case "Alpha.":
			<-releaseA
			yield("alfa.", nil)
		case "Beta.":
			if !yield("be", nil) || !yield("ta.", nil) {
				return
			}
			close(bSent)
			<-releaseB
		}
	}}
	c := newClient(t, translate.WithEngine(llm, perParagraph))
	items := pump(c.TranslateStream(context.Background(), req("Alpha.\n\nBeta.")))
	<-bSent
	close(releaseA)
	var got []translate.Chunk
	for it := range items {
		if it.err != nil {
			t.Fatal(it.err)
		}
		if it.ch.Segment == 0 && it.ch.Partial {
			continue // the head's own partial text may or may not show before its end
		}
		got = append(got, it.ch)
		if it.ch.Segment == 1 && it.ch.Partial {
			close(releaseB)
		}
	}
	want := []translate.Chunk{
		{Segment: 0, Text: "alfa.\n\n", Engine: "llm"},
		{Segment: 1, Text: "beta.", Partial: true, Engine: "llm"},
		{Segment: 1, Text: "beta.", Engine: "llm"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A stream that echoes the source shows none of it, not even as partial text: its answer
// is rejected and the segment fails over.
func TestStreamEchoNeverShown(t *testing.T) {
	echo := &streamer{name: "echo", play: func(ctx context.Context, text string, yield func(string, error) bool) {
		for _, w := range strings.SplitAfter(text, " ") {
			if !yield(w, nil) {
				return
			}
		}
	}}
	c := newClient(t, sharp, translate.WithEngine(echo, primary), translate.WithEngine(fake.New("backup"), secondary))
	chs, err := collect(c.TranslateStream(context.Background(), req("Hello big world.")))
	if err != nil {
		t.Fatal(err)
	}
	want := []translate.Chunk{{Segment: 0, Text: "[es] Hello big world.", Engine: "backup"}}
	if diff := cmp.Diff(want, chs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if echo.calls.Load() != 1 {
		t.Errorf("echo called %d times, want 1", echo.calls.Load())
	}
}

// A stream that panics, or never ends, fails over like any bad call.
func TestStreamHostileEngines(t *testing.T) {
	var sent atomic.Int64
	for name, play := range map[string]func(ctx context.Context, text string, yield func(string, error) bool){
		"panics": func(ctx context.Context, text string, yield func(string, error) bool) {
			yield("Ho", nil)
			panic("the customer's text: " + text)
		},
		"endless": func(ctx context.Context, text string, yield func(string, error) bool) {
			for sent.Load() < 64<<20 && yield("la", nil) {
				sent.Add(2)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			bad := &streamer{name: "bad", play: play}
			c := newClient(t, sharp, translate.WithEngine(bad, primary), translate.WithEngine(fake.New("backup"), secondary))
			chs, err := collect(c.TranslateStream(context.Background(), req("Hello world.")))
			if err != nil {
				t.Fatal(err)
			}
			if f := finals(chs); len(f) != 1 || f[0].Text != "[es] Hello world." {
				t.Errorf("final chunks %+v, want the backup's", f)
			}
		})
	}
	if n := sent.Load(); n > 64<<10 {
		t.Errorf("the endless stream sent %d bytes before it was stopped", n)
	}
}

// An engine that ignores ctx does not keep the caller waiting once the caller stops.
func TestStreamEngineIgnoringContext(t *testing.T) {
	hold := make(chan struct{})
	started := make(chan struct{})
	var once sync.Once
	deaf := &streamer{name: "deaf", play: func(ctx context.Context, text string, yield func(string, error) bool) {
		if text == "Part 0." {
			yield("Parte 0.", nil)
			return
		}
		once.Do(func() { close(started) })
		<-hold // ignores ctx
	}}
	c := newClient(t, translate.WithEngine(deaf, perParagraph), translate.WithBatchConcurrency(2))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errs []error
	for ch, err := range c.TranslateStream(ctx, req(parts(3))) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ch.Segment == 0 && !ch.Partial {
			<-started
			cancel()
		}
	}
	close(hold) // only now does the engine return
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("errors %v, want context.Canceled once", errs)
	}
}

// Every rule of Translate holds per segment. The cache: a repeated paragraph, or one
// translated before, costs no call.
func TestStreamCachePerSegment(t *testing.T) {
	eng := fake.New("e")
	c := newClient(t, translate.WithEngine(eng, perParagraph), translate.WithCache(100, time.Hour), translate.WithBatchConcurrency(1))
	if _, err := c.Translate(context.Background(), req("Known.")); err != nil {
		t.Fatal(err)
	}
	eng.Reset()
	chs, err := collect(c.TranslateStream(context.Background(), req("Same text.\n\nKnown.\n\nSame text.")))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := joined(chs), "[es] Same text.\n\n[es] Known.\n\n[es] Same text."; got != want {
		t.Errorf("joined = %q, want %q", got, want)
	}
	if eng.Calls() != 1 {
		t.Errorf("%d engine calls, want 1 (two segments from the cache)", eng.Calls())
	}
}

// The budget binds per segment: the segment it cannot cover fails with KindBudgetExceeded
// and ends the stream.
func TestStreamBudgetPerSegment(t *testing.T) {
	eng := fake.New("paid")
	c := newClient(t, translate.WithClock(newClock()), translate.WithBudget(translate.Budget{Daily: 2}),
		translate.WithBatchConcurrency(1),
		// 10 characters at 100 000 per million: 1 credit a segment.
		translate.WithEngine(eng, translate.Profile{CostPerMillion: 100_000, MaxChars: 10}))
	r := req("Segment 0.\n\nSegment 1.\n\nSegment 2.\n\nSegment 3.")
	r.Priority = translate.PriorityHigh
	var got []item
	for ch, err := range c.TranslateStream(context.Background(), r) {
		got = append(got, item{ch, err})
	}
	if len(got) != 3 || got[2].err == nil || got[2].ch.Segment != 2 || translate.KindOf(got[2].err) != translate.KindBudgetExceeded {
		t.Fatalf("got %+v, want two chunks then segment 2's KindBudgetExceeded", got)
	}
	if eng.Calls() != 2 {
		t.Errorf("%d calls, want 2", eng.Calls())
	}
}

// The quota binds per segment: once an engine's quota is spent, the next segments go to
// another engine.
func TestStreamQuotaPerSegment(t *testing.T) {
	a, b := fake.New("a"), fake.New("b")
	c := newClient(t, sharp, translate.WithClock(newClock()), translate.WithBatchConcurrency(1),
		// Each segment is 10 code points: a's quota covers two.
		translate.WithEngine(a, translate.Profile{Quality: 100, Quota: 25, MaxChars: 10}),
		translate.WithEngine(b, secondary))
	chs, err := collect(c.TranslateStream(context.Background(), req("Segment 0.\n\nSegment 1.\n\nSegment 2.\n\nSegment 3.")))
	if err != nil {
		t.Fatal(err)
	}
	var engines []string
	for _, ch := range chs {
		engines = append(engines, ch.Engine)
	}
	if diff := cmp.Diff([]string{"a", "a", "b", "b"}, engines); diff != "" {
		t.Errorf("engines of the segments (-want +got):\n%s", diff)
	}
	if a.Calls() != 2 {
		t.Errorf("a called %d times, want 2 (its quota)", a.Calls())
	}
}

// The attempt budget binds per segment: a segment whose every stream breaks makes at most
// RetryPolicy.MaxAttempts calls, and its error lists them.
func TestStreamAttemptBudgetPerSegment(t *testing.T) {
	var streamers []*streamer
	opts := []translate.Option{translate.WithBatchConcurrency(1),
		translate.WithRetry(translate.RetryPolicy{MaxAttempts: 3, Backoff: time.Millisecond}), translate.WithClock(newClock())}
	for _, name := range []string{"a", "b", "c", "d"} {
		s := &streamer{name: name, play: func(ctx context.Context, text string, yield func(string, error) bool) {
			if yield("Hola", nil) {
				yield("", &translate.Error{Kind: translate.KindUnavailable, Message: "connection cut"})
			}
		}}
		streamers = append(streamers, s)
		opts = append(opts, translate.WithEngine(s, perParagraph))
	}
	c := newClient(t, opts...)
	chs, err := collect(c.TranslateStream(context.Background(), req("First part.\n\nSecond part.")))
	if f := finals(chs); len(f) != 0 {
		t.Errorf("final chunks %+v, want none", f)
	}
	var te *translate.Error
	if !errors.As(err, &te) || len(te.Attempts) != 3 {
		t.Fatalf("err = %v, want a *translate.Error with 3 attempts", err)
	}
	calls := 0
	for _, s := range streamers {
		calls += int(s.calls.Load())
	}
	if calls != 3 {
		t.Errorf("%d engine calls for the segment, want 3 (MaxAttempts)", calls)
	}
}

// A segment that cannot be translated ends the stream with its error; the source never
// comes back as a translation.
func TestStreamSegmentErrorEnds(t *testing.T) {
	eng := fake.New("e", fake.WithTranslator(func(text string, _, _ languageTagT) string {
		if text == "Second part here." {
			return text // an echo: rejected
		}
		return "[es] " + text
	}))
	c := newClient(t, translate.WithEngine(eng, translate.Profile{MaxChars: 20}), translate.WithBatchConcurrency(1))
	var got []item
	for ch, err := range c.TranslateStream(context.Background(), req("First part here.\n\nSecond part here.\n\nThird part here.")) {
		got = append(got, item{ch, err})
	}
	if len(got) != 2 || got[0].err != nil || got[1].ch != (translate.Chunk{Segment: 1}) || translate.KindOf(got[1].err) != translate.KindBadOutput {
		t.Fatalf("got %+v, want chunk 0 then segment 1's KindBadOutput", got)
	}
}

func TestStreamRequestIDPerSegment(t *testing.T) {
	eng := fake.New("e")
	c := newClient(t, translate.WithEngine(eng, perParagraph))
	r := req(parts(3))
	r.RequestID = "doc-7"
	if _, err := collect(c.TranslateStream(context.Background(), r)); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, er := range eng.Requests() {
		ids = append(ids, er.RequestID)
	}
	sort.Strings(ids)
	if diff := cmp.Diff([]string{"doc-7#0", "doc-7#1", "doc-7#2"}, ids); diff != "" {
		t.Errorf("request ids (-want +got):\n%s", diff)
	}
}

func TestStreamRefusesBeforeTranslating(t *testing.T) {
	eng := fake.New("e")
	c := newClient(t, translate.WithEngine(eng, perParagraph))
	noTarget := req("Hello.")
	noTarget.Target = ""
	for name, tc := range map[string]struct {
		r    translate.Request
		kind translate.Kind
	}{
		"no target":    {noTarget, translate.KindInvalidInput},
		"blank":        {req(" \n\n "), translate.KindInvalidInput},
		"bad UTF-8":    {req("Fine.\n\nNot \xff fine."), translate.KindInvalidInput},
		"too long":     {req(strings.Repeat("Long text. ", 100_000)), translate.KindTextTooLong},
		"unknown pin":  {translate.Request{Text: "Hi.", Target: "es", Engine: "nope"}, translate.KindInvalidInput},
		"same src/tgt": {translate.Request{Text: "Hi.", Source: "es", Target: "es"}, translate.KindInvalidInput},
	} {
		var got []item
		for ch, err := range c.TranslateStream(context.Background(), tc.r) {
			got = append(got, item{ch, err})
		}
		if len(got) != 1 || got[0].ch != (translate.Chunk{}) || translate.KindOf(got[0].err) != tc.kind {
			t.Errorf("%s: got %+v, want one (Chunk{}, %v)", name, got, tc.kind)
		}
	}
	if eng.Calls() != 0 {
		t.Errorf("%d engine calls", eng.Calls())
	}
	c.Close()
	chs, err := collect(c.TranslateStream(context.Background(), req("Hello.")))
	if len(chs) != 0 || !errors.Is(err, translate.ErrClosed) {
		t.Errorf("closed: %v, %v; want ErrClosed", chs, err)
	}
}

type nilStreamer struct{}

func (nilStreamer) Name() string { return "nil" }
func (nilStreamer) Translate(context.Context, *translate.EngineRequest) (*translate.EngineResult, error) {
	return nil, nil
}
func (nilStreamer) TranslateStream(context.Context, *translate.EngineRequest) iter.Seq2[string, error] {
	return nil
}

// A StreamEngine that returns no stream is bad output, named.
func TestStreamNilStream(t *testing.T) {
	c := newClient(t, translate.WithEngine(nilStreamer{}, perParagraph))
	_, err := collect(c.TranslateStream(context.Background(), req("Hello world.")))
	var te *translate.Error
	if !errors.As(err, &te) || len(te.Attempts) != 1 || translate.KindOf(te.Attempts[0].Err) != translate.KindBadOutput ||
		!strings.Contains(te.Attempts[0].Err.Error(), "nil stream") {
		t.Errorf("err = %v, want an attempt of KindBadOutput naming the nil stream", err)
	}
}

// streamAcking streams text through c and returns its chunks; after each partial chunk it
// sends on ack, which lets the scripted engine go on.
func streamAcking(t *testing.T, c *translate.Client, text string, ack chan<- struct{}) []translate.Chunk {
	t.Helper()
	var got []translate.Chunk
	for ch, err := range c.TranslateStream(context.Background(), req(text)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch)
		if ch.Partial {
			ack <- struct{}{}
		}
	}
	return got
}
