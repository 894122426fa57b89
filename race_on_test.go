//go:build race

package translate_test

// raceEnabled reports whether the race detector is on: sync.Pool then drops some of what
// it is given, and allocation counts are not exact.
const raceEnabled = true
