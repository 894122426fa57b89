package fake_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"
	"golang.org/x/text/language"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var tagCmp = cmp.Comparer(func(a, b language.Tag) bool { return a == b })

func req(texts ...string) *translate.EngineRequest {
	return &translate.EngineRequest{Texts: texts, Source: language.English, Target: language.Spanish}
}

func scriptedErr(kind translate.Kind, status int, ra time.Duration) *translate.Error {
	return &translate.Error{
		Kind: kind, Engine: fake.Name, StatusCode: status, RetryAfter: ra,
		Message: "fake: scripted " + kind.String(),
	}
}

// call runs one Translate with a background context.
func call(t *testing.T, e *fake.Engine, r *translate.EngineRequest) (*translate.EngineResult, error) {
	t.Helper()
	return e.Translate(context.Background(), r)
}

func wantErr(t *testing.T, err error, want *translate.Error) {
	t.Helper()
	var got *translate.Error
	if !errors.As(err, &got) {
		t.Fatalf("error = %v (%T), want *translate.Error", err, err)
	}
	if diff := cmp.Diff(*want, *got, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("error mismatch (-want +got):\n%s", diff)
	}
}

func TestDefaults(t *testing.T) {
	e := fake.New("")
	if got := e.Name(); got != fake.Name {
		t.Errorf("Name() = %q, want %q", got, fake.Name)
	}
	if got := fake.New("deepl").Name(); got != "deepl" {
		t.Errorf("Name() = %q, want deepl", got)
	}
	res, err := call(t, e, req("hello", "héllo wörld", ""))
	if err != nil {
		t.Fatal(err)
	}
	want := &translate.EngineResult{
		Texts:       []string{"[es] hello", "[es] héllo wörld", "[es] "},
		Source:      language.English,
		BilledChars: 5 + 11,
	}
	if diff := cmp.Diff(want, res, tagCmp); diff != "" {
		t.Errorf("result mismatch (-want +got):\n%s", diff)
	}
	if got := e.QuotaLeft(); got != -1 {
		t.Errorf("QuotaLeft() = %d, want -1", got)
	}
}

func TestEmptyTexts(t *testing.T) {
	res, err := call(t, fake.New(""), req())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Texts) != 0 {
		t.Errorf("Texts = %q, want none", res.Texts)
	}
}

func TestNilRequest(t *testing.T) {
	_, err := fake.New("").Translate(context.Background(), nil)
	if got := translate.KindOf(err); got != translate.KindInvalidInput {
		t.Errorf("KindOf = %v, want invalid_input", got)
	}
}

func TestSourceAndDetected(t *testing.T) {
	tests := []struct {
		name string
		opts []fake.Option
		src  language.Tag
		want language.Tag
	}{
		{"given", nil, language.French, language.French},
		{"detect default", nil, language.Und, language.English},
		{"detect configured", []fake.Option{fake.WithDetected(language.Japanese)}, language.Und, language.Japanese},
		{"given wins over detected", []fake.Option{fake.WithDetected(language.Japanese)}, language.German, language.German},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := fake.New("", tt.opts...)
			res, err := e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"x"}, Source: tt.src, Target: language.Spanish})
			if err != nil {
				t.Fatal(err)
			}
			if res.Source != tt.want {
				t.Errorf("Source = %v, want %v", res.Source, tt.want)
			}
		})
	}
}

