// Package doccheck is a test rig: its tests read the repository's Markdown pages and
// fail when a page no longer matches the tree — a relative link or an anchor that does
// not resolve (links_test.go), a count a page states that is not what it counts
// (counts_test.go), a list a page quotes from a doc comment that no longer says what
// the doc comment says (quotes_test.go), a log line or metric name chapter 4's
// diagnosis table quotes that the code does not write (diagnosis_test.go), a figure
// attributed to bench/RESULTS.md that it does not print (results_test.go), a test a
// page names that no _test.go file declares, or an index of the differences we keep
// that misses a row of docs/defaults.md's or docs/parity.md's tables or names the wrong
// exception for one (differences_test.go), a figure a page quotes from a recording that
// the recording does not show (recordings_test.go), or a build tag that make unit, test
// or lint does not build with (buildtags_test.go). They run in make test, so a doc
// drifts no further than code does.
package doccheck
