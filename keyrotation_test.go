package translate_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
)

// TestKeyRotationThroughClient: for every keyed adapter in a Client, a 401 re-reads the
// key once before the Client sets the engine aside. A key rotated while the call was made
// with the old one gets the call repeated with the new key and the engine stays in
// service; a key that is still the one refused costs one request and sets the engine
// aside, and no later request reaches the vendor.
func TestKeyRotationThroughClient(t *testing.T) {
	const oldKey, newKey = "OLD-KEY-0123456789", "NEW-KEY-9876543210"
	for _, re := range rotatingEngines() {
		t.Run(re.name, func(t *testing.T) {
			var withOld, withNew, others atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				switch {
				case re.uses(r, body, newKey):
					withNew.Add(1)
					w.WriteHeader(http.StatusInternalServerError) // tells the repeat apart; not the key's fault
					return
				case re.uses(r, body, oldKey):
					withOld.Add(1)
				default:
					others.Add(1)
				}
				w.WriteHeader(http.StatusUnauthorized)
				w.Write([]byte(`{"message":"bad key"}`))
			}))
			defer srv.Close()
			var key atomic.Pointer[string]
			var reads atomic.Int32
			var rotateOnRead atomic.Int32 // the read that rotates the key; 0: never
			old, fresh := oldKey, newKey
			key.Store(&old)
			e := re.new(t, srv.URL, func(context.Context) (string, error) {
				n := reads.Add(1)
				k := *key.Load()
				if n == rotateOnRead.Load() {
					key.Store(&fresh) // rotated while this call is in flight
				}
				return k, nil
			})
			c := newClient(t, translate.WithEngine(e, translate.Profile{Languages: []string{"en", "es"}}),
				translate.WithRetry(translate.RetryPolicy{PerEngine: 1, MaxAttempts: 1}), translate.WithClock(newClock()))
			status := func() translate.EngineStatus { return c.Engines()[0] }

			rotateOnRead.Store(1)
			_, err := c.Translate(context.Background(), req("Hello"))
			if translate.KindOf(err) != translate.KindUnavailable || withOld.Load() != 1 || withNew.Load() != 1 || others.Load() != 0 {
				t.Fatalf("key rotated during the call: %v; requests with the old key %d, the new %d, others %d; want the 401 repeated once with the new key",
					err, withOld.Load(), withNew.Load(), others.Load())
			}
			if status().SetAside {
				t.Fatal("set aside although the re-read key was a new one")
			}

			// Rotated back to a key the vendor refuses, and not rotated during the call.
			rotateOnRead.Store(0)
			key.Store(&old)
			reads.Store(0)
			withOld.Store(0)
			withNew.Store(0)
			_, err = c.Translate(context.Background(), req("Hello again"))
			if translate.KindOf(err) != translate.KindUnauthorized || withOld.Load() != 1 || withNew.Load() != 0 || reads.Load() != 2 {
				t.Fatalf("a refused key: %v; requests %d, key reads %d; want KindUnauthorized after 1 request and 2 reads",
					err, withOld.Load(), reads.Load())
			}
			if !status().SetAside {
				t.Fatalf("not set aside after a 401 with the current key: %+v", status())
			}
			key.Store(&fresh) // a key func that would now answer does not bring it back by itself
			if _, err := c.Translate(context.Background(), req("Third")); err == nil || withOld.Load()+withNew.Load() != 1 {
				t.Errorf("after being set aside: %v, %d requests in all; want an error and no request", err, withOld.Load()+withNew.Load())
			}
		})
	}
}

// TestReconfigureBringsBackRotatedKey: a bundled adapter (deepl, engines/all) built from a
// configuration file whose key ("env:...") the vendor refuses is set aside by the Client;
// once the variable holds the rotated key, Reconfigure with the same file brings it back
// and it serves. Reconfigure while the key is still refused brings it back too, and the
// next 401 sets it aside again.
func TestReconfigureBringsBackRotatedKey(t *testing.T) {
	all.Register()
	const good = "ROTATED-KEY-2"
	var calls, refused atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") != "DeepL-Auth-Key "+good {
			refused.Add(1)
			w.WriteHeader(http.StatusForbidden) // DeepL's answer to a bad key
			w.Write([]byte(`{"message":"Wrong endpoint or invalid auth key"}`))
			return
		}
		r.ParseForm()
		var texts []map[string]string
		for _, s := range r.Form["text"] {
			texts = append(texts, map[string]string{"detected_source_language": "EN", "text": "ES:" + s})
		}
		if len(texts) == 0 { // a JSON body
			var body struct{ Text []string }
			json.NewDecoder(r.Body).Decode(&body)
			for _, s := range body.Text {
				texts = append(texts, map[string]string{"detected_source_language": "EN", "text": "ES:" + s})
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"translations": texts})
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "translate.json")
	doc := `{"cache": {"disabled": true}, "retry": {"per_engine": 1},
	  "engines": [{"name": "deepl", "type": "deepl", "settings": {"auth_key": "env:TR_ROTATED_DEEPL_KEY", "base_url": "` + srv.URL + `"},
	               "profile": {"languages": ["en", "es"]}}]}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	load := func() *translate.Config {
		t.Helper()
		cfg, err := translate.LoadConfig(path)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	t.Setenv("TR_ROTATED_DEEPL_KEY", "OLD-KEY-1")
	c := newClient(t, translate.WithConfig(load()), translate.WithClock(newClock()))
	setAside := func() bool { return c.Engines()[0].SetAside }

	if _, err := c.Translate(context.Background(), req("a")); translate.KindOf(err) != translate.KindUnauthorized || !setAside() {
		t.Fatalf("with the old key: %v, set aside %v; want KindUnauthorized and set aside", err, setAside())
	}
	before := calls.Load()
	if _, err := c.Translate(context.Background(), req("b")); err == nil || calls.Load() != before {
		t.Fatalf("set aside, yet: %v, %d more calls", err, calls.Load()-before)
	}

	// Reconfigured with the key still refused: back, and set aside again by the next 401.
	if err := c.Reconfigure(load()); err != nil {
		t.Fatal(err)
	}
	if setAside() {
		t.Fatal("Reconfigure did not bring the engine back")
	}
	if _, err := c.Translate(context.Background(), req("c")); translate.KindOf(err) != translate.KindUnauthorized || !setAside() {
		t.Fatalf("reconfigured with the same refused key: %v, set aside %v", err, setAside())
	}

	// Rotated: the variable holds the new key, Reconfigure reads it.
	t.Setenv("TR_ROTATED_DEEPL_KEY", good)
	if err := c.Reconfigure(load()); err != nil {
		t.Fatal(err)
	}
	res, err := c.Translate(context.Background(), req("d"))
	if err != nil || res.Engine != "deepl" || !strings.HasPrefix(res.Text, "ES:") || setAside() {
		t.Fatalf("after the rotation: %+v, %v, set aside %v; want deepl's translation", res, err, setAside())
	}
	if n := refused.Load(); n != 2 {
		t.Errorf("the vendor refused %d calls, want 2 (one per configuration with the old key)", n)
	}
}