func TestWithTranslator(t *testing.T) {
	e := fake.New("", fake.WithTranslator(func(text string, source, target language.Tag) string {
		return source.String() + ">" + target.String() + ":" + text
	}))
	res, err := call(t, e, req("a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"en>es:a", "en>es:b"}, res.Texts); diff != "" {
		t.Errorf("Texts mismatch (-want +got):\n%s", diff)
	}
}

func TestScript(t *testing.T) {
	e := fake.New("")
	e.Script(
		fake.Fail(translate.KindUnavailable),
		fake.RateLimited(2*time.Second),
		fake.FailStatus(translate.KindUnavailable, 502),
		fake.OK(),
		fake.Outcome{}, // zero value: unknown failure
	)
	e.Script(fake.Fail(translate.KindUnauthorized))

	_, err := call(t, e, req("x"))
	wantErr(t, err, scriptedErr(translate.KindUnavailable, 503, 0))
	_, err = call(t, e, req("x"))
	wantErr(t, err, scriptedErr(translate.KindRateLimited, 429, 2*time.Second))
	_, err = call(t, e, req("x"))
	wantErr(t, err, scriptedErr(translate.KindUnavailable, 502, 0))
	if _, err := call(t, e, req("x")); err != nil {
		t.Fatalf("scripted OK failed: %v", err)
	}
	_, err = call(t, e, req("x"))
	wantErr(t, err, scriptedErr(translate.KindUnknown, 500, 0))
	_, err = call(t, e, req("x"))
	wantErr(t, err, scriptedErr(translate.KindUnauthorized, 401, 0))
	// Queue empty: default behaviour.
	if _, err := call(t, e, req("x")); err != nil {
		t.Fatalf("after the script: %v", err)
	}
	if got := e.Calls(); got != 7 {
		t.Errorf("Calls() = %d, want 7", got)
	}
}

func TestDefaultStatus(t *testing.T) {
	tests := []struct {
		kind translate.Kind
		want int
	}{
		{translate.KindUnknown, 500},
		{translate.KindInvalidInput, 400},
		{translate.KindUnsupported, 400},
		{translate.KindUnauthorized, 401},
		{translate.KindQuotaExhausted, 456},
		{translate.KindRateLimited, 429},
		{translate.KindUnavailable, 503},
		{translate.KindTimeout, 504},
		{translate.KindTextTooLong, 413},
		{translate.KindBadOutput, 0},
		{translate.KindCanceled, 0},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			e := fake.New("")
			e.Script(fake.Fail(tt.kind))
			_, err := call(t, e, req("x"))
			wantErr(t, err, scriptedErr(tt.kind, tt.want, 0))
			if got := fake.DefaultStatus(tt.kind); got != tt.want {
				t.Errorf("DefaultStatus = %d, want %d", got, tt.want)
			}
			if translate.KindOf(err) != tt.kind {
				t.Errorf("KindOf = %v, want %v", translate.KindOf(err), tt.kind)
			}
		})
	}
}

func TestDownUp(t *testing.T) {
	e := fake.New("mt")
	e.Down(translate.KindUnavailable)
	for range 3 {
		_, err := call(t, e, req("x"))
		if !errors.Is(err, translate.ErrUnavailable) {
			t.Fatalf("down: err = %v, want unavailable", err)
		}
	}
	// A scripted outcome wins over Down.
	e.Script(fake.OK())
	if _, err := call(t, e, req("x")); err != nil {
		t.Fatalf("scripted OK while down: %v", err)
	}
	// Down wins over FailRate.
	e.FailRate(translate.KindTimeout, 1, 1)
	_, err := call(t, e, req("x"))
	wantErr(t, err, &translate.Error{Kind: translate.KindUnavailable, Engine: "mt", StatusCode: 503, Message: "fake: scripted unavailable"})

	e.SetBadOutput(fake.BadEmpty)
	e.Script(fake.Fail(translate.KindUnauthorized))
	e.Up()
	res, err := call(t, e, req("x"))
	if err != nil {
		t.Fatalf("after Up: %v", err)
	}
	if diff := cmp.Diff([]string{"[es] x"}, res.Texts); diff != "" {
		t.Errorf("after Up, Texts mismatch (-want +got):\n%s", diff)
	}
}

