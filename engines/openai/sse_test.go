package openai

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// readAll reads every event of in through r and returns them with the error that ended the
// stream.
func readAll(r *sseReader) ([]sseEvent, error) {
	var evs []sseEvent
	for {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// referenceSSE is the event stream interpretation of the HTML standard written as plainly
// as possible, over a whole input: it returns the events and io.EOF or io.ErrUnexpectedEOF.
func referenceSSE(in string) ([]sseEvent, error) {
	in = strings.TrimPrefix(in, "\uFEFF")
	in = strings.ReplaceAll(in, "\r\n", "\n")
	in = strings.ReplaceAll(in, "\r", "\n")
	lines := strings.Split(in, "\n")
	rest := lines[len(lines)-1] // not ended: not a line
	lines = lines[:len(lines)-1]
	var evs []sseEvent
	var data strings.Builder
	typ := ""
	for _, l := range lines {
		switch {
		case l == "":
			if data.Len() > 0 {
				ev := sseEvent{Type: "message", Data: strings.TrimSuffix(data.String(), "\n")}
				if typ != "" {
					ev.Type = typ
				}
				evs = append(evs, ev)
			}
			data.Reset()
			typ = ""
		case strings.HasPrefix(l, ":"):
		default:
			field, value, _ := strings.Cut(l, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				typ = value
			case "data":
				data.WriteString(value)
				data.WriteString("\n")
			}
		}
	}
	if rest != "" || data.Len() > 0 || typ != "" {
		return evs, io.ErrUnexpectedEOF
	}
	return evs, io.EOF
}

func TestSSE(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []sseEvent
		end  error
	}{
		{"data with and without space", "data: a\n\ndata:b\n\ndata:  c\n\n",
			[]sseEvent{{"message", "a"}, {"message", "b"}, {"message", " c"}}, io.EOF},
		{"multi-line data", "data: {\"a\":\ndata: 1}\n\n", []sseEvent{{"message", "{\"a\":\n1}"}}, io.EOF},
		{"event type", "event: error\ndata: x\n\ndata: y\n\n", []sseEvent{{"error", "x"}, {"message", "y"}}, io.EOF},
		{"comments are keep-alives", ": keep-alive\n\n:\ndata: a\n: inside\n\n", []sseEvent{{"message", "a"}}, io.EOF},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []sseEvent{{"message", "a"}, {"message", "b"}}, io.EOF},
		{"CR", "data: a\r\rdata: b\r\r", []sseEvent{{"message", "a"}, {"message", "b"}}, io.EOF},
		{"mixed", "data: a\r\ndata: b\rdata: c\n\r\n", []sseEvent{{"message", "a\nb\nc"}}, io.EOF},
		{"byte order mark", "\uFEFFdata: a\n\n", []sseEvent{{"message", "a"}}, io.EOF},
		{"only the first BOM", "data: a\n\n\uFEFFdata: b\n\n", []sseEvent{{"message", "a"}}, io.EOF},
		{"empty data dispatches", "data\n\ndata:\n\n", []sseEvent{{"message", ""}, {"message", ""}}, io.EOF},
		{"no data: no event, type reset", "event: x\n\ndata: a\n\n", []sseEvent{{"message", "a"}}, io.EOF},
		{"id, retry, unknown ignored", "id: 1\nretry: 10\nfoo: bar\ndata: a\n\n", []sseEvent{{"message", "a"}}, io.EOF},
		{"cut inside an event", "data: a\n\ndata: b\n", []sseEvent{{"message", "a"}}, io.ErrUnexpectedEOF},
		{"cut inside a line", "data: a\n\ndata: {\"cho", []sseEvent{{"message", "a"}}, io.ErrUnexpectedEOF},
		{"cut after a type", "event: x\n", nil, io.ErrUnexpectedEOF},
		{"empty stream", "", nil, io.EOF},
		{"ends between events", "data: a\n\n: bye\n", []sseEvent{{"message", "a"}}, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, r := range map[string]io.Reader{
				"whole":    strings.NewReader(tt.in),
				"one byte": iotest.OneByteReader(strings.NewReader(tt.in)),
			} {
				got, err := readAll(newSSEReader(r))
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%s: events (-want +got):\n%s", name, diff)
				}
				if err != tt.end {
					t.Errorf("%s: end = %v, want %v", name, err, tt.end)
				}
			}
			// The reference agrees with every hand-written case, so the fuzz target's
			// oracle is checked too.
			ref, end := referenceSSE(tt.in)
			if diff := cmp.Diff(tt.want, ref); diff != "" || end != tt.end {
				t.Errorf("reference: %v (-want +got):\n%s", end, diff)
			}
		})
	}
}

// lineReader hands out what the test pushes, one push per Read, and blocks until the next
// push: it shows what the reader returns before more bytes arrive.
type lineReader struct{ ch chan string }

func (l lineReader) Read(p []byte) (int, error) {
	s, ok := <-l.ch
	if !ok {
		return 0, io.EOF
	}
	return copy(p, s), nil
}

