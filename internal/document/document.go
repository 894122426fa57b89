// Package document is the mechanism the root package uses to translate a document (a
// text of several lines) segment by segment: the request id of one segment (ID) and the
// document's answer stitched from its segments' (Join). The functions are pure and safe for
// concurrent use.
package document

import (
	"strconv"
	"strings"

	"github.com/fanyi-go/translate/internal/segment"
)

// ID is the request id of segment i of a document whose request id is id: id, "#" and i.
func ID(id string, i int) string { return id + "#" + strconv.Itoa(i) }

// Segment is where one segment's translation came from: the root's Segment.
type Segment struct {
	Text        string
	Engine      string
	FromMemory  bool
	MemoryScore float64
	FromCache   bool
	Degraded    bool
}

// Answer is a document's answer made of its segments'.
type Answer struct {
	Text        string  // the segments' texts stitched with the document's whitespace
	Engine      string  // the segments' engines in order, a run of one engine once, "+" between
	Degraded    bool    // a segment is degraded
	FromMemory  bool    // every segment came from the memory
	MemoryScore float64 // with FromMemory: the lowest segment's score; else 0
	FromCache   bool    // every segment came from the cache
}

// Join stitches the segments of doc, one per part of it in order, into the document's
// answer; it fails when their number is not that of doc's parts.
func Join(doc segment.Segments, segs []Segment) (Answer, error) {
	texts := make([]string, len(segs))
	var by []string
	a := Answer{FromMemory: true, FromCache: true, MemoryScore: 1}
	for i, s := range segs {
		texts[i] = s.Text
		if len(by) == 0 || by[len(by)-1] != s.Engine {
			by = append(by, s.Engine)
		}
		a.Degraded = a.Degraded || s.Degraded
		a.FromMemory, a.FromCache = a.FromMemory && s.FromMemory, a.FromCache && s.FromCache
		if s.FromMemory {
			a.MemoryScore = min(a.MemoryScore, s.MemoryScore)
		}
	}
	text, err := doc.Join(texts)
	if err != nil {
		return Answer{}, err
	}
	a.Text, a.Engine = text, strings.Join(by, "+")
	if !a.FromMemory {
		a.MemoryScore = 0
	}
	return a, nil
}