func TestUpKeepsLatencyAndQuota(t *testing.T) {
	var waits []time.Duration
	e := fake.New("", fake.WithQuota(3), fake.WithLatency(time.Second), fake.WithWait(func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}))
	e.Up()
	if _, err := call(t, e, req("abcd")); translate.KindOf(err) != translate.KindQuotaExhausted {
		t.Errorf("err = %v, want quota_exhausted", err)
	}
	if diff := cmp.Diff([]time.Duration{time.Second}, waits); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
}

// failures records which of n calls fail.
func failures(t *testing.T, e *fake.Engine, n int) []bool {
	t.Helper()
	out := make([]bool, n)
	for i := range out {
		_, err := call(t, e, req("x"))
		out[i] = err != nil
		if err != nil && !errors.Is(err, translate.ErrUnavailable) {
			t.Fatalf("call %d: err = %v, want unavailable", i, err)
		}
	}
	return out
}

func TestFailRateDeterministic(t *testing.T) {
	const n = 10000
	a := fake.New("")
	a.FailRate(translate.KindUnavailable, 0.3, 42)
	b := fake.New("")
	b.FailRate(translate.KindUnavailable, 0.3, 42)
	fa, fb := failures(t, a, n), failures(t, b, n)
	if diff := cmp.Diff(fa, fb); diff != "" {
		t.Errorf("same seed, different sequences (-a +b):\n%s", diff)
	}
	count := 0
	for _, f := range fa {
		if f {
			count++
		}
	}
	// Binomial(10000, 0.3): sd ≈ 46; allow 5 sd.
	if got := float64(count) / n; math.Abs(got-0.3) > 0.023 {
		t.Errorf("failure ratio = %.4f, want about 0.3", got)
	}

	c := fake.New("")
	c.FailRate(translate.KindUnavailable, 0.3, 43)
	if cmp.Equal(fa, failures(t, c, n)) {
		t.Error("seeds 42 and 43 gave the same sequence")
	}

	// Restarting with the same seed restarts the sequence.
	a.FailRate(translate.KindUnavailable, 0.3, 42)
	if diff := cmp.Diff(fa[:100], failures(t, a, 100)); diff != "" {
		t.Errorf("restart with the same seed (-first +restart):\n%s", diff)
	}
}

