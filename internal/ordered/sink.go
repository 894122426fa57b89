package ordered

import "sync"

// A Sink receives the partial text of one part while a call streams it. Each call on the
// part begins a new generation: text from an older call (one that failed over, or was
// abandoned past its deadline) is dropped, so the partial text is always the latest call's
// text so far. Safe for concurrent use; the zero value is ready (Stream sets Wake).
type Sink struct {
	wake func() // called, without the lock, after the partial text changed; must not block

	mu     sync.Mutex
	gen    uint64 // the current call's generation
	text   string // the current call's text so far
	engine string // the engine of text
	seq    uint64 // counts changes of text; 0 means no partial text yet
}

// Begin starts a call and returns its generation.
func (s *Sink) Begin() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	return s.gen
}

// End drops whatever the call of generation gen still sends.
func (s *Sink) End(gen uint64) {
	s.mu.Lock()
	if s.gen == gen {
		s.gen++
	}
	s.mu.Unlock()
}

// Update sets the partial text of the call of generation gen.
func (s *Sink) Update(gen uint64, engine, text string) {
	s.mu.Lock()
	if gen != s.gen {
		s.mu.Unlock()
		return
	}
	s.text, s.engine = text, engine
	s.seq++
	s.mu.Unlock()
	if s.wake != nil {
		s.wake()
	}
}

// Latest returns the partial text, its engine and its change count.
func (s *Sink) Latest() (text, engine string, seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text, s.engine, s.seq
}
