package translate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/deepl"
	"github.com/fanyi-go/translate/engines/fake"
	"github.com/fanyi-go/translate/engines/google"
)

// The defaults drill (issue 16, "How it is checked"): the common outages of the top engine,
// played in virtual time against the bundled profiles and no options at all. The top engine
// is the real DeepL adapter talking to an in-process DeepL (its wire format, no network);
// the backup is a fake carrying Google's bundled profile. Load is open: one request every
// drillEvery, each a new text. Verdicts, for every scenario:
//
//   - no caller waits past the default deadline (8s) plus drillSlack;
//   - 99.9% or more of the requests started during the outage are answered;
//   - the top engine's share, measured over drillShareWindow starting drillRecovery after it
//     recovered, is at least half its share before the outage.
const (
	drillEvery       = 25 * time.Millisecond
	drillFaultAt     = 60 * time.Second
	drillSlack       = 50 * time.Millisecond
	drillRecovery    = 90 * time.Second
	drillShareWindow = 60 * time.Second
	drillDeadline    = 8 * time.Second // the documented default of WithDeadline
)

// drillScenario is one outage of the top engine: the vendor's behaviour from drillFaultAt
// for outage, then normal again (the key scenario: the vendor refuses the old key from
// drillFaultAt on, and the key source hands out the new one after outage).
type drillScenario struct {
	name   string
	mode   vendorMode
	outage time.Duration
}

var drillScenarios = []drillScenario{
	{"hung vendor", vendorHang, 60 * time.Second},
	{"429 for 30s", vendorRateLimited, 30 * time.Second},
	{"20s blip (503)", vendorDown, 20 * time.Second},
	{"20s blip (hung)", vendorHang, 20 * time.Second},
	{"revoked then rotated key", vendorRevoked, 30 * time.Second},
}

// TestDefaultsDrill plays every scenario and checks the verdicts above.
func TestDefaultsDrill(t *testing.T) {
	for _, sc := range drillScenarios {
		t.Run(sc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { runDefaultsDrill(t, sc) })
		})
	}
}

// drillRecord is what one caller saw.
type drillRecord struct {
	start, took time.Duration
	engine      string
	err         error
}

