// Package score is the arithmetic of routing: the parts of an engine's score from plain
// numbers (speed, cost, quota and traffic-gate factors, windows of the day), the weights'
// bounds, a small bitset of engine indices, and the random draws and hashing a pick uses.
// It knows nothing of engines or requests: the root package keeps the policy.
package score

import (
	"math"
	"time"
)

// Speed maps a latency to 0..100: 100 at 100ms or less, 0 at 10s or more, logarithmic
// between.
func Speed(latency time.Duration) float64 {
	const lo, hi = 100 * time.Millisecond, 10 * time.Second
	switch {
	case latency <= lo:
		return 100
	case latency >= hi:
		return 0
	}
	return 100 * math.Log(float64(hi)/float64(latency)) / math.Log(float64(hi)/float64(lo))
}

// MaxCostPerMillion is the price that scores 0 on cost; cost is linear in price below it.
const MaxCostPerMillion = 50.0

// Cost maps a price in credits per million characters to 0..100: 100 for free, 0 at
// MaxCostPerMillion or more, linear between.
func Cost(perMillion float64) float64 {
	if perMillion <= 0 {
		return 100
	}
	return math.Max(0, 100*(1-perMillion/MaxCostPerMillion))
}

// QuotaLow is the share of its quota below which an engine's weight falls.
const QuotaLow = 0.2

// QuotaWeight is what the weight of an engine with a quota is multiplied by: 1 while more
// than QuotaLow of quota is left, then left/(QuotaLow x quota), so traffic moves to the
// others before the quota runs out (at 15% left 0.75, at 5% 0.25). It is 1 when quota is
// not positive or left is negative (unknown).
func QuotaWeight(left, quota int64) float64 {
	if quota <= 0 || left < 0 {
		return 1
	}
	return min(1, float64(left)/(QuotaLow*float64(quota)))
}

// TrafficGate lowers an engine's weight as its recent rate nears its safe rate: 1 below 70%
// of it, falling linearly to 0.1 at 100% and beyond; 1 when safe is not positive.
func TrafficGate(rate, safe float64) float64 {
	if safe <= 0 {
		return 1
	}
	u := rate / safe
	switch {
	case u <= 0.7:
		return 1
	case u >= 1:
		return 0.1
	}
	return 1 - 0.9*(u-0.7)/0.3
}

// InWindow reports whether the time of day d (0..24h) falls in the window from..to: from up
// to (not including) to; from later than to wraps past midnight, and from equal to to is
// empty.
func InWindow(from, to, d time.Duration) bool {
	if from <= to {
		return d >= from && d < to
	}
	return d >= from || d < to
}

// TimeOfDay is the UTC time of day of now (unix nanos): Unix time has no leap seconds.
func TimeOfDay(now int64) time.Duration {
	day := int64(24 * time.Hour)
	return time.Duration((now%day + day) % day)
}

// weightNames name the four score weights, for CheckWeights.
var weightNames = [4]string{"Quality", "Availability", "Speed", "Cost"}

// CheckWeights checks the score weights of quality, availability, speed and cost: each
// within 0..0.5, cost at most 0.3, and their sum 1. It returns the name of the weight at
// fault ("Quality", ..., or "" for the sum) and what is wrong, or ok.
func CheckWeights(quality, availability, speed, cost float64) (name, problem string, ok bool) {
	for i, v := range [4]float64{quality, availability, speed, cost} {
		if v < 0 || v > 0.5 || math.IsNaN(v) {
			return weightNames[i], "must be within 0..0.5", false
		}
	}
	if cost > 0.3 {
		return "Cost", "must be at most 0.3", false
	}
	if s := quality + availability + speed + cost; math.Abs(s-1) > 1e-9 {
		return "", "must sum to 1", false
	}
	return "", "", true
}
