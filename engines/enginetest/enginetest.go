// Package enginetest is the conformance suite every translate.Engine adapter runs from its
// own tests. It checks the rules written on translate.Engine: a stable name, exactly
// len(req.Texts) texts in order, never (nil, nil), prompt return on a canceled context or a
// passed deadline, a *translate.Error of the right Kind (and the engine's name) for every
// error the vendor documents, no credential in any error text, and correct answers under
// concurrent use.
//
// The suite does not know the vendor's wire format. The adapter author supplies a Harness
// whose NewEngine starts a fresh test server (normally an httptest.Server that follows the
// vendor's own API description) playing the Scenario the suite asks for, and returns the
// adapter pointed at it:
//
//   - ModeOK: answer every text t with Expected(t) ("T:" + t), in order.
//   - ModeHang: never answer; the handler returns only when the request's context is done,
//     after reading the request body (see below).
//   - ModeError: answer with the vendor's documented error response for Scenario.Kind.
//
// A ModeHang handler must read the request body before it waits: net/http notices that the
// client went away (and cancels r.Context()) only once the body has been read, so a handler
// that waits on r.Context().Done() without reading never returns, and httptest.Server.Close
// waits for it. Call Hang, or do what it does:
//
//	case enginetest.ModeHang:
//		_, _ = io.Copy(io.Discard, r.Body) // read the body, then wait
//		<-r.Context().Done()
//		return
//
// Example, from an adapter's _test.go file:
//
//	func TestConformance(t *testing.T) {
//		enginetest.Run(t, enginetest.Harness{
//			NewEngine: func(t *testing.T, sc enginetest.Scenario) translate.Engine {
//				srv := httptest.NewServer(vendorServer(t, sc)) // your spec-following fake
//				t.Cleanup(srv.Close)
//				e, err := deepl.New("test-key", deepl.WithBaseURL(srv.URL))
//				if err != nil {
//					t.Fatal(err)
//				}
//				return e
//			},
//			ErrorKinds: []translate.Kind{translate.KindUnauthorized, translate.KindRateLimited},
//			Secrets:    []string{"test-key"},
//			MaxTexts:   50,
//			Native:     bundled.Profile().Native, // the formats and instructions it declares
//		})
//	}
//
// Run it under -race: one subtest makes 50 concurrent calls on one engine.
//
// The suite bounds its own time: a call that does not return fails its subtest after a
// bound (see Run), and cleanups that NewEngine registered (the server's Close) that have
// not returned 30s after their subtest ended stop the test binary with a panic that names the
// subtest and the likely cause, instead of letting go test run into its 10-minute timeout.
package enginetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity"
	"golang.org/x/text/language"
)

// Mode is what the test server behind the engine does in one subtest.
type Mode int

// Modes.
const (
	ModeOK    Mode = iota // answer each text t with Expected(t) (texts in order)
	ModeHang              // never answer; return only when the request's context is done
	ModeError             // answer with the vendor's documented error for Scenario.Kind
)

