package testenv

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/shard"
)

// The feature gate the shard package names is the one every control plane here turns
// on (unless told not to), and the one docs/local-cluster.md's kind config turns on.
func TestTheShardingGateIsNamedAlikeEverywhere(t *testing.T) {
	assert.Equal(t, "--feature-gates="+shard.FeatureGate+"=true", ShardingGateFlag)

	on := (&Env{opts: Options{}}).apiServerArgsFor(6443, "http://127.0.0.1:2379")
	assert.Contains(t, on, ShardingGateFlag, "on by default")
	off := (&Env{opts: Options{WithoutSharding: true}}).apiServerArgsFor(6443, "http://127.0.0.1:2379")
	assert.False(t, slices.ContainsFunc(off, func(a string) bool {
		return regexp.MustCompile(`^--feature-gates=.*ShardedListAndWatch`).MatchString(a)
	}),
		"WithoutSharding leaves the gate at its default (off): %q", off)

	page, err := os.ReadFile("../../../docs/local-cluster.md")
	require.NoError(t, err)
	kind := regexp.MustCompile("(?s)```yaml\n[^`]*kind: Cluster\n[^`]*featureGates:\n  (\\w+): true\n```").FindSubmatch(page)
	require.NotNil(t, kind, "docs/local-cluster.md has a kind config with featureGates")
	assert.Equal(t, shard.FeatureGate, string(kind[1]), "the kind config's gate")
	assert.Contains(t, string(page), "`"+shard.FeatureGate+"=true`", "the flags table's row")
}
