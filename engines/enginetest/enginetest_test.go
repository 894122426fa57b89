package enginetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testSecret = "sk-test-0123456789"

// bug is one way memEngine breaks the Engine contract.
type bug int

const (
	noBug                bug = iota
	bugReverse               // returns the texts in reverse order
	bugNilNil                // returns (nil, nil)
	bugDropText              // returns one text fewer
	bugLeakKey               // puts the key in error messages
	bugLeakWrap              // puts the key in a wrapped error only
	bugWrongKind             // reports every vendor error as KindUnknown
	bugNoEngine              // leaves Error.Engine empty
	bugIgnoreCtx             // blocks on a hanging server until the test ends, ignoring ctx
	bugEmptyName             // Name() == ""
	bugUnstable              // Name() changes on every call
	bugStaleCache            // answers every call with its first answer for that many texts
	bugMutate                // modifies req.Texts
	bugPlainError            // returns errors.New instead of *translate.Error
	bugSucceedOnHang         // answers even when its server would hang
	bugRefuseMarkup          // refuses a request in HTML or XML although it declares them
	bugClearFormat           // sets req.Format back to text
	bugRefuseInstruction     // refuses a request with an Instruction although it declares them
)

// memEngine is an in-memory engine that plays a Scenario the way an adapter in front of a
// spec-following server would, with an optional bug.
type memEngine struct {
	sc      Scenario
	bug     bug
	release chan struct{} // closed at test cleanup; bugIgnoreCtx waits for it

	mu    sync.Mutex
	calls int
	cache map[int][]string // bugStaleCache: first answer by number of texts
}

func (e *memEngine) Name() string {
	switch e.bug {
	case bugEmptyName:
		return ""
	case bugUnstable:
		e.mu.Lock()
		defer e.mu.Unlock()
		e.calls++
		return fmt.Sprintf("mem%d", e.calls)
	}
	return "mem"
}

func (e *memEngine) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	switch e.sc.Mode {
	case ModeHang:
		if e.bug == bugSucceedOnHang {
			return &translate.EngineResult{Texts: []string{"x"}}, nil
		}
		if e.bug == bugIgnoreCtx {
			<-e.release
			return nil, &translate.Error{Kind: translate.KindUnavailable, Engine: e.Name()}
		}
		// What httpx.Do produces once the request's context is done.
		if err := ctx.Err(); err != nil {
			return nil, &translate.Error{Kind: translate.KindCanceled, Engine: e.Name(), Err: err}
		}
		<-ctx.Done()
		kind := translate.KindCanceled
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			kind = translate.KindTimeout
		}
		return nil, &translate.Error{Kind: kind, Engine: e.Name(), Message: "Post http://127.0.0.1/translate", Err: ctx.Err()}
	case ModeError:
		return nil, e.vendorError()
	}
	if err := ctx.Err(); err != nil {
		return nil, &translate.Error{Kind: translate.KindCanceled, Engine: e.Name(), Err: err}
	}
	switch {
	case e.bug == bugNilNil:
		return nil, nil
	case e.bug == bugMutate:
		req.Texts[0] = "changed"
	case e.bug == bugClearFormat:
		req.Format = translate.FormatText
	case e.bug == bugRefuseMarkup && req.Format != translate.FormatText,
		e.bug == bugRefuseInstruction && req.Instruction != "":
		return nil, &translate.Error{Kind: translate.KindUnsupported, Engine: e.Name(), Message: "not that"}
	}
	out := make([]string, len(req.Texts))
	for i, t := range req.Texts {
		out[i] = Expected(t)
	}
	switch e.bug {
	case bugReverse:
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	case bugDropText:
		out = out[:len(out)-1]
	case bugStaleCache:
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.cache == nil {
			e.cache = make(map[int][]string)
		}
		if prev, ok := e.cache[len(out)]; ok {
			out = prev
		} else {
			e.cache[len(out)] = out
		}
	}
	return &translate.EngineResult{Texts: out}, nil
}

func (e *memEngine) vendorError() error {
	err := &translate.Error{Kind: e.sc.Kind, Engine: e.Name(), StatusCode: 400, Message: "vendor said no"}
	switch e.bug {
	case bugLeakKey:
		err.Message = "invalid key " + testSecret
	case bugLeakWrap:
		err.Err = fmt.Errorf("POST https://vendor.example/translate?key=%s: refused", testSecret)
	case bugWrongKind:
		err.Kind = translate.KindUnknown
	case bugNoEngine:
		err.Engine = ""
	case bugPlainError:
		return errors.New("vendor said no")
	}
	return err
}