// String returns "ok", "hang" or "error".
func (m Mode) String() string {
	switch m {
	case ModeOK:
		return "ok"
	case ModeHang:
		return "hang"
	case ModeError:
		return "error"
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// Scenario tells the harness how to set up its server for one subtest.
type Scenario struct {
	Mode Mode
	Kind translate.Kind // for ModeError
}

// Expected is the translation a ModeOK server returns for text: "T:" + text.
func Expected(text string) string { return "T:" + text }

// Hang is a ModeHang handler that returns when it should: it reads the request body to its
// end, then waits until the request's context is done. net/http cancels r.Context() when the
// client goes away only once the handler has read the body; a handler that waits without
// reading it never returns, and httptest.Server.Close waits for it for ever.
func Hang(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

// Harness connects the suite to one adapter. Only NewEngine is required.
type Harness struct {
	// NewEngine returns the engine under test connected to a fresh server that plays sc.
	// It registers its own cleanup with t.Cleanup. Called once per subtest.
	NewEngine func(t *testing.T, sc Scenario) translate.Engine
	// ErrorKinds lists the Kinds the vendor documents errors for; the suite runs one ModeError
	// subtest per Kind and checks KindOf(err) == Kind and that err is a *translate.Error
	// whose Engine is the engine's Name().
	ErrorKinds []translate.Kind
	// Secrets are credential strings that must never appear in any error text.
	Secrets []string
	// Source and Target: a pair the engine supports; zero means en -> es (each field on its
	// own: a zero Source means en, a zero Target means es).
	Source, Target language.Tag
	// MaxTexts is how many texts one call may carry (Profile().MaxTexts); 0 means 1.
	MaxTexts int
	// Native is what the engine's bundled Profile declares it does itself
	// (Profile().Native): the suite sends a document in each of Native.Formats, and with
	// Native.Instructions a request with an Instruction, and wants each translated like any
	// text. The zero value checks nothing more.
	Native fidelity.Native
}

// Bounds the suite allows. They are generous so that a loaded machine running -race does not
// fail a correct engine; an engine that ignores its context fails them all the same.
const (
	// callBound caps one ModeOK or ModeError call.
	callBound = 10 * time.Second
	// grace is how long after its context is done an engine may take to return.
	grace = 3 * time.Second
	// hangDeadline is the deadline of the context handed to an engine whose server hangs.
	hangDeadline = 50 * time.Millisecond
	// parallelCalls is how many concurrent calls the Parallel subtest makes.
	parallelCalls = 50
	// maxBatch caps the texts per call the suite sends.
	maxBatch = 5
	// cleanupBound caps how long the cleanups Harness.NewEngine registered for one subtest
	// (normally the test server's Close) may take once the subtest has ended.
	cleanupBound = 30 * time.Second
)

// sampleTexts are the texts the suite translates: short single-line sentences, ASCII and not.
func sampleTexts() []string {
	return []string{"alpha one", "Grüße aus Köln", "bravo two", "charlie três", "delta — four"}
}

// Run runs the conformance suite as subtests of t: name stable and non-empty; one text;
// MaxTexts texts (up to 5) in order; never (nil, nil); an already canceled ctx returns
// promptly with an error; a hanging server and a ctx with a short deadline return promptly
// after the deadline with KindTimeout or KindCanceled or a ctx error; each error Kind; no
// secret in any error text; 50 parallel calls under -race all correct.
//
// The subtests, for go test -run:
//
//   - Name: Name() is non-empty and stable, also across a call.
//   - OneText: one text, ASCII then non-ASCII, on one engine; the request is not modified.
//   - ManyTexts: min(MaxTexts, 5) texts in order, then the same texts reversed.
//   - DetectSource: Source language.Und; the expected texts, or a KindUnsupported error from
//     an engine that cannot detect the source.
//   - CanceledContext, Deadline, CancelInFlight (ModeHang): an already canceled ctx, a 50ms
//     deadline, a cancel after 50ms; each returns within 3s of ctx being done, with an error
//     wrapping ctx.Err() or of KindTimeout or KindCanceled.
//   - Errors/<kind> (ModeError): one per Harness.ErrorKinds entry.
//   - Parallel: 50 concurrent calls of min(MaxTexts, 3) distinct texts on one engine.
//   - Native: with Harness.Native, up to two documents in each declared format (HTML, XML),
//     and a request with an Instruction when the engine follows instructions; each comes
//     back as the server answered it.
//
// Every error the suite sees is checked for Harness.Secrets. An engine that does not return
// fails its subtest; the suite cannot stop it, so its goroutine stays behind. The cleanups
// Harness.NewEngine registered must return within 30s of their subtest's end; otherwise Run
// panics with a message naming the subtest (nothing else ends a blocked cleanup).
func Run(t *testing.T, h Harness) {
	t.Helper()
	run(realT{t}, h, limits{grace: grace, cleanup: cleanupBound, stuck: func(msg string) { panic(msg) }})
}

// limits are the suite's own time bounds, and what it does when a cleanup is stuck.
type limits struct {
	grace   time.Duration // how long after its context is done an engine may take to return
	cleanup time.Duration // how long a subtest's harness cleanups may take
	// stuck is called, from a goroutine of its own, with a message naming the subtest whose
	// harness cleanups did not return within cleanup. Run panics: nothing else ends a
	// blocked cleanup.
	stuck func(msg string)
}

// tb is the part of *testing.T the suite uses. It lets the suite's own tests observe
// failures of a broken engine without failing.
type tb interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	// Run runs f as a subtest.
	Run(name string, f func(tb)) bool
	// T is the *testing.T handed to Harness.NewEngine.
	T() *testing.T
}

// realT is tb over a real *testing.T.
type realT struct{ t *testing.T }

func (r realT) Helper()                           { r.t.Helper() }
func (r realT) Errorf(format string, args ...any) { r.t.Helper(); r.t.Errorf(format, args...) }
func (r realT) Fatalf(format string, args ...any) { r.t.Helper(); r.t.Fatalf(format, args...) }
func (r realT) T() *testing.T                     { return r.t }
func (r realT) Run(name string, f func(tb)) bool {
	return r.t.Run(name, func(t *testing.T) { f(realT{t}) })
}

// suite carries one Run's normalised harness.
type suite struct {
	h        Harness
	src, tgt language.Tag
	batch    int // texts per call in ManyTexts, 1..maxBatch
	limits
}

// run is Run on any tb, with the limits as a parameter so the suite's own tests can fail an
// engine that ignores its context, or a harness whose cleanup blocks, without waiting long.
func run(t tb, h Harness, lim limits) {
	t.Helper()
	if h.NewEngine == nil {
		t.Fatalf("enginetest: Harness.NewEngine is nil")
		return
	}
	s := &suite{h: h, src: h.Source, tgt: h.Target, batch: min(max(h.MaxTexts, 1), maxBatch), limits: lim}
	if s.src == language.Und {
		s.src = language.English
	}
	if s.tgt == language.Und {
		s.tgt = language.Spanish
	}
	t.Run("Name", s.testName)
	t.Run("OneText", s.testOneText)
	t.Run("ManyTexts", s.testManyTexts)
	t.Run("DetectSource", s.testDetectSource)
	t.Run("CanceledContext", s.testCanceled)
	t.Run("Deadline", s.testDeadline)
	t.Run("CancelInFlight", s.testCancelInFlight)
	t.Run("Errors", func(t tb) {
		if len(h.ErrorKinds) == 0 {
			return
		}
		for _, k := range h.ErrorKinds {
			t.Run(k.String(), func(t tb) { s.testErrorKind(t, k) })
		}
	})
	t.Run("Parallel", s.testParallel)
	t.Run("Native", s.testNative)
}

// sampleDocs are the documents the Native subtest sends, by format.
func sampleDocs(f fidelity.Format) []string {
	switch f {
	case fidelity.FormatHTML:
		return []string{`<p title="one">alpha <b>one</b> &amp; two</p>`, `<ul><li>Grüße</li><li>aus <i>Köln</i></li></ul>`}
	case fidelity.FormatXML:
		return []string{`<doc><s id="1">alpha &amp; one</s></doc>`, `<s>Grüße aus <term>Köln</term></s>`}
	}
	return sampleTexts()[:2]
}

// testNative sends a document in each declared format, then (for an engine that follows
// instructions) a request with an Instruction: each comes back as any text does, and the
// request is not modified.
func (s *suite) testNative(t tb) {
	n := s.h.Native
	if len(n.Formats) == 0 && !n.Instructions {
		return
	}
	e := s.newEngine(t, Scenario{Mode: ModeOK})
	for _, f := range n.Formats {
		req := s.request(sampleDocs(f)[:min(s.batch, 2)]...)
		req.Format = f
		s.translateOK(t, e, req)
	}
	if n.Instructions {
		req := s.request(sampleTexts()[0])
		req.Instruction = "Translate these terms exactly as given (source => target):\n\"alpha\" => \"alfa\"\n"
		s.translateOK(t, e, req)
	}
}

// newEngine asks the harness for an engine playing sc and checks it is usable. It watches
// the cleanups the harness registers: cleanups run last-registered first, so the one
// registered before NewEngine runs after the harness's and the one registered after it runs
// before them.
func (s *suite) newEngine(t tb, sc Scenario) translate.Engine {
	t.Helper()
	tt := t.T()
	done := make(chan struct{})
	tt.Cleanup(func() { close(done) })
	e := s.h.NewEngine(tt, sc)
	name := tt.Name()
	tt.Cleanup(func() { go s.watchCleanup(name, sc, done) })
	if e == nil {
		t.Fatalf("Harness.NewEngine returned a nil engine for scenario %v", sc.Mode)
	}
	return e
}

// watchCleanup reports a subtest whose harness cleanups have not returned (done not
// closed) within s.cleanup.
func (s *suite) watchCleanup(name string, sc Scenario, done <-chan struct{}) {
	timer := time.NewTimer(s.cleanup)
	defer timer.Stop()
	select {
	case <-done:
		return
	case <-timer.C:
	}
	hint := ""
	if sc.Mode == ModeHang {
		hint = "; a ModeHang handler must read the request body before it waits on " +
			"r.Context().Done() (net/http cancels that context only once the body is read): use enginetest.Hang"
	}
	s.stuck(fmt.Sprintf("enginetest: %s: the cleanups Harness.NewEngine registered (scenario %v) have not "+
		"returned %v after the subtest ended; a test server whose handler never returns blocks "+
		"httptest.Server.Close%s", name, sc.Mode, s.cleanup, hint))
}

// request builds a request for texts on the harness's pair.
func (s *suite) request(texts ...string) *translate.EngineRequest {
	return &translate.EngineRequest{
		Texts:     texts,
		Source:    s.src,
		Target:    s.tgt,
		RequestID: "enginetest",
	}
}

// outcome is what one Translate call returned.
type outcome struct {
	res      *translate.EngineResult
	err      error
	elapsed  time.Duration
	returned bool // false when the call did not return within its bound
}

// call runs e.Translate in its own goroutine and waits at most until bound has passed since
// the call started. An engine that does not return in time is reported and left running:
// the suite cannot stop it. It checks the answers every call must respect: never (nil, nil),
// and no secret in the error. call is safe to use from several goroutines; it never calls
// t.Fatalf.
func (s *suite) call(t tb, e translate.Engine, ctx context.Context, req *translate.EngineRequest, bound time.Duration) outcome {
	t.Helper()
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		res, err := e.Translate(ctx, req)
		done <- outcome{res: res, err: err, elapsed: time.Since(start), returned: true}
	}()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	var o outcome
	select {
	case o = <-done:
	case <-timer.C:
		t.Errorf("%T.Translate did not return within %v", e, bound)
		return outcome{elapsed: bound}
	}
	if o.res == nil && o.err == nil {
		t.Errorf("%T.Translate returned (nil, nil); it must return a result or an error", e)
	}
	if o.err != nil {
		s.checkSecrets(t, e, o.err)
	}
	return o
}

// checkSecrets reports any harness secret found in the text of err, of any error it wraps,
// or of the Message of any *translate.Error in its chain.
func (s *suite) checkSecrets(t tb, e translate.Engine, err error) {
	t.Helper()
	texts := []string{fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)}
	for _, x := range chain(err) {
		texts = append(texts, x.Error())
		if te, ok := x.(*translate.Error); ok {
			texts = append(texts, te.Message)
		}
	}
	for _, sec := range s.h.Secrets {
		if sec == "" {
			continue
		}
		for _, txt := range texts {
			if strings.Contains(txt, sec) {
				t.Errorf("%T leaks Harness.Secrets[%d] in an error text: %s",
					e, slices.Index(s.h.Secrets, sec), strings.ReplaceAll(txt, sec, "[SECRET]"))
				break
			}
		}
	}
}

