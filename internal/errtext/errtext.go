// Package errtext writes the text of the translate package's Error from plain values:
// "engine: kind (HTTP status): message", the engines a request tried, and the cut at Max.
// The caller writes the "translate: " prefix and any nested cause.
package errtext

import (
	"iter"
	"strings"

	"github.com/fanyi-go/translate/internal/enum"
)

// Max bounds the text of an error, in bytes.
const Max = 64 << 10

// Head writes "engine: kind (HTTP status): message" to b, leaving out an empty engine, a
// zero status and an empty message.
func Head(b *strings.Builder, engine, kind string, status int, message string) {
	if engine != "" {
		b.WriteString(engine)
		b.WriteString(": ")
	}
	b.WriteString(kind)
	if status != 0 {
		b.WriteString(" (HTTP ")
		b.WriteString(enum.Itoa(status))
		b.WriteString(")")
	}
	if message != "" {
		b.WriteString(": ")
		b.WriteString(message)
	}
}

// Attempts writes " [tried: engine=outcome ...]" to b for each engine and outcome ("ok" or
// the failure's kind) of tried, in order; it stops asking for more once b holds over Max.
func Attempts(b *strings.Builder, tried iter.Seq2[string, string]) {
	b.WriteString(" [tried:")
	for engine, outcome := range tried {
		if b.Len() > Max {
			break
		}
		b.WriteString(" ")
		b.WriteString(engine)
		b.WriteString("=")
		b.WriteString(outcome)
	}
	b.WriteString("]")
}

// Cut returns s cut to Max bytes.
func Cut(s string) string {
	if len(s) > Max {
		return s[:Max]
	}
	return s
}
