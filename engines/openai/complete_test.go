package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/google/go-cmp/cmp"
)

// TestCompleteOutcomes pins what complete makes of each kind of 200 answer, one text and
// two: the texts, or the exact Kind, StatusCode and Message of the error. The messages are
// those of complete before it was split into steps.
func TestCompleteOutcomes(t *testing.T) {
	const stop = `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%s,"refusal":%s},"finish_reason":%q}]}`
	type outcome struct {
		Texts   []string
		Kind    translate.Kind
		Status  int
		Message string
	}
	tests := []struct {
		name  string
		texts []string
		body  string
	}{
		{"ok", []string{"Hello"}, fmt.Sprintf(stop, `"Hola"`, `null`, "stop")},
		{"empty refusal is no refusal", []string{"Hello"}, fmt.Sprintf(stop, `"Hola"`, `""`, "stop")},
		{"refusal", []string{"Hello"}, fmt.Sprintf(stop, `null`, `"I can't"`, "stop")},
		{"length", []string{"Hello"}, fmt.Sprintf(stop, `"Ho"`, `null`, "length")},
		{"content_filter", []string{"Hello"}, fmt.Sprintf(stop, `null`, `null`, "content_filter")},
		{"tool_calls", []string{"Hello"}, fmt.Sprintf(stop, `null`, `null`, "tool_calls")},
		{"function_call", []string{"Hello"}, fmt.Sprintf(stop, `null`, `null`, "function_call")},
		{"null content", []string{"Hello"}, fmt.Sprintf(stop, `null`, `null`, "stop")},
		{"blank content", []string{"Hello"}, fmt.Sprintf(stop, `" \n"`, `null`, "stop")},
		{"only thinking", []string{"Hello"}, fmt.Sprintf(stop, `"<think>hm</think> "`, `null`, "stop")},
		{"no choices", []string{"Hello"}, `{"choices":[]}`},
		{"no choices, error", []string{"Hello"}, `{"choices":[],"error":{"message":"upstream failed","type":"server_error","code":"x1"}}`},
		{"not JSON", []string{"Hello"}, `<html>`},
		{"batch ok", []string{"a", " b "}, fmt.Sprintf(stop, `"[\"x\", \"y\"]"`, `null`, "stop")},
		{"batch unparsable", []string{"a", "b"}, fmt.Sprintf(stop, `"x, y"`, `null`, "stop")},
		{"batch empty text", []string{"a", "b"}, fmt.Sprintf(stop, `"[\"x\", \" \"]"`, `null`, "stop")},
	}
	want := map[string]outcome{
		"ok":                          {Texts: []string{"Hola"}},
		"empty refusal is no refusal": {Texts: []string{"Hola"}},
		"refusal":                     {Kind: translate.KindBadOutput, Status: 200, Message: "the model refused to translate"},
		"length":                      {Kind: translate.KindTextTooLong, Status: 200, Message: "finish_reason length: the answer was cut at the model's token limit"},
		"content_filter":              {Kind: translate.KindBadOutput, Status: 200, Message: "finish_reason content_filter: content was omitted by the content filter"},
		"tool_calls":                  {Kind: translate.KindBadOutput, Status: 200, Message: "finish_reason tool_calls: the model called a tool instead of answering"},
		"function_call":               {Kind: translate.KindBadOutput, Status: 200, Message: "finish_reason function_call: the model called a tool instead of answering"},
		"null content":                {Kind: translate.KindBadOutput, Status: 200, Message: "empty message content"},
		"blank content":               {Kind: translate.KindBadOutput, Status: 200, Message: "empty message content"},
		"only thinking":               {Kind: translate.KindBadOutput, Status: 200, Message: "empty message content"},
		"no choices":                  {Kind: translate.KindBadOutput, Status: 200, Message: "no choices in the response"},
		"no choices, error":           {Kind: translate.KindBadOutput, Status: 200, Message: "no choices: x1: server_error: upstream failed"},
		"not JSON":                    {Kind: translate.KindBadOutput, Status: 200, Message: "response is not a chat completion: invalid character '<' looking for beginning of value"},
		"batch ok":                    {Texts: []string{"x", " y "}},
		"batch unparsable":            {Kind: translate.KindBadOutput, Status: 200, Message: "batch answer: not JSON"},
		"batch empty text":            {Kind: translate.KindBadOutput, Status: 200, Message: "batch answer: text 2 of 2 is empty"},
	}
	got := map[string]outcome{}
	for _, tt := range tests {
		fake, e := newTest(t, modeOK)
		fake.reply = func(w http.ResponseWriter, _ *chatRequestSeen) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(tt.body))
		}
		res, err := e.Translate(context.Background(), request("en", "es", tt.texts...))
		var te *translate.Error
		switch {
		case err == nil:
			got[tt.name] = outcome{Texts: res.Texts}
		case errors.As(err, &te):
			got[tt.name] = outcome{Kind: te.Kind, Status: te.StatusCode, Message: te.Message}
		default:
			t.Errorf("%s: err = %v (%T), want *translate.Error", tt.name, err, err)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}