// chain returns err and every error it wraps, depth first (Unwrap() error and
// Unwrap() []error), stopping at 100 errors in case of a cycle.
func chain(err error) []error {
	var out []error
	stack := []error{err}
	for len(stack) > 0 && len(out) < 100 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x == nil {
			continue
		}
		out = append(out, x)
		switch u := x.(type) {
		case interface{ Unwrap() error }:
			stack = append(stack, u.Unwrap())
		case interface{ Unwrap() []error }:
			for i := len(u.Unwrap()) - 1; i >= 0; i-- {
				stack = append(stack, u.Unwrap()[i])
			}
		}
	}
	return out
}

// checkTexts reports a failed call or an answer that is not Expected(text) for each text,
// in order. It reports whether the answer was right.
func checkTexts(t tb, e translate.Engine, texts []string, o outcome) bool {
	t.Helper()
	if !o.returned {
		return false
	}
	if o.err != nil {
		t.Errorf("%T.Translate(%d texts) failed on a server answering OK: %v", e, len(texts), o.err)
		return false
	}
	if o.res == nil {
		return false // reported by call as (nil, nil)
	}
	if len(o.res.Texts) != len(texts) {
		t.Errorf("%T.Translate returned %d texts for %d; it must return exactly len(req.Texts)",
			e, len(o.res.Texts), len(texts))
		return false
	}
	ok := true
	for i, txt := range texts {
		if want := Expected(txt); o.res.Texts[i] != want {
			t.Errorf("%T.Translate: text %d = %q, want %q (texts must come back in order)",
				e, i, o.res.Texts[i], want)
			ok = false
		}
	}
	return ok
}

