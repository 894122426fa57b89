package openai

import (
	"context"
	"strings"
	"testing"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/fidelity/glossary"
	"github.com/google/go-cmp/cmp"
)

// TestPromptFidelity checks what EngineRequest.Format and Instruction add to the system
// prompt: exactly the fixed markup rule and the instruction, each on its own line after the
// rules and before WithInstructions' text, and nothing at all for plain text without one.
func TestPromptFidelity(t *testing.T) {
	g, err := glossary.New("brand", "en", "fr", []glossary.Term{{Source: "widget", Target: "bidule"}})
	if err != nil {
		t.Fatal(err)
	}
	instr := g.Instruction("a widget")
	if instr == "" {
		t.Fatal("glossary gave no instruction")
	}
	tests := []struct {
		name   string
		format translate.Format
		instr  string
		opts   []Option
		want   string // what follows the plain prompt
	}{
		{"text", translate.FormatText, "", nil, ""},
		{"html", translate.FormatHTML, "", nil, "\n" + htmlRule},
		{"xml", translate.FormatXML, "", nil, "\n" + xmlRule},
		{"instruction", translate.FormatText, instr, nil, "\n" + strings.TrimSpace(instr)},
		{"all", translate.FormatHTML, instr, []Option{WithInstructions("House style: short.")},
			"\n" + htmlRule + "\n" + strings.TrimSpace(instr) + "\nHouse style: short."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, texts := range [][]string{{"a widget"}, {"a widget", "two"}} {
				plain := prompt(t, request("en", "fr", texts...))
				req := request("en", "fr", texts...)
				req.Format, req.Instruction = tt.format, tt.instr
				got := prompt(t, req, tt.opts...)
				rest, ok := strings.CutPrefix(got, plain)
				if !ok {
					t.Fatalf("%d texts: prompt does not start with the plain one:\n%s\n---\n%s", len(texts), got, plain)
				}
				if diff := cmp.Diff(tt.want, rest); diff != "" {
					t.Errorf("%d texts: prompt tail (-want +got):\n%s", len(texts), diff)
				}
			}
		})
	}
}

// prompt returns the system message the engine sends for req.
func prompt(t *testing.T, req *translate.EngineRequest, opts ...Option) string {
	t.Helper()
	fake, e := newTest(t, modeOK, opts...)
	if _, err := e.Translate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	return fake.requests()[0].Body.Messages[0].Content
}
