package soak

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// last is the name in caughtUp (among only, when it is not nil) that caught up last;
// ties go to the name that sorts first, so the report does not depend on map order.
func last(caughtUp map[string]time.Duration, only map[string]bool) string {
	name := ""
	for _, n := range slices.Sorted(maps.Keys(caughtUp)) {
		if only != nil && !only[n] {
			continue
		}
		if name == "" || caughtUp[n] > caughtUp[name] {
			name = n
		}
	}
	return name
}

// markdown renders a summary as the tables docs/parity.md publishes.
func (s *summary) markdown() string {
	var b strings.Builder
	k := s.knobs
	total := 0
	for _, n := range s.faultCounts {
		total += n
	}
	writes := s.writes["create"] + s.writes["update"] + s.writes["delete"]
	fmt.Fprintf(&b, "| soak | |\n|---|---|\n")
	fmt.Fprintf(&b, "| duration | %v |\n", s.elapsed.Round(time.Second))
	fmt.Fprintf(&b, "| writes | %d (%d creates, %d updates, %d deletes; %d failed during a fault, %d names left uncertain) |\n",
		writes, s.writes["create"], s.writes["update"], s.writes["delete"], s.writes["failed"], s.uncertain)
	fmt.Fprintf(&b, "| objects | %d names |\n", k.objects)
	if k.shards > 0 {
		fmt.Fprintf(&b, "| shards | %d by uid, ours and client-go's on each, via A and via B |\n", k.shards)
	}
	fmt.Fprintf(&b, "| faults | %d |\n", total)
	for _, name := range slices.Sorted(maps.Keys(s.faultCounts)) {
		fmt.Fprintf(&b, "| – %s | %d |\n", name, s.faultCounts[name])
	}
	fmt.Fprintf(&b, "| kube-apiserver killed and restarted | %d |\n", s.apiRestarts)
	fmt.Fprintf(&b, "| etcd killed and restarted | %d |\n", s.etcdRestarts)
	fmt.Fprintf(&b, "| divergences | %d |\n", len(s.divergences))
	fmt.Fprintf(&b, "\n| checkpoint | objects | every cache and handler equal to the LIST after | the last to catch up | the slowest cache | heap in use |\n|---|---:|---:|---|---|---:|\n")
	for _, c := range s.checkpoints {
		fmt.Fprintf(&b, "| %s | %d | %v | %s | %s | %.1f MB |\n", c.label, c.objects, c.converged.Round(time.Millisecond), c.slowest, c.slowestCache, c.heapMB)
	}
	fmt.Fprintf(&b, "\n| handler | notifications | of them tombstones |\n|---|---:|---:|\n")
	for _, st := range s.stories {
		fmt.Fprintf(&b, "| %s | %d | %d |\n", st.name, st.notifications, st.tombstones)
	}
	return b.String()
}

// TestTheReportNamesTheSlowestCacheApartFromTheSlowestHandler: a handler's view trails
// its cache, so the last to catch up is often a handler; the report also names the
// cache that was last, which says whose watch was behind.
func TestTheReportNamesTheSlowestCacheApartFromTheSlowestHandler(t *testing.T) {
	caughtUp := map[string]time.Duration{
		"ours default via A: cache":        2 * time.Second,
		"client-go default via B: cache":   3 * time.Second,
		"enqueue: handler's view":          5 * time.Second,
		"ours DeltaFIFO+LIST via A: cache": 3 * time.Second, // a tie with client-go's: the name that sorts first
	}
	caches := map[string]bool{"ours default via A: cache": true, "client-go default via B: cache": true, "ours DeltaFIFO+LIST via A: cache": true}
	assert.Equal(t, "enqueue: handler's view", last(caughtUp, nil))
	assert.Equal(t, "client-go default via B: cache", last(caughtUp, caches))
	assert.Empty(t, last(map[string]time.Duration{}, caches))

	s := &summary{checkpoints: []checkpointResult{{label: "1", objects: 3, converged: 5 * time.Second,
		slowest: "enqueue: handler's view", slowestCache: "client-go default via B: cache, after 3s"}}}
	assert.Contains(t, s.markdown(), "| 1 | 3 | 5s | enqueue: handler's view | client-go default via B: cache, after 3s |")
}