// checkCtxErr reports an error that is not what the Engine contract requires once ctx is
// done: errors.Is(err, ctx.Err()) or a *translate.Error of KindTimeout or KindCanceled.
func checkCtxErr(t tb, e translate.Engine, ctx context.Context, o outcome) {
	t.Helper()
	if !o.returned {
		return
	}
	if o.err == nil {
		if o.res != nil {
			t.Errorf("%T.Translate succeeded although its context was done and its server never answers", e)
		}
		return
	}
	if cerr := ctx.Err(); cerr != nil && errors.Is(o.err, cerr) {
		return
	}
	if k := translate.KindOf(o.err); k != translate.KindTimeout && k != translate.KindCanceled {
		t.Errorf("%T.Translate with a done context returned %v (kind %v); want an error wrapping ctx.Err() "+
			"or a *translate.Error of KindTimeout or KindCanceled", e, o.err, k)
	}
}

func (s *suite) testName(t tb) {
	e := s.newEngine(t, Scenario{Mode: ModeOK})
	n := e.Name()
	if n == "" {
		t.Errorf("%T.Name() is empty", e)
	}
	if n2 := e.Name(); n2 != n {
		t.Errorf("%T.Name() is not stable: %q, then %q", e, n, n2)
	}
	// A call must not change the name.
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	defer cancel()
	s.call(t, e, ctx, s.request(sampleTexts()[0]), callBound+s.grace)
	if n3 := e.Name(); n3 != n {
		t.Errorf("%T.Name() changed after Translate: %q, then %q", e, n, n3)
	}
}

