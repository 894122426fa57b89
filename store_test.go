package translate_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// scriptStore is a Store that records what the Client asks and answers from a script: it
// tests the Client's side of the contract (redisstore's side is tested against Redis).
type scriptStore struct {
	mu       sync.Mutex
	admits   []translate.Admission
	settles  []translate.Settlement
	holds    []string
	answer   func(a translate.Admission) (translate.Admitted, error)
	budget   translate.BudgetStatus
	leases   int
	budgetEr error
}

func (s *scriptStore) Admit(_ context.Context, a translate.Admission) (translate.Admitted, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admits = append(s.admits, a)
	if s.answer != nil {
		got, err := s.answer(a)
		if got.Lease != "" {
			s.leases++
		}
		return got, err
	}
	s.leases++
	return translate.Admitted{Lease: "lease-" + a.Engine, QuotaLeft: -1}, nil
}

func (s *scriptStore) Settle(_ context.Context, st translate.Settlement) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settles = append(s.settles, st)
	return nil
}

func (s *scriptStore) Hold(_ context.Context, engine string, kind translate.Kind, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holds = append(s.holds, engine+":"+kind.String())
	return nil
}

func (s *scriptStore) Budget(context.Context, time.Time, float64) (translate.BudgetStatus, error) {
	return s.budget, s.budgetEr
}

func paidProfile(q float64) translate.Profile {
	return translate.Profile{Quality: q, CostPerMillion: 1_000_000, Timeout: time.Second, Quota: 1000}
}

