package openai

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Limits of one event stream. A translation of Profile().MaxChars characters streams in far
// less; a server that sends more is broken or hostile.
const (
	// maxSSELine is the longest line (and the largest data of one event) accepted.
	maxSSELine = 1 << 20
	// maxSSEStream is the most bytes read from one event stream, comments included.
	maxSSEStream = 32 << 20
)

// Errors of sseReader beside those of the underlying reader.
var (
	errSSELineTooLong  = errors.New("event stream line longer than the limit")
	errSSEEventTooLong = errors.New("event stream event data longer than the limit")
	errSSETooLong      = errors.New("event stream longer than the limit")
)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Type string // the last event field, "message" when there was none
	Data string // the data fields, joined by "\n"
}

// sseReader reads server-sent events as the HTML standard's event stream interpretation
// describes (https://html.spec.whatwg.org/multipage/server-sent-events.html): lines end in
// "\r\n", "\n" or "\r"; a leading byte order mark is skipped; lines starting with ":" are
// comments (keep-alives); "field: value" and "field:value" are the same; data fields are
// joined by "\n"; a blank line dispatches the event, unless it has no data field; an event
// cut by the end of the stream is not dispatched. id and retry fields and unknown fields
// are ignored: the client does not reconnect.
//
// It reads no further than needed: an event is returned as soon as its blank line arrives,
// and a "\r" ends its line without waiting for a possible "\n". It is not safe for concurrent
// use.
type sseReader struct {
	r        *bufio.Reader
	maxLine  int   // longest line, and largest data of one event
	maxTotal int64 // most bytes read in all
	total    int64 // bytes consumed so far
	skipLF   bool  // the last line ended in "\r": a "\n" next belongs to it
	started  bool  // a line has been read (the byte order mark can only come first)
	line     []byte
	data     []byte // data buffer: each data value followed by "\n"
	typ      []byte // event type buffer
}

// newSSEReader returns an sseReader over r with the package's limits.
func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10), maxLine: maxSSELine, maxTotal: maxSSEStream}
}

// Next returns the next event. At the end of the stream it returns io.EOF when the stream
// ended between events and io.ErrUnexpectedEOF when it ended inside one (the pending
// event is discarded). A line or event over the limits is errSSELineTooLong or
// errSSEEventTooLong, a stream over its limit errSSETooLong; other errors are the
// underlying reader's. After an error, Next must not be called again.
func (s *sseReader) Next() (sseEvent, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			return sseEvent{}, s.endError(line, err)
		}
		line = s.skipBOM(line)
		if len(line) == 0 {
			if ev, ok := s.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if err := s.field(line); err != nil {
			return sseEvent{}, err
		}
	}
}

// endError is Next's error when readLine fails with err, rest being what it read of an
// unterminated line: io.ErrUnexpectedEOF for an end of stream inside an event, err as it
// is otherwise.
func (s *sseReader) endError(rest []byte, err error) error {
	if err == io.EOF && (len(rest) > 0 || len(s.data) > 0 || len(s.typ) > 0) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// skipBOM removes a byte order mark from the start of the stream's first line.
func (s *sseReader) skipBOM(line []byte) []byte {
	if s.started {
		return line
	}
	s.started = true
	return bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
}

// field takes in one non-blank line: a comment (such as a keep-alive) is skipped, an event
// field sets the event type, a data field adds to the event's data; other fields are
// ignored. Data over the limit is errSSEEventTooLong.
func (s *sseReader) field(line []byte) error {
	if line[0] == ':' {
		return nil
	}
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" ")) // "field: value" is "field:value"
	switch string(name) {
	case "event":
		s.typ = append(s.typ[:0], value...)
	case "data":
		if len(s.data)+len(value)+1 > s.maxLine {
			return errSSEEventTooLong
		}
		s.data = append(append(s.data, value...), '\n')
	}
	return nil
}

// dispatch ends the current event at a blank line. It reports false, and resets the event
// type, when no data field was seen.
func (s *sseReader) dispatch() (sseEvent, bool) {
	if len(s.data) == 0 {
		s.typ = s.typ[:0]
		return sseEvent{}, false
	}
	ev := sseEvent{Type: "message", Data: string(s.data[:len(s.data)-1])}
	if len(s.typ) > 0 {
		ev.Type = string(s.typ)
	}
	s.data, s.typ = s.data[:0], s.typ[:0]
	return ev, true
}

// readLine returns the next line without its end. At the end of the stream it returns the
// unterminated rest, which is not a line, with io.EOF. The returned slice is valid until
// the next call.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		if _, err := s.r.Peek(1); err != nil {
			return s.line, err
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		if s.skipLF {
			s.skipLF = false
			if buf[0] == '\n' {
				if err := s.consume(1); err != nil {
					return nil, err
				}
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		n := i
		if i < 0 {
			n = len(buf)
		}
		if len(s.line)+n > s.maxLine {
			return nil, errSSELineTooLong
		}
		s.line = append(s.line, buf[:n]...)
		if i < 0 {
			if err := s.consume(n); err != nil {
				return nil, err
			}
			continue
		}
		s.skipLF = buf[i] == '\r'
		if err := s.consume(i + 1); err != nil {
			return nil, err
		}
		return s.line, nil
	}
}

// consume discards n buffered bytes, counting them against the stream's limit.
func (s *sseReader) consume(n int) error {
	if s.total+int64(n) > s.maxTotal {
		return errSSETooLong
	}
	s.total += int64(n)
	_, err := s.r.Discard(n)
	return err
}
