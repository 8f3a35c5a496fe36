package soak

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

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
	fmt.Fprintf(&b, "| faults | %d |\n", total)
	for _, name := range slices.Sorted(maps.Keys(s.faultCounts)) {
		fmt.Fprintf(&b, "| – %s | %d |\n", name, s.faultCounts[name])
	}
	fmt.Fprintf(&b, "| kube-apiserver killed and restarted | %d |\n", s.apiRestarts)
	fmt.Fprintf(&b, "| etcd killed and restarted | %d |\n", s.etcdRestarts)
	fmt.Fprintf(&b, "| divergences | %d |\n", len(s.divergences))
	fmt.Fprintf(&b, "\n| checkpoint | objects | every cache and handler equal to the LIST after | the last to catch up | heap in use |\n|---|---:|---:|---|---:|\n")
	for _, c := range s.checkpoints {
		fmt.Fprintf(&b, "| %s | %d | %v | %s | %.1f MB |\n", c.label, c.objects, c.converged.Round(time.Millisecond), c.slowest, c.heapMB)
	}
	fmt.Fprintf(&b, "\n| handler | notifications | of them tombstones |\n|---|---:|---:|\n")
	for _, st := range s.stories {
		fmt.Fprintf(&b, "| %s | %d | %d |\n", st.name, st.notifications, st.tombstones)
	}
	return b.String()
}