func TestFailRateEdges(t *testing.T) {
	e := fake.New("")
	e.FailRate(translate.KindUnavailable, 1, 7)
	for i, f := range failures(t, e, 50) {
		if !f {
			t.Fatalf("rate 1: call %d succeeded", i)
		}
	}
	e.FailRate(translate.KindUnavailable, 0, 7)
	for i, f := range failures(t, e, 50) {
		if f {
			t.Fatalf("rate 0: call %d failed", i)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	want := func(ra time.Duration) *translate.Error {
		return scriptedErr(translate.KindRateLimited, 429, ra)
	}
	e := fake.New("")
	e.SetRetryAfter(3 * time.Second)

	e.Script(fake.Fail(translate.KindRateLimited), fake.RateLimited(time.Second))
	_, err := call(t, e, req("x"))
	wantErr(t, err, want(3*time.Second))
	_, err = call(t, e, req("x")) // the outcome's own RetryAfter wins
	wantErr(t, err, want(time.Second))

	e.Down(translate.KindRateLimited)
	_, err = call(t, e, req("x"))
	wantErr(t, err, want(3*time.Second))

	e.Up()
	e.FailRate(translate.KindRateLimited, 1, 1)
	_, err = call(t, e, req("x"))
	wantErr(t, err, want(3*time.Second))

	// Other kinds never carry it.
	e.Script(fake.Fail(translate.KindUnavailable))
	_, err = call(t, e, req("x"))
	wantErr(t, err, scriptedErr(translate.KindUnavailable, 503, 0))
}

func TestQuota(t *testing.T) {
	quotaErr := &translate.Error{Kind: translate.KindQuotaExhausted, Engine: fake.Name, StatusCode: 456, Message: "fake: quota exhausted"}
	e := fake.New("", fake.WithQuota(10))

	// Code points, not bytes: "héllo" is 5, "日本" is 2.
	res, err := call(t, e, req("héllo", "日本"))
	if err != nil {
		t.Fatal(err)
	}
	if res.BilledChars != 7 {
		t.Errorf("BilledChars = %d, want 7", res.BilledChars)
	}
	if got := e.QuotaLeft(); got != 3 {
		t.Errorf("QuotaLeft = %d, want 3", got)
	}
	// Too big: fails and consumes nothing.
	_, err = call(t, e, req("abcd"))
	wantErr(t, err, quotaErr)
	if got := e.QuotaLeft(); got != 3 {
		t.Errorf("after a refused call, QuotaLeft = %d, want 3", got)
	}
	// Exactly what is left.
	if _, err := call(t, e, req("abc")); err != nil {
		t.Fatal(err)
	}
	_, err = call(t, e, req("a"))
	wantErr(t, err, quotaErr)
	// Failed outcomes consume nothing.
	e.SetQuotaLeft(5)
	e.Script(fake.Fail(translate.KindUnavailable))
	if _, err := call(t, e, req("abc")); !errors.Is(err, translate.ErrUnavailable) {
		t.Fatalf("err = %v, want unavailable", err)
	}
	if got := e.QuotaLeft(); got != 5 {
		t.Errorf("after a failed call, QuotaLeft = %d, want 5", got)
	}

	e.SetQuotaLeft(0)
	_, err = call(t, e, req("a"))
	wantErr(t, err, quotaErr)
	if _, err := call(t, e, req("")); err != nil {
		t.Errorf("zero characters with zero quota: %v", err)
	}

	e.SetQuotaLeft(-1)
	if _, err := call(t, e, req("a long text beyond any quota")); err != nil {
		t.Errorf("unlimited: %v", err)
	}
	if got := e.QuotaLeft(); got != -1 {
		t.Errorf("QuotaLeft = %d, want -1", got)
	}

	e.SetQuota(2)
	if got := e.QuotaLeft(); got != 2 {
		t.Errorf("after SetQuota(2), QuotaLeft = %d, want 2", got)
	}
	e.SetQuota(0)
	if got := e.QuotaLeft(); got != -1 {
		t.Errorf("after SetQuota(0), QuotaLeft = %d, want -1 (unlimited)", got)
	}
}

// recorder is a WithWait function that records the waits and returns at once.
type recorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recorder) wait(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.waits = append(r.waits, d)
	r.mu.Unlock()
	return nil
}

func (r *recorder) got() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.waits...)
}

func TestLatency(t *testing.T) {
	var rec recorder
	e := fake.New("", fake.WithLatency(3*time.Second), fake.WithWait(rec.wait))
	e.Script(fake.OK(), fake.Slow(time.Minute), fake.Fail(translate.KindUnavailable), fake.Outcome{OK: true, Latency: -1})
	for range 4 {
		call(t, e, req("x"))
	}
	e.SetLatency(0)
	call(t, e, req("x")) // no wait at all
	e.SetLatency(time.Millisecond)
	call(t, e, req("x"))
	want := []time.Duration{3 * time.Second, time.Minute, 3 * time.Second, 3 * time.Second, time.Millisecond}
	if diff := cmp.Diff(want, rec.got()); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
}

func TestLatencyFunc(t *testing.T) {
	var rec recorder
	n := 0
	e := fake.New("", fake.WithLatency(time.Hour), fake.WithLatencyFunc(func() time.Duration {
		n++
		return time.Duration(n) * time.Millisecond
	}), fake.WithWait(rec.wait))
	e.Script(fake.OK(), fake.Slow(time.Second))
	for range 3 {
		call(t, e, req("x"))
	}
	e.SetLatency(time.Minute) // replaces the function
	call(t, e, req("x"))
	want := []time.Duration{time.Millisecond, time.Second, 2 * time.Millisecond, time.Minute}
	if diff := cmp.Diff(want, rec.got()); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
}

