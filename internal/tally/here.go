package tally

import _ "unsafe" // for go:linkname

// Here returns a key that stays with the calling core: the id of the processor (the
// runtime's P) the caller runs on at this instant, 0 to GOMAXPROCS-1. Adds keyed by it
// keep each core on a line of its own, as a per-processor scratch's key does, where no
// such scratch is at hand (a cache hit). An add keyed by it costs about 1.5 ns more than
// one with a key at hand (BenchmarkCounterAddParallel, here against own-key); sync.Pool,
// the public way to a per-processor object, costs about 6 ns for a Get and a Put.
//
// The caller may move to another processor right after: the key is a hint for where to
// add, never a claim on a stripe, and every stripe takes atomic adds.
func Here() uint64 {
	p := procPin()
	procUnpin()
	return uint64(p)
}

// procPin and procUnpin are the runtime's, which sync.Pool uses. The runtime keeps them
// for packages that link to them, with this signature (runtime/proc.go, go.dev/issue/67401).
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()
