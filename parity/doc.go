// Package parity holds the proof that this module behaves like client-go: differential
// tests that give the same generated input to both libraries and compare every
// observable output, and the named exceptions — each deliberate difference, shown as a
// test in which client-go does one thing and this module the other.
//
// It is a module of its own (like bench/) because it imports client-go's tools/cache and
// util/workqueue, which the library itself must not. docs/parity.md says what is
// compared, lists the exceptions, and how to replay a failure:
//
//	make parity                               # every differential test, fixed seeds
//	cd parity && PARITY_SEED=17 go test -run '^TestDeltaFIFO$' ./...   # one seed again
//	cd parity && PARITY_RUNS=20000 go test -run '^TestDeltaFIFO$' ./... # more seeds than the default
//
// A failing seed is shrunk to the shortest input that still diverges (internal/check),
// and the report shows the first observation where the two transcripts part.
//
// The suite is tested too: cmd/breaks applies each deliberate break in breaks/ — one
// rule of one component broken — to a copy of one source file and runs the test the
// break names; the test must fail.
package parity