// ctlCtx is a context whose Done and Err the test controls, so a deadline can pass
// without waiting for a clock.
type ctlCtx struct {
	context.Context
	done chan struct{}
	once sync.Once
	mu   sync.Mutex
	err  error
}

func newCtlCtx() *ctlCtx {
	return &ctlCtx{Context: context.Background(), done: make(chan struct{})}
}

func (c *ctlCtx) Done() <-chan struct{} { return c.done }

func (c *ctlCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *ctlCtx) finish(err error) {
	c.once.Do(func() {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(c.done)
	})
}

func TestLatencyHonoursContext(t *testing.T) {
	tests := []struct {
		name  string
		cause error
		kind  translate.Kind
	}{
		{"canceled", context.Canceled, translate.KindCanceled},
		{"deadline", context.DeadlineExceeded, translate.KindTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := newCtlCtx()
			// The default wait is used; the hook ends ctx once the call has started, so
			// the hour-long wait must return through ctx.Done().
			e := fake.New("", fake.WithQuota(100), fake.WithLatency(time.Hour),
				fake.WithHook(func(context.Context, *translate.EngineRequest) error {
					ctx.finish(tt.cause)
					return nil
				}))
			_, err := e.Translate(ctx, req("abc"))
			wantErr(t, err, &translate.Error{Kind: tt.kind, Engine: fake.Name, Err: tt.cause})
			if !errors.Is(err, tt.cause) {
				t.Errorf("errors.Is(err, %v) = false", tt.cause)
			}
			if got := e.QuotaLeft(); got != 100 {
				t.Errorf("QuotaLeft = %d, want 100 (given back)", got)
			}
		})
	}
}

func TestLatencyCanceledDuringWait(t *testing.T) {
	// The wait blocks until the test cancels ctx, after it knows the call is waiting.
	waiting := make(chan time.Duration, 1)
	e := fake.New("", fake.WithLatency(time.Hour), fake.WithQuota(10), fake.WithWait(func(ctx context.Context, d time.Duration) error {
		waiting <- d
		<-ctx.Done()
		return ctx.Err()
	}))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := e.Translate(ctx, req("abc"))
		errc <- err
	}()
	if d := <-waiting; d != time.Hour {
		t.Errorf("wait(%v), want 1h", d)
	}
	if got := e.QuotaLeft(); got != 7 {
		t.Errorf("during the wait, QuotaLeft = %d, want 7 (reserved)", got)
	}
	cancel()
	wantErr(t, <-errc, &translate.Error{Kind: translate.KindCanceled, Engine: fake.Name, Err: context.Canceled})
	if got := e.QuotaLeft(); got != 10 {
		t.Errorf("after cancel, QuotaLeft = %d, want 10", got)
	}
}

func TestWaitErrorWithoutContext(t *testing.T) {
	boom := errors.New("clock broke")
	e := fake.New("", fake.WithLatency(time.Second), fake.WithWait(func(context.Context, time.Duration) error { return boom }))
	if _, err := call(t, e, req("x")); err != boom {
		t.Errorf("err = %v, want %v", err, boom)
	}
}

func TestContextDoneAtStart(t *testing.T) {
	hooked := false
	e := fake.New("", fake.WithHook(func(context.Context, *translate.EngineRequest) error {
		hooked = true
		return nil
	}))
	e.Script(fake.Fail(translate.KindUnavailable))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.Translate(ctx, req("x"))
	wantErr(t, err, &translate.Error{Kind: translate.KindCanceled, Engine: fake.Name, Err: context.Canceled})

	dctx, dcancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer dcancel()
	_, err = e.Translate(dctx, req("y"))
	wantErr(t, err, &translate.Error{Kind: translate.KindTimeout, Engine: fake.Name, Err: context.DeadlineExceeded})

	if hooked {
		t.Error("hook ran for a call whose ctx was already done")
	}
	if got := e.Calls(); got != 2 {
		t.Errorf("Calls() = %d, want 2 (logged)", got)
	}
	// The script was not consumed.
	if _, err := call(t, e, req("z")); !errors.Is(err, translate.ErrUnavailable) {
		t.Errorf("err = %v, want the scripted failure", err)
	}
}

