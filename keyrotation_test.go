package translate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
	"github.com/fanyi-go/translate/engines/deepl"
	"github.com/fanyi-go/translate/engines/fake"
)

// The keys of TestKeyRotationThroughClient: the vendor refuses staleKey and takes freshKey.
const staleKey, freshKey = "OLD-KEY-0123456789", "NEW-KEY-9876543210"

// TestKeyRotationThroughClient: for every keyed adapter in a Client, a 401 re-reads the
// key once before the Client sets the engine aside. A key rotated while the call was made
// with the old one gets the call repeated with the new key and the engine stays in
// service; a key that is still the one refused costs one request and sets the engine
// aside, and no later request reaches the vendor.
func TestKeyRotationThroughClient(t *testing.T) {
	for _, re := range rotatingEngines() {
		t.Run(re.name, func(t *testing.T) { testKeyRotation(t, re) })
	}
}

func testKeyRotation(t *testing.T, re rotatingEngine) {
	v := &keyVendor{re: re}
	srv := httptest.NewServer(v)
	defer srv.Close()
	k := &rotatingKey{}
	k.set(staleKey)
	e := re.new(t, srv.URL, k.read)
	c := newClient(t, translate.WithEngine(e, translate.Profile{Languages: []string{"en", "es"}}),
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1, MaxAttempts: 1}), translate.WithClock(newClock()))

	keyRotatedDuringCall(t, c, v, k)

	// Rotated back to a key the vendor refuses, and not rotated during the call.
	k.rotateOnRead.Store(0)
	k.set(staleKey)
	k.reads.Store(0)
	v.withStale.Store(0)
	v.withFresh.Store(0)
	keyStillRefused(t, c, v, k)
}

// keyRotatedDuringCall: the key rotates while the first call is in flight with the stale
// one; the 401 is repeated once with the fresh key and the engine stays in service.
func keyRotatedDuringCall(t *testing.T, c *translate.Client, v *keyVendor, k *rotatingKey) {
	t.Helper()
	k.rotateOnRead.Store(1)
	_, err := c.Translate(context.Background(), req("Hello"))
	if translate.KindOf(err) != translate.KindUnavailable || v.withStale.Load() != 1 || v.withFresh.Load() != 1 || v.others.Load() != 0 {
		t.Fatalf("key rotated during the call: %v; requests with the old key %d, the new %d, others %d; want the 401 repeated once with the new key",
			err, v.withStale.Load(), v.withFresh.Load(), v.others.Load())
	}
	if c.Engines()[0].SetAside {
		t.Fatal("set aside although the re-read key was a new one")
	}
}

// keyStillRefused: a 401 whose re-read gives the same key costs one request and two key
// reads and sets the engine aside; a key func that would now answer does not bring it
// back before the next key check (TestRotatedKeyComesBackWithoutReconfigure), and no
// request reaches the vendor until then.
func keyStillRefused(t *testing.T, c *translate.Client, v *keyVendor, k *rotatingKey) {
	t.Helper()
	_, err := c.Translate(context.Background(), req("Hello again"))
	if translate.KindOf(err) != translate.KindUnauthorized || v.withStale.Load() != 1 || v.withFresh.Load() != 0 || k.reads.Load() != 2 {
		t.Fatalf("a refused key: %v; requests %d, key reads %d; want KindUnauthorized after 1 request and 2 reads",
			err, v.withStale.Load(), k.reads.Load())
	}
	if st := c.Engines()[0]; !st.SetAside {
		t.Fatalf("not set aside after a 401 with the current key: %+v", st)
	}
	k.set(freshKey) // a key func that would now answer does not bring it back before a check
	if _, err := c.Translate(context.Background(), req("Third")); err == nil || v.withStale.Load()+v.withFresh.Load() != 1 {
		t.Errorf("after being set aside: %v, %d requests in all; want an error and no request", err, v.withStale.Load()+v.withFresh.Load())
	}
}

// keyVendor counts requests by the key they carry. It answers 401 to every key but
// freshKey, and 500 to freshKey: the repeat is told apart, and it is not the key's fault.
type keyVendor struct {
	re                           rotatingEngine
	withStale, withFresh, others atomic.Int32
}

func (v *keyVendor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch {
	case v.re.uses(r, body, freshKey):
		v.withFresh.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
		return
	case v.re.uses(r, body, staleKey):
		v.withStale.Add(1)
	default:
		v.others.Add(1)
	}
	w.WriteHeader(http.StatusUnauthorized)
	w.Write([]byte(`{"message":"bad key"}`))
}

