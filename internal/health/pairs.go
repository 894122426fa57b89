package health

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// MaxPairs bounds the language pairs one Pairs table tracks. Pairs come from user input:
// while the table is full a new pair is not tracked (its calls are counted in Untracked); a
// pair with no calls for IdleFolds folds and a clean standing gives its slot up.
const MaxPairs = 32

// IdleFolds is how many folds without a call free a clean pair's slot.
const IdleFolds = 30

// MinPairCalls is how many calls a fold needs for its bad-output rate to count in full;
// a fold with fewer moves the rate in proportion (a fold with none lets it decay).
const MinPairCalls = 3

// pairAlpha weights a fold with MinPairCalls calls or more in a pair's rate; the rate
// halves at each fold without a call.
const pairAlpha = 0.5

// cleanBelow is the rate under which a pair counts as clean (rate 0).
const cleanBelow = 0.01

// pairCounts is one stripe of a pair's counters.
type pairCounts struct{ calls, bad atomic.Int64 }

// pairStripe is one stripe of every slot's counters, on cache lines of its own.
type pairStripe struct {
	n [MaxPairs]pairCounts
	_ [64]byte
}

// slot is a tracked pair's standing between folds (guarded by Pairs.mu).
type slot struct {
	key       uint64
	used      bool
	rate      float64 // bad-output rate, folded
	probeDown bool    // a known-answer probe failed, none passed since
	idle      int     // folds in a row without a call
	last      int64   // calls in the last fold
}

// PairState is a pair's standing for routing: its folded bad-output rate (0..1) and whether a
// known-answer probe failed on it (and none passed since).
type PairState struct {
	Bad       float64
	ProbeDown bool
}

// Pairs folds one engine's bad-output rate per language pair (keys are opaque, e.g.
// lang.PairKey; 0 is no pair). Record never allocates and takes a lock only to add a pair;
// Fold, MarkDown and Passed publish a new standing that State reads lock-free. The zero
// value is ready; it is safe for concurrent use and must not be copied.
type Pairs struct {
	_       [128]byte
	stripes [Stripes]pairStripe
	// keys are the slots' pairs (0: free), scanned up to hi: a fixed table rather than a
	// map, so that an engine's first call of a pair allocates nothing.
	keys      [MaxPairs]atomic.Uint64
	hi        atomic.Int32 // slots in use at most: the highest used slot + 1
	used      atomic.Int32
	std       atomic.Pointer[map[uint64]PairState]
	untracked atomic.Int64
	mu        sync.Mutex
	slots     [MaxPairs]slot
}

// Record counts one call of pair, bad or not, in the stripe chosen by key, and reports
// whether the pair is tracked (false: the table is full, the call is counted untracked).
func (p *Pairs) Record(key, pair uint64, bad bool) bool {
	i, ok := p.slot(pair)
	if !ok {
		p.untracked.Add(1)
		return false
	}
	c := &p.stripes[key%Stripes].n[i]
	c.calls.Add(1)
	if bad {
		c.bad.Add(1)
	}
	return true
}

