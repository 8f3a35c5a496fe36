package shard_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeinternals/informers/shard"
)

// Split(n) covers [0, 2^64) exactly once: shard 0 starts at 0, each next shard starts
// right after the one before ends, the last ends at 2^64−1, and the sizes differ by at
// most one hash. Every n up to 300, and random ones up to 5,000.
func TestSplitCoversTheSpaceOnceInOrder(t *testing.T) {
	ns := []int{}
	for n := 1; n <= 300; n++ {
		ns = append(ns, n)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		ns = append(ns, 301+r.IntN(5_000))
	}
	for _, key := range []shard.Key{shard.UID, shard.Namespace} {
		for _, n := range ns {
			shards, err := shard.Split(key, n)
			require.NoError(t, err)
			require.Len(t, shards, n)
			var next uint64
			var minLen, maxLen uint64 = math.MaxUint64, 0
			for i, s := range shards {
				if s.Key() != key {
					t.Fatalf("n=%d shard %d: key %s", n, i, s.Key())
				}
				rs := s.Ranges()
				if len(rs) != 1 || rs[0].Start != next || rs[0].Start > rs[0].Last {
					t.Fatalf("n=%d shard %d: %v, want one range starting at %#x", n, i, rs, next)
				}
				if n > 1 {
					minLen, maxLen = min(minLen, rs[0].Len()), max(maxLen, rs[0].Len())
				}
				next = rs[0].Last + 1
			}
			require.Equal(t, uint64(math.MaxUint64), shards[n-1].Ranges()[0].Last, "n=%d: the last shard ends at 2^64−1", n)
			if n > 1 {
				require.LessOrEqual(t, maxLen-minLen, uint64(1), "n=%d: sizes differ by at most one", n)
			}
		}
	}
	_, err := shard.Split(shard.UID, 0)
	assert.ErrorContains(t, err, "want at least 1")
}

// The field's own doc comment gives the 2- and 4-shard selectors; Split renders them
// exactly (the rendering is apimachinery's).
func TestSplitRendersTheSelectorsTheAPIDocumentationShows(t *testing.T) {
	two, err := shard.Split(shard.UID, 2)
	require.NoError(t, err)
	assert.Equal(t, "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')", two[0].String())
	assert.Equal(t, "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')", two[1].String())
	four, err := shard.Split(shard.UID, 4)
	require.NoError(t, err)
	want := []string{
		"shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000')",
		"shardRange(object.metadata.uid, '0x4000000000000000', '0x8000000000000000')",
		"shardRange(object.metadata.uid, '0x8000000000000000', '0xc000000000000000')",
		"shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')",
	}
	for i, s := range four {
		assert.Equal(t, want[i], s.String())
	}
	one, err := shard.Split(shard.Namespace, 1)
	require.NoError(t, err)
	assert.Equal(t, "shardRange(object.metadata.namespace, '0x0000000000000000', '0x10000000000000000')", one[0].String())
	assert.InDelta(t, 1.0, one[0].Fraction(), 0)
	assert.InDelta(t, 0.25, four[3].Fraction(), 1e-12)
	assert.Equal(t, "", shard.Shard{}.String(), "the zero Shard selects everything")
	assert.True(t, shard.Shard{}.IsZero())
}

// New sorts the ranges and merges those that overlap or touch; what is left covers
// exactly the hashes the given ranges covered.
func TestNewMergesOverlappingAndAdjacentRanges(t *testing.T) {
	s, err := shard.New(shard.UID,
		shard.Range{Start: 100, Last: 199},
		shard.Range{Start: 0, Last: 9},
		shard.Range{Start: 10, Last: 19}, // touches [0, 9]
		shard.Range{Start: 150, Last: 300},
		shard.Range{Start: math.MaxUint64 - 5, Last: math.MaxUint64},
		shard.Range{Start: math.MaxUint64, Last: math.MaxUint64},
	)
	require.NoError(t, err)
	assert.Equal(t, []shard.Range{{Start: 0, Last: 19}, {Start: 100, Last: 300}, {Start: math.MaxUint64 - 5, Last: math.MaxUint64}}, s.Ranges())
	assert.Equal(t, "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000014') || "+
		"shardRange(object.metadata.uid, '0x0000000000000064', '0x000000000000012d') || "+
		"shardRange(object.metadata.uid, '0xfffffffffffffffa', '0x10000000000000000')", s.String())

	// Property: random ranges over a small space, merged, cover the same points and
	// come out sorted, disjoint and not touching.
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		var in []shard.Range
		covered := map[uint64]bool{}
		for range 1 + r.IntN(6) {
			a, b := r.Uint64N(64), r.Uint64N(64)
			a, b = min(a, b), max(a, b)
			in = append(in, shard.Range{Start: a, Last: b})
			for p := a; p <= b; p++ {
				covered[p] = true
			}
		}
		s, err := shard.New(shard.Namespace, in...)
		require.NoError(t, err)
		out := s.Ranges()
		for i := 1; i < len(out); i++ {
			require.Greater(t, out[i].Start, out[i-1].Last+1, "%v → %v: sorted, apart", in, out)
		}
		for p := uint64(0); p < 66; p++ {
			in := false
			for _, o := range out {
				in = in || o.Contains(p)
			}
			require.Equal(t, covered[p], in, "%v → %v at %d", in, out, p)
		}
	}

	_, err = shard.New(shard.UID)
	assert.ErrorIs(t, err, shard.ErrEmpty)
	_, err = shard.New(shard.UID, shard.Range{Start: 2, Last: 1})
	assert.ErrorContains(t, err, "is after Last")
	_, err = shard.New("object.metadata.name", shard.Range{})
	assert.ErrorContains(t, err, `shard key "object.metadata.name" is not one the apiserver supports`)
}

