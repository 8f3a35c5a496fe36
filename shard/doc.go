// Package shard divides a resource's objects among several informers, the way
// kube-apiserver 1.36+ divides them when a LIST or WATCH carries
// ListOptions.ShardSelector (feature gate ShardedListAndWatch, alpha, off by default).
//
// # The hash space
//
// The apiserver hashes one field of every object — its uid or its namespace — with
// FNV-1a 64, which gives a number in [0, 2^64). A shard is a set of ranges of those
// numbers; the apiserver sends a client only the objects whose hash falls in the
// ranges its selector names. A worked example, for a ConfigMap whose uid is
// b8a3d2c4-5e6f-4a1b-9c8d-7e6f5a4b3c2d:
//
//	Hash("b8a3d2c4-5e6f-4a1b-9c8d-7e6f5a4b3c2d") = 0xe18285bc76e21680
//
//	Split(UID, 2): [0x0000000000000000, 0x8000000000000000)           shard 0
//	               [0x8000000000000000, 0x10000000000000000)   ← it   shard 1
//	Split(UID, 4): …, [0xc000000000000000, 0x10000000000000000) ← it   shard 3
//
// and shard 1 of two is sent to the apiserver as
//
//	shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')
//
// The bounds are hex strings of exactly 16 digits, the start inclusive, the end
// exclusive; the end of the space, 2^64, is the one 17-digit bound. Several ranges are
// clauses joined with ||. Parse checks a selector a user wrote against the apiserver's
// rules, because the apiserver answers a malformed one with HTTP 500.
//
// uid and namespace never change on an object, so an object never moves from one
// shard to another: a sharded informer never sees an object enter or leave its shard.
//
// # Which key
//
// UID spreads objects evenly: uids are random. Namespace keeps every object of a
// namespace in one shard — a custom resource and the Deployment it owns, so that one
// replica sees both — but the shards are only as even as the namespaces' hashes, and
// FNV-1a spreads similar names badly: it has no final mixing step, so the top bits of
// the hash, which pick the range, depend mostly on a name's first bytes. Namespaces
// named ns-000 … ns-299 all hash into [0x8000000000000000, 0xc000000000000000): one
// shard of two, three or four gets all 300 (TestSimilarNamespacesCrowdIntoOneShard).
// With namespace keys, look at where your namespaces fall before choosing ranges.
//
// # What it builds on
//
// The hash is apimachinery's own (k8s.io/apimachinery/pkg/sharding HashField, the
// function the apiserver's selector matches with), and a Shard renders its selector
// through apimachinery's Selector.String, the form the apiserver parses, so this
// package and the server agree by construction. What it adds: a range type, Split,
// merging, and Parse.
//
// client-go 1.37 has no shard support beyond the raw ListOptions.ShardSelector field.
package shard