func TestHook(t *testing.T) {
	boom := errors.New("boom")
	var seen []string
	var rec recorder
	e := fake.New("", fake.WithLatency(time.Second), fake.WithWait(rec.wait), fake.WithHook(func(ctx context.Context, r *translate.EngineRequest) error {
		seen = append(seen, r.Texts[0])
		if r.Texts[0] == "fail" {
			return boom
		}
		return nil
	}))
	e.Script(fake.Fail(translate.KindUnavailable))
	if _, err := call(t, e, req("fail")); err != boom {
		t.Fatalf("err = %v, want the hook's error as is", err)
	}
	// The hook ran before the script was popped and before any latency.
	if _, err := call(t, e, req("next")); !errors.Is(err, translate.ErrUnavailable) {
		t.Fatalf("err = %v, want the scripted failure", err)
	}
	if diff := cmp.Diff([]string{"fail", "next"}, seen); diff != "" {
		t.Errorf("hook saw (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]time.Duration{time.Second}, rec.got()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"fail", "next"}, texts(e.Requests())); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

func texts(rs []translate.EngineRequest) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Texts...)
	}
	return out
}

func TestHookBlocksCalls(t *testing.T) {
	const n = 8
	entered := make(chan struct{}, n)
	release := make(chan struct{})
	e := fake.New("", fake.WithHook(func(ctx context.Context, _ *translate.EngineRequest) error {
		entered <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}))
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, err := call(t, e, req("x"))
			errs <- err
		})
	}
	for range n {
		<-entered
	}
	if got := e.Calls(); got != n {
		t.Errorf("while blocked, Calls() = %d, want %d", got, n)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestBadOutput(t *testing.T) {
	r := req("Hi {name}, you have %d new <b>messages</b>", "{{count}} %1$s %[2]d 50% off")
	tests := []struct {
		bad  fake.BadOutput
		want []string
	}{
		{fake.BadNone, []string{"[es] Hi {name}, you have %d new <b>messages</b>", "[es] {{count}} %1$s %[2]d 50% off"}},
		{fake.BadEmpty, []string{"", ""}},
		{fake.BadEcho, r.Texts},
		{fake.BadDropPlaceholders, []string{"[es] Hi , you have  new messages", "[es]    50% off"}},
		{fake.BadWrongCount, []string{"[es] Hi {name}, you have %d new <b>messages</b>"}},
	}
	for _, tt := range tests {
		t.Run(tt.bad.String(), func(t *testing.T) {
			// Scripted.
			e := fake.New("")
			e.Script(fake.Bad(tt.bad))
			res, err := call(t, e, r)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.Texts); diff != "" {
				t.Errorf("scripted: Texts mismatch (-want +got):\n%s", diff)
			}
			// Every call.
			e.SetBadOutput(tt.bad)
			for range 2 {
				res, err := call(t, e, r)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, res.Texts); diff != "" {
					t.Errorf("SetBadOutput: Texts mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestBadOutputScriptWins(t *testing.T) {
	e := fake.New("")
	e.SetBadOutput(fake.BadEmpty)
	e.Script(fake.OK())
	res, err := call(t, e, req("x"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"[es] x"}, res.Texts); diff != "" {
		t.Errorf("Texts mismatch (-want +got):\n%s", diff)
	}
}

func TestBadWrongCountNoTexts(t *testing.T) {
	e := fake.New("")
	e.Script(fake.Bad(fake.BadWrongCount))
	res, err := call(t, e, req())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Texts) != 1 {
		t.Errorf("len(Texts) = %d, want 1", len(res.Texts))
	}
}

func TestBadOutputString(t *testing.T) {
	for m, want := range map[fake.BadOutput]string{
		fake.BadNone: "none", fake.BadEmpty: "empty", fake.BadEcho: "echo",
		fake.BadDropPlaceholders: "drop-placeholders", fake.BadWrongCount: "wrong-count", 99: "bad(?)",
	} {
		if got := m.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(m), got, want)
		}
	}
}

func TestRequestsLog(t *testing.T) {
	e := fake.New("")
	r1 := &translate.EngineRequest{Texts: []string{"a", "b"}, Source: language.Und, Target: language.German, Scene: translate.SceneLegal, Style: translate.StyleFormal, RequestID: "r1"}
	r2 := req("c")
	e.Script(fake.Fail(translate.KindUnavailable))
	call(t, e, r1)
	call(t, e, r2)
	r1.Texts[0] = "mutated by caller"

	got := e.Requests()
	want := []translate.EngineRequest{
		{Texts: []string{"a", "b"}, Source: language.Und, Target: language.German, Scene: translate.SceneLegal, Style: translate.StyleFormal, RequestID: "r1"},
		{Texts: []string{"c"}, Source: language.English, Target: language.Spanish},
	}
	if diff := cmp.Diff(want, got, tagCmp); diff != "" {
		t.Errorf("Requests mismatch (-want +got):\n%s", diff)
	}
	got[1].Texts[0] = "mutated by reader"
	if diff := cmp.Diff(want, e.Requests(), tagCmp); diff != "" {
		t.Errorf("Requests after mutating a copy (-want +got):\n%s", diff)
	}
	if got := e.Calls(); got != 2 {
		t.Errorf("Calls() = %d, want 2", got)
	}

	e.Reset()
	if got := e.Calls(); got != 0 {
		t.Errorf("after Reset, Calls() = %d", got)
	}
	if got := e.Requests(); len(got) != 0 {
		t.Errorf("after Reset, Requests() = %v", got)
	}
}

func TestDoesNotModifyRequest(t *testing.T) {
	r := req("a", "b")
	want := req("a", "b")
	e := fake.New("")
	e.Script(fake.Bad(fake.BadWrongCount), fake.Bad(fake.BadEmpty))
	for range 3 {
		call(t, e, r)
	}
	if diff := cmp.Diff(want, r, tagCmp); diff != "" {
		t.Errorf("request modified (-want +got):\n%s", diff)
	}
}

func TestConcurrent(t *testing.T) {
	const workers, each = 16, 50
	e := fake.New("", fake.WithQuota(600), fake.WithLatencyFunc(func() time.Duration { return time.Nanosecond }),
		fake.WithWait(func(context.Context, time.Duration) error { return nil }))
	e.FailRate(translate.KindUnavailable, 0.2, 9)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, quota, other := 0, 0, 0
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if i == 10 && w == 0 {
					e.SetRetryAfter(time.Second)
					e.SetLatency(0)
					e.Script(fake.OK())
				}
				_, err := e.Translate(context.Background(), req("abc"))
				_ = e.Calls()
				_ = e.Requests()
				mu.Lock()
				switch translate.KindOf(err) {
				case translate.KindUnknown:
					if err == nil {
						ok++
					} else {
						other++
					}
				case translate.KindQuotaExhausted:
					quota++
				case translate.KindUnavailable:
				default:
					other++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if got := e.Calls(); got != workers*each {
		t.Errorf("Calls() = %d, want %d", got, workers*each)
	}
	if ok != 200 || other != 0 {
		t.Errorf("successes = %d (want 200: 600 chars / 3), unexpected errors = %d", ok, other)
	}
	if quota == 0 || e.QuotaLeft() != 0 {
		t.Errorf("quota failures = %d, QuotaLeft = %d; want some and 0", quota, e.QuotaLeft())
	}
}
