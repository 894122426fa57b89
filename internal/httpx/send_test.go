package httpx

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/google/go-cmp/cmp"
)

func TestNewRequest(t *testing.T) {
	ctx := context.WithValue(context.Background(), struct{}{}, "call")
	get, err := NewRequest(ctx, http.MethodGet, "https://api.example/v2/languages?type=source", nil, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(http.Header{"Accept": {"application/json"}}, get.Header); diff != "" {
		t.Errorf("GET header (-want +got):\n%s", diff)
	}
	if get.Body != nil || get.ContentLength != 0 || get.Context() != ctx {
		t.Errorf("GET: body %v, length %d, ctx %v", get.Body, get.ContentLength, get.Context())
	}

	body := []byte(`{"q":"Bonjour"}`)
	post, err := NewRequest(ctx, http.MethodPost, "https://api.example/translate", body, "application/json; charset=UTF-8")
	if err != nil {
		t.Fatal(err)
	}
	want := http.Header{"Accept": {"application/json"}, "Content-Type": {"application/json; charset=UTF-8"}}
	if diff := cmp.Diff(want, post.Header); diff != "" {
		t.Errorf("POST header (-want +got):\n%s", diff)
	}
	got, _ := io.ReadAll(post.Body)
	if string(got) != string(body) || post.ContentLength != int64(len(body)) || post.GetBody == nil {
		t.Errorf("POST body %q, length %d, GetBody set %v", got, post.ContentLength, post.GetBody != nil)
	}

	if _, err := NewRequest(ctx, "BAD METHOD", "https://api.example/", nil, ""); err == nil {
		t.Error("NewRequest accepted an invalid method")
	}
}

// TestSend checks that Send returns 2xx answers and hands every other status, with the
// engine and the secrets, to classify, and that no secret leaves through the error.
func TestSend(t *testing.T) {
	const key, text = "KEY-7f3a9c-SECRET", "Le texte confidentiel du client"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(code)
		io.WriteString(w, "bad key "+key+" for text '"+text+"'")
	}))
	defer srv.Close()
	type call struct {
		Engine  string
		Status  int
		Secrets []string
	}
	var calls []call
	classify := func(engine string, resp *Response, secrets ...string) *translate.Error {
		calls = append(calls, call{engine, resp.Status, secrets})
		return Error(engine, StatusKind(resp.Status), resp, string(resp.Body), secrets...)
	}
	send := func(status int) (*Response, error) {
		req, err := NewRequest(context.Background(), http.MethodGet, srv.URL+"/"+strconv.Itoa(status), nil, "")
		if err != nil {
			t.Fatal(err)
		}
		return Send(srv.Client(), "vendor", req, classify, key, text)
	}
	for _, status := range []int{200, 204, 299} {
		if resp, err := send(status); err != nil || resp.Status != status {
			t.Errorf("status %d: got %v, %v; want the response", status, resp, err)
		}
	}
	if len(calls) != 0 {
		t.Fatalf("classify called for 2xx: %v", calls)
	}
	for _, status := range []int{300, 400, 429, 503} {
		_, err := send(status)
		var te *translate.Error
		if !errors.As(err, &te) || te.Kind != StatusKind(status) || te.StatusCode != status || te.RetryAfter == 0 {
			t.Errorf("status %d: got %#v", status, err)
			continue
		}
		if strings.Contains(te.Message, key) || strings.Contains(te.Message, "confidentiel") {
			t.Errorf("status %d: message quotes a secret: %q", status, te.Message)
		}
	}
	want := []call{{"vendor", 300, []string{key, text}}, {"vendor", 400, []string{key, text}},
		{"vendor", 429, []string{key, text}}, {"vendor", 503, []string{key, text}}}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("classify calls (-want +got):\n%s", diff)
	}

	// A transport failure is Do's, redacted too (the text rides in the URL here).
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	req, _ := NewRequest(context.Background(), http.MethodGet, dead.URL+"/"+strings.ReplaceAll(text, " ", "-")+"?key="+key, nil, "")
	_, err := Send(http.DefaultClient, "vendor", req, classify, key, strings.ReplaceAll(text, " ", "-"))
	if translate.KindOf(err) != translate.KindUnavailable || strings.Contains(err.Error(), key) ||
		strings.Contains(err.Error(), "confidentiel") {
		t.Errorf("transport failure: %v", err)
	}
}

