package quota

import "sync/atomic"

// Tokens is a lock-free bucket of tokens kept in thousandths: Earn adds a share of a
// token, Spend takes a whole one. The zero value is an empty bucket; safe for concurrent
// use.
type Tokens struct{ milli atomic.Int64 }

// Earn adds share of a token, keeping at most most tokens.
func (b *Tokens) Earn(share float64, most int64) {
	add := int64(share * 1000)
	for {
		old := b.milli.Load()
		n := min(old+add, most*1000)
		if n == old || b.milli.CompareAndSwap(old, n) {
			return
		}
	}
}

// Spend takes one token and reports whether one was there.
func (b *Tokens) Spend() bool {
	for {
		old := b.milli.Load()
		if old < 1000 {
			return false
		}
		if b.milli.CompareAndSwap(old, old-1000) {
			return true
		}
	}
}
