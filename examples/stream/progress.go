package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fanyi-go/translate"
)

// progress tells on w how a stream is going, chunk by chunk. In "lines" mode it writes a
// line when a segment is done, and one when a segment's text is replaced (its stream broke
// and another answer took over); "live" adds a line rewritten in place with the segment
// being written; "off" writes nothing.
type progress struct {
	w    io.Writer
	mode string
	t0   time.Time

	seg      int    // the segment whose chunks come now
	shown    string // the text of seg's last chunk
	engine   string // the engine of seg's last chunk
	partials int    // partial chunks of seg
	broke    bool   // seg's text was replaced
	live     bool   // a live line is on the screen

	first    time.Duration  // when the first segment was done
	segments int            // segments done
	chars    int            // translated code points so far
	by       map[string]int // segments done by each engine
	replaced int            // segments whose text was replaced
}

func newProgress(w io.Writer, mode string) *progress {
	return &progress{w: w, mode: mode, t0: time.Now(), by: map[string]int{}}
}

func (p *progress) printf(format string, a ...any) {
	if p.mode == "off" {
		return
	}
	p.clearLive()
	fmt.Fprintf(p.w, format, a...)
}

// start says what is translated, and on which engines.
func (p *progress) start(name string, chars int, a args, st setup) {
	from := a.from
	if from == "" {
		from = "the detected language"
	}
	p.printf("Translating %s (%d characters) from %s to %s, up to %d segments at a time.\n", name, chars, from, a.to, a.conc)
	for _, u := range st.used {
		p.printf("  engine %s\n", u)
	}
	if st.simulated {
		p.printf("These are simulated engines: their answers are not real translations.\n")
	}
}

// partial takes a Partial chunk: the segment's translation so far.
func (p *progress) partial(ch translate.Chunk) {
	p.next(ch)
	p.partials++
	if p.mode != "live" {
		return
	}
	text := strings.Join(strings.Fields(ch.Text), " ")
	if n := utf8.RuneCountInString(text); n > 60 {
		text = "…" + string([]rune(text)[n-59:])
	}
	fmt.Fprintf(p.w, "\r\033[K  segment %d · %s · %s", ch.Segment, ch.Engine, text)
	p.live = true
}

// final takes the final chunk of a segment.
func (p *progress) final(ch translate.Chunk) {
	p.next(ch)
	d := since(p.t0)
	if p.segments == 0 {
		p.first = d
	}
	p.segments++
	p.chars += utf8.RuneCountInString(strings.TrimSpace(ch.Text))
	p.by[ch.Engine]++
	streamed := ""
	if p.partials > 0 {
		streamed = fmt.Sprintf(", streamed in %d partial chunks", p.partials)
	}
	p.printf("  segment %d done at %v by %s%s\n", ch.Segment, d, ch.Engine, streamed)
}

// next notes a chunk of ch.Segment: a new segment starts afresh; within a segment, a chunk
// from another engine, or one that does not extend the one before, replaces it (the
// stream broke off and the Client asked again).
func (p *progress) next(ch translate.Chunk) {
	if ch.Segment != p.seg || p.shown == "" {
		p.seg, p.shown, p.engine, p.partials, p.broke = ch.Segment, ch.Text, ch.Engine, 0, false
		return
	}
	if ch.Engine != p.engine || !strings.HasPrefix(ch.Text, p.shown) {
		p.printf("  segment %d: the stream from %s broke off after %d characters; a new answer from %s replaces it\n",
			ch.Segment, p.engine, utf8.RuneCountInString(strings.TrimSpace(p.shown)), ch.Engine)
		if !p.broke {
			p.replaced++
		}
		p.broke = true
	}
	p.shown, p.engine = ch.Text, ch.Engine
}

// failed says which segment ended the stream.
func (p *progress) failed(seg int, err error) {
	p.printf("  segment %d failed after %v: %v\n", seg, since(p.t0), err)
}

// end sums up.
func (p *progress) end() {
	names := make([]string, 0, len(p.by))
	for n := range p.by {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, p.by[n])
	}
	p.printf("Done: %d segments (%d characters) in %v, the first after %v; by engine: %s; streams replaced mid-way: %d.\n",
		p.segments, p.chars, since(p.t0), p.first, strings.Join(parts, ", "), p.replaced)
}

// clearLive erases the live line, if one is on the screen.
func (p *progress) clearLive() {
	if p.live {
		fmt.Fprint(p.w, "\r\033[K")
		p.live = false
	}
}