// rotatingKey is a key func that can rotate the key to freshKey while a call reads it.
type rotatingKey struct {
	key          atomic.Pointer[string]
	reads        atomic.Int32
	rotateOnRead atomic.Int32 // the read that rotates the key; 0: never
}

func (k *rotatingKey) set(key string) { k.key.Store(&key) }

func (k *rotatingKey) read(context.Context) (string, error) {
	n := k.reads.Add(1)
	key := *k.key.Load()
	if n == k.rotateOnRead.Load() {
		k.set(freshKey) // rotated while this call is in flight
	}
	return key, nil
}

// TestReconfigureBringsBackRotatedKey: a bundled adapter (deepl, engines/all) built from a
// configuration file whose key ("env:...") the vendor refuses is set aside by the Client;
// once the variable holds the rotated key, Reconfigure with the same file brings it back
// and it serves. Reconfigure while the key is still refused brings it back too, and the
// next 401 sets it aside again.
func TestReconfigureBringsBackRotatedKey(t *testing.T) {
	all.Register()
	v := &deeplKeyVendor{good: "ROTATED-KEY-2"}
	srv := httptest.NewServer(v)
	defer srv.Close()
	path := writeRotatedKeyConfig(t, srv.URL)
	t.Setenv("TR_ROTATED_DEEPL_KEY", "OLD-KEY-1")
	c := newClient(t, translate.WithConfig(loadConfig(t, path)), translate.WithClock(newClock()))

	refusedKeySetsAside(t, c, v)

	// Reconfigured with the key still refused: back, and set aside again by the next 401.
	if err := c.Reconfigure(loadConfig(t, path)); err != nil {
		t.Fatal(err)
	}
	if setAside(c) {
		t.Fatal("Reconfigure did not bring the engine back")
	}
	if _, err := c.Translate(context.Background(), req("c")); translate.KindOf(err) != translate.KindUnauthorized || !setAside(c) {
		t.Fatalf("reconfigured with the same refused key: %v, set aside %v", err, setAside(c))
	}

	// Rotated: the variable holds the new key, Reconfigure reads it.
	t.Setenv("TR_ROTATED_DEEPL_KEY", v.good)
	if err := c.Reconfigure(loadConfig(t, path)); err != nil {
		t.Fatal(err)
	}
	res, err := c.Translate(context.Background(), req("d"))
	if err != nil || res.Engine != "deepl" || !strings.HasPrefix(res.Text, "ES:") || setAside(c) {
		t.Fatalf("after the rotation: %+v, %v, set aside %v; want deepl's translation", res, err, setAside(c))
	}
	if n := v.refused.Load(); n != 2 {
		t.Errorf("the vendor refused %d calls, want 2 (one per configuration with the old key)", n)
	}
}

// refusedKeySetsAside: a key the vendor refuses sets the engine aside, and a set-aside
// engine gets no calls.
func refusedKeySetsAside(t *testing.T, c *translate.Client, v *deeplKeyVendor) {
	t.Helper()
	if _, err := c.Translate(context.Background(), req("a")); translate.KindOf(err) != translate.KindUnauthorized || !setAside(c) {
		t.Fatalf("with the old key: %v, set aside %v; want KindUnauthorized and set aside", err, setAside(c))
	}
	before := v.calls.Load()
	if _, err := c.Translate(context.Background(), req("b")); err == nil || v.calls.Load() != before {
		t.Fatalf("set aside, yet: %v, %d more calls", err, v.calls.Load()-before)
	}
}

// setAside reports whether c's first engine is set aside.
func setAside(c *translate.Client) bool { return c.Engines()[0].SetAside }