// Contains and ContainsObject agree with apimachinery's selector — the code the
// apiserver filters with — on every object, and Key.ValueOf reads the field
// apimachinery's resolver reads: random uids and namespaces against random shards of
// both keys.
func TestContainsAgreesWithTheAPIServersSelector(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		key := []shard.Key{shard.UID, shard.Namespace}[r.IntN(2)]
		var ranges []shard.Range
		for range 1 + r.IntN(4) {
			a, b := r.Uint64(), r.Uint64()
			ranges = append(ranges, shard.Range{Start: min(a, b), Last: max(a, b)})
		}
		s, err := shard.New(key, ranges...)
		require.NoError(t, err)
		sel := s.Selector()
		for range 20 {
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Namespace: fmt.Sprintf("ns-%x", r.Uint32()),
				UID:       types.UID(fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32N(1<<16), r.Uint32N(1<<16), r.Uint32N(1<<16), r.Uint64N(1<<48))),
			}}
			value, err := sharding.ResolveFieldValue(obj, string(key))
			require.NoError(t, err)
			require.Equal(t, value, key.ValueOf(obj), "the field the key names")
			want, err := sel.Matches(obj)
			require.NoError(t, err)
			require.Equal(t, want, s.Contains(value), "%s %q (hash %016x) in %s", key, value, shard.Hash(value), s)
			require.Equal(t, want, s.ContainsObject(obj), "%s %q (hash %016x) in %s", key, value, shard.Hash(value), s)
		}
	}
}

// A range's edges, where an off-by-one would show: the start is in, the end (Last+1)
// is out, and the rendering of each bound is the apiserver's.
func TestARangesBoundsAreExact(t *testing.T) {
	r := shard.Range{Start: 0x8000000000000000, Last: 0xbfffffffffffffff}
	assert.True(t, r.Contains(0x8000000000000000))
	assert.False(t, r.Contains(0x7fffffffffffffff))
	assert.True(t, r.Contains(0xbfffffffffffffff))
	assert.False(t, r.Contains(0xc000000000000000))
	assert.Equal(t, "[0x8000000000000000, 0xc000000000000000)", r.String())
	s, err := shard.New(shard.UID, r)
	require.NoError(t, err)
	assert.Equal(t, []sharding.ShardRangeRequirement{{Key: "object.metadata.uid", Start: "0x8000000000000000", End: "0xc000000000000000"}}, s.Requirements())
}

// Hash reads apimachinery's HashField back as a number; HashField's output must stay
// 16 lowercase hex digits for that (and for the apiserver's string comparison).
func TestHashIsApimachinerysHashField(t *testing.T) {
	for _, v := range []string{"", "default", "kube-system", "b8a3d2c4-5e6f-4a1b-9c8d-7e6f5a4b3c2d", strings.Repeat("x", 300)} {
		hex := sharding.HashField(v)
		require.Regexp(t, `^[0-9a-f]{16}$`, hex)
		assert.Equal(t, hex, fmt.Sprintf("%016x", shard.Hash(v)))
	}
	assert.Equal(t, uint64(0xcbf29ce484222325), shard.Hash(""), "FNV-1a 64's offset basis: the hash of no bytes")
}

// The package doc's worked example, figure by figure.
func TestThePackageDocsWorkedExample(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	const uid = "b8a3d2c4-5e6f-4a1b-9c8d-7e6f5a4b3c2d"
	h := shard.Hash(uid)
	assert.Contains(t, string(doc), fmt.Sprintf("Hash(%q) = 0x%016x", uid, h))
	two, err := shard.Split(shard.UID, 2)
	require.NoError(t, err)
	four, err := shard.Split(shard.UID, 4)
	require.NoError(t, err)
	assert.True(t, two[1].Contains(uid), "shard 1 of 2")
	assert.True(t, four[3].Contains(uid), "shard 3 of 4")
	assert.Contains(t, string(doc), "\t"+two[1].String()+"\n")
}

// The package doc's warning about namespace keys: ns-000 … ns-299 all land in
// [0x8000000000000000, 0xc000000000000000), so one shard of 2, 3 or 4 gets all 300;
// random-looking names spread evenly.
func TestSimilarNamespacesCrowdIntoOneShard(t *testing.T) {
	crowd := shard.Range{Start: 0x8000000000000000, Last: 0xbfffffffffffffff}
	for i := range 300 {
		ns := fmt.Sprintf("ns-%03d", i)
		require.True(t, crowd.Contains(shard.Hash(ns)), "%s hashes to %016x", ns, shard.Hash(ns))
	}
	for _, n := range []int{2, 3, 4} {
		shards, err := shard.Split(shard.Namespace, n)
		require.NoError(t, err)
		counts := make([]int, n)
		for i := range 300 {
			for j, s := range shards {
				if s.Contains(fmt.Sprintf("ns-%03d", i)) {
					counts[j]++
				}
			}
		}
		assert.Contains(t, counts, 300, "n=%d: %v", n, counts)
	}
	// uids, random, spread: no shard of 4 gets more than a third of 3,000.
	four, err := shard.Split(shard.UID, 4)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(7, 8))
	counts := make([]int, 4)
	for range 3000 {
		uid := fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", r.Uint32(), r.Uint32N(1<<16), r.Uint32N(1<<12), r.Uint32N(1<<16), r.Uint64N(1<<48))
		for j, s := range four {
			if s.Contains(uid) {
				counts[j]++
			}
		}
	}
	for _, c := range counts {
		assert.Less(t, c, 1000, "%v", counts)
	}
}