// TestStoreAdmitsAndSettlesEveryCall: one Admit before each call with what the call takes,
// one Settle after it with what it cost, the answer and the shared cache key.
func TestStoreAdmitsAndSettlesEveryCall(t *testing.T) {
	st := &scriptStore{}
	a := fake.New("a")
	c := newClient(t, translate.WithEngine(a, paidProfile(90)), translate.WithStore(st),
		translate.WithBudget(translate.Budget{Daily: 100}), translate.WithCache(100, time.Hour), translate.WithClock(newClock()))
	r := req("hello")
	r.RequestID = "id-1"
	res, err := c.Translate(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.admits) != 1 || len(st.settles) != 1 {
		t.Fatalf("admits %d settles %d, want 1 and 1", len(st.admits), len(st.settles))
	}
	checkAdmission(t, st.admits[0])
	checkSettlement(t, st.settles[0], st.admits[0].CacheKey, res.Text)
	// A second identical request is a local cache hit: no round trip.
	r.RequestID = ""
	if _, err := c.Translate(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if len(st.admits) != 1 {
		t.Errorf("a local cache hit asked the store (%d admits)", len(st.admits))
	}
}

// checkAdmission: the admission of "hello" (id-1) on engine a with paidProfile(90) and a
// daily budget of 100 asks for 5 credits and 5 characters, under a sha256 cache key.
func checkAdmission(t *testing.T, ad translate.Admission) {
	t.Helper()
	if ad.CacheKey == "" || len(ad.CacheKey) != 64 {
		t.Errorf("CacheKey %q, want a sha256 hex key", ad.CacheKey)
	}
	if id, digest, _ := strings.Cut(ad.RequestID, "#"); id != "id-1" || len(digest) != 32 {
		t.Errorf("RequestID %q, want id-1 bound to the content (id-1#32 hex digits)", ad.RequestID)
	}
	ad.CacheKey, ad.Now, ad.RequestID = "", time.Time{}, ""
	want := translate.Admission{Engine: "a", Credits: 5, Daily: 100, Chars: 5, Quota: 1000,
		QuotaPeriod: 24 * time.Hour, LeaseTTL: 3 * time.Second}
	if d := cmp.Diff(want, ad); d != "" {
		t.Errorf("Admission (-want +got):\n%s", d)
	}
}

// checkSettlement: the call was sent and settles its lease with what it cost, under the
// admission's cache key, with a's answer text.
func checkSettlement(t *testing.T, s translate.Settlement, cacheKey, text string) {
	t.Helper()
	if s.Lease != "lease-a" || !s.Sent || s.Credits != 5 || s.Chars != 5 || s.CacheKey != cacheKey {
		t.Errorf("Settlement %+v", s)
	}
	if s.Answer == nil || s.Answer.Text != text || s.Answer.Engine != "a" {
		t.Errorf("Settlement.Answer %+v, want the text", s.Answer)
	}
}

// TestStoreSettlesUnsentAndBilledFailures: a call refused by the vendor is settled unsent
// (nothing charged); a timed-out call is settled sent (the vendor may have billed it).
func TestStoreSettlesUnsentAndBilledFailures(t *testing.T) {
	st := &scriptStore{}
	a := fake.New("a")
	a.Script(fake.Fail(translate.KindUnavailable), fake.Fail(translate.KindTimeout))
	c := newClient(t, translate.WithEngine(a, paidProfile(90)), translate.WithStore(st),
		translate.WithBudget(translate.Budget{Daily: 100}), translate.WithClock(newClock()))
	_, _ = c.Translate(context.Background(), req("hello"))
	_, _ = c.Translate(context.Background(), req("hello"))
	var sent []bool
	for _, s := range st.settles {
		sent = append(sent, s.Sent)
	}
	if d := cmp.Diff([]bool{false, true, true}, sent); d != "" { // unavailable, timed out, a success
		t.Errorf("Sent per settlement (-want +got):\n%s", d)
	}
	if st.leases != len(st.settles) {
		t.Errorf("%d leases granted, %d settled: every lease must be settled", st.leases, len(st.settles))
	}
}

// TestStoreAnswersWithoutCall: a second-level cache hit and a request id's first answer
// are served without an engine call and cost nothing.
func TestStoreAnswersWithoutCall(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  translate.Admitted
	}{
		{"cached", translate.Admitted{Cached: &translate.StoredAnswer{Text: "hola", Engine: "a", Source: "en"}}},
		{"prior", translate.Admitted{Prior: &translate.StoredAnswer{Text: "hola", Engine: "a", Source: "en"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &scriptStore{answer: func(translate.Admission) (translate.Admitted, error) { return tc.got, nil }}
			a := fake.New("a")
			c := newClient(t, translate.WithEngine(a, paidProfile(90)), translate.WithStore(st),
				translate.WithBudget(translate.Budget{Daily: 100}), translate.WithClock(newClock()))
			r := req("hello")
			r.RequestID = "id-2"
			res, err := c.Translate(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			got := struct {
				Text, Engine string
				FromCache    bool
				Cost         float64
				Calls        int
				Settles      int
			}{res.Text, res.Engine, res.FromCache, res.Cost, a.Calls(), len(st.settles)}
			want := got
			want.Text, want.Engine, want.FromCache, want.Cost, want.Calls, want.Settles = "hola", "a", true, 0, 0, 0
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if b := c.Budget(); b.Spent+b.Reserved != 0 {
				t.Errorf("local budget %+v, want nothing spent or held", b)
			}
		})
	}
}

// TestStoreRefusalsAndPendingSkip: a refused or pending admission skips the engine; the
// request goes to the next one, and a hold keeps the engine out locally until it ends.
func TestStoreRefusalsAndPendingSkip(t *testing.T) {
	clk := newClock()
	for _, tc := range []struct {
		name string
		got  translate.Admitted
		kind translate.Kind
	}{
		{"budget", translate.Admitted{Refused: translate.KindBudgetExceeded}, translate.KindBudgetExceeded},
		{"quota hold", translate.Admitted{Refused: translate.KindQuotaExhausted, Until: clk.Now().Add(time.Hour)}, translate.KindQuotaExhausted},
		{"pending", translate.Admitted{Prior: &translate.StoredAnswer{}}, translate.KindUnavailable},
		{"prior failed", translate.Admitted{Prior: &translate.StoredAnswer{Kind: translate.KindTimeout}}, translate.KindTimeout},
		{"request id unverifiable", translate.Admitted{Refused: translate.KindUnavailable}, translate.KindUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &scriptStore{answer: func(a translate.Admission) (translate.Admitted, error) {
				if a.Engine == "a" {
					return tc.got, nil
				}
				return translate.Admitted{Lease: "l", QuotaLeft: -1}, nil
			}}
			a, b := fake.New("a"), fake.New("b")
			c := newClient(t, sharp, translate.WithEngine(a, paidProfile(100)), translate.WithEngine(b, translate.Profile{Quality: 1}),
				translate.WithStore(st), translate.WithBudget(translate.Budget{Daily: 100}), translate.WithClock(clk))
			r := req("hello")
			r.RequestID = "id-3"
			res, err := c.Translate(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]string{"a", "b"}, engineNames(res.Attempts)); d != "" {
				t.Errorf("attempts (-want +got):\n%s", d)
			}
			if k := translate.KindOf(res.Attempts[0].Err); k != tc.kind {
				t.Errorf("skip kind %v, want %v", k, tc.kind)
			}
			if msg := res.Attempts[0].Err.Error(); tc.name == "request id unverifiable" && !strings.Contains(msg, "request id may have reached") {
				t.Errorf("skip says %q, want why: the request id may have reached the engine", msg)
			}
			if a.Calls() != 0 {
				t.Errorf("a called %d times", a.Calls())
			}
			held := c.Engines()[0].QuotaLeft == 0
			if want := tc.name == "quota hold"; held != want {
				t.Errorf("engine held out locally: %v, want %v", held, want)
			}
		})
	}
}