// writeRotatedKeyConfig writes a configuration file with one deepl engine at base whose
// key is read from TR_ROTATED_DEEPL_KEY, and returns its path.
func writeRotatedKeyConfig(t *testing.T, base string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "translate.json")
	doc := `{"cache": {"disabled": true}, "retry": {"per_engine": 1},
	  "engines": [{"name": "deepl", "type": "deepl", "settings": {"auth_key": "env:TR_ROTATED_DEEPL_KEY", "base_url": "` + base + `"},
	               "profile": {"languages": ["en", "es"]}}]}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadConfig is translate.LoadConfig(path); an error ends the test.
func loadConfig(t *testing.T, path string) *translate.Config {
	t.Helper()
	cfg, err := translate.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// deeplKeyVendor answers as DeepL does: 403 to a key other than good, and otherwise
// "ES:" + each text, sent as a form or as a JSON body.
type deeplKeyVendor struct {
	good           string
	calls, refused atomic.Int32
}

func (v *deeplKeyVendor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v.calls.Add(1)
	if r.Header.Get("Authorization") != "DeepL-Auth-Key "+v.good {
		v.refused.Add(1)
		w.WriteHeader(http.StatusForbidden) // DeepL's answer to a bad key
		w.Write([]byte(`{"message":"Wrong endpoint or invalid auth key"}`))
		return
	}
	var texts []map[string]string
	for _, s := range deeplRequestTexts(r) {
		texts = append(texts, map[string]string{"detected_source_language": "EN", "text": "ES:" + s})
	}
	json.NewEncoder(w).Encode(map[string]any{"translations": texts})
}

// deeplRequestTexts are the texts of a DeepL request, from its form or its JSON body.
func deeplRequestTexts(r *http.Request) []string {
	r.ParseForm()
	if texts := r.Form["text"]; len(texts) > 0 {
		return texts
	}
	var body struct{ Text []string }
	json.NewDecoder(r.Body).Decode(&body)
	return body.Text
}

// TestRotatedKeyComesBackWithoutReconfigure: DeepL (its bundled profile) beside a backup,
// with the defaults, in virtual time (the vendor is served in process). A key the vendor
// refuses sets DeepL aside and the backup answers; while the key is still refused a key
// check costs one refused request a minute; once the key function returns the rotated
// key, DeepL is back within keyCheckEvery and a fold (70s) of the rotation, with no
// Reconfigure, and takes its share again.
func TestRotatedKeyComesBackWithoutReconfigure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const oldKey = "OLD-KEY-0123456789"
		v := &deeplKeyVendor{good: freshKey}
		k := &rotatingKey{}
		k.set(oldKey)
		d, err := deepl.New("", deepl.WithHTTPClient(&http.Client{Transport: inProcess{v}}), deepl.WithKeyFunc(k.read))
		if err != nil {
			t.Fatal(err)
		}
		_, gg := bundled(t)
		c, err := translate.New(translate.WithEngine(d, d.Profile()), translate.WithEngine(fake.New("google"), gg))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for i := 0; !setAside(c); i++ {
			if i == 100 {
				t.Fatal("deepl not set aside after 100 requests with a refused key")
			}
			if _, err := c.Translate(context.Background(), req(fmt.Sprint("a ", i))); err != nil {
				t.Fatalf("request %d with deepl's key refused: %v", i, err)
			}
		}
		refused := v.refused.Load()
		every10s(t, c, "refused", 9) // 90s
		if n := v.refused.Load() - refused; n != 1 || !setAside(c) {
			t.Fatalf("90s with the key still refused: %d refused checks, set aside %v; want 1 and set aside", n, setAside(c))
		}
		k.set(freshKey)
		back := -1
		for i := range 7 { // 70s
			every10s(t, c, "rotated", 1)
			if back < 0 && !setAside(c) {
				back = i + 1
			}
		}
		if back < 0 {
			t.Fatal("deepl still set aside 70s after its key was rotated")
		}
		got := every10s(t, c, "back", 40)
		t.Logf("deepl back %ds after the rotation; then it answered %d of 40 requests", back*10, got["deepl"])
		if got["deepl"] < 10 {
			t.Errorf("after the rotation deepl answered %d of 40 requests, want 10 or more (%v)", got["deepl"], got)
		}
		c.Close()
		synctest.Wait()
	})
}

// inProcess is an http.RoundTripper that serves requests with a handler in process: no
// socket, so a synctest bubble can hold the vendor.
type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	p.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// every10s sends n requests, 10s of virtual time apart, letting the Client's background
// work settle after each, and counts the engines that answered.
func every10s(t *testing.T, c *translate.Client, tag string, n int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for i := range n {
		time.Sleep(10 * time.Second)
		res, err := c.Translate(context.Background(), req(fmt.Sprint(tag, " ", i)))
		if err != nil {
			t.Fatalf("%s %d: %v", tag, i, err)
		}
		got[res.Engine]++
		synctest.Wait()
	}
	return got
}