func TestDecode(t *testing.T) {
	var v struct{ Text string }
	if err := Decode("vendor", &Response{Status: 200, Body: []byte(`{"Text":"Hallo"}`)}, &v); err != nil || v.Text != "Hallo" {
		t.Fatalf("Decode = %v, %+v", err, v)
	}
	// A body that is not the JSON: KindBadOutput with the status; the body's text (which
	// may echo the customer's) is not quoted.
	for _, body := range []string{"Bonjour le monde confidentiel", `{"Text": 42}`, `<html>Bonjour confidentiel</html>`, ""} {
		err := Decode("vendor", &Response{Status: 203, Body: []byte(body)}, &v)
		var te *translate.Error
		if !errors.As(err, &te) {
			t.Fatalf("body %q: got %v", body, err)
		}
		if te.Kind != translate.KindBadOutput || te.StatusCode != 203 || te.Engine != "vendor" ||
			!strings.HasPrefix(te.Message, "decode response: ") {
			t.Errorf("body %q: got %#v", body, te)
		}
		if strings.Contains(te.Message, "confidentiel") || strings.Contains(te.Message, "Bonjour") {
			t.Errorf("body %q: message quotes the body: %q", body, te.Message)
		}
	}
}

func TestEncodeJSON(t *testing.T) {
	if b, err := EncodeJSON("vendor", nil); b != nil || err != nil {
		t.Errorf("EncodeJSON(nil) = %q, %v; want no body", b, err)
	}
	b, err := EncodeJSON("vendor", map[string]any{"q": []string{"a<b", "ü"}})
	if diff := cmp.Diff(`{"q":["a\u003cb","ü"]}`, string(b)); err != nil || diff != "" {
		t.Errorf("EncodeJSON: %v (-want +got):\n%s", err, diff)
	}
	// A body that does not encode: KindInvalidInput, the texts beside the bad value unquoted.
	_, err = EncodeJSON("vendor", map[string]any{"q": "Bonjour le monde confidentiel", "n": math.Inf(1)})
	var te *translate.Error
	if !errors.As(err, &te) || te.Kind != translate.KindInvalidInput || te.Engine != "vendor" ||
		!strings.HasPrefix(te.Message, "encode request: json: unsupported value") {
		t.Fatalf("got %#v", err)
	}
	if strings.Contains(te.Message, "confidentiel") {
		t.Errorf("message quotes the text: %q", te.Message)
	}
}

func TestBodyText(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{502, "  upstream timed out\n", "upstream timed out"},
		{502, " \n\t", "Bad Gateway"},
		{429, "", "Too Many Requests"},
		{400, "<html>bad</html>", "<html>bad</html>"},
	} {
		if got := BodyText(&Response{Status: tc.status, Body: []byte(tc.body)}); got != tc.want {
			t.Errorf("BodyText(%d, %q) = %q, want %q", tc.status, tc.body, got, tc.want)
		}
	}
	// Through Error, as the adapters use it, a body echoing the key and text loses both.
	const key, text = "KEY-7f3a9c-SECRET", "Le texte confidentiel du client"
	resp := &Response{Status: 400, Body: []byte("invalid key " + key + " for '" + text + "'")}
	if msg := Error("vendor", translate.KindInvalidInput, resp, BodyText(resp), key, text).Message; strings.Contains(msg, key) ||
		strings.Contains(msg, "confidentiel") || !strings.HasPrefix(msg, "invalid key ") {
		t.Errorf("Error(BodyText) = %q", msg)
	}
}
