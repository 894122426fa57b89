// Package recovery holds the mechanism of the Client's probes: their defaults, the timing
// rules of recovery probes and key checks, the acceptance of a probe's answer, and the
// known-answer probes' sentences and verdicts. Which engines are probed, with which
// requests, and what a verdict does to an engine stay in the root package.
package recovery

import (
	"context"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/fanyi-go/translate/internal/lang"
)

// Defaults of a probe policy's zero fields (see translate.ProbePolicy).
const (
	DefaultInterval = 30 * time.Second
	DefaultText     = "hello"
	DefaultSource   = "en"
	DefaultTarget   = "es"
	DefaultFailures = 3
)

// BusyCalls is how many real calls an engine must have answered since the last probe
// round to be spared a probe: recent real traffic is fresher and free evidence.
const BusyCalls = 5

// RecoveryEvery is how often an engine its health demoted is probed when the configuration
// has no probes: 120 probes an hour per demoted engine, none while every engine stands in
// its pool.
const RecoveryEvery = 30 * time.Second

// KeyCheckEvery is how often an engine set aside after KindUnauthorized is probed to learn
// whether its key was rotated (an adapter's WithKeyFunc reads the key before every call):
// the first check a minute after the first round that sees it set aside, then one a
// minute, each one vendor request that the vendor refuses until the key changes.
const KeyCheckEvery = time.Minute

// HoldProbeEvery is how often a Client probes an engine held down for every replica (a
// HoldStore), at most: the probe lock lives as long, so one probe runs at a time and at
// most one per period across the replicas (or per attempt timeout, when that is longer).
const HoldProbeEvery = 5 * time.Second

// Due reports whether a probe whose last run is at (unix nanos, 0 for none) is due at now,
// every apart, and if so marks it run at now. With first, the first call that sees at 0
// only starts the period; without, a probe never run is due at once. Of concurrent calls,
// one at most is told a probe is due.
func Due(at *atomic.Int64, now int64, every time.Duration, first bool) bool {
	last := at.Load()
	if first && last == 0 {
		at.CompareAndSwap(0, now)
		return false
	}
	return now-last >= int64(every) && at.CompareAndSwap(last, now)
}

// CloneExpect copies a probe policy's expected answers, so the prober reads its own copy;
// nil stays nil.
func CloneExpect(m map[string][]string) map[string][]string {
	if m == nil {
		return nil
	}
	c := make(map[string][]string, len(m))
	for k, v := range m {
		c[k] = append([]string(nil), v...)
	}
	return c
}

// Check checks a probe policy with its defaults applied: the field ("Text", "Source" or
// "Target") at fault and what is wrong with it, or "" when the text is not blank, is valid
// UTF-8 of at most maxText bytes, and source and target are distinct valid BCP 47 tags.
func Check(text, source, target string, maxText int) (field, problem string) {
	switch {
	case strings.TrimSpace(text) == "":
		return "Text", "must not be blank"
	case !utf8.ValidString(text):
		return "Text", "is not valid UTF-8"
	case len(text) > maxText:
		return "Text", "exceeds 1 MiB"
	}
	_, src, err := lang.Parse(source)
	if err != nil {
		return "Source", "is not a valid BCP 47 tag"
	}
	_, tgt, err := lang.Parse(target)
	if err != nil {
		return "Target", "is not a valid BCP 47 tag"
	}
	if src == tgt {
		return "Target", "is the same language as Source"
	}
	return "", ""
}

// Accepts reports whether answer passes a probe that expects one of want (surrounding
// white space trimmed, case ignored), or any non-empty answer when want is empty.
func Accepts(want []string, answer string) bool {
	answer = strings.TrimSpace(answer)
	if len(want) == 0 {
		return answer != ""
	}
	for _, w := range want {
		if strings.EqualFold(answer, strings.TrimSpace(w)) {
			return true
		}
	}
	return false
}

// RoundContext is a probe round's context, or another task's that must end with the
// Client (WatchConfig's): canceled when parent ends, stop closes (the Client's Close) or
// cancel is called.
func RoundContext(parent context.Context, stop <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