// translateOK translates texts on a ModeOK engine and checks the answer and that the
// request was not modified.
func (s *suite) translateOK(t tb, e translate.Engine, req *translate.EngineRequest) outcome {
	t.Helper()
	orig := *req
	orig.Texts = slices.Clone(req.Texts)
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	defer cancel()
	o := s.call(t, e, ctx, req, callBound+s.grace)
	checkTexts(t, e, orig.Texts, o)
	if !slices.Equal(req.Texts, orig.Texts) || req.Source != orig.Source || req.Target != orig.Target ||
		req.Scene != orig.Scene || req.Style != orig.Style || req.RequestID != orig.RequestID ||
		req.Format != orig.Format || req.Glossary != orig.Glossary || req.Instruction != orig.Instruction {
		t.Errorf("%T.Translate modified its request: %+v, want %+v", e, *req, orig)
	}
	return o
}

func (s *suite) testOneText(t tb) {
	e := s.newEngine(t, Scenario{Mode: ModeOK})
	texts := sampleTexts()
	s.translateOK(t, e, s.request(texts[0]))
	s.translateOK(t, e, s.request(texts[1])) // non-ASCII, and a second call on one engine
}

func (s *suite) testManyTexts(t tb) {
	e := s.newEngine(t, Scenario{Mode: ModeOK})
	texts := sampleTexts()[:s.batch]
	s.translateOK(t, e, s.request(texts...))
	if s.batch > 1 {
		// Same texts reversed: an engine that sorts, caches or reuses a previous answer fails.
		rev := slices.Clone(texts)
		slices.Reverse(rev)
		s.translateOK(t, e, s.request(rev...))
	}
}