func (p *Pairs) slot(pair uint64) (int, bool) {
	if i := p.find(pair); i >= 0 {
		return i, true
	}
	if pair == 0 || p.used.Load() >= MaxPairs {
		return 0, false // full: no lock for the pairs left out
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addLocked(pair)
}

// find returns pair's slot, -1 when it has none.
func (p *Pairs) find(pair uint64) int {
	for i := range p.keys[:p.hi.Load()] {
		if p.keys[i].Load() == pair {
			return i
		}
	}
	return -1
}

// addLocked returns pair's slot, taking a free one if it has none; false when full.
func (p *Pairs) addLocked(pair uint64) (int, bool) {
	if i := p.find(pair); i >= 0 {
		return i, true
	}
	free := slices.IndexFunc(p.slots[:], func(s slot) bool { return !s.used })
	if free < 0 || pair == 0 {
		return 0, false
	}
	p.slots[free] = slot{key: pair, used: true}
	p.keys[free].Store(pair)
	p.used.Add(1)
	if int32(free) >= p.hi.Load() {
		p.hi.Store(int32(free) + 1)
	}
	return free, true
}

// Untracked returns how many calls were not tracked because the table was full.
func (p *Pairs) Untracked() int64 { return p.untracked.Load() }

// take returns and resets slot i's calls and bad calls.
func (p *Pairs) take(i int) (calls, bad int64) {
	for s := range p.stripes {
		c := &p.stripes[s].n[i]
		calls += c.calls.Swap(0)
		bad += c.bad.Swap(0)
	}
	return calls, bad
}

// Fold folds the calls since the last Fold into each pair's rate: a fold with n calls, k of
// them bad, moves it by w = ½·min(1, n/MinPairCalls) towards k/n (rate = (1-w)·rate +
// w·k/n); a fold without calls halves it; under 0.01 it is 0. It frees the slots of clean
// pairs idle for IdleFolds folds and publishes the new standing.
func (p *Pairs) Fold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.slots {
		s := &p.slots[i]
		if !s.used {
			continue
		}
		n, k := p.take(i)
		s.last = n
		s.rate = foldRate(s.rate, n, k)
		if s.idle = s.idle + 1; n > 0 {
			s.idle = 0
		}
		if s.idle >= IdleFolds && s.rate == 0 && !s.probeDown {
			*s = slot{}
			p.keys[i].Store(0) // a Record that found it just before may count one call astray
			p.used.Add(-1)
		}
	}
	p.publishLocked()
}

// foldRate is a pair's new rate after a fold of n calls, k of them bad.
func foldRate(rate float64, n, k int64) float64 {
	if n == 0 {
		rate *= pairAlpha
	} else {
		w := pairAlpha * min(1, float64(n)/MinPairCalls)
		rate = (1-w)*rate + w*float64(k)/float64(n)
	}
	if rate < cleanBelow {
		return 0
	}
	return rate
}

// publishLocked publishes the standing of the pairs that are not clean; nil when all are.
func (p *Pairs) publishLocked() {
	var m map[uint64]PairState
	for _, s := range p.slots {
		if s.used && (s.rate > 0 || s.probeDown) {
			if m == nil {
				m = make(map[uint64]PairState)
			}
			m[s.key] = PairState{Bad: s.rate, ProbeDown: s.probeDown}
		}
	}
	if m == nil {
		p.std.Store(nil)
		return
	}
	p.std.Store(&m)
}

// Clean reports whether every pair is clean: State would find nothing.
func (p *Pairs) Clean() bool { return p.std.Load() == nil }

// State returns pair's standing; false when it is clean.
func (p *Pairs) State(pair uint64) (PairState, bool) {
	m := p.std.Load()
	if m == nil {
		return PairState{}, false
	}
	st, ok := (*m)[pair]
	return st, ok
}

// MarkDown records a failed known-answer probe of pair: it stands down until one passes. It
// reports false when the table is full.
func (p *Pairs) MarkDown(pair uint64) bool { return p.setProbe(pair, true) }

// Passed records a passing known-answer probe of pair.
func (p *Pairs) Passed(pair uint64) { p.setProbe(pair, false) }

func (p *Pairs) setProbe(pair uint64, down bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, ok := p.addLocked(pair)
	if !ok {
		return false
	}
	p.slots[i].probeDown = down
	p.publishLocked()
	return true
}

// ToProbe appends to dst up to n tracked pairs a known-answer probe should look at: those a
// probe marked down first, then those with calls in the last fold, most calls first.
func (p *Pairs) ToProbe(dst []uint64, n int) []uint64 {
	p.mu.Lock()
	var ss []slot
	for _, s := range p.slots {
		if s.used && (s.probeDown || s.last > 0) {
			ss = append(ss, s)
		}
	}
	p.mu.Unlock()
	slices.SortFunc(ss, func(a, b slot) int {
		if a.probeDown != b.probeDown {
			if a.probeDown {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(b.last, a.last), cmp.Compare(a.key, b.key))
	})
	for _, s := range ss[:min(n, len(ss))] {
		dst = append(dst, s.key)
	}
	return dst
}