func runDefaultsDrill(t *testing.T, sc drillScenario) {
	v := newDrillVendor()
	key := &drillKey{}
	key.set("key-1")
	dl, err := deepl.New("", deepl.WithBaseURL("https://drill.invalid"),
		deepl.WithHTTPClient(&http.Client{Transport: v}), deepl.WithKeyFunc(key.read))
	if err != nil {
		t.Fatal(err)
	}
	gg, err := google.New("unused")
	if err != nil {
		t.Fatal(err)
	}
	backup := fake.New("google", fake.WithLatency(150*time.Millisecond))
	c, err := translate.New(translate.WithEngine(dl, dl.Profile()), translate.WithEngine(backup, gg.Profile()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	recoveredAt := drillFaultAt + sc.outage
	end := recoveredAt + drillRecovery + drillShareWindow
	go playOutage(v, key, sc, recoveredAt)
	recs := drillLoad(c, end)
	synctest.Wait()
	drillVerdicts(t, sc, recs, recoveredAt)
}

// playOutage sets the vendor's mode at drillFaultAt and back at recoveredAt (rotating the key
// then in the key scenario).
func playOutage(v *drillVendor, key *drillKey, sc drillScenario, recoveredAt time.Duration) {
	time.Sleep(drillFaultAt)
	v.setMode(sc.mode)
	time.Sleep(recoveredAt - drillFaultAt)
	if sc.mode == vendorRevoked {
		key.set("key-2") // the vendor accepts only key-2 from now on; it stays revoked for key-1
		return
	}
	v.setMode(vendorOK)
}

// drillLoad starts one request every drillEvery until end and waits for all of them.
func drillLoad(c *translate.Client, end time.Duration) []drillRecord {
	n := int(end / drillEvery)
	recs := make([]drillRecord, n)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range n {
		wg.Go(func() {
			s := time.Now()
			res, err := c.Translate(context.Background(), translate.Request{Text: fmt.Sprintf("drill text %d", i), Source: "en", Target: "es"})
			r := drillRecord{start: s.Sub(t0), took: time.Since(s), err: err}
			if res != nil {
				r.engine = res.Engine
			}
			recs[i] = r
		})
		time.Sleep(drillEvery)
	}
	wg.Wait()
	return recs
}

func drillVerdicts(t *testing.T, sc drillScenario, recs []drillRecord, recoveredAt time.Duration) {
	t.Helper()
	var worst time.Duration
	for _, r := range recs {
		worst = max(worst, r.took)
	}
	if worst > drillDeadline+drillSlack {
		t.Errorf("a caller waited %v (deadline %v)", worst, drillDeadline)
	}
	failed, during := drillFailures(recs, drillFaultAt, recoveredAt)
	if during == 0 || float64(failed) > 0.001*float64(during) {
		t.Errorf("%d of %d requests started during the outage failed (at most 0.1%%); first error: %v", failed, during, firstDrillError(recs))
	}
	before := drillShare(recs, 0, drillFaultAt)
	after := drillShare(recs, recoveredAt+drillRecovery, recoveredAt+drillRecovery+drillShareWindow)
	t.Logf("%s: worst wait %v; %d/%d failed during the outage; deepl's share %.2f before, %.2f from %v after recovery",
		sc.name, worst, failed, during, before, after, drillRecovery)
	if before < 0.2 {
		t.Fatalf("deepl's share before the outage is %.2f: the drill has no top engine", before)
	}
	if after < before/2 {
		t.Errorf("deepl's share %v after recovering is %.2f, under half of %.2f before", drillRecovery, after, before)
	}
}

// drillFailures counts the failed requests among those started in [from, to).
func drillFailures(recs []drillRecord, from, to time.Duration) (failed, n int) {
	for _, r := range recs {
		if r.start >= from && r.start < to {
			n++
			if r.err != nil {
				failed++
			}
		}
	}
	return failed, n
}

func firstDrillError(recs []drillRecord) error {
	i := slices.IndexFunc(recs, func(r drillRecord) bool { return r.err != nil })
	if i < 0 {
		return nil
	}
	return recs[i].err
}

// drillShare is deepl's share of the answers to the requests started in [from, to).
func drillShare(recs []drillRecord, from, to time.Duration) float64 {
	var n, top int
	for _, r := range recs {
		if r.start >= from && r.start < to && r.err == nil {
			n++
			if r.engine == deepl.Name {
				top++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(top) / float64(n)
}

// vendorMode is how the in-process DeepL answers /v2/translate.
type vendorMode int32

const (
	vendorOK          vendorMode = iota
	vendorHang                   // never answers; returns when the request's ctx ends
	vendorRateLimited            // 429 Too Many Requests, no Retry-After
	vendorDown                   // 503
	vendorRevoked                // 403 for key-1; key-2 works
)

// drillVendor is an in-process DeepL API: an http.RoundTripper that runs the handler in the
// caller's goroutine, so virtual time covers it. It answers /v2/languages with en and es and
// /v2/translate after 80ms.
type drillVendor struct{ mode atomic.Int32 }

func newDrillVendor() *drillVendor { return &drillVendor{} }

func (v *drillVendor) setMode(m vendorMode) { v.mode.Store(int32(m)) }

func (v *drillVendor) RoundTrip(r *http.Request) (*http.Response, error) {
	w := httptest.NewRecorder()
	v.serve(w, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return w.Result(), nil
}

func (v *drillVendor) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/v2/languages"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"language":"EN","name":"English"},{"language":"ES","name":"Spanish"}]`)
	case r.URL.Path == "/v2/translate":
		v.translate(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (v *drillVendor) translate(w http.ResponseWriter, r *http.Request) {
	mode := vendorMode(v.mode.Load())
	switch {
	case mode == vendorHang:
		<-r.Context().Done()
		return
	case mode == vendorRateLimited:
		http.Error(w, `{"message":"Too many requests"}`, http.StatusTooManyRequests)
		return
	case mode == vendorDown:
		http.Error(w, `{"message":"Service unavailable"}`, http.StatusServiceUnavailable)
		return
	case mode == vendorRevoked && r.Header.Get("Authorization") != "DeepL-Auth-Key key-2":
		http.Error(w, `{"message":"Authorization failed"}`, http.StatusForbidden)
		return
	}
	select {
	case <-time.After(80 * time.Millisecond):
	case <-r.Context().Done():
		return
	}
	var body struct {
		Text []string `json:"text"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"message":"bad body"}`, http.StatusBadRequest)
		return
	}
	type tr struct {
		Detected string `json:"detected_source_language"`
		Text     string `json:"text"`
	}
	out := struct {
		Translations []tr `json:"translations"`
	}{}
	for _, s := range body.Text {
		out.Translations = append(out.Translations, tr{"EN", "ES " + s})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// drillKey is a rotating key source for deepl.WithKeyFunc.
type drillKey struct{ v atomic.Value }

func (k *drillKey) set(s string) { k.v.Store(s) }

func (k *drillKey) read(context.Context) (string, error) { return k.v.Load().(string), nil }
