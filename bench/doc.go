// Package bench holds side-by-side benchmarks: each workload runs once on this
// module's implementation and once on client-go's, as two sub-benchmarks named
// "ours" and "client-go" of one Benchmark function, so that `make bench` can pair
// them into one table (see cmd/benchtable).
//
// It is its own Go module so that the library's go.mod never depends on client-go's
// tools/cache or util/workqueue; only this module imports them.
package bench