// TestStoreRefusalKeepsItsKind: an engine the Store kept out (its shared quota spent, or
// another replica's key refused) says why to a request pinned to it: KindQuotaExhausted
// until the quota period ends, not unavailable; an unauthorized hold keeps it out a while
// without setting it aside here.
func TestStoreRefusalKeepsItsKind(t *testing.T) {
	clk := newClock()
	for _, tc := range []struct {
		refused translate.Kind
		want    translate.Kind
	}{
		{translate.KindQuotaExhausted, translate.KindQuotaExhausted},
		{translate.KindUnauthorized, translate.KindUnavailable},
	} {
		t.Run(tc.refused.String(), func(t *testing.T) {
			st := &scriptStore{answer: func(a translate.Admission) (translate.Admitted, error) {
				return translate.Admitted{Refused: tc.refused, Until: clk.Now().Add(time.Hour)}, nil
			}}
			a := fake.New("a")
			c := newClient(t, sharp, translate.WithEngine(a, paidProfile(100)), translate.WithStore(st), translate.WithClock(clk))
			pinned := req("hello")
			pinned.Engine = "a"
			refusal := "a=" + tc.refused.String() // the Store's refusal, in the walk's account
			if _, err := c.Translate(context.Background(), pinned); err == nil || !strings.Contains(err.Error(), refusal) {
				t.Errorf("refused by the Store: %v, want it to name %s", err, refusal)
			}
			if _, err := c.Translate(context.Background(), pinned); translate.KindOf(err) != tc.want { // kept out
				t.Errorf("kept out: %v (kind %v), want kind %v", err, translate.KindOf(err), tc.want)
			}
			if n := len(st.admits); n != 1 {
				t.Errorf("%d admissions, want 1: the engine is kept out after the refusal", n)
			}
			clk.Advance(time.Hour)
			if _, err := c.Translate(context.Background(), pinned); err == nil || !strings.Contains(err.Error(), refusal) || len(st.admits) != 2 {
				t.Errorf("after Until: %v with %d admissions, want the Store asked again", err, len(st.admits))
			}
		})
	}
}

// TestStoreUnreachableRefusesCall: an Admit error means nothing could be decided: the call
// is not made (never spend blind).
func TestStoreUnreachableRefusesCall(t *testing.T) {
	st := &scriptStore{answer: func(translate.Admission) (translate.Admitted, error) {
		return translate.Admitted{}, errors.New("connection refused")
	}}
	a := fake.New("a")
	c := newClient(t, translate.WithEngine(a, paidProfile(90)), translate.WithStore(st), translate.WithClock(newClock()))
	_, err := c.Translate(context.Background(), req("hello"))
	if err == nil || a.Calls() != 0 {
		t.Fatalf("err %v, calls %d: want an error and no call", err, a.Calls())
	}
}

// TestStoreHoldsVendorRefusals: a vendor's QuotaExhausted or Unauthorized is shared with
// every Client of the store.
func TestStoreHoldsVendorRefusals(t *testing.T) {
	st := &scriptStore{}
	a, b := fake.New("a"), fake.New("b")
	a.Script(fake.Fail(translate.KindQuotaExhausted))
	b.Script(fake.Fail(translate.KindUnauthorized))
	c := newClient(t, translate.WithEngine(a, paidProfile(90)), translate.WithEngine(b, paidProfile(90)),
		translate.WithStore(st), translate.WithClock(newClock()))
	_, _ = c.Translate(context.Background(), req("hello"))
	_, _ = c.Translate(context.Background(), req("hello again"))
	want := []string{"a:quota_exhausted", "b:unauthorized"}
	if d := cmp.Diff(want, st.holds, cmpSortStrings); d != "" {
		t.Errorf("holds (-want +got):\n%s", d)
	}
}

// TestStoreBudgetAndEconomy: Budget reports the store's figures, and the shared spend the
// store reports on admission moves normal requests to free engines past EconomyAt.
func TestStoreBudgetAndEconomy(t *testing.T) {
	st := &scriptStore{budget: translate.BudgetStatus{Spent: 85, Reserved: 1}}
	st.answer = func(a translate.Admission) (translate.Admitted, error) {
		return translate.Admitted{Lease: "l", QuotaLeft: -1, Spent: 85}, nil
	}
	paid, free := fake.New("paid"), fake.New("free")
	c := newClient(t, sharp, translate.WithEngine(paid, paidProfile(100)),
		translate.WithEngine(free, translate.Profile{Quality: 1, Class: translate.ClassFree}),
		translate.WithStore(st), translate.WithBudget(translate.Budget{Daily: 100}), translate.WithClock(newClock()))
	for i := range 10 {
		res, err := c.Translate(context.Background(), req("text "+string(rune('a'+i))))
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && res.Engine != "free" { // the first admission tells the shared spend
			t.Fatalf("request %d served by %s in economy mode", i, res.Engine)
		}
	}
	want := translate.BudgetStatus{Daily: 100, Spent: 85, Reserved: 1, Economy: true}
	if d := cmp.Diff(want, c.Budget()); d != "" {
		t.Errorf("Budget (-want +got):\n%s", d)
	}
}

var cmpSortStrings = cmpopts.SortSlices(func(a, b string) bool { return a < b })
