package quota

import (
	"sync/atomic"
	"time"
)

// A span is one period's counters, c, for the times [start, end). A span is made when its
// period begins and published by compare-and-swap, so a new period starts from fresh counters
// with nothing to reset: there is no moment at which a reservation can land in counters that
// are about to be cleared, or be counted in two periods.
type span[C any] struct {
	start, end int64
	prev       atomic.Pointer[span[C]] // the span before, for late settlements; one deep
	c          C
}

// periods is the current span of a sequence of periods of length nanos aligned on origin,
// or, with months, of UTC calendar months.
type periods[C any] struct {
	origin, length int64
	months         bool
	cur            atomic.Pointer[span[C]]
}

func (p *periods[C]) init(origin, length, now int64) {
	p.origin, p.length = origin, length
	p.cur.Store(p.spanOf(now))
}

// initMonths starts a sequence of UTC calendar months.
func (p *periods[C]) initMonths(now int64) {
	p.months = true
	p.cur.Store(p.spanOf(now))
}

// spanOf returns a new, empty span for the period holding now.
func (p *periods[C]) spanOf(now int64) *span[C] {
	if p.months {
		start, end := MonthOf(now)
		return &span[C]{start: start, end: end}
	}
	d := now - p.origin
	i := d / p.length
	if d%p.length < 0 {
		i-- // floor
	}
	start := p.origin + i*p.length
	return &span[C]{start: start, end: start + p.length}
}

// at returns the span of the period holding now, starting a new period when now has reached
// the current one's end, and reports whether the span holds now. A now in the period before
// the current one (a reading a little behind another goroutine's, around a rollover) gets
// that period's span: a reservation counts in the period its now falls in, and its Charge,
// given the same now, finds it there. A now older than that gets the current span and false.
func (p *periods[C]) at(now int64) (*span[C], bool) {
	if s := p.cur.Load(); s.start <= now && now < s.end {
		return s, true // the common case, inlined
	}
	return p.atSlow(now)
}

func (p *periods[C]) atSlow(now int64) (*span[C], bool) {
	s := p.current(now)
	if now >= s.start {
		return s, true
	}
	if prev := s.prev.Load(); prev != nil && prev.start <= now && now < prev.end {
		return prev, true
	}
	return s, false
}

// current returns the current span, starting a new period when now has reached its end.
func (p *periods[C]) current(now int64) *span[C] {
	for {
		s := p.cur.Load()
		if now < s.end {
			return s
		}
		n := p.spanOf(now)
		n.prev.Store(s)
		if p.cur.CompareAndSwap(s, n) {
			s.prev.Store(nil) // keep one finished span, not a chain
			return n
		}
	}
}

// of returns the span of the period holding now, or the current one (see at).
func (p *periods[C]) of(now int64) *span[C] {
	s, _ := p.at(now)
	return s
}

// MonthOf returns the UTC calendar month holding now (Unix nanoseconds): its first
// nanosecond and the first of the next month.
func MonthOf(now int64) (start, end int64) {
	t := time.Unix(0, now).UTC()
	m := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return m.UnixNano(), m.AddDate(0, 1, 0).UnixNano()
}
