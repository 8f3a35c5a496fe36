// Package doccheck is a test rig: its tests read the repository's Markdown pages and
// fail when a page no longer matches the tree — a relative link or an anchor that does
// not resolve. They run in make test, so a doc drifts no further than code does.
package doccheck
