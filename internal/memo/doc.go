// Package memo holds the Client's per-key memory: what it has translated (Cache), what
// it is translating (Flights) and which request ids it has sent where (Seen). Cache is
// bounded by count, Seen by count and bytes, and Flights holds only the flights in the
// air, in storage their callers own. Cache and Flights answer their common case with no
// lock and no allocation, and Seen keeps its bounds in O(1) a write. bench_test.go holds
// the plain versions they are measured against.
//
// # Cache
//
// A cache hit is the hot path of the whole library: a mutex, a map and a list (the plain
// LRU) make every hit take a lock and move a list element, which serialises concurrent
// hits. Cache keeps golang-lru's LRUs for deciding evictions, but answers hits from a
// direct-mapped index of atomic pointers beside them: a hit is one atomic load and a key
// comparison, and recency is refreshed at most once a second per entry.
//
// # Flights
//
// Identical concurrent misses must make one engine call, at any load. singleflight does
// that with a mutex and a map and allocates a call per Do. Flights lets the caller embed
// the Flight in storage it allocates anyway, and registers it with one CAS into a table
// slot; only when the slot holds another key's flight does a Join take a striped lock and
// walk the slot's chain, so a collision costs a lock, never a missed merge. A caller that
// finds another's flight may run alone instead of waiting (the Client does when a call
// costs less than a wait); its own Flight, never in the table, then lands touching nothing
// shared.
//
// # Seen
//
// A request id reaches each engine at most once within a window unless the call certainly
// cost nothing (the caller releases its claim), and a retry gets the first answer or the
// first error that may have been billed. A mutex and a map
// remember that, but bounded only by time they grow with the request rate (a million
// ids held their whole Results: +225 MB), and expiring them means sweeping the map under
// its lock. Seen bounds its entries by count and bytes and keeps them in shards of two
// generations: writes go to the current one, and the previous one is dropped whole when
// the current one is a window old or full, so expiry and eviction cost O(1) a write and
// the oldest entries go first.
package memo