// harness returns a Harness over memEngine with b.
func harness(b bug) Harness {
	return Harness{
		NewEngine: func(t *testing.T, sc Scenario) translate.Engine {
			e := &memEngine{sc: sc, bug: b, release: make(chan struct{})}
			t.Cleanup(func() { close(e.release) })
			return e
		},
		ErrorKinds: []translate.Kind{
			translate.KindUnauthorized, translate.KindQuotaExhausted, translate.KindRateLimited,
			translate.KindUnavailable, translate.KindInvalidInput,
		},
		Secrets:  []string{testSecret},
		MaxTexts: 50,
		Native:   fidelity.Native{Formats: []fidelity.Format{fidelity.FormatHTML, fidelity.FormatXML}, Instructions: true},
	}
}

func TestRunPasses(t *testing.T) {
	Run(t, harness(noBug))
}

func TestRunDefaults(t *testing.T) {
	// MaxTexts 0 means one text per call; no error kinds; no secrets.
	h := harness(noBug)
	h.MaxTexts, h.ErrorKinds, h.Secrets = 0, nil, nil
	Run(t, h)
}

// recorder is a tb that records failures instead of failing, so the suite can be run against
// broken engines. Subtests still run as real subtests of the test.
type recorder struct {
	t   *testing.T
	log *failures
}

type failures struct {
	mu   sync.Mutex
	list []failure
}

type failure struct{ test, msg string }

func (f *failures) add(test, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = append(f.list, failure{test, msg})
}

func (f *failures) all() []failure {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]failure(nil), f.list...)
}

// fatal is the panic value recorder.Fatalf uses to stop a subtest.
type fatal struct{}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.log.add(r.t.Name(), fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.log.add(r.t.Name(), fmt.Sprintf(format, args...))
	panic(fatal{})
}
func (r *recorder) T() *testing.T { return r.t }
func (r *recorder) Run(name string, f func(tb)) bool {
	return r.t.Run(name, func(t *testing.T) {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(fatal); !ok {
					panic(p)
				}
			}
		}()
		f(&recorder{t: t, log: r.log})
	})
}

// recordGrace is the grace period in recorded runs: short, so that an engine ignoring its
// context costs little time; a correct in-memory engine returns in microseconds.
const recordGrace = time.Second

// recordCleanup is the cleanup bound in recorded runs; a stuck cleanup is recorded as a
// failure of the suite as a whole (its message names the subtest).
const recordCleanup = time.Second

// runRecorded runs the suite on h and returns the failures it reported as "Subtest: message",
// or just "message" for failures of the suite as a whole.
func runRecorded(t *testing.T, h Harness) []string {
	t.Helper()
	return runRecordedStuck(t, h, nil)
}

// runRecordedStuck is runRecorded that also calls onStuck after recording a stuck cleanup,
// so that the test can release it.
func runRecordedStuck(t *testing.T, h Harness, onStuck func()) []string {
	t.Helper()
	log := &failures{}
	r := &recorder{t: t, log: log}
	lim := limits{grace: recordGrace, cleanup: recordCleanup, stuck: func(msg string) {
		log.add(t.Name()+"/suite", msg)
		if onStuck != nil {
			onStuck()
		}
	}}
	r.Run("suite", func(tb tb) { run(tb, h, lim) })
	base := t.Name() + "/suite"
	var out []string
	for _, f := range log.all() {
		rel := strings.TrimPrefix(strings.TrimPrefix(f.test, base), "/")
		if rel == "" {
			out = append(out, f.msg)
		} else {
			out = append(out, rel+": "+f.msg)
		}
	}
	return out
}

