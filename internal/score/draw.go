package score

import (
	"math"
	"sync/atomic"
)

// Stripes is how many independent counters a seeded random sequence is spread over, so
// that parallel requests seldom share one.
const Stripes = 8

// Stripe is one counter of a seeded sequence, alone on its cache line: the padding on both
// sides keeps it off its neighbours' lines, whatever the alignment of what holds it.
type Stripe struct {
	_ [64]byte
	n atomic.Uint64
	_ [56]byte
}

// Next returns the next number of the sequence seed draws on stripe i (i < Stripes).
func (s *Stripe) Next(seed uint64, i uint8) uint64 {
	return Mix(seed + uint64(i)<<56 + s.n.Add(1)*0x9e3779b97f4a7c15)
}

// StripeOf picks a text's stripe: a fixed function of the text's first 16 bytes and its
// length (no random hash seed), so the same seed and texts draw the same.
func StripeOf(text string) uint8 {
	h := uint32(2166136261)
	for i := 0; i < len(text) && i < 16; i++ {
		h = (h ^ uint32(text[i])) * 16777619
	}
	return uint8((h ^ uint32(len(text))) % Stripes)
}

// Mix is the splitmix64 finaliser.
func Mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Unit maps x to (0,1], evenly: only x from 2^64-2^11 on round to 1.
func Unit(x uint64) float64 { return (float64(x>>11) + 0.5) / (1 << 53) }

// Rendezvous is the weighted rendezvous-hashing rank of a candidate of weight w and key
// (a hash of its name) for the hash h: the candidate with the highest rank wins, each with
// odds proportional to its weight, and the same h picks the same among the same candidates.
func Rendezvous(h, key uint64, w float64) float64 {
	return -w / math.Log(Unit(Mix(h^key)))
}

// Drawn returns how many numbers the stripe has given.
func (s *Stripe) Drawn() uint64 { return s.n.Load() }