func (s *suite) testDetectSource(t tb) {
	e := s.newEngine(t, Scenario{Mode: ModeOK})
	req := s.request(sampleTexts()[0])
	req.Source = language.Und
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	defer cancel()
	o := s.call(t, e, ctx, req, callBound+s.grace)
	if o.err != nil && translate.KindOf(o.err) == translate.KindUnsupported {
		return // the engine cannot detect the source, and says so
	}
	checkTexts(t, e, req.Texts, o)
}

func (s *suite) testCanceled(t tb) {
	e := s.newEngine(t, Scenario{Mode: ModeHang})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := s.call(t, e, ctx, s.request(sampleTexts()[0]), s.grace)
	if o.returned && o.err == nil {
		t.Errorf("%T.Translate with an already canceled context returned no error", e)
		return
	}
	checkCtxErr(t, e, ctx, o)
}

func (s *suite) testDeadline(t tb) {
	e := s.newEngine(t, Scenario{Mode: ModeHang})
	ctx, cancel := context.WithTimeout(context.Background(), hangDeadline)
	defer cancel()
	o := s.call(t, e, ctx, s.request(sampleTexts()[0]), hangDeadline+s.grace)
	if o.returned && o.err == nil {
		t.Errorf("%T.Translate on a server that never answers returned no error", e)
		return
	}
	checkCtxErr(t, e, ctx, o)
}

func (s *suite) testCancelInFlight(t tb) {
	e := s.newEngine(t, Scenario{Mode: ModeHang})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := time.AfterFunc(hangDeadline, cancel)
	defer stop.Stop()
	o := s.call(t, e, ctx, s.request(sampleTexts()[0]), hangDeadline+s.grace)
	if o.returned && o.err == nil {
		t.Errorf("%T.Translate on a server that never answers returned no error", e)
		return
	}
	checkCtxErr(t, e, ctx, o)
}

func (s *suite) testErrorKind(t tb, k translate.Kind) {
	e := s.newEngine(t, Scenario{Mode: ModeError, Kind: k})
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	defer cancel()
	o := s.call(t, e, ctx, s.request(sampleTexts()[0]), callBound+s.grace)
	if !o.returned {
		return
	}
	if o.err == nil {
		if o.res != nil {
			t.Errorf("%T.Translate succeeded on a server answering the vendor's %v error", e, k)
		}
		return
	}
	if got := translate.KindOf(o.err); got != k {
		t.Errorf("%T.Translate: KindOf(err) = %v, want %v; err: %v", e, got, k, o.err)
	}
	var te *translate.Error
	if !errors.As(o.err, &te) {
		t.Errorf("%T.Translate returned %T (%v); want a *translate.Error", e, o.err, o.err)
		return
	}
	if name := e.Name(); te.Engine != name {
		t.Errorf("%T.Translate: error's Engine = %q, want the engine's Name() %q", e, te.Engine, name)
	}
	if sentinel := sentinelOf(k); sentinel != nil && !errors.Is(o.err, sentinel) {
		t.Errorf("%T.Translate: errors.Is(err, the %v sentinel) = false; err: %v", e, k, o.err)
	}
}

// sentinelOf returns the package sentinel for k, nil for kinds without one.
func sentinelOf(k translate.Kind) error {
	for _, s := range []*translate.Error{
		translate.ErrInvalidInput, translate.ErrUnsupported, translate.ErrUnauthorized,
		translate.ErrQuotaExhausted, translate.ErrRateLimited, translate.ErrUnavailable,
		translate.ErrTimeout, translate.ErrTextTooLong, translate.ErrBadOutput,
		translate.ErrBudgetExceeded, translate.ErrNoEngine,
	} {
		if s.Kind == k {
			return s
		}
	}
	return nil
}

func (s *suite) testParallel(t tb) {
	e := s.newEngine(t, Scenario{Mode: ModeOK})
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	defer cancel()
	per := min(s.batch, 3)
	var wg sync.WaitGroup
	for i := range parallelCalls {
		texts := make([]string, per)
		for j := range texts {
			texts[j] = fmt.Sprintf("parallel call %d text %d", i, j)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// call and checkTexts only use Errorf, which is safe from any goroutine.
			o := s.call(t, e, ctx, s.request(texts...), callBound+s.grace)
			checkTexts(t, e, texts, o)
		}()
	}
	wg.Wait()
}