func TestRunCatchesBrokenEngines(t *testing.T) {
	tests := []struct {
		name string
		bug  bug
		want []string // each must be a substring of some failure: "Subtest: message part"
	}{
		{"reverse", bugReverse, []string{"ManyTexts: ", "want \"T:alpha one\"", "come back in order", "Parallel: "}},
		{"nil_nil", bugNilNil, []string{"OneText: ", "(nil, nil)", "ManyTexts: ", "Parallel: "}},
		{"drop_text", bugDropText, []string{"OneText: ", "returned 0 texts for 1", "ManyTexts: "}},
		{"leak_key", bugLeakKey, []string{"Errors/unauthorized: ", "leaks Harness.Secrets[0]", "[SECRET]"}},
		{"leak_in_wrapped", bugLeakWrap, []string{"Errors/rate_limited: ", "leaks Harness.Secrets[0]"}},
		{"wrong_kind", bugWrongKind, []string{"Errors/quota_exhausted: ", "KindOf(err) = unknown, want quota_exhausted"}},
		{"no_engine_name", bugNoEngine, []string{"Errors/unavailable: ", `error's Engine = "", want the engine's Name() "mem"`}},
		{"plain_error", bugPlainError, []string{"Errors/invalid_input: ", "want a *translate.Error"}},
		{"ignore_ctx", bugIgnoreCtx, []string{"CanceledContext: ", "did not return within", "Deadline: ", "CancelInFlight: "}},
		{"empty_name", bugEmptyName, []string{"Name: ", "Name() is empty"}},
		{"unstable_name", bugUnstable, []string{"Name: ", "Name() is not stable", "Errors/unauthorized: "}},
		{"stale_cache", bugStaleCache, []string{"OneText: ", "want \"T:Grüße aus Köln\"", "ManyTexts: ", "Parallel: "}},
		{"mutate_request", bugMutate, []string{"OneText: ", "modified its request"}},
		{"succeed_on_hang", bugSucceedOnHang, []string{"CanceledContext: ", "returned no error", "Deadline: "}},
		{"refuse_markup", bugRefuseMarkup, []string{"Native: ", "not that"}},
		{"clear_format", bugClearFormat, []string{"Native: ", "modified its request"}},
		{"refuse_instruction", bugRefuseInstruction, []string{"Native: ", "not that"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := harness(tt.bug)
			got := runRecorded(t, h)
			if len(got) == 0 {
				t.Fatalf("suite reported nothing for %s", tt.name)
			}
			joined := strings.Join(got, "\n")
			for _, w := range tt.want {
				if !strings.Contains(joined, w) {
					t.Errorf("no failure contains %q; failures:\n%s", w, joined)
				}
			}
			// The secret itself must never appear in what the suite reports.
			if strings.Contains(joined, testSecret) {
				t.Errorf("suite printed the secret:\n%s", joined)
			}
		})
	}
}

func TestRunRecordedCleanEngine(t *testing.T) {
	// The recorder sees no failure on a correct engine: the recording path itself works.
	if got := runRecorded(t, harness(noBug)); len(got) != 0 {
		t.Errorf("failures on a correct engine:\n%s", strings.Join(got, "\n"))
	}
}

func TestRunNilNewEngine(t *testing.T) {
	got := runRecorded(t, Harness{})
	if diff := cmp.Diff([]string{"enginetest: Harness.NewEngine is nil"}, got); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
}

func TestRunNilEngine(t *testing.T) {
	got := runRecorded(t, Harness{NewEngine: func(*testing.T, Scenario) translate.Engine { return nil }})
	if len(got) == 0 || !strings.Contains(got[0], "nil engine") {
		t.Errorf("failures = %q, want a nil engine failure", got)
	}
}

func TestDetectSourceUnsupportedAccepted(t *testing.T) {
	h := harness(noBug)
	inner := h.NewEngine
	h.NewEngine = func(t *testing.T, sc Scenario) translate.Engine {
		return noDetect{inner(t, sc)}
	}
	if got := runRecorded(t, h); len(got) != 0 {
		t.Errorf("failures:\n%s", strings.Join(got, "\n"))
	}
}

// noDetect refuses Source Und with KindUnsupported, as an engine without detection does.
type noDetect struct{ translate.Engine }

func (n noDetect) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	if req.Source.IsRoot() {
		return nil, &translate.Error{Kind: translate.KindUnsupported, Engine: n.Name(), Message: "no detection"}
	}
	return n.Engine.Translate(ctx, req)
}

func TestExpected(t *testing.T) {
	if got := Expected("Grüße"); got != "T:Grüße" {
		t.Errorf("Expected = %q", got)
	}
}

func TestModeString(t *testing.T) {
	got := []string{ModeOK.String(), ModeHang.String(), ModeError.String(), Mode(9).String()}
	if diff := cmp.Diff([]string{"ok", "hang", "error", "mode(9)"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestChain(t *testing.T) {
	inner := errors.New("inner")
	err := fmt.Errorf("outer: %w", errors.Join(&translate.Error{Kind: translate.KindUnavailable, Err: inner}, errors.New("b")))
	if n := len(chain(err)); n != 5 {
		t.Errorf("len(chain) = %d, want 5", n)
	}
}
