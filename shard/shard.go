package shard

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
)

// FeatureGate is the kube-apiserver feature gate that makes LIST and WATCH honour
// ListOptions.ShardSelector (alpha in 1.36, off by default). With it off the field is
// ignored without a word: every object comes back.
const FeatureGate = "ShardedListAndWatch"

// Key is the object field whose hash places an object in a shard. The apiserver
// knows two, written as CEL field paths.
type Key string

const (
	// UID spreads objects evenly: every object's uid is random.
	UID Key = "object.metadata.uid"
	// Namespace keeps every object of a namespace in one shard — a Foo and the
	// Deployment it owns, say. Shards are as even as the namespaces are.
	Namespace Key = "object.metadata.namespace"
)

// valid reports whether k is one of the two keys the apiserver supports.
func (k Key) valid() bool { return k == UID || k == Namespace }

// ValueOf is the value of obj's field that k hashes: its namespace for Namespace,
// its uid otherwise. It is what apimachinery's sharding.ResolveFieldValue reads, on
// a metav1.Object, without an error to handle: New refuses every other key.
func (k Key) ValueOf(obj metav1.Object) string {
	if k == Namespace {
		return obj.GetNamespace()
	}
	return string(obj.GetUID())
}

// Range is the closed interval [Start, Last] of the hash space [0, 2^64).
//
// Why Last and not the wire's exclusive End: the wire's upper bound of the last
// range is 2^64 ('0x10000000000000000'), one more than a uint64 holds. Last is
// always End−1, which always fits.
type Range struct {
	Start, Last uint64
}

// Contains reports whether hash h falls in r.
func (r Range) Contains(h uint64) bool { return r.Start <= h && h <= r.Last }

// Len is how many hashes r covers; 0 stands for all 2^64 (the one range that covers
// more than a uint64 counts).
func (r Range) Len() uint64 { return r.Last - r.Start + 1 }

// String is r as the wire writes its bounds: [0x…, 0x…) with the exclusive end.
func (r Range) String() string { return "[" + hexOf(r.Start) + ", " + endOf(r) + ")" }

// hexOf renders a bound as the apiserver parses one: 0x and exactly 16 lowercase hex
// digits.
func hexOf(v uint64) string { return fmt.Sprintf("0x%016x", v) }

// endOf renders r's exclusive end: Last+1, or 2^64 — the one bound with 17 digits.
func endOf(r Range) string {
	if r.Last == math.MaxUint64 {
		return "0x10000000000000000"
	}
	return hexOf(r.Last + 1)
}

// Shard is a part of the hash space over one key: one or more disjoint ranges, kept
// sorted and merged (two ranges that touch become one). The zero Shard has no key
// and no range; build one with New, Split or Parse.
type Shard struct {
	key    Key
	ranges []Range
}

// ErrEmpty is wrapped by New for a shard without any range.
var ErrEmpty = errors.New("a shard needs at least one range")

// New returns the shard of key made of ranges, sorted and with overlapping or adjacent
// ranges merged. It refuses a key the apiserver does not support, a range whose Start
// is after its Last, and no range at all.
func New(key Key, ranges ...Range) (Shard, error) {
	if !key.valid() {
		return Shard{}, fmt.Errorf("shard key %q is not one the apiserver supports: use %q or %q", key, UID, Namespace)
	}
	if len(ranges) == 0 {
		return Shard{}, fmt.Errorf("shard over %s: %w", key, ErrEmpty)
	}
	for _, r := range ranges {
		if r.Start > r.Last {
			return Shard{}, fmt.Errorf("shard range Start %s is after Last %s", hexOf(r.Start), hexOf(r.Last))
		}
	}
	return Shard{key: key, ranges: merge(ranges)}, nil
}

