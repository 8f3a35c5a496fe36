// Package soak runs this module's informers beside client-go's against a real control
// plane while it writes, deletes and breaks things: watch connections cut, etcd
// compacted (410 Gone), kube-apiserver and etcd killed with SIGKILL and started again,
// a second kube-apiserver whose watch cache lags, a load balancer failing over between
// the two. At checkpoints, and at the end, every informer's cache must equal a LIST, and
// every handler's story of every object must be one the object's history allows.
//
// TestSoak is sized by environment variables (see knobs_test.go); `make soak` runs it.
// docs/parity.md has one published run's figures.
package soak