func TestSSEDoesNotReadAhead(t *testing.T) {
	src := lineReader{make(chan string)}
	r := newSSEReader(src)
	got := make(chan sseEvent)
	go func() {
		defer close(got)
		for {
			ev, err := r.Next()
			if err != nil {
				return
			}
			got <- ev
		}
	}()
	// "\r" ends the blank line: the event is out before a "\n" (or anything) follows.
	src.ch <- "data: a\r\r"
	if ev := <-got; ev.Data != "a" {
		t.Errorf("first event = %+v", ev)
	}
	src.ch <- "\ndata: b\n"
	src.ch <- "\n"
	if ev := <-got; ev.Data != "b" {
		t.Errorf("second event = %+v, want b (a \"\\n\" after \"\\r\" is not a blank line)", ev)
	}
	close(src.ch)
	if _, ok := <-got; ok {
		t.Error("event after the end")
	}
}

func TestSSELimits(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
		all  int64
		want []sseEvent
		err  error
	}{
		{"line at the limit", "data: 12345678\n\n", 14, 1000, []sseEvent{{"message", "12345678"}}, io.EOF},
		{"line over", "data: a\n\ndata: 123456789\n\n", 14, 1000, []sseEvent{{"message", "a"}}, errSSELineTooLong},
		{"comment over", ": 1234567890123\n", 14, 1000, nil, errSSELineTooLong},
		{"unended line over", "data: 123456789", 14, 1000, nil, errSSELineTooLong},
		{"event over", "data: 1234\ndata: 1234\ndata: 1234\n\n", 14, 1000, nil, errSSEEventTooLong},
		{"stream at the limit", "data: a\n\n", 100, 9, []sseEvent{{"message", "a"}}, io.EOF},
		{"stream over", "data: a\n\n: ka\n", 100, 12, []sseEvent{{"message", "a"}}, errSSETooLong},
		{"endless keep-alives", strings.Repeat(":\n", 1000), 100, 64, nil, errSSETooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newSSEReader(iotest.HalfReader(strings.NewReader(tt.in)))
			r.maxLine, r.maxTotal = tt.line, tt.all
			got, err := readAll(r)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if err != tt.err {
				t.Errorf("end = %v, want %v", err, tt.err)
			}
		})
	}
}

func TestSSEReaderError(t *testing.T) {
	boom := errors.New("boom")
	r := newSSEReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom)))
	got, err := readAll(r)
	if diff := cmp.Diff([]sseEvent{{"message", "a"}}, got); diff != "" || err != boom {
		t.Errorf("end %v (-want +got):\n%s", err, diff)
	}
}

// chunkReader returns in in pieces whose sizes come from sizes, cycling.
type chunkReader struct {
	in    []byte
	sizes []byte
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = int(c.sizes[c.i%len(c.sizes)])%17 + 1
		c.i++
	}
	n = min(n, len(p), len(c.in))
	copy(p, c.in[:n])
	c.in = c.in[n:]
	return n, nil
}

// FuzzSSE checks sseReader against referenceSSE, the standard's algorithm over the whole
// input, whatever pieces the input arrives in, and checks that with small limits it returns
// a prefix of the same events and then a limit error, with no event over the limit.
func FuzzSSE(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n",
		"data:{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hola\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n",
		"event: error\ndata: {\"message\":\"x\",\"type\":\"server_error\"}\n\n",
		": keep-alive\r\rdata: a\rdata: b\r\r",
		"\uFEFFdata: a\n\ndata: b",
		"data\n\nevent\n\n:\n\nid: 7\nretry: 1\ndata:  x\n\n",
		"data: a\r\r\ndata: b\n\r\n",
	} {
		f.Add([]byte(s), []byte{3, 1, 4, 1, 5})
	}
	f.Fuzz(func(t *testing.T, in, sizes []byte) {
		want, wantEnd := referenceSSE(string(in))
		got, end := readAll(newSSEReader(&chunkReader{in: in, sizes: sizes}))
		if end != wantEnd {
			t.Fatalf("end = %v, want %v", end, wantEnd)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("events (-reference +got):\n%s", diff)
		}

		const line, all = 16, 200
		r := newSSEReader(&chunkReader{in: in, sizes: sizes})
		r.maxLine, r.maxTotal = line, all
		got, end = readAll(r)
		switch end {
		case errSSELineTooLong, errSSEEventTooLong, errSSETooLong:
			if len(got) > len(want) {
				t.Fatalf("limited: %d events, the reference has %d", len(got), len(want))
			}
			want = want[:len(got)]
		case wantEnd:
		default:
			t.Fatalf("limited: end = %v, want a limit error or %v", end, wantEnd)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("limited: events (-reference +got):\n%s", diff)
		}
		for _, ev := range got {
			if len(ev.Data) >= line {
				t.Fatalf("limited: event data of %d bytes", len(ev.Data))
			}
		}
		if r.total > all {
			t.Fatalf("limited: consumed %d bytes", r.total)
		}
		if end == wantEnd && len(in) > all {
			t.Fatalf("limited: %d bytes read without a limit error", len(in))
		}
	})
}