// merge sorts ranges by Start and joins every two that overlap or touch.
func merge(ranges []Range) []Range {
	sorted := slices.Clone(ranges)
	slices.SortFunc(sorted, func(a, b Range) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	out := sorted[:1]
	for _, r := range sorted[1:] {
		last := &out[len(out)-1]
		// Touching: r starts right after last ends. last.Last+1 would overflow at the
		// top of the space, where nothing can come after anyway.
		if last.Last == math.MaxUint64 || r.Start <= last.Last+1 {
			last.Last = max(last.Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out
}

// Split cuts the whole hash space into n shards of key: contiguous ranges, in order,
// that cover [0, 2^64) exactly once. Shard i is [⌊i·2^64/n⌋, ⌊(i+1)·2^64/n⌋), so the
// sizes differ by at most one hash.
func Split(key Key, n int) ([]Shard, error) {
	if n < 1 {
		return nil, fmt.Errorf("Split into %d shards: want at least 1", n)
	}
	starts := make([]uint64, n)
	for i := 1; i < n; i++ {
		// ⌊i·2^64/n⌋: divide the 128-bit number i·2^64 (high word i, low word 0) by n.
		// The quotient fits in 64 bits because i < n.
		starts[i], _ = bits.Div64(uint64(i), 0, uint64(n))
	}
	out := make([]Shard, n)
	for i := range n {
		last := uint64(math.MaxUint64)
		if i+1 < n {
			last = starts[i+1] - 1
		}
		s, err := New(key, Range{Start: starts[i], Last: last})
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// Key is the field the shard hashes.
func (s Shard) Key() Key { return s.key }

// Ranges returns a copy of the shard's ranges, sorted and merged.
func (s Shard) Ranges() []Range { return slices.Clone(s.ranges) }

// IsZero reports whether s is the zero Shard: no sharding.
func (s Shard) IsZero() bool { return s.key == "" && len(s.ranges) == 0 }

// Contains reports whether an object whose key field holds value (its uid or its
// namespace) belongs to the shard.
func (s Shard) Contains(value string) bool {
	h := Hash(value)
	for _, r := range s.ranges {
		if r.Contains(h) {
			return true
		}
	}
	return false
}

// ContainsObject reports whether obj belongs to the shard: Contains of the value of
// the field the shard's key names (Key.ValueOf).
func (s Shard) ContainsObject(obj metav1.Object) bool { return s.Contains(s.key.ValueOf(obj)) }

// Hash is the apiserver's hash of a key's value, as a number: FNV-1a 64 of its
// bytes. It is apimachinery's sharding.HashField (the function the apiserver's own
// selector matches with) read back from its hex, so that the two cannot disagree.
func Hash(value string) uint64 {
	h, err := strconv.ParseUint(sharding.HashField(value), 16, 64)
	if err != nil {
		// HashField always renders 16 hex digits; reaching this means its format
		// changed, and no shard could be trusted.
		panic(fmt.Sprintf("shard: sharding.HashField(%q) is not 16 hex digits: %v", value, err))
	}
	return h
}

// Requirements returns the shard as apimachinery's requirements, one per range, with
// the bounds rendered as the apiserver parses them.
func (s Shard) Requirements() []sharding.ShardRangeRequirement {
	reqs := make([]sharding.ShardRangeRequirement, len(s.ranges))
	for i, r := range s.ranges {
		reqs[i] = sharding.ShardRangeRequirement{Key: string(s.key), Start: hexOf(r.Start), End: endOf(r)}
	}
	return reqs
}

// Selector returns the shard as apimachinery's sharding.Selector; Everything for the
// zero Shard.
func (s Shard) Selector() sharding.Selector { return sharding.NewSelector(s.Requirements()...) }

// String is the selector to send as ListOptions.ShardSelector, rendered by
// apimachinery (the rendering the apiserver parses): for the first half of the uid
// space,
//
//	shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')
//
// and for several ranges their clauses joined with " || ". "" for the zero Shard.
func (s Shard) String() string { return s.Selector().String() }

// Fraction is the share of the hash space the shard covers, from 0 to 1.
func (s Shard) Fraction() float64 {
	var f float64
	for _, r := range s.ranges {
		if r.Start == 0 && r.Last == math.MaxUint64 {
			return 1
		}
		f += float64(r.Len()) / (1 << 64)
	}
	return f
}
