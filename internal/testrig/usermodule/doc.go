// Package usermodule checks the library the way a user meets it: through the Go module
// system, from a module of their own. It serves this checkout as a version of
// github.com/kubeinternals/informers from a file-based module proxy (WriteProxy), and
// its integration test builds the program of docs/use-in-your-module.md in a fresh
// module outside the repository, fetched through that proxy, and runs it against a real
// kube-apiserver.
//
// Why a proxy and not a replace directive or go.work: a proxy makes the go command do
// what it does for a user — download the module zip (so a file the zip leaves out, or a
// nested module's file, would be missing), read the go.mod the zip carries, and put our
// requirements into the user's module graph (so an example-only dependency leaking into
// the library's go.mod shows up in `go list -m all`).
//
// Reading order: proxy.go (the module zip and the proxy layout), then
// usermodule_integration_test.go.
package usermodule
